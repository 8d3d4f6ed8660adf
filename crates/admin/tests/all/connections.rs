//! What a connection may cost the server (issue #43, point 1): real TCP clients on loopback
//! addresses (127.0.0.2 and on are other clients) that hold connections open, trickle bodies
//! or fill the cap, against the others' `/healthz` and pages.

use crate::common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use admin::{AdminSettings, AdminState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// A server on 127.0.0.1 with `change` made to the test settings, until the sender drops.
async fn server(
    db: &store::testing::TestDb,
    change: impl FnOnce(&mut AdminSettings),
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let mut settings = AdminSettings {
        secure_cookies: false,
        ..AdminSettings::default()
    };
    change(&mut settings);
    settings.validate().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(admin::serve(
        listener,
        AdminState::new(db.store.clone(), settings),
        async move {
            let _ = stopped.await;
        },
    ));
    (addr, stop)
}

/// A connection to `server` from the loopback address `from`.
async fn connect_from(from: [u8; 4], server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    socket.connect(server).await.unwrap()
}

/// Sends `GET path` with `Connection: close` from `from` and reads the whole answer within
/// `within`.
async fn get_from(from: [u8; 4], server: SocketAddr, path: &str, within: Duration) -> String {
    tokio::time::timeout(within, async {
        let mut stream = connect_from(from, server).await;
        stream
            .write_all(
                format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
            )
            .await
            .unwrap();
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    })
    .await
    .unwrap_or_else(|_| panic!("GET {path} from {from:?} was not answered within {within:?}"))
}

/// What the server sent before it closed the connection (empty when it closed it unread,
/// whether the close came as a FIN or a reset).
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server did not close within {within:?}");
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_trickling_bodies_cannot_take_the_server() {
    let db = store::testing::sqlite("trickled_bodies").await.unwrap();
    let (addr, _stop) = server(&db, |s| {
        s.max_connections = 16;
        s.max_connections_per_client = 4;
        s.reserved_ops_connections = 2;
        s.body_read_timeout = Duration::from_secs(1);
        s.body_min_rate = 500;
        // Long enough that only the body's own timeout can end a trickle within the test.
        s.header_read_timeout = Duration::from_secs(60);
        s.request_timeout = Duration::from_secs(60);
    })
    .await;
    // The attack of the issue, scaled to the cap: more connections than the cap from one
    // address, each with a form's headers and a body sent at ten bytes a second.
    let started = Instant::now();
    let mut attack = Vec::new();
    for _ in 0..20 {
        let mut stream = connect_from([127, 0, 0, 1], addr).await;
        stream
            .write_all(
                b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\
                  Content-Length: 10000\r\n\r\nu",
            )
            .await
            .unwrap();
        let (mut read, mut write) = stream.into_split();
        let trickle = tokio::spawn(async move {
            // The attacker's pace, not a result: it stops when the server closes.
            while write.write_all(b"x").await.is_ok() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        attack.push(tokio::spawn(async move {
            let mut out = Vec::new();
            let mut buf = [0u8; 1024];
            loop {
                match read.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                }
            }
            trickle.abort();
            (
                String::from_utf8_lossy(&out).into_owned(),
                started.elapsed(),
            )
        }));
    }
    // Another client is served at once: the probe and a page.
    let health = get_from([127, 0, 0, 2], addr, "/healthz", Duration::from_secs(5)).await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let login = get_from([127, 0, 0, 2], addr, "/login", Duration::from_secs(5)).await;
    assert!(login.starts_with("HTTP/1.1 200"), "{login}");
    // Four of the attacker's connections were served, and their trickles cut by the body's
    // timeout (one second, plus what ten bytes a second earn: nothing), far within the
    // request timeout; the other sixteen were closed unanswered.
    let mut cut = 0;
    for task in attack {
        let (answer, at) = tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("every attacking connection ends within 30 s")
            .unwrap();
        if answer.is_empty() {
            continue;
        }
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("connection: close"), "{answer}");
        assert!(at < Duration::from_secs(20), "cut after {at:?}");
        cut += 1;
    }
    assert_eq!(cut, 4, "connections served past the per-client limit of 4");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_keeps_its_pace_is_not_cut() {
    let db = store::testing::sqlite("paced_body").await.unwrap();
    let (addr, _stop) = server(&db, |s| {
        s.body_read_timeout = Duration::from_millis(300);
        s.body_min_rate = 100;
    })
    .await;
    // 100 bytes every 50 ms (2,000 bytes a second) for over twice the body timeout: each
    // arrival earns more time than it took.
    let body = format!("username=alice&password={}", "p".repeat(1000));
    let mut stream = connect_from([127, 0, 0, 1], addr).await;
    stream
        .write_all(
            format!(
                "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\
                 Connection: close\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let started = Instant::now();
    for chunk in body.as_bytes().chunks(100) {
        stream.write_all(chunk).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(started.elapsed() > Duration::from_millis(300));
    let answer = read_until_closed(&mut stream, Duration::from_secs(10)).await;
    // The login itself fails (no such user): what matters is that it was judged, not cut.
    assert!(!answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_answer_while_the_cap_is_full() {
    let db = store::testing::sqlite("reserved_ops").await.unwrap();
    let (addr, _stop) = server(&db, |s| {
        s.max_connections = 6;
        s.max_connections_per_client = 3;
        s.reserved_ops_connections = 2;
        s.header_read_timeout = Duration::from_secs(60);
    })
    .await;
    // Many clients within their own limits fill the cap: each connection is answered once
    // (so it has been accepted) and then held open, idle.
    let mut held = Vec::new();
    for from in [[127, 0, 0, 2], [127, 0, 0, 3]] {
        for _ in 0..3 {
            held.push(kept_alive(from, addr).await);
        }
    }
    // The probes still answer, from the reserved share; a page there does not.
    let health = get_from([127, 0, 0, 4], addr, "/healthz", Duration::from_secs(5)).await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let page = get_from([127, 0, 0, 4], addr, "/login", Duration::from_secs(5)).await;
    assert!(page.starts_with("HTTP/1.1 503"), "{page}");
    assert!(page.contains("retry-after: 5"), "{page}");
    // The share is bounded too: with it held, one more waits to be accepted.
    let mut reserve = Vec::new();
    for _ in 0..2 {
        reserve.push(kept_alive([127, 0, 0, 5], addr).await);
    }
    let mut waiting = connect_from([127, 0, 0, 6], addr).await;
    common::wire::ask_healthz_and_see_it_wait(
        &mut waiting,
        "a connection was served past the cap and its reserved share",
    )
    .await;
    // A general connection ends: the waiting one is served.
    drop(held.pop());
    let answer = read_until_closed(&mut waiting, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(reserve);
}

/// A connection from `from` that has had one `/healthz` answered and stays open.
async fn kept_alive(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let mut stream = connect_from(from, addr).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    tokio::time::timeout(Duration::from_secs(5), async {
        while !out.ends_with(b"ok\n") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&out));
            out.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("a kept-alive /healthz answered");
    stream
}
