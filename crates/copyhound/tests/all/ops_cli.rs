//! Operating the binary: Ctrl-C ends the long-running commands (serve, worker, crawl) with
//! exit 130 (SIGTERM with 0), a worker's `--metrics-listen` probes, `doctor` (database,
//! migrations, outbound settings, a local TSA, a probe URL), `backup` of a SQLite store in
//! use, `config` with its secrets masked, JSON logs, `NO_COLOR`, shell completions and the
//! global options in `--help`.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{Env, copyhound};

/// A child's standard error read line by line until `wanted` shows; returns that line and
/// the ones before.
fn wait_for_line(child: &mut Child, wanted: &str) -> (String, Vec<String>) {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    // The reader keeps draining after the line is found: a closed pipe would make the
    // command's next message to stderr fail.
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains(wanted) => return (line, seen),
            Ok(line) => seen.push(line),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(_) => break,
        }
    }
    let _ = child.kill();
    panic!("no line with {wanted:?}; saw {seen:?}");
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name}");
}

/// Waits for the child to exit (at most a minute) and returns its exit code.
fn exit_code(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the command did not stop");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One HTTP/1.0 GET to `address`: the status line and the body.
fn http_get(address: &str, path: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

#[test]
fn ctrl_c_ends_serve_and_worker_with_130_and_sigterm_with_0() {
    let env = Env::new();
    assert!(env.run(&["migrate"]).status.success());
    let cases: [(&[&str], &str, &str, Option<i32>); 3] = [
        (
            &["serve", "--listen", "127.0.0.1:0", "--no-workers"],
            "copyhound serving",
            "INT",
            Some(130),
        ),
        (&["worker"], "serving queue", "INT", Some(130)),
        (&["worker"], "serving queue", "TERM", Some(0)),
    ];
    for (args, ready, sig, code) in cases {
        let mut child = copyhound(&env.db)
            .args(args)
            .current_dir(env.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_line(&mut child, ready);
        signal(&child, sig);
        assert_eq!(exit_code(&mut child), code, "{args:?} after SIG{sig}");
    }
}

#[test]
fn ctrl_c_ends_a_crawl_with_130() {
    // A site that accepts connections and never answers: the crawl is busy when stopped.
    let site = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", site.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in site.incoming().take(64) {
            held.push(stream);
        }
    });
    let env = Env::new();
    let mut child = copyhound(&env.db)
        .args(["crawl", &url, "--allow-private"])
        .env("COPYHOUND_CRAWLER__FETCH__READ_TIMEOUT", "2s")
        .env("COPYHOUND_CRAWLER__FETCH__TIMEOUT", "3s")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_line(&mut child, "Ctrl-C stops it");
    signal(&child, "INT");
    assert_eq!(exit_code(&mut child), Some(130));
}

#[test]
fn a_worker_serves_its_probes_and_figures_on_metrics_listen() {
    let env = Env::new();
    let mut child = copyhound(&env.db)
        .args(["worker", "--metrics-listen", "127.0.0.1:0"])
        .env(
            "COPYHOUND_SERVER__METRICS_TOKEN",
            "a-token-of-24-characters",
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (line, _) = wait_for_line(&mut child, "worker metrics on http://");
    let address = line
        .split("http://")
        .nth(1)
        .unwrap()
        .trim_end_matches("/metrics")
        .to_owned();
    let (status, body) = http_get(&address, "/healthz");
    assert!(status.contains(" 200 "), "{status}");
    assert_eq!(body, "ok\n");
    // Ready once the (empty) index is loaded.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = http_get(&address, "/readyz");
        if status.contains(" 200 ") {
            assert!(body.contains("\"index\""), "{body}");
            break;
        }
        assert!(Instant::now() < deadline, "never ready: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(http_get(&address, "/metrics").0.contains(" 401 "));
    signal(&child, "INT");
    assert_eq!(exit_code(&mut child), Some(130));
}

/// `copyhound config` with `var` set to `value`, which must fail: its standard error.
fn config_refused(env: &Env, var: &str, value: &str) -> String {
    let out = copyhound(&env.db)
        .arg("config")
        .env(var, value)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{var}={value} was accepted");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn config_masks_secrets_and_refuses_a_short_token_without_showing_it() {
    let env = Env::new();
    let token = env.file("token", b"a-secret-token-0123456789\n");
    let out = copyhound("postgres://copyhound:hunter2@127.0.0.1:1/copyhound")
        .arg("config")
        .env("COPYHOUND_SERVER__METRICS_TOKEN_FILE", &token)
        // Issue #23: any URL setting's password is masked too (the TSA's was shown).
        .env(
            "COPYHOUND_EVIDENCE__TIMESTAMP__URL",
            "https://stamp:tsa-hunter3@tsa.example/tsr",
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("tsa-hunter3"), "{stdout}");
    assert!(
        stdout.contains("url = \"https://stamp:***@tsa.example/tsr\""),
        "{stdout}"
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("metrics_token = \"********\""), "{stdout}");
    assert!(!stdout.contains("a-secret-token"), "{stdout}");
    assert!(!stdout.contains("hunter2"), "{stdout}");
    assert!(stdout.contains("copyhound:***@127.0.0.1"), "{stdout}");

    let stderr = config_refused(&env, "COPYHOUND_SERVER__METRICS_TOKEN", "short-secret");
    assert!(
        stderr.contains(
            "server.metrics_token = ******** is out of range: must be at least 16 characters"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("COPYHOUND_SERVER__METRICS_TOKEN"),
        "{stderr}"
    );
    assert!(!stderr.contains("short-secret"), "{stderr}");

    // A bad value names the key, the value, what is allowed and where it was set.
    let stderr = config_refused(&env, "COPYHOUND_SERVER__LISTEN", "everywhere:80");
    assert!(
        stderr.contains("server.listen = \"everywhere:80\" is not valid"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(set in COPYHOUND_SERVER__LISTEN)"),
        "{stderr}"
    );
}

#[test]
fn the_database_url_can_come_from_a_file() {
    let env = Env::new();
    let migrate_status = |file: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_copyhound"))
            .env_remove("COPYHOUND_DATABASE_URL")
            .env("COPYHOUND_DATABASE_URL_FILE", file)
            .args(["migrate", "--status"])
            .output()
            .unwrap()
    };
    let out = migrate_status(&env.file("database_url", format!("{}\n", env.db).as_bytes()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&env.db), "{stdout}");
    let out = migrate_status(&env.file("empty", b"\n"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("COPYHOUND_DATABASE_URL_FILE"));
}

#[test]
fn doctor_says_what_to_fix() {
    // Nothing listens on port 1: the database check fails, with the fix, and doctor exits 1.
    let out = copyhound("postgres://copyhound:hunter2@127.0.0.1:1/copyhound")
        .arg("doctor")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  database"), "{stdout}");
    assert!(stdout.contains("fix: check the URL"), "{stdout}");
    assert!(!stdout.contains("hunter2"), "{stdout}");
    // The placeholder contact URL and the empty rights holder are warnings, not failures.
    assert!(stdout.contains("WARN  outbound"), "{stdout}");
    assert!(
        stdout.contains("COPYHOUND_CRAWLER__FETCH__CONTACT_URL"),
        "{stdout}"
    );
    assert!(stdout.contains("WARN  notices"), "{stdout}");

    // A fresh SQLite file: reachable, every migration pending (doctor never migrates).
    let env = Env::new();
    let out = env.run(&["doctor", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let findings: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let level = |check: &str| {
        findings
            .iter()
            .find(|f| f["check"] == check)
            .unwrap_or_else(|| panic!("no {check}: {findings:?}"))["level"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(level("database"), "ok");
    assert_eq!(level("migrations"), "warn");
    assert_eq!(level("tsa"), "ok");
    assert!(env.run(&["migrate"]).status.success());
    let out = env.run(&["doctor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ok    migrations"), "{stdout}");
    assert!(stdout.contains("ok    jobs"), "{stdout}");
    assert!(stdout.contains("WARN  notices"), "{stdout}");
    // The rights holder saved on the settings page is the one notices use: doctor reads it.
    let file = takedown::NoticeSettings::default();
    let saved: Vec<(String, String)> = [
        ("notices.rights_holder.name", "示例出版社"),
        ("notices.rights_holder.address", "1 File Road"),
        ("notices.rights_holder.email", "legal@press.example"),
        ("notices.rights_holder.signatory", "Zhang San"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = store::Store::open(&env.db, &store::StoreSettings::default())
            .await
            .unwrap();
        takedown::overrides::save(&store, &file, &saved, "alice")
            .await
            .unwrap();
        store.close().await;
    });
    let stdout = String::from_utf8_lossy(&env.run(&["doctor"]).stdout).into_owned();
    assert!(
        stdout.contains("ok    notices     notices speak for 示例出版社"),
        "{stdout}"
    );

    // A broken settings file is a finding too.
    let bad = env.file("bad.toml", b"[crawler.fetch]\ntimeout = \"0s\"\n");
    let out = env.run(&["--config", bad.to_str().unwrap(), "doctor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains("FAIL  settings    crawler.fetch.timeout = 0s"),
        "{stdout}"
    );
}

/// Runs `command` to its end on a blocking thread, so the test's servers go on answering.
async fn output_off_runtime(mut command: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_stamps_at_the_tsa_and_probes_a_url() {
    let Some(tsa) = testkit::tsa::LocalTsa::start().await else {
        return;
    };
    let site = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let site_url = format!("http://{}/", site.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let app = axum::Router::new().route("/", axum::routing::get(|| async { "hello" }));
        axum::serve(site, app).await.unwrap();
    });
    let env = Env::new();
    let mut doctor = copyhound(&env.db);
    doctor
        .args(["doctor", "--probe", &site_url])
        .env("COPYHOUND_EVIDENCE__TIMESTAMP__URL", &tsa.url)
        .env(
            "COPYHOUND_EVIDENCE__TIMESTAMP__CA_CERTIFICATES",
            &tsa.ca_pem,
        )
        .env("COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE", "true")
        .env("COPYHOUND_CRAWLER__ROBOTS__OBEY", "false");
    let out = output_off_runtime(doctor).await;
    server.abort();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("ok    tsa"), "{stdout}");
    assert!(
        stdout.contains("signer chained to the configured CA"),
        "{stdout}"
    );
    assert!(stdout.contains("ok    probe"), "{stdout}");
    assert!(stdout.contains("HTTP 200"), "{stdout}");
    assert!(
        stdout.contains("may reach loopback and private addresses"),
        "{stdout}"
    );
    assert!(stdout.contains("robots.txt is ignored"), "{stdout}");

    // A TSA that answers with an HTTP error fails the check.
    tsa.reply(testkit::tsa::Reply::Status(503));
    let mut doctor = copyhound(&env.db);
    doctor
        .arg("doctor")
        .env("COPYHOUND_EVIDENCE__TIMESTAMP__URL", &tsa.url);
    let out = output_off_runtime(doctor).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  tsa"), "{stdout}");
}

#[test]
fn backup_copies_a_sqlite_store_and_never_overwrites() {
    let env = Env::new();
    let work = env.file("备份.txt", common::long_novel("备份", 3).as_bytes());
    assert!(
        env.run(&["works", "import", work.to_str().unwrap()])
            .status
            .success()
    );
    let copy = env.dir.path().join("backup.db");
    let out = env.run(&["backup", copy.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("backed up"));
    let out = copyhound(&format!("sqlite://{}", copy.display()))
        .args(["works", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("备份"));
    let out = env.run(&["backup", copy.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists"));
}

#[test]
fn json_logs_are_one_object_a_line() {
    let env = Env::new();
    let out = copyhound(&env.db)
        .args(["--log-format", "json", "migrate"])
        .env("COPYHOUND_LOG", "info")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["level"] == "INFO" && e["fields"]["message"] == "migrations applied"),
        "{stderr}"
    );
    let out = copyhound(&env.db)
        .args(["migrate", "--status"])
        .env("COPYHOUND_LOG", "info,store=loudly")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a log filter"));
}

#[test]
fn check_colours_only_a_terminal_without_no_color() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no `script` to give check a terminal");
        return;
    }
    let env = Env::new();
    let text = common::long_novel("颜色", 2);
    let work = env.file("work.txt", text.as_bytes());
    assert!(
        env.run(&["works", "import", work.to_str().unwrap()])
            .status
            .success()
    );
    let page = env.file("page.txt", text.as_bytes());
    let run = |no_color: bool| {
        let command = format!(
            "{} --database {} check {}",
            env!("CARGO_BIN_EXE_copyhound"),
            env.db,
            page.display()
        );
        let mut c = Command::new("script");
        c.args(["-qec", &command, "/dev/null"])
            .env_remove("NO_COLOR");
        if no_color {
            c.env("NO_COLOR", "1");
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned()
    };
    let coloured = run(false);
    assert!(coloured.contains("\x1b[1;31m"), "{coloured}");
    let plain = run(true);
    assert!(plain.contains("page:"), "{plain}");
    assert!(!plain.contains('\x1b'), "{plain}");
}

#[test]
fn completions_are_printed_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        for word in ["copyhound", "doctor", "backup", "log-format"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    if let Ok(mut bash) = Command::new("bash")
        .args(["-n"])
        .stdin(Stdio::piped())
        .spawn()
    {
        bash.stdin.take().unwrap().write_all(&out.stdout).unwrap();
        assert!(bash.wait().unwrap().success(), "the bash script parses");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn global_options_are_listed_once_under_their_heading() {
    let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .args(["works", "list", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(help.matches("Global options:").count(), 1, "{help}");
    assert_eq!(help.matches("--database").count(), 1, "{help}");
    let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(help.matches("--database").count(), 1, "{help}");
    assert!(help.contains("Global options:"), "{help}");
}
