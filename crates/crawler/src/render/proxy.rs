//! The forward proxy every request of a rendering browser goes through, so the browser is
//! no way around the crawler's address rules.
//!
//! Chromium is started with `--proxy-server` pointing here and `--proxy-bypass-list=<-loopback>`
//! (so loopback goes through the proxy too). For each connection the proxy reads one request
//! head: `CONNECT host:port` (HTTPS, WebSocket over TLS) or an absolute-form `http://` request.
//! It counts the request against the page's cap, resolves the host itself and checks every
//! address with the crawl's [`AddressPolicy`] (so a name that resolves to a private address is
//! refused like an IP literal), asks the page's [`PageGate`] (robots.txt for plain-HTTP URLs),
//! and only then connects to an address it checked. Plain-HTTP requests are sent on with
//! `Connection: close`, so a kept-alive connection can never carry a second request to another
//! host; a CONNECT tunnel stays with the host it was checked for.
//!
//! Written by hand over tokio rather than with hyper: it only needs the first line and the
//! headers of one request per connection, then copies bytes, and reading that head within a
//! size and time cap is what hostile input can reach.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

use crate::safety::AddressPolicy;

/// A request head longer than this is refused (Chromium's are a few hundred bytes).
const MAX_HEAD_BYTES: usize = 32 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the proxy tries to connect to a checked address.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one connection (a tunnel, a WebSocket) may stay open: longer than any page's
/// budget, so nothing a killed browser left behind lives on.
const MAX_CONNECTION: Duration = Duration::from_secs(300);

/// What a page's requests are checked against beyond the address rules (robots.txt): `true`
/// lets the URL through. Called for plain-HTTP requests only: an HTTPS request's path is
/// inside TLS, where the proxy cannot see it.
pub type UrlGate = Arc<dyn Fn(&Url) -> bool + Send + Sync>;

/// The rules and the tally of one page's requests.
pub struct PageGate {
    policy: Arc<AddressPolicy>,
    allow_url: Option<UrlGate>,
    max_requests: u32,
    requests: AtomicU32,
    refused: Mutex<Vec<String>>,
    /// Plain-HTTP requests whose response is still coming.
    open: AtomicU32,
    /// When a request of the page last began or ended.
    last: Mutex<Instant>,
}

/// A plain-HTTP request in flight: counted open until dropped, whatever way it ends.
struct InFlight<'a>(&'a PageGate);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

impl PageGate {
    /// Requests of one page: each address checked with `policy`, each plain-HTTP URL with
    /// `allow_url`, at most `max_requests` of them.
    pub fn new(policy: Arc<AddressPolicy>, allow_url: Option<UrlGate>, max_requests: u32) -> Self {
        Self {
            policy,
            allow_url,
            max_requests,
            requests: AtomicU32::new(0),
            refused: Mutex::new(Vec::new()),
            open: AtomicU32::new(0),
            last: Mutex::new(Instant::now()),
        }
    }

    fn touch(&self) {
        *self.last.lock().expect("last") = Instant::now();
    }

    fn in_flight(&self) -> InFlight<'_> {
        self.open.fetch_add(1, Ordering::Relaxed);
        self.touch();
        InFlight(self)
    }

    /// Waits until the page's requests are quiet: no plain-HTTP response still coming and
    /// none begun or ended for `quiet`, or until `max` has passed. A page that fetches its
    /// chapter after it loaded (`fetch` in an `onload`) is read once the chapter is in, on
    /// a busy machine too. (A request inside a kept-alive HTTPS tunnel is not seen.)
    pub async fn settle(&self, quiet: Duration, max: Duration) {
        let until = Instant::now() + max;
        loop {
            let idle = self.last.lock().expect("last").elapsed();
            let open = self.open.load(Ordering::Relaxed);
            if (open == 0 && idle >= quiet) || Instant::now() >= until {
                return;
            }
            let wait = if open == 0 {
                quiet.saturating_sub(idle)
            } else {
                quiet / 4
            };
            tokio::time::sleep(wait.min(quiet).max(Duration::from_millis(1))).await;
        }
    }

    /// Requests the page made through the proxy, refused ones included.
    pub fn requests(&self) -> u32 {
        self.requests.load(Ordering::Relaxed)
    }

    /// What was refused and why, first 100.
    pub fn refused(&self) -> Vec<String> {
        self.refused.lock().expect("refused").clone()
    }

    fn refuse(&self, what: String) {
        tracing::debug!(%what, "rendered page's request refused");
        let mut refused = self.refused.lock().expect("refused");
        if refused.len() < 100 {
            refused.push(what);
        }
    }
}

/// The proxy: a listener on `127.0.0.1` and the gate of the page the browser is on.
pub struct Proxy {
    addr: SocketAddr,
    gate: Arc<Mutex<Arc<PageGate>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Binds `127.0.0.1:0` and serves until dropped. Until [`Proxy::begin_page`], every
    /// request is refused.
    ///
    /// # Errors
    /// The bind's I/O error.
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let closed = Arc::new(PageGate::new(
            Arc::new(AddressPolicy::public_only()),
            Some(Arc::new(|_: &Url| false)),
            0,
        ));
        let gate = Arc::new(Mutex::new(closed));
        let shared = Arc::clone(&gate);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let gate = Arc::clone(&shared);
                tokio::spawn(async move {
                    if let Err(e) = serve(stream, &gate).await {
                        tracing::trace!(error = %e, "proxy connection ended");
                    }
                });
            }
        });
        Ok(Self { addr, gate, task })
    }

    /// Where the browser sends its requests.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// From now on, connections are checked against `gate` and counted in it.
    pub fn begin_page(&self, gate: Arc<PageGate>) {
        *self.gate.lock().expect("gate") = gate;
    }
}

/// One request head: the method, the target as written, and the raw head.
struct Head {
    method: String,
    target: String,
    version: String,
    headers: Vec<(String, String)>,
    /// Bytes read after the head (the start of a body).
    rest: Vec<u8>,
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<Head>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let Ok(text) = std::str::from_utf8(&buf[..end]) else {
        return Ok(None);
    };
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (first.next(), first.next(), first.next(), first.next())
    else {
        return Ok(None);
    };
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Ok(None);
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    Ok(Some(Head {
        method: method.to_owned(),
        target: target.to_owned(),
        version: version.to_owned(),
        headers,
        rest: buf[end + 4..].to_vec(),
    }))
}

async fn answer(stream: &mut TcpStream, status: &str, why: &str) -> std::io::Result<()> {
    let body = format!("copyhound refused this request: {why}\n");
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

async fn serve(mut client: TcpStream, gate: &Mutex<Arc<PageGate>>) -> std::io::Result<()> {
    let head = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(Ok(Some(head))) => head,
        Ok(Ok(None)) => return answer(&mut client, "400 Bad Request", "bad request").await,
        Ok(Err(e)) => return Err(e),
        Err(_) => return Ok(()),
    };
    // The page the browser is on when the request comes, not when the connection opened:
    // Chromium opens connections to its proxy ahead of need.
    let page = Arc::clone(&gate.lock().expect("gate"));
    let n = page.requests.fetch_add(1, Ordering::Relaxed) + 1;
    if n > page.max_requests {
        if n == page.max_requests + 1 {
            page.refuse(format!("requests over the cap of {}", page.max_requests));
        }
        return answer(&mut client, "429 Too Many Requests", "request cap").await;
    }
    let connect = head.method.eq_ignore_ascii_case("CONNECT");
    page.touch();
    // A plain-HTTP request is open until its response is through (the connection closes
    // after it); a tunnel may carry many and stay open, so only its start is seen.
    let _in_flight = (!connect).then(|| page.in_flight());
    let (host, port, url) = if connect {
        let Some((host, port)) = split_authority(&head.target) else {
            return answer(&mut client, "400 Bad Request", "bad target").await;
        };
        (host, port, None)
    } else {
        let Ok(url) = Url::parse(&head.target) else {
            return answer(&mut client, "400 Bad Request", "not an absolute url").await;
        };
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return answer(&mut client, "400 Bad Request", "no host").await;
        };
        if url.scheme() != "http" {
            return answer(&mut client, "400 Bad Request", "only http").await;
        }
        (host.to_owned(), port, Some(url))
    };
    let addr = match resolve(&host, port, &page.policy).await {
        Ok(addr) => addr,
        Err(why) => {
            page.refuse(format!("{host}: {why}"));
            return answer(&mut client, "403 Forbidden", &why).await;
        }
    };
    if let (Some(url), Some(allow)) = (&url, &page.allow_url)
        && !allow(url)
    {
        page.refuse(format!("{url}: robots.txt"));
        return answer(&mut client, "403 Forbidden", "robots.txt").await;
    }
    let mut upstream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
        Ok(Ok(s)) => s,
        _ => return answer(&mut client, "502 Bad Gateway", "connect failed").await,
    };
    if connect {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        if !head.rest.is_empty() {
            upstream.write_all(&head.rest).await?;
        }
    } else {
        let url = url.expect("http request has a url");
        let mut out = format!(
            "{} {}{} {}\r\n",
            head.method,
            url.path(),
            url.query().map(|q| format!("?{q}")).unwrap_or_default(),
            head.version
        );
        for (name, value) in &head.headers {
            let lower = name.to_ascii_lowercase();
            if matches!(
                lower.as_str(),
                "connection" | "proxy-connection" | "keep-alive" | "proxy-authorization"
            ) {
                continue;
            }
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str("Connection: close\r\n\r\n");
        upstream.write_all(out.as_bytes()).await?;
        upstream.write_all(&head.rest).await?;
    }
    let copied = tokio::time::timeout(
        MAX_CONNECTION,
        tokio::io::copy_bidirectional(&mut client, &mut upstream),
    )
    .await;
    if let Ok(Err(e)) = copied {
        return Err(e);
    }
    Ok(())
}

/// `host:port` of a CONNECT target (`[v6]:port` too).
fn split_authority(target: &str) -> Option<(String, u16)> {
    let (host, port) = target.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = port.parse().ok()?;
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

/// The first address of `host` the policy allows; the refusal of the first it did not.
async fn resolve(host: &str, port: u16, policy: &AddressPolicy) -> Result<SocketAddr, String> {
    let candidates: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("dns lookup failed: {e}"))?
            .collect(),
    };
    let mut first_refusal = None;
    for addr in candidates {
        match policy.check(host, addr.ip()) {
            Ok(()) => return Ok(addr),
            Err(e) => {
                first_refusal.get_or_insert(e.to_string());
            }
        }
    }
    Err(first_refusal.unwrap_or_else(|| "no addresses".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Arc<PageGate> {
        Arc::new(PageGate::new(
            Arc::new(AddressPolicy::allow_all()),
            None,
            10,
        ))
    }

    #[tokio::test]
    async fn a_page_settles_once_its_last_request_is_through() {
        let page = gate();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (started, begun) = tokio::sync::oneshot::channel();
        let task = {
            let (page, done) = (Arc::clone(&page), Arc::clone(&done));
            tokio::spawn(async move {
                let flight = page.in_flight();
                started.send(()).unwrap();
                tokio::task::yield_now().await;
                done.store(true, Ordering::SeqCst);
                drop(flight);
            })
        };
        begun.await.unwrap();
        page.settle(Duration::from_millis(20), Duration::from_secs(30))
            .await;
        assert!(done.load(Ordering::SeqCst), "settled with a request open");
        task.await.unwrap();
        // A request that never ends: the wait ends at its cap.
        let page = gate();
        let _forever = page.in_flight();
        page.settle(Duration::from_millis(5), Duration::from_millis(50))
            .await;
        assert_eq!(page.open.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn authorities() {
        assert_eq!(
            split_authority("example.com:443"),
            Some(("example.com".to_owned(), 443))
        );
        assert_eq!(
            split_authority("[::1]:8080"),
            Some(("::1".to_owned(), 8080))
        );
        assert_eq!(split_authority("example.com"), None);
        assert_eq!(split_authority(":443"), None);
        assert_eq!(split_authority("a:99999"), None);
    }

    async fn exchange(proxy: &Proxy, request: &[u8]) -> String {
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        s.write_all(request).await.unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn refuses_private_addresses_counts_and_caps() {
        // A canary on loopback: the proxy must never connect to it under a public-only policy.
        let canary = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = canary.local_addr().unwrap().port();
        let proxy = Proxy::start().await.unwrap();
        let gate = Arc::new(PageGate::new(
            Arc::new(AddressPolicy::public_only()),
            None,
            2,
        ));
        proxy.begin_page(Arc::clone(&gate));
        let get = format!("GET http://127.0.0.1:{port}/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        assert!(
            exchange(&proxy, get.as_bytes())
                .await
                .starts_with("HTTP/1.1 403")
        );
        let connect = format!("CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        assert!(
            exchange(&proxy, connect.as_bytes())
                .await
                .starts_with("HTTP/1.1 403")
        );
        // A head that is not a request is answered, and not counted.
        assert!(
            exchange(&proxy, b"garbage\r\n\r\n")
                .await
                .starts_with("HTTP/1.1 400")
        );
        // Over the cap of two: refused before any look-up.
        assert!(
            exchange(&proxy, get.as_bytes())
                .await
                .starts_with("HTTP/1.1 429")
        );
        assert_eq!(gate.requests(), 3);
        assert_eq!(gate.refused().len(), 3, "{:?}", gate.refused());
        // Nothing reached the canary: a connection the proxy made would be waiting in its
        // backlog (the zero timeout still tries one accept).
        let accepted = tokio::time::timeout(Duration::ZERO, canary.accept()).await;
        assert!(accepted.is_err(), "the canary was reached");
    }

    #[tokio::test]
    async fn forwards_allowed_requests_with_connection_close() {
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = server.local_addr().unwrap().port();
        let seen = tokio::spawn(async move {
            let (mut s, _) = server.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .await
                .unwrap();
            String::from_utf8(got).unwrap()
        });
        let proxy = Proxy::start().await.unwrap();
        let robots: UrlGate = Arc::new(|u: &Url| !u.path().starts_with("/private"));
        proxy.begin_page(Arc::new(PageGate::new(
            Arc::new(AddressPolicy::allow_all()),
            Some(robots),
            10,
        )));
        let denied = format!("GET http://127.0.0.1:{port}/private HTTP/1.1\r\n\r\n");
        assert!(
            exchange(&proxy, denied.as_bytes())
                .await
                .starts_with("HTTP/1.1 403")
        );
        let get = format!(
            "GET http://127.0.0.1:{port}/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nProxy-Connection: keep-alive\r\n\r\n"
        );
        let answer = exchange(&proxy, get.as_bytes()).await;
        assert!(answer.ends_with("ok"), "{answer}");
        let request = seen.await.unwrap();
        assert!(request.starts_with("GET /a?b=1 HTTP/1.1\r\n"), "{request}");
        assert!(request.contains("Connection: close"), "{request}");
        assert!(!request.contains("Proxy-Connection"), "{request}");
    }
}
