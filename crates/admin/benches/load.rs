//! The admin UI under load on a store at scale: 10^5 cases and 10^6 matches
//! (`store::testing::fill_cases`, with a page text per snapshot so a case's passages show),
//! served by `admin::serve` on 127.0.0.1 and asked by 20 clients at once, each on its own
//! keep-alive connection, for the review queue, a case's detail (a different case each time)
//! and the dashboard.
//!
//! `cargo bench -p admin --bench load` fills a fresh SQLite database and, when one is
//! reachable (`COPYHOUND_TEST_POSTGRES_URL`), a fresh Postgres schema, then prints each page's
//! p50, p99 and largest size. Targets (issue #13): p99 ≤ 100 ms on Postgres and ≤ 150 ms on
//! SQLite; every page ≤ 100 KB. `LOAD_REQUESTS` sets the requests per page (default 400).

use std::sync::Arc;
use std::time::{Duration, Instant};

use admin::{AdminSettings, AdminState};
use sqlx::Connection;
use store::testing::{TestDb, fill_cases};
use store::{BackendKind, Role};

const CASES: u64 = 100_000;
const STEP: u64 = 316;
const CLIENTS: usize = 20;

/// A page text for every snapshot: the case page reads the best match's page text.
async fn page_texts(db: &TestDb) {
    let sql = "INSERT INTO page_texts (snapshot_id, url, depth, kind, body, encoding, \
               decode_errors, not_modified, fetched_at) \
               SELECT id, url, 0, 'content', url || ' 盗版正文 ' || id, 'UTF-8', FALSE, FALSE, \
               fetched_at FROM snapshots";
    let sql = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()));
    match db.kind() {
        BackendKind::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            sql.execute(&mut c).await.unwrap();
        }
        BackendKind::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
            sql.execute(&mut c).await.unwrap();
        }
    }
}

/// One HTTP/1.1 keep-alive connection, read by `Content-Length` (the admin UI always sends
/// it for pages).
struct Client {
    stream: tokio::io::BufStream<tokio::net::TcpStream>,
    cookie: String,
}

impl Client {
    async fn connect(addr: std::net::SocketAddr, cookie: &str) -> Client {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            stream: tokio::io::BufStream::new(stream),
            cookie: cookie.to_owned(),
        }
    }

    /// GETs `path`; returns the status and the body's size.
    async fn get(&mut self, path: &str) -> (u16, usize) {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {}\r\n\r\n",
            self.cookie
        );
        self.stream.write_all(request.as_bytes()).await.unwrap();
        self.stream.flush().await.unwrap();
        let mut line = String::new();
        self.stream.read_line(&mut line).await.unwrap();
        let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut length = 0usize;
        loop {
            line.clear();
            self.stream.read_line(&mut line).await.unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).await.unwrap();
        (status, length)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

async fn run(db: TestDb, name: &str) {
    let t = Instant::now();
    fill_cases(&db.url, db.kind(), CASES, STEP).await;
    page_texts(&db).await;
    eprintln!("{name}: filled in {:.0} s", t.elapsed().as_secs_f64());
    let store = db.store.clone();
    let user = accounts::add_user(
        &store,
        "bench",
        None,
        Role::Reviewer,
        "correct horse battery",
        "bench",
    )
    .await
    .unwrap();
    let session = accounts::start_session(&store, user.id, Duration::from_secs(3600))
        .await
        .unwrap();
    let cookie = format!("copyhound_session={}", session.cookie);
    let settings = AdminSettings {
        secure_cookies: false,
        ..AdminSettings::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(admin::serve(
        listener,
        AdminState::new(store.clone(), settings),
        async move {
            let _ = stopped.await;
        },
    ));
    let requests: usize = std::env::var("LOAD_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    for (page, path_of) in [
        (
            "review queue",
            (|_| "/cases".to_owned()) as fn(usize) -> String,
        ),
        ("case detail", |i| {
            format!("/cases/{}", (i as u64 * 7919) % CASES + 1)
        }),
        ("dashboard", |_| "/".to_owned()),
    ] {
        // Warm-up: caches and prepared statements as a running server has them.
        let mut warm = Client::connect(addr, &cookie).await;
        for i in 0..5 {
            let (status, _) = warm.get(&path_of(i)).await;
            assert_eq!(status, 200, "{page}");
        }
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..CLIENTS {
            let next = Arc::clone(&next);
            let cookie = cookie.clone();
            tasks.push(tokio::spawn(async move {
                let mut client = Client::connect(addr, &cookie).await;
                let mut out = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= requests {
                        break out;
                    }
                    let t = Instant::now();
                    let (status, size) = client.get(&path_of(i)).await;
                    assert_eq!(status, 200, "{}", path_of(i));
                    out.push((t.elapsed(), size));
                }
            }));
        }
        let mut times = Vec::new();
        let mut largest = 0;
        for task in tasks {
            for (time, size) in task.await.unwrap() {
                times.push(time);
                largest = largest.max(size);
            }
        }
        let wall = started.elapsed();
        times.sort();
        println!(
            "{name:8} {page:13} p50 {:6.1} ms  p99 {:6.1} ms  max {:6.1} ms  {:5.0} req/s  \
             largest page {:5.1} KB",
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&times, 0.99).as_secs_f64() * 1e3,
            times.last().unwrap().as_secs_f64() * 1e3,
            times.len() as f64 / wall.as_secs_f64(),
            largest as f64 / 1024.0
        );
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        println!(
            "{CASES} cases, {} matches, {CLIENTS} clients at once",
            CASES * 10
        );
        let sqlite = store::testing::sqlite("admin_load").await.unwrap();
        run(sqlite, "sqlite").await;
        match store::testing::postgres("admin_load").await {
            Some(pg) => run(pg, "postgres").await,
            None => println!("postgres: skipped (set COPYHOUND_TEST_POSTGRES_URL)"),
        }
    });
}
