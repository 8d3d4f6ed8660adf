//! The few WebDriver commands the renderer sends to chromedriver, over loopback HTTP.
//!
//! Four endpoints (status, new session, navigate, execute a script) and DevTools commands
//! through chromedriver's `goog/cdp/execute`, each with its own client-side
//! timeout: a page stuck in a loop makes chromedriver itself hang, and the renderer has to
//! get its turn back to kill the browser (sessions end with chromedriver's process group,
//! killed). A WebDriver client crate would add a dependency to
//! the product for these, and thirtyfour (used by the UI's browser tests) sends DevTools
//! commands only with its `cdp` feature.

use std::time::Duration;

use serde_json::{Value, json};

/// What a command failed with.
#[derive(Debug)]
pub enum Failure {
    /// chromedriver answered with a WebDriver error (`timeout`, `unknown error` for a crashed
    /// tab, ...).
    Protocol { error: String, message: String },
    /// No answer in time, or the connection failed: the browser is not usable.
    Transport(String),
}

impl Failure {
    /// A page-load or script timeout reported by chromedriver: the browser still answers.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Protocol { error, .. } if error == "timeout" || error == "script timeout")
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Protocol { error, message } => {
                let first = message.lines().next().unwrap_or_default();
                write!(f, "{error}: {first}")
            }
            Self::Transport(e) => write!(f, "chromedriver did not answer: {e}"),
        }
    }
}

/// A chromedriver on `127.0.0.1` and, once [`Session::open`] succeeded, one of its sessions.
pub struct Session {
    http: reqwest::Client,
    base: String,
    id: String,
}

impl Session {
    /// Opens a session with `capabilities` (the `alwaysMatch` object) on the chromedriver
    /// listening at `port`.
    pub async fn open(port: u16, capabilities: Value, wait: Duration) -> Result<Self, Failure> {
        let http = reqwest::Client::builder()
            // The browser's proxy is for the browser; chromedriver is reached directly.
            .no_proxy()
            .build()
            .map_err(|e| Failure::Transport(e.to_string()))?;
        let mut session = Self {
            http,
            base: format!("http://127.0.0.1:{port}"),
            id: String::new(),
        };
        let value = session
            .send(
                reqwest::Method::POST,
                "/session",
                json!({ "capabilities": { "alwaysMatch": capabilities } }),
                wait,
            )
            .await?;
        session.id = value["sessionId"]
            .as_str()
            .ok_or_else(|| Failure::Transport(format!("no session id in {value}")))?
            .to_owned();
        Ok(session)
    }

    /// Whether chromedriver answers `/status` as ready.
    pub async fn ready(port: u16) -> bool {
        let Ok(http) = reqwest::Client::builder().no_proxy().build() else {
            return false;
        };
        let url = format!("http://127.0.0.1:{port}/status");
        match http.get(url).timeout(Duration::from_secs(2)).send().await {
            Ok(r) => r.bytes().await.is_ok_and(|b| {
                serde_json::from_slice::<Value>(&b)
                    .is_ok_and(|v| v["value"]["ready"].as_bool() == Some(true))
            }),
            Err(_) => false,
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Value,
        wait: Duration,
    ) -> Result<Value, Failure> {
        let request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .timeout(wait);
        let request = if method == reqwest::Method::DELETE {
            request
        } else {
            request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string())
        };
        let response = request
            .send()
            .await
            .map_err(|e| Failure::Transport(e.to_string()))?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| Failure::Transport(e.to_string()))?;
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| Failure::Transport(e.to_string()))?;
        let value = value.get("value").cloned().unwrap_or(Value::Null);
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            return Err(Failure::Protocol {
                error: error.to_owned(),
                message: value["message"].as_str().unwrap_or_default().to_owned(),
            });
        }
        Ok(value)
    }

    fn path(&self, tail: &str) -> String {
        format!("/session/{}{tail}", self.id)
    }

    /// Navigates and waits for the page's load (or the session's page-load timeout).
    pub async fn goto(&self, url: &str, wait: Duration) -> Result<(), Failure> {
        self.send(
            reqwest::Method::POST,
            &self.path("/url"),
            json!({ "url": url }),
            wait,
        )
        .await
        .map(drop)
    }

    /// Runs `script` (a function body; `arguments` are `args`) and returns what it returns.
    pub async fn execute(
        &self,
        script: &str,
        args: Value,
        wait: Duration,
    ) -> Result<Value, Failure> {
        self.send(
            reqwest::Method::POST,
            &self.path("/execute/sync"),
            json!({ "script": script, "args": args }),
            wait,
        )
        .await
    }

    /// A DevTools protocol command on the session's page.
    pub async fn cdp(&self, cmd: &str, params: Value, wait: Duration) -> Result<Value, Failure> {
        self.send(
            reqwest::Method::POST,
            &self.path("/goog/cdp/execute"),
            json!({ "cmd": cmd, "params": params }),
            wait,
        )
        .await
    }
}
