//! The `body-segments` schedule's job (issue #30), on both backends: while the object store
//! is down the job fails and the queue tries it again, every body still read from the
//! database; once the store is up the same job moves them into a segment.

use std::sync::Arc;
use std::time::Duration;

use detection::Analyser;
use import::{ImportSettings, Importer};
use jobs::Job;
use pipeline::Handler;
use store::testing::TestDb;
use store::{
    Backoff, BodyBytes, EvidenceReads, EvidenceWrites, JobFilter, JobQueue, JobStatus, NewJob,
    Page, StorageSettings, Store, WorkerSettings,
};

use crate::common;

fn handler(store: &Store) -> Handler {
    Handler::new(
        store.clone(),
        Importer::new(ImportSettings::default()).unwrap(),
        Arc::new(Analyser::new(
            store.clone(),
            Default::default(),
            Default::default(),
        )),
    )
}

fn worker_settings() -> WorkerSettings {
    // No schedules: the test's one job is the only one (the schedule's own would join it
    // at the next minute).
    WorkerSettings {
        poll_interval: Duration::from_millis(20),
        run_schedules: false,
        backoff: Backoff {
            base: Duration::from_millis(20),
            max: Duration::from_millis(50),
        },
        ..WorkerSettings::default()
    }
}

async fn the_job(store: &Store) -> store::JobRecord {
    let jobs = store
        .jobs(&JobFilter::Kind("WriteSegments".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    jobs.into_iter().next().unwrap()
}

async fn moves_bodies_and_retries_while_the_store_is_down(db: &TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = db
        .store
        .clone()
        .with_storage(&StorageSettings {
            bodies: "s3://bodies/pages".into(),
            endpoint: format!("http://127.0.0.1:{port}"),
            allow_http: true,
            access_key_id: Some(bounds::Secret::new("key")),
            secret_access_key: Some(bounds::Secret::new("secret")),
            spool_dir: spool.clone(),
            ..StorageSettings::default()
        })
        .unwrap();
    let mut shas = Vec::new();
    for n in 1..=3 {
        let id = common::stored_page(
            &down,
            &format!("https://盗版.example/{n}.html"),
            &common::pirate_chapter(n),
        )
        .await;
        shas.push(down.snapshot(id).await.unwrap().sha256);
    }
    evidence::bodies::ensure_segment_schedule(&down)
        .await
        .unwrap();
    down.enqueue(
        &NewJob::new(&Job::WriteSegments)
            .unwrap()
            .dedupe_key(evidence::bodies::SCHEDULE)
            .max_attempts(1000),
    )
    .await
    .unwrap();

    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let worker = pipeline::serve(&down, handler(&down), worker_settings(), stop_rx);
    store::testing::wait_for(
        "the job failed twice on the store that is down",
        Duration::from_secs(120),
        async || {
            let job = the_job(&down).await;
            job.attempts >= 2 && job.status != JobStatus::Running
        },
    )
    .await;
    let _ = stop.send(true);
    worker.await.unwrap();
    let job = the_job(&down).await;
    assert_ne!(job.status, JobStatus::Dead);
    assert!(
        job.last_error
            .as_deref()
            .is_some_and(|e| e.contains("object store")),
        "{job:?}"
    );
    for sha in &shas {
        let stored = db.store.body(sha).await.unwrap().unwrap();
        assert!(matches!(stored.bytes, BodyBytes::Zstd(_)));
    }
    assert_eq!(down.body_totals().await.unwrap().store_bodies, 0);

    // The store is back (here: another one, a folder): the same job goes through.
    let up = db
        .store
        .clone()
        .with_storage(&StorageSettings {
            bodies: format!("file://{}", dir.path().join("bodies").display()),
            spool_dir: spool,
            ..StorageSettings::default()
        })
        .unwrap();
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let worker = pipeline::serve(&up, handler(&up), worker_settings(), stop_rx);
    store::testing::wait_for("the job done", Duration::from_secs(120), async || {
        the_job(&up).await.status == JobStatus::Done
    })
    .await;
    let _ = stop.send(true);
    worker.await.unwrap();
    let totals = up.body_totals().await.unwrap();
    assert_eq!((totals.db_bodies, totals.store_bodies), (0, 3));
    for sha in &shas {
        let stored = up.body(sha).await.unwrap().unwrap();
        assert!(matches!(stored.bytes, BodyBytes::Plain(_)));
    }
    // A store without bodies on an object store has no schedule to add, and its job is a
    // no-op.
    assert!(!db.store.segment_due().await.unwrap());
    assert!(!up.has_body(&[0; 32]).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segment_jobs_retry_on_sqlite() {
    let db = store::testing::sqlite("segment_jobs_retry").await.unwrap();
    moves_bodies_and_retries_while_the_store_is_down(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segment_jobs_retry_on_postgres() {
    let Some(db) = store::testing::postgres("segment_jobs_retry").await else {
        return;
    };
    moves_bodies_and_retries_while_the_store_is_down(&db).await;
}
