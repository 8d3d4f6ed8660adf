//! `copyhound works`, `migrate` and `worker`, run as a user would run them, against a temp
//! SQLite database.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{Env, copyhound};
use pipeline::Job;
use store::{
    FingerprintReads, JobQueue, JobStatus, NewJob, PostingKind, Store, StoreSettings, WorkReads,
};

/// 老残游记's contents and first two chapters (public domain; see the import crate's
/// `tests/data/README.md`).
const SAMPLE: &str = include_str!("../../import/tests/data/laocanyouji_toc_1-2.txt");

fn ok(out: Output) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    (stdout, stderr)
}

fn fails(out: Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn listings_end_quietly_when_their_reader_goes_away() {
    // `copyhound works list --json | head -1`: a closed pipe used to panic in `println!`.
    let env = Env::new();
    let file = env.file("老残游记.txt", SAMPLE.as_bytes());
    ok(env.run(&["works", "import", arg(&file)]));
    env.run_unread(&["works", "list", "--json"]);
    env.run_unread(&["works", "list"]);
    env.run_unread(&["works", "show", "1"]);
    env.run_unread(&["migrate", "--status"]);
    env.run_unread(&["config"]);
}

#[test]
fn import_list_and_show_a_gbk_novel() {
    let env = Env::new();
    let (gbk, _, _) = encoding_rs::GBK.encode(SAMPLE);
    let file = env.file("老残游记.txt", &gbk);

    let (stdout, stderr) = ok(env.run(&["works", "import", arg(&file), "--author", "刘鹗"]));
    assert!(
        stdout.starts_with("imported work 1 «老残游记»: 2 chapters"),
        "{stdout}"
    );
    assert!(stdout.contains("GBK"), "{stdout}");
    // Not a terminal: plain progress lines, no bar.
    assert!(stderr.contains("老残游记.txt: 2 chapters"), "{stderr}");

    let (stdout, _) = ok(env.run(&["works", "list", "--json"]));
    let works: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let work = &works.as_array().unwrap()[0];
    let mut keys: Vec<&str> = work
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["author", "chapters", "chars", "id", "title"]);
    assert_eq!(work["id"], 1);
    assert_eq!(work["title"], "老残游记");
    assert_eq!(work["author"], "刘鹗");
    assert_eq!(work["chapters"], 2);
    assert!(work["chars"].as_u64().unwrap() > 9000);

    let (stdout, _) = ok(env.run(&["works", "list"]));
    assert!(stdout.contains("老残游记 / 刘鹗"), "{stdout}");
    let (stdout, _) = ok(env.run(&["works", "show", "1"]));
    assert!(
        stdout.contains("source:        老残游记.txt, txt, GBK"),
        "{stdout}"
    );
    assert!(stdout.contains("第二回"), "{stdout}");
    let (stdout, _) = ok(env.run(&["works", "show", "1", "--json"]));
    let shown: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(shown["chapter_list"].as_array().unwrap().len(), 2);
    assert_eq!(shown["content_hash"].as_str().unwrap().len(), 64);

    // The same text again, as UTF-8 and through the environment variable.
    let utf8 = env.file("copy.txt", SAMPLE.as_bytes());
    let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .env("COPYHOUND_DATABASE_URL", &env.db)
        .args(["works", "import", arg(&utf8), "--title", "副本"])
        .output()
        .unwrap();
    let (stdout, _) = ok(out);
    assert!(stdout.starts_with("already imported: work 1"), "{stdout}");
    let (stdout, _) = ok(env.run(&["works", "list", "--json"]));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let err = fails(env.run(&["works", "show", "7"]));
    assert!(err.contains("there is no work 7"), "{err}");
}

#[test]
fn a_bad_file_fails_alone_and_the_run_says_so() {
    let env = Env::new();
    let empty = env.file("empty.txt", b"");
    let good = env.file("good.txt", SAMPLE.as_bytes());
    let err = fails(env.run(&["works", "import", arg(&empty), arg(&good)]));
    assert!(err.contains("empty.txt: the file is empty"), "{err}");
    assert!(err.contains("1 of 2 files were not imported"), "{err}");
    let (stdout, _) = ok(env.run(&["works", "list", "--json"]));
    assert!(stdout.contains("\"good\""), "{stdout}");

    let err = fails(env.run(&["works", "import", "--title", "x", arg(&empty), arg(&good)]));
    assert!(err.contains("--title names one work"), "{err}");
}

#[test]
fn the_database_url_picks_the_backend_and_other_schemes_are_refused() {
    let env = Env::new();
    let out = copyhound("mysql://root:hunter2@localhost/db")
        .args(["works", "list"])
        .output()
        .unwrap();
    let err = fails(out);
    assert!(
        err.contains("sqlite://") && err.contains("postgres://"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");

    // Without --database: sqlite://data/copyhound.db, relative to where it runs.
    let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .env_remove("COPYHOUND_DATABASE_URL")
        .current_dir(env.dir.path())
        .args(["works", "list"])
        .output()
        .unwrap();
    let (stdout, _) = ok(out);
    assert!(stdout.contains("no works yet"), "{stdout}");
    assert!(env.dir.path().join("data/copyhound.db").exists());
}

/// Text postings of the first chapter of the only work in `db`.
async fn first_chapter_postings(db: &str) -> usize {
    let store = Store::open(db, &StoreSettings::default()).await.unwrap();
    let work = store
        .works(&store::WorkFilter::All, store::Page::all())
        .await
        .unwrap()[0]
        .id;
    let chapter = store.chapters(work).await.unwrap()[0].id;
    store
        .chapter_postings(chapter, PostingKind::Text)
        .await
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_fingerprints_with_the_configured_settings() {
    let (default, wide) = (Env::new(), Env::new());
    let file = default.file("a.txt", SAMPLE.as_bytes());
    ok(default.run(&["works", "import", arg(&file)]));
    // A window four times wider keeps about a quarter of the winnowing fingerprints.
    let out = copyhound(&wide.db)
        .env("COPYHOUND_FINGERPRINT__WINNOW_W", "120")
        .args(["works", "import", arg(&file)])
        .output()
        .unwrap();
    ok(out);
    let (d, w) = (
        first_chapter_postings(&default.db).await,
        first_chapter_postings(&wide.db).await,
    );
    assert!(w * 2 < d, "winnow_w=120 kept {w} postings, the default {d}");
}

#[test]
fn migrate_reports_and_applies() {
    let env = Env::new();
    let (stdout, _) = ok(env.run(&["migrate", "--status"]));
    assert!(
        stdout.contains("initial") && stdout.contains("pending"),
        "{stdout}"
    );
    let (stdout, _) = ok(env.run(&["migrate"]));
    assert!(
        stdout.contains("applied now") && stdout.contains("up to date"),
        "{stdout}"
    );
    let (stdout, _) = ok(env.run(&["migrate"]));
    assert!(
        !stdout.contains("applied now") && stdout.contains("up to date"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_runs_an_import_job_and_stops_cleanly_on_ctrl_c() {
    let env = Env::new();
    let file = env.file("queued.txt", SAMPLE.as_bytes());
    let store = Store::open(&env.db, &StoreSettings::default())
        .await
        .unwrap();
    let job = Job::ImportWork {
        path: file,
        title: Some("排队的书".to_owned()),
        author: None,
    };
    let id = store
        .enqueue(&NewJob::new(&job).unwrap())
        .await
        .unwrap()
        .id();

    let worker = copyhound(&env.db)
        .args(["worker", "--grace", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while store.job(id).await.unwrap().status != JobStatus::Done {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the job did not run"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let interrupted = Command::new("kill")
        .args(["-INT", &worker.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = worker.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("worker stopped: 1 completed"), "{stderr}");
    let works = store
        .works(&store::WorkFilter::All, store::Page::all())
        .await
        .unwrap();
    assert_eq!(works[0].title, "排队的书");
}

#[test]
fn two_large_imports_at_once_both_succeed() {
    let env = Env::new();
    ok(env.run(&["migrate"]));
    let (a, b) = (
        env.file("甲.txt", common::long_novel("甲", 300).as_bytes()),
        env.file("乙.txt", common::long_novel("乙", 300).as_bytes()),
    );
    // Two processes on one SQLite file, each holding the write lock batch by batch.
    let spawn = |path: &Path| {
        copyhound(&env.db)
            .args(["works", "import", path.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (spawn(&a), spawn(&b));
    ok(first.wait_with_output().unwrap());
    ok(second.wait_with_output().unwrap());
    let (list, _) = ok(env.run(&["works", "list", "--json"]));
    let works: Vec<serde_json::Value> = serde_json::from_str(&list).unwrap();
    assert_eq!(works.len(), 2, "{list}");
    for w in &works {
        assert_eq!(w["chapters"], 300, "{w}");
    }
}
