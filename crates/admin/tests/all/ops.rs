//! The operations endpoints through the router, on SQLite and Postgres: `/healthz`,
//! `/readyz` (a closed database, an index still loading), and `/metrics` read back by a
//! Prometheus text-format parser with the figures checked against what was stored, a job run
//! through a real worker loop, and the bearer token.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use admin::{AdminSettings, AdminState, OpsSettings};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use detection::Analyser;
use import::{ImportOptions, ImportSettings, Importer};
use jobs::Job;
use matcher::MatcherSettings;
use pipeline::Handler;
use prometheus_parse::{Sample, Scrape, Value};
use sha2::Digest;
use store::testing::TestDb;
use store::{EvidenceWrites, JobQueue, NewJob, NewSnapshot, OpsReads, Store, WorkerSettings};
use tower::ServiceExt;

/// 封神演义 1–3 (traditional; public domain): the protected work.
const WORK: &str = include_str!("../../../import/tests/data/fengshenyanyi_hant_1-3.txt");
const TOKEN: &str = "0123456789abcdef-metrics";

/// Stores a page copying the first chapter and queues its match job; returns the work's
/// chapter count.
async fn work_and_pirate_page(store: &Store) -> usize {
    let report = Importer::new(ImportSettings::default())
        .unwrap()
        .import_bytes(
            store,
            "fengshen.txt",
            WORK.as_bytes().to_vec(),
            &ImportOptions::default(),
            &(),
        )
        .await
        .unwrap();
    let start = WORK.find("第一回").unwrap();
    let end = WORK.find("第二回").unwrap();
    let text = zhconv::zhconv(&WORK[start..end], zhconv::Variant::ZhHans);
    let url = "http://pirate.example/book/1.html";
    let new = NewSnapshot {
        content_type: Some("text/plain; charset=utf-8".into()),
        sha256: sha2::Sha256::digest(text.as_bytes()).into(),
        body_len: text.len() as u64,
        elapsed_ms: 1,
        ..store::testing::sample_snapshot(url, 0, chrono::Utc::now())
    };
    let (snapshot, _) = store
        .insert_snapshot(&new, Some(&zstd::encode_all(text.as_bytes(), 1).unwrap()))
        .await
        .unwrap();
    store
        .insert_page_text(&store::testing::sample_page_text(snapshot, url, text))
        .await
        .unwrap();
    store
        .enqueue(&jobs::match_job(snapshot).unwrap())
        .await
        .unwrap();
    report.chapters
}

fn app(store: &Store, ops: OpsSettings) -> axum::Router {
    admin::router(AdminState::new(
        store.clone(),
        AdminSettings {
            secure_cookies: false,
            ops,
            ..AdminSettings::default()
        },
    ))
}

async fn get(app: &axum::Router, path: &str, token: Option<&str>) -> (StatusCode, String, String) {
    let mut request = Request::get(path);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        content_type,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

/// The samples of `name`, keyed by their labels (`k=v,...` sorted).
fn samples<'a>(scrape: &'a Scrape, name: &str) -> BTreeMap<String, &'a Sample> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .map(|s| {
            let mut labels: Vec<String> =
                s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            labels.sort();
            (labels.join(","), s)
        })
        .collect()
}

/// A counter or gauge's value (OpenMetrics counters, `_total`, parse as untyped).
fn number(sample: &Sample) -> f64 {
    match sample.value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
        ref other => panic!("{}: not a number: {other:?}", sample.metric),
    }
}

fn value(scrape: &Scrape, name: &str, labels: &str) -> f64 {
    let all = samples(scrape, name);
    number(
        all.get(labels)
            .unwrap_or_else(|| panic!("no {name}{{{labels}}} in {:?}", all.keys())),
    )
}

async fn metrics_count_what_was_stored(db: TestDb) {
    let store = &db.store;
    let chapters = work_and_pirate_page(store).await;
    // One match job through a real worker loop: its duration is this process's figure.
    let analyser = Arc::new(Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    ));
    let handler = Handler::new(
        store.clone(),
        Importer::new(ImportSettings::default()).unwrap(),
        Arc::clone(&analyser),
    );
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let worker = pipeline::serve(
        store,
        handler,
        WorkerSettings {
            queue: jobs::MATCH_QUEUE.to_owned(),
            poll_interval: Duration::from_millis(20),
            run_schedules: false,
            ..WorkerSettings::default()
        },
        stopped,
    );
    for _ in 0..600 {
        let done = store
            .counts()
            .await
            .unwrap()
            .iter()
            .any(|c| c.queue == jobs::MATCH_QUEUE && c.done == 1);
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.send(true).unwrap();
    assert_eq!(worker.await.unwrap().completed, 1);
    // A job waiting, and a finished crawl of the pirate site with its totals in its row.
    store
        .enqueue(
            &NewJob::new(&Job::RechecksDue)
                .unwrap()
                .run_at(chrono::Utc::now() - chrono::TimeDelta::seconds(30)),
        )
        .await
        .unwrap();
    db.execute(
        "INSERT INTO crawls (site_id, status, pages_fetched, pages_failed, bytes, \
         errors_by_kind, started_at, finished_at) SELECT id, 'done', 7, 3, 12345, \
         '{\"http_404\": 2, \"timeout\": 1}', '2026-11-01T00:00:00.000Z', \
         '2026-11-01T00:10:00.000Z' FROM sites",
    )
    .await;

    // An innocent page fetched two days ago: past an unmatched retention of an hour, where the
    // pirate page's body is evidence and stays.
    let url = "http://innocent.example/2.html";
    let body = "nothing copied here";
    let new = NewSnapshot {
        content_type: Some("text/plain; charset=utf-8".into()),
        sha256: sha2::Sha256::digest(body.as_bytes()).into(),
        body_len: body.len() as u64,
        elapsed_ms: 1,
        ..store::testing::sample_snapshot(url, 0, chrono::Utc::now() - chrono::Duration::days(2))
    };
    store
        .insert_snapshot(&new, Some(&zstd::encode_all(body.as_bytes(), 1).unwrap()))
        .await
        .unwrap();
    let retention = store::RetentionSettings {
        unmatched: std::time::Duration::from_secs(3600),
        ..store::RetentionSettings::default()
    };
    let ops = OpsSettings {
        metrics_token: Some(bounds::Secret::new(TOKEN)),
        analyser: Some(Arc::clone(&analyser)),
        retention: Some(admin::RetentionOutlook::new(retention.clone())),
    };
    let app = app(store, ops);
    let (status, _, _) = get(&app, "/metrics", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, _) = get(&app, "/metrics", Some("0123456789abcdef-wrong")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // What retention will free is worked out in the background: shown once it is.
    store::testing::wait_for(
        "the retention outlook",
        std::time::Duration::from_secs(30),
        async || {
            let (_, _, body) = get(&app, "/metrics", Some(TOKEN)).await;
            body.contains("copyhound_retention_removable")
        },
    )
    .await;
    let (status, content_type, body) = get(&app, "/metrics", Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(content_type, admin::METRICS_CONTENT_TYPE);
    assert!(body.ends_with("# EOF\n"), "{body}");
    let scrape = Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).unwrap();

    let matches = store.match_totals().await.unwrap();
    assert!(matches.matches >= 1);
    assert_eq!(
        value(&scrape, "copyhound_matches_total", "licensed=false"),
        matches.matches as f64
    );
    assert_eq!(
        value(&scrape, "copyhound_matches_total", "licensed=true"),
        0.0
    );
    // Bodies by place: the pirate page's in the database, none on an object store.
    let bodies = store.body_totals().await.unwrap();
    assert!(bodies.db_bodies >= 1);
    assert_eq!(
        value(&scrape, "copyhound_stored_bodies", "where=db"),
        bodies.db_bodies as f64
    );
    assert_eq!(
        value(&scrape, "copyhound_stored_bodies", "where=store"),
        0.0
    );
    assert_eq!(
        value(&scrape, "copyhound_stored_body_bytes", "where=db"),
        bodies.db_bytes as f64
    );
    assert_eq!(
        value(&scrape, "copyhound_storage_bytes", "kind=bodies_db"),
        bodies.db_bytes as f64
    );
    assert_eq!(
        value(&scrape, "copyhound_storage_bytes", "kind=screenshots_db"),
        bodies.screenshot_bytes as f64
    );
    let outlook = store.retention_outlook(&retention).await.unwrap();
    assert_eq!(
        outlook.bodies, 1,
        "the old innocent page's body: {outlook:?}"
    );
    for (what, n) in [
        ("bodies", outlook.bodies),
        ("body_bytes", outlook.bytes),
        ("segments", outlook.segments_deleted),
    ] {
        assert_eq!(
            value(
                &scrape,
                "copyhound_retention_removable",
                &format!("what={what}")
            ),
            n as f64,
            "{what}"
        );
    }
    assert_eq!(value(&scrape, "copyhound_cases", "status=new"), 1.0);
    assert_eq!(value(&scrape, "copyhound_cases", "status=dismissed"), 0.0);
    assert_eq!(value(&scrape, "copyhound_pages_fetched_total", ""), 7.0);
    assert_eq!(value(&scrape, "copyhound_fetched_bytes_total", ""), 12345.0);
    assert_eq!(
        value(&scrape, "copyhound_fetch_errors_total", "kind=http_404"),
        2.0
    );
    assert_eq!(
        value(&scrape, "copyhound_fetch_errors_total", "kind=timeout"),
        1.0
    );
    assert_eq!(
        value(
            &scrape,
            "copyhound_jobs",
            "kind=RechecksDue,queue=default,status=queued"
        ),
        1.0
    );
    // It has waited 30 s for a worker; the match queue is empty.
    let waited = value(&scrape, "copyhound_queue_wait_seconds", "queue=default");
    assert!((30.0..60.0).contains(&waited), "{waited}");
    assert!(
        !samples(&scrape, "copyhound_queue_wait_seconds").contains_key("queue=match"),
        "{body}"
    );
    // The done match job is not depth.
    assert!(
        samples(&scrape, "copyhound_jobs")
            .keys()
            .all(|k| !k.contains("MatchSnapshot")),
        "{body}"
    );
    assert_eq!(value(&scrape, "copyhound_index_loaded", ""), 1.0);
    assert_eq!(
        value(&scrape, "copyhound_index_chapters", ""),
        chapters as f64
    );
    assert!(value(&scrape, "copyhound_index_memory_bytes", "") > 0.0);
    assert_eq!(value(&scrape, "copyhound_index_shard", "shard=0/1"), 1.0);
    assert_eq!(
        value(
            &scrape,
            "copyhound_build_info",
            &format!("version={}", env!("CARGO_PKG_VERSION"))
        ),
        1.0
    );
    // The histogram is typed and its buckets hold the match job (other tests of this
    // process may have added theirs).
    let durations = samples(&scrape, "copyhound_job_duration_seconds");
    let run = durations
        .get("kind=MatchSnapshot,outcome=done")
        .unwrap_or_else(|| panic!("{:?}", durations.keys()));
    let Value::Histogram(buckets) = &run.value else {
        panic!("{:?}", run.value)
    };
    let inf = buckets.iter().find(|b| b.less_than.is_infinite()).unwrap();
    assert!(inf.count >= 1.0);
    assert!(buckets.windows(2).all(|w| w[0].count <= w[1].count));
    assert!(scrape.docs.contains_key("copyhound_cases"));
}

async fn health_and_readiness(db: TestDb) {
    let store = &db.store;
    let (status, _, body) = get(&app(store, OpsSettings::default()), "/healthz", None).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok\n"));

    // No index to wait for: ready once the database answers with this build's schema.
    let (status, content_type, body) =
        get(&app(store, OpsSettings::default()), "/readyz", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(content_type.starts_with("application/json"));
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["ready"], true);
    assert_eq!(json["checks"]["migrations"]["ok"], true);

    // An index not loaded yet holds readiness back; loaded, it is ready.
    let analyser = Arc::new(Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    ));
    let with_index = app(
        store,
        OpsSettings {
            metrics_token: None,
            analyser: Some(Arc::clone(&analyser)),
            retention: None,
        },
    );
    let (status, _, body) = get(&with_index, "/readyz", None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["checks"]["index"]["ok"], false);
    assert_eq!(json["checks"]["database"]["ok"], true);
    analyser.index().await.unwrap();
    let (status, _, body) = get(&with_index, "/readyz", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Without a token /metrics is open (the port is to be kept internal).
    let (status, _, body) = get(&with_index, "/metrics", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A database that went away: not ready, and the check says so.
    store.close().await;
    let (status, _, body) = get(&app(store, OpsSettings::default()), "/readyz", None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["checks"]["database"]["ok"], false);
    let (status, _, _) = get(&app(store, OpsSettings::default()), "/healthz", None).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "alive even when the database is not"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_sqlite() {
    metrics_count_what_was_stored(store::testing::sqlite("ops_metrics").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_postgres() {
    if let Some(db) = store::testing::postgres("ops_metrics").await {
        metrics_count_what_was_stored(db).await;
    }
}

#[tokio::test]
async fn health_sqlite() {
    health_and_readiness(store::testing::sqlite("ops_health").await.unwrap()).await;
}

#[tokio::test]
async fn health_postgres() {
    if let Some(db) = store::testing::postgres("ops_health").await {
        health_and_readiness(db).await;
    }
}
