//! Settings the binary refuses at start-up (from the environment, a --config file or flags):
//! it exits non-zero with a message naming the key, the value and where it was set.

use crate::common;

use std::process::Output;

use common::Env;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `copyhound config` with one more environment variable.
fn config_with(env: &Env, name: &str, value: &str) -> Output {
    common::copyhound(&env.db)
        .arg("config")
        .env(name, value)
        .output()
        .unwrap()
}

#[test]
fn a_fractional_integer_from_the_environment_is_refused_not_rounded() {
    let env = Env::new();
    let out = config_with(&env, "COPYHOUND_CRAWLER__MAX_PAGES", "2.5");
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(
            "crawler.max_pages = \"2.5\" is not a whole number (set in COPYHOUND_CRAWLER__MAX_PAGES)"
        ),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    let out = config_with(&env, "COPYHOUND_CRAWLER__MAX_PAGES", "3");
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("max_pages = 3\n"), "{printed}");
}

#[test]
fn a_zero_timeout_is_refused_naming_its_variable_or_file() {
    let env = Env::new();
    let out = config_with(&env, "COPYHOUND_CRAWLER__FETCH__TIMEOUT", "0s");
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(
            "crawler.fetch.timeout = 0s is out of range: must be at least 1ms \
             (set in COPYHOUND_CRAWLER__FETCH__TIMEOUT)"
        ),
        "{err}"
    );

    let file = env.file("copyhound.toml", b"[crawler.fetch]\ntimeout = \"0s\"\n");
    let out = env.run(&["--config", file.to_str().unwrap(), "config"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("crawler.fetch.timeout = 0s"), "{err}");
    assert!(err.contains(file.to_str().unwrap()), "{err}");
}

#[test]
fn crawl_flags_out_of_range_are_refused_before_anything_is_stored() {
    let env = Env::new();
    let out = env.run(&["crawl", "https://example.com/", "--max-pages", "0"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("--max-pages"), "{err}");
    assert!(err.contains("'0'"), "{err}");

    let out = env.run(&[
        "crawl",
        "https://example.com/",
        "--enqueue",
        "--runners",
        "0",
    ]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("--runners"), "{err}");
    // Refused while parsing the command line: no database was made.
    assert!(!env.dir.path().join("db").exists());
}

#[test]
fn import_limits_are_settings_checked_and_applied() {
    let env = Env::new();
    let out = config_with(&env, "COPYHOUND_IMPORT__EPUB__MAX_RATIO", "0");
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("import.epub.max_ratio = 0 is out of range"),
        "{err}"
    );
    // A small size limit refuses a file over it, naming the limit.
    let file = env.file("长.txt", "第一章 开端\n正文在此。\n".repeat(20).as_bytes());
    let out = common::copyhound(&env.db)
        .args(["works", "import", file.to_str().unwrap()])
        .env("COPYHOUND_IMPORT__MAX_BYTES", "100")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("more than the limit of 100"), "{err}");
}

#[test]
fn zero_jobs_workers_and_threads_are_refused_by_the_flags() {
    let env = Env::new();
    for args in [
        &["worker", "--concurrency", "0"][..],
        &["check", "--jobs", "0", "x.txt"],
        &["bench", "fingerprint", "--threads", "0"],
        &["bench", "match", "--jobs", "0", "--input", "."],
    ] {
        let out = common::copyhound(&env.db).args(args).output().unwrap();
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(err.contains("\"0\" is not a count"), "{args:?}: {err}");
    }
}
