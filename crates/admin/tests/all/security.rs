//! The admin UI probed as an attacker would (OWASP ASVS level 1, issue #23): each test sends
//! the attack as it was found and checks it is refused. Add a probe here when a new one is
//! found; storage-backed probes run on SQLite and on Postgres.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use admin::{AdminSettings, AdminState, LoginLimits};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use store::testing::TestDb;
use store::{
    AuditLog, CaseReads, JobQueue, Sessions, Store, SuspectSites, Users, WorkReads, WorkUpdate,
    WorkWrites,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::ui::{Answer, Ui};
use common::{users, with_case};

const PASSWORD: &str = "correct+horse+battery";

/// `name_on_sqlite` and `name_on_postgres` running `body(&TestDb)`.
macro_rules! on_both {
    ($name:ident, $body:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn on_sqlite() {
                let db = store::testing::sqlite(stringify!($name)).await.unwrap();
                super::$body(&db).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn on_postgres() {
                let Some(db) = store::testing::postgres(stringify!($name)).await else {
                    return;
                };
                super::$body(&db).await;
            }
        }
    };
}

// 1. Open redirect after login ---------------------------------------------------------------

async fn login_goes_back_only_to_a_local_path(db: &TestDb) {
    users(&db.store).await;
    let ui = Ui::with(&db.store, |_| {});
    for next in [
        "%2F%09%2Fevil.example%2F", // a tab after the first /: browsers drop it
        "%2F%5C%2Fevil.example%2F", // a backslash
        "%2F%255C%2Fevil.example",  // one once percent-decoded
        "%2F%250A%2Fevil.example",
        "%2F%20%2Fevil.example",
        "%2F%E3%80%80%2Fevil.example",
        "%2F%2Fevil.example",
        "https%3A%2F%2Fevil.example%2F",
    ] {
        let a = ui
            .post_login(&format!("username=alice&password={PASSWORD}&next={next}"))
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{next}: {}", a.body);
        assert_eq!(a.location(), "/", "{next}");
        // The login page does not carry it either.
        let page = ui.get(&format!("/login?next={next}"), None).await;
        assert!(page.body.contains("name=\"next\" value=\"/\""), "{next}");
    }
    // CR/LF in `next` cannot go in a Location header: once the session exists it must still
    // be answered, not with a 500.
    let a = ui
        .post_login(&format!(
            "username=alice&password={PASSWORD}&next=%2Fcases%0D%0ASet-Cookie%3A%20x%3D1"
        ))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(a.location(), "/");
    assert!(a.cookie("copyhound_session").is_some());
    assert!(a.cookie("x").is_none());
    // A local path, non-ASCII included, is where the browser goes back to.
    let a = ui
        .post_login(&format!(
            "username=alice&password={PASSWORD}&next=%2Fworks%3Fq%3D%E7%BA%A2"
        ))
        .await;
    assert_eq!(a.location(), "/works?q=%E7%BA%A2");
}
on_both!(open_redirect, login_goes_back_only_to_a_local_path);

// 2. Login throttling beaten by parallel requests -------------------------------------------

async fn parallel_guesses_past_the_limit_are_refused_unchecked(db: &TestDb) {
    users(&db.store).await;
    let ui = Arc::new(Ui::with(&db.store, |_| {}));
    let limit = LoginLimits::default().per_user as usize;
    let (cookie, token) = ui.login_token().await;
    // 15 wrong passwords and the right one, all at the same moment.
    let forms: Vec<String> = (0..16)
        .map(|i| {
            let password = if i == 15 {
                PASSWORD.to_owned()
            } else {
                format!("wrong-{i}-password")
            };
            format!("username=rita&password={password}&csrf={token}")
        })
        .collect();
    let start = Arc::new(tokio::sync::Barrier::new(forms.len()));
    let tasks: Vec<_> = forms
        .into_iter()
        .map(|form| {
            let (ui, start, cookie) = (Arc::clone(&ui), Arc::clone(&start), cookie.clone());
            tokio::spawn(async move {
                start.wait().await;
                ui.post("/login", Some(&cookie), &form).await
            })
        })
        .collect();
    let mut checked = 0;
    let mut refused = Vec::new();
    for task in tasks {
        let a = task.await.unwrap();
        if a.status == StatusCode::TOO_MANY_REQUESTS {
            refused.push(a);
        } else {
            // Checked: a wrong guess is answered on the login form, the right one signs in.
            assert!(
                matches!(
                    a.status,
                    StatusCode::UNPROCESSABLE_ENTITY | StatusCode::SEE_OTHER
                ),
                "{}: {}",
                a.status,
                a.body
            );
            checked += 1;
        }
    }
    assert!(
        checked <= limit,
        "{checked} of 16 guesses were checked (the limit is {limit})"
    );
    assert_eq!(refused.len(), 16 - checked);
    // Item 9: the HTML 429 says when to come back.
    let retry: u64 = refused[0].headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=900).contains(&retry), "{retry}");
}
on_both!(
    parallel_logins,
    parallel_guesses_past_the_limit_are_refused_unchecked
);

// 3. Lockout as a weapon, and the limiter behind a proxy -------------------------------------

async fn strangers_cannot_lock_the_owner_out(db: &TestDb) {
    users(&db.store).await;
    let ui = Ui::with(&db.store, |_| {});
    // The owner signed in from this browser before: it holds a device cookie.
    let a = ui
        .post_login(&format!("username=alice&password={PASSWORD}"))
        .await;
    let device = a.cookie("copyhound_device").expect("a device cookie");
    // Strangers use the name's budget up; the next stranger waits, with the right password
    // too.
    for i in 0..LoginLimits::default().per_user {
        let a = ui
            .post_login(&format!("username=alice&password=guess-number-{i}"))
            .await;
        assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
    }
    let a = ui
        .post_login(&format!("username=alice&password={PASSWORD}"))
        .await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(a.headers.contains_key(header::RETRY_AFTER));
    // The owner's browser is not locked out: its cookie has a budget of its own.
    let a = ui
        .post_login_with(&format!("username=alice&password={PASSWORD}"), &[&device])
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert!(a.cookie("copyhound_session").is_some());
    // A device cookie is good for its own user only.
    let a = ui
        .post_login_with(&format!("username=rita&password={PASSWORD}"), &[&device])
        .await;
    assert!(
        a.cookie("copyhound_session").is_some(),
        "rita is not locked"
    );
    for i in 0..LoginLimits::default().per_user {
        ui.post_login(&format!("username=rita&password=guess-number-{i}"))
            .await;
    }
    let a = ui
        .post_login_with(&format!("username=rita&password={PASSWORD}"), &[&device])
        .await;
    assert_eq!(
        a.status,
        StatusCode::TOO_MANY_REQUESTS,
        "alice's cookie is no key to rita"
    );
}
on_both!(lockout, strangers_cannot_lock_the_owner_out);

/// A login form posted through a connection from `peer` carrying `forwarded_for`.
fn login_via(
    peer: &str,
    forwarded_for: Option<&str>,
    token: &(String, String),
    name: &str,
    password: &str,
) -> Request<Body> {
    let mut r = Ui::form(
        "/login",
        Some(&token.0),
        &format!("username={name}&password={password}&csrf={}", token.1),
    );
    let peer: SocketAddr = format!("{peer}:40000").parse().unwrap();
    r.extensions_mut().insert(ConnectInfo(peer));
    if let Some(xff) = forwarded_for {
        r.headers_mut()
            .insert("x-forwarded-for", xff.parse().unwrap());
    }
    r
}

/// `count` failed logins at as many names through `peer`, the `i`th claiming `forwarded(i)`.
async fn fail_logins(
    ui: &Ui,
    token: &(String, String),
    peer: &str,
    count: u32,
    forwarded: impl Fn(u32) -> String,
) {
    for i in 0..count {
        let a = ui
            .send(login_via(
                peer,
                Some(&forwarded(i)),
                token,
                &format!("nobody{i}"),
                "not-the-password",
            ))
            .await;
        // Checked and refused on the form, not yet limited.
        assert_eq!(
            a.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "attempt {i}: {}",
            a.body
        );
    }
}

async fn behind_a_trusted_proxy_each_client_has_its_own_budget(db: &TestDb) {
    users(&db.store).await;
    let ui = Ui::with(&db.store, |s| {
        s.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    });
    let token = ui.login_token().await;
    let per_address = LoginLimits::default().per_address;
    let vic =
        |peer: &str, forwarded: &str| login_via(peer, Some(forwarded), &token, "vic", PASSWORD);
    // More bad logins through the proxy than one address may make, each from another
    // client, each at another name: every other user still signs in through the proxy.
    fail_logins(&ui, &token, "127.0.0.1", per_address + 5, |i| {
        format!("6.6.6.6, 203.0.113.{i}")
    })
    .await;
    let a = ui.send(vic("127.0.0.1", "198.51.100.20")).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert!(a.cookie("copyhound_session").is_some());
    // One client behind the proxy is limited by its address, whatever it claims to its left.
    fail_logins(&ui, &token, "127.0.0.1", per_address, |i| {
        format!("10.9.9.{i}, 198.51.100.77")
    })
    .await;
    let a = ui.send(vic("127.0.0.1", "198.51.100.77")).await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
    // A peer that is no trusted proxy is not believed: its own address is limited.
    fail_logins(&ui, &token, "192.0.2.5", per_address, |i| {
        format!("203.0.113.{i}")
    })
    .await;
    let a = ui.send(vic("192.0.2.5", "203.0.113.250")).await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
}

on_both!(
    trusted_proxies,
    behind_a_trusted_proxy_each_client_has_its_own_budget
);

// 4. Memory through /login -------------------------------------------------------------------

/// A multipart upload of one file.
fn upload(cookie: &str, csrf: &str, filename: &str, bytes: &[u8]) -> Request<Body> {
    let boundary = "----copyhound-test-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Request::post("/works")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .header(header::HOST, "localhost")
        .header(header::COOKIE, cookie)
        .body(Body::from(body))
        .unwrap()
}

async fn bodies_are_limited_by_route(db: &TestDb) {
    users(&db.store).await;
    let ui = Ui::with(&db.store, |s| s.max_upload_bytes = 512 << 10);
    let (token_cookie, token) = ui.login_token().await;
    let big = "x".repeat(100 << 10);
    // /login, and every other form, takes 64 KiB.
    let a = ui
        .post(
            "/login",
            Some(&token_cookie),
            &format!("username=alice&password={big}&csrf={token}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.body);
    assert!(a.body.contains("at most 64 KiB"), "{}", a.body);
    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    let a = ui
        .post(
            "/cases/bulk",
            Some(&admin),
            &format!("csrf={csrf}&status=confirmed&ids={big}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.body);
    // The upload takes more, up to its own limit, past which it says so.
    let text = format!("第一章 开端\n{}", "正文。".repeat(30_000));
    assert!(text.len() > 100 << 10 && text.len() < 512 << 10);
    let a = ui
        .send(upload(&admin, &csrf, "book.txt", text.as_bytes()))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .send(upload(&admin, &csrf, "book.txt", &vec![b'a'; 600 << 10]))
        .await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.body);
    assert!(
        a.body.contains("an upload may be at most 512 KiB"),
        "{}",
        a.body
    );
    assert!(!a.body.contains("Error parsing"), "{}", a.body);
}
on_both!(body_limits, bodies_are_limited_by_route);

/// A server on 127.0.0.1 with `change`d settings; its address, and what stops it.
async fn server(
    store: &Store,
    change: impl FnOnce(&mut AdminSettings),
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let mut settings = AdminSettings {
        secure_cookies: false,
        ..AdminSettings::default()
    };
    change(&mut settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(admin::serve(
        listener,
        AdminState::new(store.clone(), settings),
        async move {
            let _ = stopped.await;
        },
    ));
    (addr, stop)
}

/// Reads what the server sends until it closes the connection, within `within`.
async fn read_to_close(stream: &mut TcpStream, within: Duration) -> String {
    let mut out = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut out))
        .await
        .expect("the server closed the connection in time")
        .ok();
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_30_mib_login_body_is_refused_before_it_is_read() {
    let db = store::testing::sqlite("login_body").await.unwrap();
    let (addr, _stop) = server(&db.store, |_| {}).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // Announce 30 MiB, send 128 KiB: the answer comes without the rest.
    let head = format!(
        "POST /login HTTP/1.1\r\nHost: {addr}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
        30 << 20
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&vec![b'a'; 128 << 10]).await.unwrap();
    let answer = read_to_close(&mut stream, Duration::from_secs(20)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

// 5. Login CSRF gaps -------------------------------------------------------------------------

async fn login_forms_need_their_token_and_this_origin(db: &TestDb) {
    users(&db.store).await;
    let ui = Ui::with(&db.store, |_| {});
    let form = format!("username=alice&password={PASSWORD}");
    let (cookie, token) = ui.login_token().await;
    let refused = |a: &Answer, why: &str| {
        assert_eq!(a.status, StatusCode::FORBIDDEN, "{why}: {}", a.body);
        assert!(a.cookie("copyhound_session").is_none(), "{why}");
    };
    // No token, a token without its cookie, a cookie without its token, a made-up pair.
    refused(&ui.post("/login", None, &form).await, "no token");
    refused(
        &ui.post("/login", None, &format!("{form}&csrf={token}"))
            .await,
        "no cookie",
    );
    refused(&ui.post("/login", Some(&cookie), &form).await, "no field");
    refused(
        &ui.post(
            "/login",
            Some("copyhound_login=ab.cd"),
            &format!("{form}&csrf=ab.cd"),
        )
        .await,
        "forged",
    );
    let with = |origin: Option<&str>, host: Option<&str>, uri: &str| {
        let mut r = Request::post(uri)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::COOKIE, &cookie);
        if let Some(o) = origin {
            r = r.header(header::ORIGIN, o);
        }
        if let Some(h) = host {
            r = r.header(header::HOST, h);
        }
        r.body(Body::from(format!("{form}&csrf={token}"))).unwrap()
    };
    // Origin: null (a sandboxed frame, a data: page) is another site.
    refused(
        &ui.send(with(Some("null"), Some("localhost"), "/login"))
            .await,
        "null",
    );
    // HTTP/2 has no Host: the :authority (the URI's) is compared.
    refused(
        &ui.send(with(
            Some("https://evil.example"),
            None,
            "http://localhost/login",
        ))
        .await,
        "h2 cross-site",
    );
    // HTTP/1.0 without Host: nothing to compare an Origin with.
    refused(
        &ui.send(with(Some("http://localhost"), None, "/login"))
            .await,
        "no host",
    );
    // The same site, on HTTP/2 or with Host, signs in.
    let a = ui
        .send(with(
            Some("http://localhost"),
            None,
            "http://localhost/login",
        ))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .send(with(Some("http://localhost"), Some("localhost"), "/login"))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    // Logged in, Origin: null is refused on every other form too.
    let (session, csrf) = ui.login("alice", PASSWORD).await;
    let mut r = Ui::form("/logout", Some(&session), &format!("csrf={csrf}"));
    r.headers_mut()
        .insert(header::ORIGIN, "null".parse().unwrap());
    assert_eq!(ui.send(r).await.status, StatusCode::FORBIDDEN);
}
on_both!(login_csrf, login_forms_need_their_token_and_this_origin);

// 6. API tokens outlive a password reset -----------------------------------------------------

async fn a_password_reset_revokes_api_tokens(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});
    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    let rita = store.user_by_name("rita").await.unwrap().unwrap();
    let a = ui
        .post(
            &format!("/users/{}/tokens", rita.id),
            Some(&admin),
            &format!("name=ci&csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let at = a.body.find("id=\"issued-token\">").unwrap() + 18;
    let token = a.body[at..].split('<').next().unwrap().to_owned();
    let api = |token: &str| {
        Request::get("/api/v1/cases")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap()
    };
    assert_eq!(ui.send(api(&token)).await.status, StatusCode::OK);
    // An admin resets rita's password in the UI.
    let a = ui
        .post(
            &format!("/users/{}", rita.id),
            Some(&admin),
            &format!("password=a+new+long+passphrase&csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(ui.send(api(&token)).await.status, StatusCode::UNAUTHORIZED);
    // The audit log says what was revoked.
    let audit = store.audit_of("user", rita.id.0).await.unwrap();
    let reset = audit.last().unwrap();
    assert_eq!(reset.actor, "alice");
    assert_eq!(reset.details["password"], "changed");
    assert_eq!(
        reset.details["api_tokens_revoked"][0]["prefix"],
        token[..12]
    );
    // A token issued after works.
    let issued = accounts::issue_api_token(store, rita.id, "after", None, "rita")
        .await
        .unwrap();
    assert_eq!(ui.send(api(&issued.token)).await.status, StatusCode::OK);
}
on_both!(password_reset, a_password_reset_revokes_api_tokens);

// 7. No header-read timeout ------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_closed_and_healthz_still_answers() {
    let db = store::testing::sqlite("slow_clients").await.unwrap();
    let (addr, _stop) = server(&db.store, |s| {
        s.header_read_timeout = Duration::from_millis(500);
    })
    .await;
    // 50 clients send half a request line and wait.
    let mut slow = Vec::new();
    for _ in 0..50 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"GET /healthz HT").await.unwrap();
        slow.push(stream);
    }
    let started = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(1), async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out
    })
    .await
    .expect("/healthz answered within a second");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(1));
    // Each half-open connection is closed by the server after the header timeout: reading
    // reaches its end (perhaps after a 408).
    for stream in &mut slow {
        let rest = read_to_close(stream, Duration::from_secs(30)).await;
        assert!(
            rest.is_empty() || rest.starts_with("HTTP/1.1 408"),
            "{rest}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_cap_wait_and_slow_bodies_time_out() {
    let db = store::testing::sqlite("connection_cap").await.unwrap();
    let (addr, _stop) = server(&db.store, |s| {
        s.max_connections = 2;
        // Without the share kept for the ops endpoints: the third /healthz must wait here
        // (connections.rs tests that share).
        s.reserved_ops_connections = 0;
        s.request_timeout = Duration::from_millis(500);
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"GET /healthz HT").await.unwrap();
        held.push(stream);
    }
    let mut third = TcpStream::connect(addr).await.unwrap();
    common::wire::ask_healthz_and_see_it_wait(
        &mut third,
        "a third connection was served past the cap of two",
    )
    .await;
    // One of the two ends: the third is served.
    drop(held.pop());
    let answer = read_to_close(&mut third, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    // A body that never comes is answered 408 after the request timeout.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\
              Content-Length: 100\r\n\r\nusername=",
        )
        .await
        .unwrap();
    let answer = read_to_close(&mut stream, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

// 8. Uploads ---------------------------------------------------------------------------------

/// An EPUB whose one entry inflates a thousandfold: the importer refuses it.
fn epub_bomb() -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(b"application/epub+zip").unwrap();
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("OEBPS/bomb.xhtml", deflated).unwrap();
    zip.write_all(&vec![b' '; 8 << 20]).unwrap();
    zip.finish().unwrap().into_inner()
}

async fn uploads_are_deleted_when_their_import_ends(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});
    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    let text = format!("第一章 开端\n{}", "正文。".repeat(300));
    // A title from a file name that would drive the terminal (a C1 CSI: a multipart header
    // may not carry an ESC byte itself) and reverse what follows.
    let name = "Evil\u{9b}2J\u{202e}txt.txt";
    let a = ui.send(upload(&admin, &csrf, name, text.as_bytes())).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .send(upload(&admin, &csrf, "bomb.epub", &epub_bomb()))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let uploads = ui.settings.upload_dir.clone();
    assert_eq!(std::fs::read_dir(&uploads).unwrap().count(), 2);

    let handler = pipeline::Handler::new(
        store.clone(),
        import::Importer::new(import::ImportSettings::default()).unwrap(),
        Arc::new(detection::Analyser::new(
            store.clone(),
            Default::default(),
            matcher::MatcherSettings::default(),
        )),
    );
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let worker = pipeline::serve(
        store,
        handler,
        store::WorkerSettings {
            poll_interval: Duration::from_millis(20),
            run_schedules: false,
            ..store::WorkerSettings::default()
        },
        stopped,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let counts = store.counts().await.unwrap();
        let ended: u64 = counts.iter().map(|c| c.done + c.dead).sum();
        if ended == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the imports did not end: {counts:?}"
        );
        // Polling for a condition, within a deadline.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.send(true).unwrap();
    worker.await.unwrap();
    // The imported file and the refused bomb are both gone.
    let left: Vec<_> = std::fs::read_dir(&uploads).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    // The title from the file name was stored without its control characters.
    let works = store
        .works(&store::WorkFilter::All, store::Page::all())
        .await
        .unwrap();
    assert_eq!(works.len(), 1);
    assert_eq!(works[0].title, "Evil2Jtxt");
}
on_both!(uploads, uploads_are_deleted_when_their_import_ends);

async fn titles_from_the_api_are_stored_without_controls(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let rita = store.user_by_name("rita").await.unwrap().unwrap();
    let token = accounts::issue_api_token(store, rita.id, "ci", None, "test")
        .await
        .unwrap()
        .token;
    let ui = Ui::with(store, |_| {});
    let body = serde_json::json!({
        "title": "\u{1b}]0;pwned\u{7}Title\u{202e}",
        "author": "An\u{9b}31mAuthor",
        "text": "第一章 开端\n正文。",
    });
    let a = ui
        .send(
            Request::post("/api/v1/works")
                .header(header::AUTHORIZATION, format!("Bearer {token}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let job: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let job = store
        .job(store::JobId(job["job_id"].as_i64().unwrap()))
        .await
        .unwrap();
    let queued: jobs::Job = serde_json::from_str(&job.payload).unwrap();
    let jobs::Job::ImportWork { title, author, .. } = queued else {
        panic!("{queued:?}")
    };
    assert_eq!(title.as_deref(), Some("]0;pwnedTitle"));
    assert_eq!(author.as_deref(), Some("An31mAuthor"));
}
on_both!(api_titles, titles_from_the_api_are_stored_without_controls);

// 9. Smaller ones ----------------------------------------------------------------------------

async fn weak_passwords_and_look_alike_names_are_refused(db: &TestDb) {
    users(&db.store).await;
    let ui = Ui::with(&db.store, |_| {});
    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    let add = |name: &str, password: &str| {
        format!("username={name}&role=viewer&password={password}&csrf={csrf}")
    };
    for (name, password, says) in [
        ("nina", "elevenchars", "use at least 12"),
        ("nina", "password1234", "most common passwords"),
        ("nina", "QwertyQwerty", "most common passwords"),
        ("nina.long.name", "NINA.LONG.NAME", "is the user name"),
        // Another case, a capital I for an l, a Cyrillic а: names taken for alice's.
        (
            "ALICE",
            "a long enough passphrase",
            "looks like the existing user",
        ),
        (
            "aIice",
            "a long enough passphrase",
            "looks like the existing user",
        ),
        (
            "%D0%B0lice",
            "a long enough passphrase",
            "looks like the existing user",
        ),
        // Issue #43: punctuation, one repeated character, leetspeak, the product's name.
        (
            "alice.",
            "a long enough passphrase",
            "looks like the existing user",
        ),
        (
            "alice_",
            "a long enough passphrase",
            "looks like the existing user",
        ),
        ("nina", "aaaaaaaaaaaa", "one character repeated"),
        ("nina", "p%40ssw0rd1234", "most common passwords"),
        ("nina", "copyhound2026", "name of this software"),
    ] {
        let a = ui.post("/users", Some(&admin), &add(name, password)).await;
        // Refused on the form (issue #26): 422 with the reason beside the field.
        assert_eq!(
            a.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{name}/{password}: {}",
            a.body
        );
        // The message's values are shown apart, as data.
        let said = a
            .body
            .replace("<span class=\"mono value\">", "")
            .replace("</span>", "");
        assert!(said.contains(says), "{name}: {}", a.body);
    }
    let a = ui
        .post(
            "/users",
            Some(&admin),
            &add("nina", "a long enough passphrase"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
}
on_both!(
    password_rules,
    weak_passwords_and_look_alike_names_are_refused
);

async fn csv_cells_cannot_be_formulas(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    let work = store.case(case).await.unwrap().work_id;
    store
        .update_work(
            work,
            &WorkUpdate {
                title: Some("=HYPERLINK(\"http://evil.example\",\"open\")".into()),
                author: None,
            },
            "test",
        )
        .await
        .unwrap();
    let rita = store.user_by_name("rita").await.unwrap().unwrap();
    let token = accounts::issue_api_token(store, rita.id, "ci", None, "test")
        .await
        .unwrap()
        .token;
    let ui = Ui::with(store, |_| {});
    let a = ui
        .send(
            Request::get("/api/v1/reports?format=csv")
                .header(header::AUTHORIZATION, format!("Bearer {token}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let mut rows = csv::Reader::from_reader(a.body.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let title = headers.iter().position(|h| h == "work_title").unwrap();
    let row = rows.records().next().unwrap().unwrap();
    assert_eq!(&row[title], "'=HYPERLINK(\"http://evil.example\",\"open\")");
    for cell in &row {
        assert!(!cell.starts_with(['=', '+', '-', '@']), "{cell}");
    }
}
on_both!(csv_injection, csv_cells_cannot_be_formulas);

async fn idle_sessions_end(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});
    let (session, _) = ui.login("alice", PASSWORD).await;
    let (other, _) = ui.login("rita", PASSWORD).await;
    let key = |cookie: &str| {
        let value = cookie.split_once('=').unwrap().1;
        accounts::token_hash(value)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    // Unused for longer than the idle timeout (two hours by default), well within the
    // absolute twelve.
    let idle = chrono::Utc::now() - chrono::TimeDelta::minutes(121);
    store.touch_session(&key(&session), idle).await.unwrap();
    let a = ui.get("/cases", Some(&session)).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert!(a.location().starts_with("/login"), "{}", a.location());
    // Ended for good, not only refused once.
    assert!(
        store
            .session(&key(&session), chrono::Utc::now())
            .await
            .unwrap()
            .is_none()
    );
    // Used within it: still good, and the use is recorded.
    let recent = chrono::Utc::now() - chrono::TimeDelta::minutes(119);
    store.touch_session(&key(&other), recent).await.unwrap();
    assert_eq!(ui.get("/cases", Some(&other)).await.status, StatusCode::OK);
    let seen = store
        .session(&key(&other), chrono::Utc::now())
        .await
        .unwrap()
        .unwrap()
        .last_seen_at;
    assert!(
        chrono::Utc::now() - seen < chrono::TimeDelta::minutes(1),
        "{seen}"
    );
}
on_both!(idle_sessions, idle_sessions_end);

#[test]
fn settings_refuse_an_idle_timeout_past_the_lifetime() {
    let settings = AdminSettings {
        session_idle_timeout: Duration::from_secs(13 * 3600),
        ..AdminSettings::default()
    };
    let err = settings.validate().unwrap_err().to_string();
    assert!(
        err.starts_with("session_idle_timeout = 46800s is out of range"),
        "{err}"
    );
    AdminSettings::default().validate().unwrap();
}

// 10. Issue #43: a stranger's lockout, look-alike races, removal files, sites by name,
// secrets in doctor -------------------------------------------------------------------------

async fn a_strangers_failures_lock_the_stranger_only(db: &TestDb) {
    users(&db.store).await;
    let ui = Ui::with(&db.store, |_| {});
    let token = ui.login_token().await;
    let stranger = "192.0.2.66";
    for i in 0..LoginLimits::default().per_user {
        let a = ui
            .send(login_via(
                stranger,
                None,
                &token,
                "alice",
                &format!("guess-number-{i}"),
            ))
            .await;
        assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    }
    let a = ui
        .send(login_via(stranger, None, &token, "alice", PASSWORD))
        .await;
    assert_eq!(
        a.status,
        StatusCode::TOO_MANY_REQUESTS,
        "the stranger waits"
    );
    // A browser that never signed in, from another address: not locked out.
    let a = ui
        .send(login_via("198.51.100.7", None, &token, "alice", PASSWORD))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert!(a.cookie("copyhound_session").is_some());
}
on_both!(
    lockout_per_address,
    a_strangers_failures_lock_the_stranger_only
);

async fn look_alike_names_cannot_race_and_old_pairs_do_not_stop_the_migration(db: &TestDb) {
    let store = &db.store;
    // Two names made before their look-alike forms were kept: migrating again keeps both,
    // the older with its form, the newer without.
    db.execute(
        "INSERT INTO users (username, password_hash, role) VALUES ('bob', 'x', 'viewer'); \
         INSERT INTO users (username, password_hash, role) VALUES ('bob.', 'x', 'viewer')",
    )
    .await;
    store.migrate().await.unwrap();
    assert_eq!(
        db.scalar("SELECT COUNT(*) FROM users WHERE username = 'bob' AND name_key = 'bob'")
            .await,
        1
    );
    assert_eq!(
        db.scalar("SELECT COUNT(*) FROM users WHERE username = 'bob.' AND name_key IS NULL")
            .await,
        1
    );
    assert!(store.user_by_name("bob.").await.unwrap().is_some());
    for name in ["bob_", "BOB-"] {
        let err = accounts::add_user(store, name, None, store::Role::Viewer, PASSWORD, "test")
            .await
            .unwrap_err();
        assert!(err.to_string().contains("looks like"), "{name}: {err}");
    }
    // Look-alike names created at the same moment, past any check done before the insert:
    // one gets in.
    let names = [
        "carol",
        "carol.",
        "carol_",
        "carol-",
        "Carol",
        "CAROL.",
        "caro_l",
        "c.a.r.o.l",
    ];
    let start = Arc::new(tokio::sync::Barrier::new(names.len()));
    let tasks: Vec<_> = names
        .into_iter()
        .map(|name| {
            let (store, start) = (store.clone(), Arc::clone(&start));
            tokio::spawn(async move {
                start.wait().await;
                store
                    .create_user(
                        &store::NewUser {
                            username: name,
                            display_name: None,
                            password_hash: "x",
                            role: store::Role::Viewer,
                        },
                        "test",
                    )
                    .await
            })
        })
        .collect();
    let mut created = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(user) => created.push(user.username),
            Err(store::Error::Conflict(message)) => {
                assert!(message.contains("looks like"), "{message}");
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(created.len(), 1, "{created:?}");
}
on_both!(
    look_alike_race,
    look_alike_names_cannot_race_and_old_pairs_do_not_stop_the_migration
);

async fn removal_files_cannot_hold_formulas(db: &TestDb) {
    let store = &db.store;
    let case = with_case(store).await;
    let record = store.case(case).await.unwrap();
    store
        .update_work(
            record.work_id,
            &WorkUpdate {
                title: Some("=HYPERLINK(\"http://evil.example\",\"open\")".into()),
                author: None,
            },
            "test",
        )
        .await
        .unwrap();
    let mut file = Vec::new();
    let written = casework::removals::export_removals(store, &[record.status], &mut file)
        .await
        .unwrap();
    assert_eq!(written.urls, 1);
    let file = String::from_utf8(file).unwrap();
    let (url, work) = file.trim_end().split_once('\t').unwrap();
    assert_eq!(url, "http://pirate.example/book/1.html");
    assert!(
        work.starts_with("'=HYPERLINK(\"http://evil.example\",\"open\")"),
        "{work}"
    );
}
on_both!(removal_formulas, removal_files_cannot_hold_formulas);

async fn a_site_whose_name_resolves_to_loopback_is_refused_at_add(db: &TestDb) {
    users(&db.store).await;
    // `pirate.test` resolves to 127.0.0.1, through the table the resolver reads first.
    let ui = Ui::with(&db.store, |s| {
        s.crawler
            .fetch
            .safety
            .hosts
            .insert("pirate.test".into(), "127.0.0.1".parse().unwrap());
    });
    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    let a = ui
        .post(
            "/sites",
            Some(&admin),
            &format!("start_url=http%3A%2F%2Fpirate.test%2Fbook%2F&csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    assert!(
        a.body.contains("pirate.test") && a.body.contains("loopback"),
        "{}",
        a.body
    );
    assert!(
        a.body.contains("allow_private"),
        "how to allow it: {}",
        a.body
    );
    assert!(db.store.watched_sites().await.unwrap().is_empty());
    // A name that does not resolve (yet) is added: each fetch checks it then.
    let a = ui
        .post(
            "/sites",
            Some(&admin),
            &format!("start_url=http%3A%2F%2Fpirate.example%2Fbook%2F&csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
}
on_both!(
    site_names,
    a_site_whose_name_resolves_to_loopback_is_refused_at_add
);

/// `doctor`'s storage check against an S3 store that refuses the keys: s3rver, as S3 does,
/// answers with the access key it was sent, and the finding must not repeat it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_never_prints_the_object_stores_keys() {
    let Some(s3) = store::testing::S3Server::start().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let settings = store::StorageSettings {
        access_key_id: Some(bounds::Secret::new("AKIACOPYHOUNDLEAKED")),
        secret_access_key: Some(bounds::Secret::new("the-secret-access-key-value")),
        ..s3.storage("doctor", &dir.path().join("spool"))
    };
    let finding = pipeline::doctor::body_storage(&settings, None).await;
    assert_eq!(finding.level, pipeline::doctor::Level::Fail, "{finding}");
    let shown = finding.to_string();
    assert!(
        shown.contains("InvalidAccessKeyId"),
        "the store's answer: {shown}"
    );
    assert!(!shown.contains("AKIACOPYHOUNDLEAKED"), "{shown}");
    assert!(!shown.contains("the-secret-access-key-value"), "{shown}");
    assert!(shown.contains(bounds::MASK), "{shown}");
}
