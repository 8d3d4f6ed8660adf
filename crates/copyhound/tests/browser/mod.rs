//! What the browser tests share: `copyhound serve` as a process, chromedriver with a
//! headless Chromium, and a [`Browser`] that drives pages as a person would and fails with
//! the page and the server's log.

#![allow(dead_code)] // each test file uses part of it

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use thirtyfour::{ChromiumLikeCapabilities, LoggingPrefsLogLevel};

use crate::common;

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long one step may wait for the server or its workers before the test fails with
/// the page it was looking at. Generous: five builders share the machine's two cores.
pub const STEP: Duration = Duration::from_secs(120);

/// A process the test started, killed with its process group when dropped (also while a
/// failed assertion unwinds), so no chromedriver, Chromium or server outlives the test.
pub struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        // The child leads its own group: Chromium's processes go with chromedriver.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn spawn_in_own_group(cmd: &mut Command) -> Killed {
    use std::os::unix::process::CommandExt;
    Killed(cmd.process_group(0).spawn().unwrap())
}

/// `copyhound serve` as a process: its address, the one-time admin password it printed, and
/// its log (drained by a thread, so the pipe never fills and blocks it).
pub struct Server {
    process: Killed,
    addr: String,
    pub password: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts it on `env`'s database with `settings` as environment variables (loopback
    /// crawls allowed, a short politeness delay).
    pub fn start(env: &common::Env, settings: &[(&str, &str)]) -> Server {
        let mut cmd = common::copyhound(&env.db);
        cmd.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--grace",
            "5",
            "--upload-dir",
        ])
        .arg(env.dir.path().join("uploads"))
        // The pirate site is on loopback, which crawls refuse unless allowed.
        .env("COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE", "true")
        .env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "10ms")
        .envs(settings.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        let mut process = spawn_in_own_group(&mut cmd);
        let stderr = process.0.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line.clone());
                lines.lock().unwrap().push(line);
            }
        });
        let (mut password, mut addr) = (None, None);
        let started = Instant::now();
        while addr.is_none() {
            let left = STEP.saturating_sub(started.elapsed());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("serve did not start: {:?}", log.lock().unwrap()));
            if let Some(rest) = line.split("one-time password ").nth(1) {
                password = Some(rest.trim().to_owned());
            }
            if let Some(rest) = line.split("serving http://").nth(1) {
                addr = Some(rest.split('/').next().unwrap().to_owned());
            }
        }
        Server {
            process,
            addr: addr.unwrap(),
            password: password.expect("a one-time admin password"),
            log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The server's last lines, for a failure message.
    pub fn tail(&self) -> String {
        let log = self.log.lock().unwrap();
        log[log.len().saturating_sub(30)..].join("\n")
    }

    /// SIGTERM, then the process must end cleanly, its workers stopped.
    pub fn stop(mut self) {
        let pid = self.process.0.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let started = Instant::now();
        let exit = loop {
            if let Some(exit) = self.process.0.try_wait().unwrap() {
                break exit;
            }
            assert!(
                started.elapsed() < Duration::from_secs(40),
                "serve did not stop"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(exit.success(), "{exit:?}\n{}", self.tail());
    }
}

/// chromedriver on a free port of 127.0.0.1, answering.
pub fn start_chromedriver(dir: &Path) -> (Killed, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::fs::File::create(dir.join("chromedriver.log")).unwrap();
    let driver = spawn_in_own_group(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(log),
    );
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "chromedriver did not listen on {port}: {}",
            std::fs::read_to_string(dir.join("chromedriver.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (driver, port)
}

/// The browser, its server and where its screenshots go.
pub struct Browser<'a> {
    pub driver: WebDriver,
    pub server: &'a Server,
    pub shots: PathBuf,
}

impl Browser<'_> {
    pub async fn goto(&self, path: &str) {
        self.driver.goto(self.server.url(path)).await.unwrap();
        self.clean_console(path).await;
    }

    /// The page's visible text (empty while a reload swaps it).
    pub async fn text(&self) -> String {
        match self.driver.find(By::Tag("body")).await {
            Ok(body) => body.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    pub async fn fail(&self, what: &str) -> ! {
        let url = self.driver.current_url().await.map(|u| u.to_string());
        let _ = self
            .driver
            .screenshot(&self.shots.join("failure.png"))
            .await;
        panic!(
            "{what}\nat {url:?}, page text:\n{}\n\nserver log:\n{}",
            self.text().await,
            self.server.tail()
        );
    }

    pub async fn el(&self, css: &str) -> WebElement {
        match self.driver.find(By::Css(css)).await {
            Ok(e) => e,
            Err(e) => self.fail(&format!("no {css} on the page: {e}")).await,
        }
    }

    /// Clicks what leads to another page (a link, a form's button) and waits for it.
    pub async fn click(&self, css: &str) {
        let element = self.el(css).await;
        self.navigating(css, element.click()).await;
    }

    /// A key that stays on the page; it must reach the page as one key press.
    pub async fn press(&self, key: &str) {
        let count = "return window.keydowns || 0";
        self.driver
            .execute(
                "if (window.keydowns === undefined) { window.keydowns = 0; \
                 document.addEventListener('keydown', function () { window.keydowns += 1; }); }",
                Vec::new(),
            )
            .await
            .unwrap();
        let before = self.driver.execute(count, Vec::new()).await.unwrap();
        self.driver
            .action_chain()
            .send_keys(key)
            .perform()
            .await
            .unwrap();
        let after = self.driver.execute(count, Vec::new()).await.unwrap();
        let (before, after) = (before.json().as_i64(), after.json().as_i64());
        assert_eq!(
            after.zip(before).map(|(a, b)| a - b),
            Some(1),
            "{key} reached the page as {before:?} -> {after:?} key presses"
        );
        self.clean_console(key).await;
    }

    /// A key that leads to another page, pressed on the current one. Dispatched as the
    /// DOM event the page listens for: through WebDriver actions, chromedriver sometimes
    /// (about one run in three, Chromium 156) delivered the key's keydown to the next page
    /// as well, which acted on that page's current case.
    pub async fn key(&self, key: &str) {
        let script = format!(
            "document.dispatchEvent(new KeyboardEvent('keydown', {{ key: {key:?}, bubbles: true }}));"
        );
        self.navigating(key, async {
            self.driver.execute(&script, Vec::new()).await.map(drop)
        })
        .await;
    }

    /// Runs `action` and waits until it replaced the page: a click does not wait for the
    /// answer to a form, and an element looked up meanwhile would be the old page's.
    pub async fn navigating(
        &self,
        what: &str,
        action: impl std::future::Future<Output = WebDriverResult<()>>,
    ) {
        let old = self.driver.find(By::Tag("html")).await.unwrap();
        action.await.unwrap();
        self.poll(
            &format!("{what} to lead to a new page"),
            false,
            async || {
                let stale = old.tag_name().await.is_err();
                let ready = self
                    .driver
                    .execute("return document.readyState", Vec::new())
                    .await
                    .ok()
                    .is_some_and(|r| r.json() == "complete");
                (stale && ready).then_some(())
            },
        )
        .await;
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        self.el(css).await.send_keys(text).await.unwrap();
    }

    /// The browser's console since the last look: a script the Content-Security-Policy
    /// blocked, a script error or a resource that failed to load is a bug.
    /// The page's own status is not among them: a form refused with 422 or the 404 page is
    /// logged by Chromium as a failed load of the page itself, and the tests check those
    /// statuses' pages themselves.
    pub async fn clean_console(&self, after: &str) {
        let entries = self.driver.browser_log().await.unwrap();
        let page = self
            .driver
            .current_url()
            .await
            .map(|u| u.to_string())
            .unwrap_or_default();
        let own_status = |m: &str| {
            m.strip_prefix(page.as_str()).is_some_and(|rest| {
                rest.starts_with(
                    " - Failed to load resource: the server responded with a status of 4",
                )
            })
        };
        let severe: Vec<_> = entries
            .iter()
            .filter(|e| e.level == "SEVERE" && !own_status(&e.message))
            .map(|e| e.message.as_str())
            .collect();
        if !severe.is_empty() {
            self.fail(&format!("console errors after {after}: {severe:#?}"))
                .await;
        }
    }

    /// Polls `check` until it gives a value, reloading the page every second when `reload`
    /// (otherwise the page must change by itself), then checks the console. Fails with the
    /// page after [`STEP`].
    pub async fn poll<T>(&self, what: &str, reload: bool, check: impl AsyncFn() -> Option<T>) -> T {
        let started = Instant::now();
        let mut reloaded = Instant::now();
        loop {
            if let Some(found) = check().await {
                self.clean_console(what).await;
                return found;
            }
            if started.elapsed() > STEP {
                self.fail(&format!("timed out after {STEP:?} waiting for {what}"))
                    .await;
            }
            if reload && reloaded.elapsed() > Duration::from_secs(1) {
                self.driver.refresh().await.unwrap();
                reloaded = Instant::now();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the page's text satisfies `done` (see [`Browser::poll`]); that text.
    pub async fn wait_for(&self, what: &str, reload: bool, done: impl Fn(&str) -> bool) -> String {
        self.poll(what, reload, async || {
            let text = self.text().await;
            done(&text).then_some(text)
        })
        .await
    }

    /// Waits until the page has an element matching `css` (see [`Browser::poll`]).
    pub async fn wait_el(&self, what: &str, reload: bool, css: &str) -> WebElement {
        self.poll(what, reload, async || {
            self.driver.find(By::Css(css)).await.ok()
        })
        .await
    }

    pub async fn shot(&self, name: &str) {
        self.driver
            .screenshot(&self.shots.join(format!("{name}.png")))
            .await
            .unwrap();
    }

    pub async fn classes(&self, element: &WebElement) -> String {
        element.class_name().await.unwrap().unwrap_or_default()
    }
}

/// Whether Chromium and chromedriver are installed; without them the browser tests are
/// skipped with a loud line, unless `CI=true`, where that is a failure.
pub fn available() -> bool {
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and {missing:?} missing: `apt-get install chromium chromium-driver` (.ci/run does)"
    );
    eprintln!(
        "\n*** skipped: the browser test needs {missing:?}; \
         `apt-get install chromium chromium-driver` to run it ***\n"
    );
    false
}

/// A headless Chromium through chromedriver (which `driver` keeps alive), with a window of
/// `width`×`height` preferring `lang`, its console collected, on `server`; screenshots go
/// to `target/screenshots/`.
pub async fn open<'a>(
    env: &common::Env,
    server: &'a Server,
    (width, height): (u32, u32),
    lang: &str,
) -> (Browser<'a>, Killed) {
    let (driver, port) = start_chromedriver(env.dir.path());
    let mut caps = DesiredCapabilities::chrome();
    caps.set_binary(CHROMIUM).unwrap();
    for arg in [
        "--headless=new".to_owned(),
        "--no-sandbox".to_owned(),
        "--disable-gpu".to_owned(),
        format!("--window-size={width},{height}"),
        format!("--lang={lang}"),
    ] {
        caps.add_arg(&arg).unwrap();
    }
    caps.set_browser_log_level(LoggingPrefsLogLevel::All)
        .unwrap();
    let session = WebDriver::new(format!("http://127.0.0.1:{port}"), caps)
        .await
        .unwrap();
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let browser = Browser {
        driver: session,
        server,
        shots,
    };
    (browser, driver)
}
