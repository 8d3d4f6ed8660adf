//! `copyhound works`, `migrate` and `worker`, run as a user would run them, against a temp
//! SQLite database (and a Postgres schema where a command's store writes differ by backend).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{Env, copyhound};
use jobs::Job;
use store::{
    FingerprintReads, JobQueue, JobStatus, NewJob, PostingKind, Store, StoreSettings, WorkReads,
};

/// 老残游记's contents and first two chapters (public domain; see the import crate's
/// `tests/data/README.md`).
const SAMPLE: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_text_never_drives_the_terminal() {
    // Issue #23: a title stored before titles were cleaned (or written by another tool) with
    // an ESC sequence and a bidi override prints as escapes, in text and in JSON alike.
    let env = Env::new();
    let file = env.file("老残游记.txt", SAMPLE.as_bytes());
    ok(env.run(&["works", "import", arg(&file)]));
    let store = Store::open(&env.db, &StoreSettings::default())
        .await
        .unwrap();
    let hostile = "Red\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}txt.exe";
    let update = store::WorkUpdate {
        title: Some(hostile.into()),
        author: Some(Some("A\rB".into())),
    };
    {
        use store::WorkWrites;
        store
            .update_work(store::WorkId(1), &update, "test")
            .await
            .unwrap();
    }
    store.close().await;
    for args in [
        &["works", "list"][..],
        &["works", "show", "1"],
        &["works", "list", "--json"],
    ] {
        let (stdout, _) = ok(env.run(args));
        assert!(
            !stdout.contains(['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\r']),
            "{args:?}: {stdout:?}"
        );
        assert!(stdout.contains("\\u001b[2J"), "{args:?}: {stdout}");
        assert!(stdout.contains("\\u202etxt.exe"), "{args:?}: {stdout}");
    }
    // JSON stays JSON, the title the same characters.
    let (stdout, _) = ok(env.run(&["works", "list", "--json"]));
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed[0]["title"], hostile);
    // `works set` cleans what it stores.
    ok(env.run(&[
        "works",
        "set",
        "1",
        "--title",
        "Clean\u{1b}[0m Title\u{202e}",
    ]));
    let (stdout, _) = ok(env.run(&["works", "list", "--json"]));
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed[0]["title"], "Clean[0m Title");
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
        delete_file: false,
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
    assert_eq!(out.status.code(), Some(130), "{stderr}");
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

/// `copyhound ARGS...` on `db`, off the async runtime's threads.
async fn run_on(db: &str, args: &[&str]) -> Output {
    let mut cmd = copyhound(db);
    cmd.args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// `works set` and `works delete` as a user runs them, on the database of `db`.
async fn retitle_and_delete(db: &store::testing::TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("老残游记.txt");
    std::fs::write(&file, SAMPLE).unwrap();
    let (stdout, _) = ok(run_on(
        &db.url,
        &["works", "import", arg(&file), "--author", "刘鹗"],
    )
    .await);
    let id: String = stdout
        .strip_prefix("imported work ")
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_owned();

    // Nothing to change, or an empty title: refused before the database is touched.
    let err = fails(run_on(&db.url, &["works", "set", &id]).await);
    assert!(err.contains("--title") && err.contains("--author"), "{err}");
    let err = fails(run_on(&db.url, &["works", "set", &id, "--title", " "]).await);
    assert!(err.contains("--title \" \" is empty"), "{err}");

    let (stdout, _) = ok(run_on(
        &db.url,
        &["works", "set", &id, "--title", "老残游记（校订本）"],
    )
    .await);
    assert_eq!(
        stdout.trim(),
        format!("work {id}: «老残游记» / 刘鹗 → «老残游记（校订本）» / 刘鹗")
    );
    let (stdout, _) = ok(run_on(&db.url, &["works", "set", &id, "--author", ""]).await);
    assert!(
        stdout.contains("→ «老残游记（校订本）» (no author)"),
        "{stdout}"
    );
    let (stdout, _) = ok(run_on(&db.url, &["works", "set", &id, "--author", ""]).await);
    assert!(
        stdout.starts_with(&format!("work {id} unchanged")),
        "{stdout}"
    );
    let (stdout, _) = ok(run_on(&db.url, &["works", "show", &id, "--json"]).await);
    let shown: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(shown["title"], "老残游记（校订本）");
    assert_eq!(shown["author"], serde_json::Value::Null);
    let err = fails(run_on(&db.url, &["works", "set", "999", "--title", "x"]).await);
    assert!(err.contains("there is no work 999"), "{err}");

    // A case refers to it: refused, naming the count and --force.
    db.execute(&format!(
        "INSERT INTO sites (name, base_url, host) VALUES ('盗版', 'http://盗版.example/', '盗版.example'); \
         INSERT INTO cases (site_id, work_id) SELECT id, {id} FROM sites;"
    ))
    .await;
    let err = fails(run_on(&db.url, &["works", "delete", &id]).await);
    assert!(
        err.contains(&format!("work {id} «老残游记（校订本）» has 1 case"))
            && err.contains(&format!("copyhound works delete {id} --force")),
        "{err}"
    );
    assert!(
        db.store
            .work(store::WorkId(id.parse().unwrap()))
            .await
            .is_ok()
    );
    let (stdout, _) = ok(run_on(&db.url, &["works", "delete", &id, "--force"]).await);
    assert_eq!(
        stdout.trim(),
        format!("deleted work {id} «老残游记（校订本）» (no author) and its 1 case")
    );
    let (stdout, _) = ok(run_on(&db.url, &["works", "list", "--json"]).await);
    assert_eq!(stdout.trim(), "[]");
    let err = fails(run_on(&db.url, &["works", "delete", &id]).await);
    assert!(err.contains(&format!("there is no work {id}")), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_are_retitled_and_deleted_on_sqlite() {
    let db = store::testing::sqlite("works_set_delete").await.unwrap();
    retitle_and_delete(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_are_retitled_and_deleted_on_postgres() {
    let Some(db) = store::testing::postgres("works_set_delete").await else {
        return;
    };
    retitle_and_delete(&db).await;
}

/// The Cloudflare interstitial a pirate site served (see the crawler's `tests/data`).
const CHALLENGE: &str =
    include_str!("../../../extract/tests/data/html/69shuba_cloudflare_challenge.html");

#[test]
fn likely_mistakes_are_imported_with_a_warning() {
    let env = Env::new();
    let short = env.file("短.txt", "第一章\n很短的一段文字。".as_bytes());
    let challenge = env.file("第一章.html", CHALLENGE.as_bytes());
    let headless = env.file(
        "无标题.txt",
        "话说天下大势，分久必合，合久必分。\n"
            .repeat(6000)
            .as_bytes(),
    );
    let (stdout, stderr) = ok(env.run(&[
        "works",
        "import",
        arg(&short),
        arg(&challenge),
        arg(&headless),
    ]));
    assert_eq!(stdout.matches("imported work").count(), 3, "{stdout}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(
        warnings[0].starts_with(&format!(
            "warning: {}: only 8 characters of text",
            short.display()
        )),
        "{stderr}"
    );
    assert!(
        warnings[1].starts_with(&format!(
            "warning: {}: this looks like an anti-bot challenge page",
            challenge.display()
        )),
        "{stderr}"
    );
    assert!(
        warnings[2].starts_with(&format!("warning: {}: one chapter of ", headless.display()))
            && warnings[2].contains("--heading REGEX"),
        "{stderr}"
    );
    // A novel with chapters and text: no warning.
    let novel = env.file("老残游记.txt", SAMPLE.as_bytes());
    let (_, stderr) = ok(env.run(&["works", "import", arg(&novel)]));
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refingerprint_brings_works_of_an_older_normaliser_back_into_the_index() {
    let env = Env::new();
    let file = env.file("老残游记.txt", SAMPLE.as_bytes());
    ok(env.run(&["works", "import", arg(&file)]));
    let (stdout, _) = ok(env.run(&["works", "refingerprint", "--all"]));
    assert!(
        stdout.contains("0 works refingerprinted, 1 already current"),
        "{stdout}"
    );

    // As after an upgrade: the stored fingerprints are an older normaliser's, which the
    // index leaves out, so `check` finds nothing.
    let store = Store::open(&env.db, &StoreSettings::default())
        .await
        .unwrap();
    let stale: Vec<_> = store
        .chapters(store::WorkId(1))
        .await
        .unwrap()
        .iter()
        .map(|c| {
            let fp = store::NewFingerprint {
                normalizer_version: fingerprint::NORMALIZER_VERSION - 1,
                chars: 1,
                simhash: 1,
                summary: vec![0; 8],
                text_winnow: Vec::new(),
                pinyin_winnow: Vec::new(),
            };
            (c.id, fp)
        })
        .collect();
    store::WorkWrites::replace_fingerprints(&store, store::WorkId(1), &stale)
        .await
        .unwrap();
    store.close().await;
    let (stdout, _) = ok(env.run(&["check", arg(&file)]));
    assert!(stdout.contains("no registered work found"), "{stdout}");

    let (stdout, _) = ok(env.run(&["works", "refingerprint", "1"]));
    assert!(
        stdout.contains("work 1 «老残游记» (no author): 2 chapters fingerprinted again"),
        "{stdout}"
    );
    let (stdout, _) = ok(env.run(&["check", arg(&file)]));
    assert!(stdout.contains("chapter 1"), "{stdout}");
    let stderr = fails(env.run(&["works", "refingerprint", "7"]));
    assert!(stderr.contains("there is no work 7"), "{stderr}");
    fails(env.run(&["works", "refingerprint"]));
}
