//! What the CLI tests share: the binary on a temp database.

#![allow(dead_code)] // each test file uses part of it

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The binary, on the database `db` whatever the environment says.
pub fn copyhound(db: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_copyhound"));
    c.env_remove("COPYHOUND_DATABASE_URL")
        .args(["--database", db]);
    c
}

/// A temp directory with a SQLite database in it (created on first use).
pub struct Env {
    pub dir: tempfile::TempDir,
    pub db: String,
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}/db/copyhound.db", dir.path().display());
        Env { dir, db }
    }

    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub fn run(&self, args: &[&str]) -> Output {
        copyhound(&self.db).args(args).output().unwrap()
    }

    /// Runs with its standard output's reader gone before the binary writes, as behind
    /// `| head -1` once head has what it wanted, and checks that it still ends with success
    /// and without a panic.
    pub fn run_unread(&self, args: &[&str]) -> Output {
        let mut child = copyhound(&self.db)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Closed before the binary has started up, so its first write finds no reader.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{:?}: {stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{stderr}");
        out
    }
}

/// 老残游记's contents and first two chapters (public domain; see the import crate's
/// `tests/data/README.md`): the lines [`long_novel`] is made of.
const NOVEL_LINES: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");

/// A novel of `chapters` chapters of about 20 KB, made of 老残游记's lines, told apart by
/// `book` so that two of them are different works.
pub fn long_novel(book: &str, chapters: usize) -> String {
    let lines: Vec<&str> = NOVEL_LINES
        .lines()
        .map(str::trim)
        .filter(|l| l.chars().count() > 20)
        .collect();
    let mut text = String::new();
    for n in 1..=chapters {
        text.push_str(&format!("第{n}章 {book}之{n}\n"));
        let mut chars = 0;
        let mut i = n;
        while chars < 7_000 {
            let line = lines[i % lines.len()];
            text.push_str(&format!("{book}{n}：{line}\n"));
            chars += line.chars().count();
            i += 7;
        }
    }
    text
}

/// Serves `app` on a free port of 127.0.0.1 until the returned sender is dropped (or two
/// minutes pass).
pub async fn serve(app: axum::Router) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(120), rx).await;
            })
            .await;
    });
    (addr, tx)
}

/// Runs the binary on `db` off the async runtime, with a short politeness delay for crawls of
/// local test sites.
pub async fn run_async(db: &str, args: &[&str]) -> Output {
    run_with(db, &[], args).await
}

/// [`run_async`] with more environment variables (settings such as
/// `COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE`).
pub async fn run_with(db: &str, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = copyhound(db);
    cmd.env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "10ms")
        .envs(env.iter().copied())
        .args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// [`run_async`], which must succeed; its standard output.
pub async fn ok(db: &str, args: &[&str]) -> String {
    ok_with(db, &[], args).await
}

/// [`run_with`], which must succeed; its standard output.
pub async fn ok_with(db: &str, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = run_with(db, env, args).await;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    stdout
}

/// [`ok`], its output read as one JSON value.
pub async fn json(db: &str, args: &[&str]) -> serde_json::Value {
    json_with(db, &[], args).await
}

/// [`ok_with`], its output read as one JSON value.
pub async fn json_with(db: &str, env: &[(&str, &str)], args: &[&str]) -> serde_json::Value {
    let out = ok_with(db, env, args).await;
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// JSON lines.
pub fn lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Waits off the async runtime for `child` to end; its output.
async fn wait_exit(child: std::process::Child) -> Output {
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap()
}

/// Waits off the async runtime for `child` to end, which must succeed; its output.
pub async fn wait_ok(child: std::process::Child) -> Output {
    let out = wait_exit(child).await;
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// One HTTP/1.1 request on its own connection to `addr`; the whole answer as text.
pub fn http(addr: &str, request: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

/// Reads a running command's `stderr` a line at a time, handing each to `line`, until `line`
/// says it has what it waited for; fails if the command ends first or `within` passes
/// (checked between lines). Returns the lines read.
pub fn read_until(
    stderr: &mut impl std::io::BufRead,
    within: std::time::Duration,
    mut line: impl FnMut(&str) -> bool,
) -> String {
    let started = std::time::Instant::now();
    let mut read = String::new();
    loop {
        assert!(
            started.elapsed() < within,
            "not ready within {within:?}: {read}"
        );
        let mut next = String::new();
        assert!(
            stderr.read_line(&mut next).unwrap() > 0,
            "the command exited early: {read}"
        );
        read.push_str(&next);
        if line(&next) {
            return read;
        }
    }
}

/// Sends SIGTERM to `child`, which must then exit with success within `within`.
pub fn terminate(child: &mut std::process::Child, within: std::time::Duration) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let stopped = std::time::Instant::now();
    loop {
        if let Some(exit) = child.try_wait().unwrap() {
            assert!(exit.success(), "{exit:?}");
            return;
        }
        assert!(
            stopped.elapsed() < within,
            "it did not stop within {within:?} of SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Signs in to the admin UI at `addr` by its login form, asking to go to `/cases`; the answer.
/// The form is fetched first, as a browser does: it carries a token its cookie must match.
pub fn login(addr: &str, username: &str, password: &str) -> String {
    let page = http(
        addr,
        &format!("GET /login HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    );
    let cookie = page
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .expect("a login token cookie");
    let at = page.find("name=\"csrf\" value=\"").expect("a login token") + 19;
    let token = page[at..].split('"').next().unwrap();
    let body = format!("username={username}&password={password}&next=%2Fcases&csrf={token}");
    http(
        addr,
        &format!(
            "POST /login HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Cookie: {cookie}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Waits for a command stopped by Ctrl-C (SIGINT) to end as an interrupted command does once
/// it has stopped cleanly: status 130.
pub async fn wait_interrupted(child: std::process::Child) -> Output {
    let out = wait_exit(child).await;
    assert_eq!(
        out.status.code(),
        Some(130),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every record of the WARC file at `path`.
pub fn records(path: &std::path::Path) -> Vec<crawler::WarcRecord> {
    let file = std::fs::File::open(path).unwrap();
    crawler::WarcReader::new(file)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}
