//! A local RFC 3161 time-stamping authority for tests (feature `tsa`): a throwaway CA and TSA
//! certificate made with the `openssl` CLI in a temp directory, and an HTTP server on
//! 127.0.0.1 whose handler answers each query with `openssl ts -reply`. No outside TSA is
//! ever asked.
//!
//! [`LocalTsa::start`] returns `None` (printing a loud `SKIPPED` line) when `openssl` is
//! missing, and panics instead under `CI=true`, so CI cannot pass without the tests.
//!
//! What the server answers is switchable ([`Reply`]): openssl's reply, openssl refusing
//! (its config accepts only SHA-512 imprints, so a SHA-256 query gets `rejection`/`badAlg`),
//! fixed bytes, an HTTP error, an endless body, or silence.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

/// What the local TSA answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `openssl ts -reply` with the TSA's key: a granted token.
    Openssl,
    /// `openssl ts -reply` with a config that accepts only SHA-512 imprints: `rejection`.
    OpensslRejecting,
    /// These bytes, as a 200 `application/timestamp-reply`.
    Bytes(Vec<u8>),
    /// An empty answer with this HTTP status.
    Status(u16),
    /// A 200 whose body never ends (1 MiB chunks, no length).
    Endless,
    /// No answer for this long.
    Stall(Duration),
}

/// A running local TSA. The server stops and the files go when it is dropped.
pub struct LocalTsa {
    /// Where to POST queries (`http://127.0.0.1:PORT/tsr`).
    pub url: String,
    /// The CA certificate (PEM) the TSA's certificate is signed by.
    pub ca_pem: PathBuf,
    /// The TSA's certificate (PEM).
    pub tsa_pem: PathBuf,
    /// Another CA's certificate (PEM), which the TSA does not chain to.
    pub other_ca_pem: PathBuf,
    dir: tempfile::TempDir,
    reply: Arc<Mutex<Reply>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for LocalTsa {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Whether the `openssl` CLI runs here.
pub fn openssl_available() -> bool {
    Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the `openssl` CLI in `dir` with `args` (shared by the tests that make certificates).
///
/// # Panics
/// When it cannot run or fails, with its standard error.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running openssl");
    assert!(
        out.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The TSA section of an `openssl ts` config, signing with `dir`'s key and accepting
/// `digests`. Three digits of `genTime` precision exercise fractional seconds.
fn tsa_config(dir: &Path, digests: &str) -> String {
    format!(
        "[ tsa ]\n\
         default_tsa = tsa_config\n\
         [ tsa_config ]\n\
         dir = {dir}\n\
         serial = $dir/tsaserial\n\
         crypto_device = builtin\n\
         signer_cert = $dir/tsa.pem\n\
         certs = $dir/ca.pem\n\
         signer_key = $dir/tsa.key\n\
         signer_digest = sha256\n\
         default_policy = 1.2.3.4.1\n\
         digests = {digests}\n\
         accuracy = secs:1, millisecs:500, microsecs:100\n\
         clock_precision_digits = 3\n\
         ordering = yes\n\
         tsa_name = yes\n\
         ess_cert_id_chain = no\n\
         ess_cert_id_alg = sha256\n",
        dir = dir.display()
    )
}

impl LocalTsa {
    /// Makes the keys and certificates and starts the server (answering [`Reply::Openssl`]).
    /// `None` when `openssl` is missing (and not under `CI=true`).
    ///
    /// # Panics
    /// When `openssl` is missing under `CI=true`, or fails.
    pub async fn start() -> Option<LocalTsa> {
        if !openssl_available() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "the openssl CLI is missing, and CI=true requires the local-TSA tests to run"
            );
            eprintln!("SKIPPED: the openssl CLI is missing, so the local-TSA tests did not run");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(
            d.join("ext.cnf"),
            "[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n\
             [tsa]\nbasicConstraints = CA:FALSE\nkeyUsage = critical,digitalSignature\n\
             extendedKeyUsage = critical,timeStamping\n",
        )
        .unwrap();
        for (name, cn) in [("ca", "copyhound test CA"), ("other", "someone else's CA")] {
            openssl(
                d,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-keyout",
                    &format!("{name}.key"),
                    "-out",
                    &format!("{name}.pem"),
                    "-days",
                    "30",
                    "-subj",
                    &format!("/CN={cn}"),
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign",
                ],
            );
        }
        openssl(
            d,
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "tsa.key",
                "-out",
                "tsa.csr",
                "-subj",
                "/CN=copyhound test TSA",
            ],
        );
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "tsa.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-set_serial",
                "2",
                "-days",
                "30",
                "-extfile",
                "ext.cnf",
                "-extensions",
                "tsa",
                "-out",
                "tsa.pem",
            ],
        );
        std::fs::write(d.join("tsaserial"), "01\n").unwrap();
        std::fs::write(d.join("tsa.cnf"), tsa_config(d, "sha256, sha384, sha512")).unwrap();
        std::fs::write(d.join("rejecting.cnf"), tsa_config(d, "sha512")).unwrap();

        let reply = Arc::new(Mutex::new(Reply::Openssl));
        let state = Served {
            dir: d.to_owned(),
            reply: Arc::clone(&reply),
            // One openssl at a time: it rewrites the serial file.
            lock: Arc::new(tokio::sync::Mutex::new(())),
        };
        let app = axum::Router::new()
            .route("/tsr", axum::routing::post(answer))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/tsr", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Some(LocalTsa {
            url,
            ca_pem: d.join("ca.pem"),
            tsa_pem: d.join("tsa.pem"),
            other_ca_pem: d.join("other.pem"),
            dir,
            reply,
            server,
        })
    }

    /// Switches what the server answers from now on.
    pub fn reply(&self, reply: Reply) {
        *self.reply.lock().unwrap() = reply;
    }

    /// The temp directory holding the keys, certificates and configs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

#[derive(Clone)]
struct Served {
    dir: PathBuf,
    reply: Arc<Mutex<Reply>>,
    lock: Arc<tokio::sync::Mutex<()>>,
}

async fn answer(State(s): State<Served>, query: Bytes) -> Response {
    let reply = s.reply.lock().unwrap().clone();
    let config = match reply {
        Reply::Openssl => "tsa.cnf",
        Reply::OpensslRejecting => "rejecting.cnf",
        Reply::Bytes(bytes) => return token_reply(bytes),
        Reply::Status(code) => {
            return StatusCode::from_u16(code).unwrap().into_response();
        }
        Reply::Endless => {
            let chunks = futures_util::stream::repeat_with(|| {
                Ok::<_, std::io::Error>(Bytes::from(vec![0x30u8; 1 << 20]))
            })
            .take(4096);
            return Response::new(Body::from_stream(chunks));
        }
        Reply::Stall(how_long) => {
            tokio::time::sleep(how_long).await;
            return StatusCode::GATEWAY_TIMEOUT.into_response();
        }
    };
    let _one = s.lock.lock().await;
    let dir = s.dir.clone();
    let out = tokio::task::spawn_blocking(move || {
        let n = std::process::id();
        let (q, r) = (dir.join(format!("q{n}.tsq")), dir.join(format!("r{n}.tsr")));
        std::fs::write(&q, &query).unwrap();
        let out = Command::new("openssl")
            .args(["ts", "-reply", "-config"])
            .arg(dir.join(config))
            .arg("-queryfile")
            .arg(&q)
            .arg("-out")
            .arg(&r)
            .output()
            .expect("running openssl ts -reply");
        assert!(
            out.status.success(),
            "openssl ts -reply failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(&r).unwrap()
    })
    .await
    .unwrap();
    token_reply(out)
}

fn token_reply(bytes: Vec<u8>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/timestamp-reply")],
        bytes,
    )
        .into_response()
}
