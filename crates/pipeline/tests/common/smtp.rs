//! A real SMTP server on 127.0.0.1 for the mail tests: Python's aiosmtpd running
//! `tests/smtp/server.py` in one of its modes, with a CA and a server certificate made by the
//! `openssl` CLI for STARTTLS. What it received is read back from its folder.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use notification::{SmtpSettings, SmtpTls};
use tokio::io::AsyncBufReadExt;

/// What the server does with a message (see `tests/smtp/server.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Takes every message.
    Accept,
    /// Takes every message after a required STARTTLS.
    Starttls,
    /// Refuses every message with 550.
    Refuse,
    /// Never says a word.
    Stall,
    /// Closes the connection when the message's final dot arrives.
    Drop,
}

impl Mode {
    fn arg(self) -> &'static str {
        match self {
            Mode::Accept => "accept",
            Mode::Starttls => "starttls",
            Mode::Refuse => "refuse",
            Mode::Stall => "stall",
            Mode::Drop => "drop",
        }
    }
}

/// A message as the server received it.
#[derive(Debug)]
pub struct Received {
    /// The bytes as received.
    pub raw: Vec<u8>,
    /// The envelope and the message as Python's email package read it.
    pub json: serde_json::Value,
    /// The folder its attachments are in, as `N.<file name>`.
    base: PathBuf,
}

impl Received {
    /// A header, decoded.
    pub fn header(&self, name: &str) -> &str {
        self.json["headers"][name.to_ascii_lowercase()]
            .as_str()
            .unwrap_or_else(|| panic!("no {name} header: {}", self.json["headers"]))
    }

    /// The text of its first part of `content_type`.
    pub fn text(&self, content_type: &str) -> String {
        self.parts()
            .iter()
            .find(|p| p["type"] == content_type && p["filename"].is_null())
            .and_then(|p| p["text"].as_str())
            .unwrap_or_else(|| panic!("no {content_type} part: {:?}", self.parts()))
            .to_owned()
    }

    /// Each part's JSON.
    pub fn parts(&self) -> &Vec<serde_json::Value> {
        self.json["parts"].as_array().unwrap()
    }

    /// The bytes of attachment `name`.
    pub fn attachment(&self, name: &str) -> Vec<u8> {
        let mut path = self.base.clone().into_os_string();
        path.push(format!(".{name}"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("attachment {name}: {e}"))
    }
}

/// A running server; stopped when dropped (its standard input closes and it is killed).
pub struct SmtpServer {
    child: tokio::process::Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    out: tempfile::TempDir,
    /// The CA that signed its certificate (STARTTLS mode).
    pub ca: Option<PathBuf>,
    _certs: Option<tempfile::TempDir>,
}

/// Whether Python's aiosmtpd is installed.
fn aiosmtpd_available() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import aiosmtpd"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A CA and a certificate for 127.0.0.1 it signed, in `dir`: `ca.pem`, `leaf.pem`,
/// `leaf.key`.
fn certificates(dir: &Path) {
    std::fs::write(
        dir.join("ext.cnf"),
        "[leaf]\nbasicConstraints = CA:FALSE\nsubjectAltName = IP:127.0.0.1\n\
         extendedKeyUsage = serverAuth\n",
    )
    .unwrap();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=copyhound test CA",
    ]);
    testkit::tsa::openssl(dir, &ca);
    let mut csr = vec!["req"];
    csr.extend(ec);
    csr.extend([
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    testkit::tsa::openssl(dir, &csr);
    testkit::tsa::openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-extensions",
            "leaf",
        ],
    );
}

impl SmtpServer {
    /// Starts a server in `mode`. `None` (with a loud SKIPPED line) when aiosmtpd or openssl
    /// is missing, unless `CI=true`, which makes that a failure.
    pub async fn start(mode: Mode) -> Option<SmtpServer> {
        if !aiosmtpd_available() || !testkit::tsa::openssl_available() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "python3 with aiosmtpd and the openssl CLI are required under CI=true \
                 (.ci/run installs them)"
            );
            eprintln!("SKIPPED: python3 -m aiosmtpd or openssl is missing: no SMTP test ran");
            return None;
        }
        let out = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/smtp/server.py");
        let mut command = tokio::process::Command::new("python3");
        command
            .arg(&script)
            .arg(mode.arg())
            .arg(out.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let (mut ca, mut certs) = (None, None);
        if mode == Mode::Starttls {
            let dir = tempfile::tempdir().unwrap();
            certificates(dir.path());
            command
                .arg(dir.path().join("leaf.pem"))
                .arg(dir.path().join("leaf.key"));
            ca = Some(dir.path().join("ca.pem"));
            certs = Some(dir);
        }
        let mut child = command.spawn().expect("starting the SMTP test server");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        tokio::time::timeout(
            Duration::from_secs(30),
            tokio::io::BufReader::new(stdout).read_line(&mut line),
        )
        .await
        .expect("the SMTP test server says READY within 30 s")
        .unwrap();
        let port = line
            .strip_prefix("READY ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the SMTP test server said {line:?}"));
        Some(SmtpServer {
            child,
            port,
            out,
            ca,
            _certs: certs,
        })
    }

    /// Settings that reach this server: plain (STARTTLS, trusting its CA, in that mode),
    /// a short timeout, the given sender.
    pub fn settings(&self, from: &str) -> SmtpSettings {
        SmtpSettings {
            host: "127.0.0.1".into(),
            port: self.port,
            tls: if self.ca.is_some() {
                SmtpTls::Starttls
            } else {
                SmtpTls::None
            },
            from: from.into(),
            timeout: Duration::from_secs(10),
            ca_certificates: self.ca.clone(),
            ..SmtpSettings::default()
        }
    }

    /// The messages received so far, in order. A message is written before the server
    /// answers 250, so one a send saw accepted is here.
    pub fn received(&self) -> Vec<Received> {
        (1..)
            .map(|n| self.out.path().join(n.to_string()))
            .take_while(|base| base.with_extension("eml").exists())
            .map(|base| Received {
                raw: std::fs::read(base.with_extension("eml")).unwrap(),
                json: serde_json::from_slice(&std::fs::read(base.with_extension("json")).unwrap())
                    .unwrap(),
                base,
            })
            .collect()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.start_kill();
    }
}
