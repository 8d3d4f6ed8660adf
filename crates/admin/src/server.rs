//! The HTTP server under [`crate::serve`] and [`crate::serve_ops`]: hyper's HTTP/1 with the
//! limits `axum::serve` does not set, so that no one client can take the server away from
//! the others (issue #43):
//!
//! - A client that sends half a request line, or keeps a connection idle, is closed after
//!   `header_read_timeout` (hyper's header timer, which also runs while a kept-alive
//!   connection waits for its next request).
//! - A request body gets `body_read_timeout`, extended by a second for every `body_min_rate`
//!   bytes that arrive (Apache's mod_reqtimeout `body=…,MinRate=…`): a trickled body is cut
//!   within seconds and answered 408 (the connection closed), while a large upload on a slow
//!   line goes on. The whole request, body and handler, is answered 408 after
//!   `request_timeout` (tower-http).
//! - One client (an IPv4 address, an IPv6 /64: what one host can hold) has at most
//!   `max_connections_per_client` connections open; another is closed as soon as it is
//!   accepted. Trusted proxies are exempt: their connections carry many clients, and such a
//!   proxy limits them itself.
//! - At most `max_connections` connections are served. Past them, `reserved_ops_connections`
//!   more are accepted for `/healthz`, `/readyz` and `/metrics` only (anything else is
//!   answered 503), so probes still answer while the cap is full; past those, connections
//!   wait in the listen queue until one ends.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt as _;
use tower_http::timeout::TimeoutLayer;

use crate::state::AdminSettings;

/// What a connection may cost (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub request_timeout: Duration,
    pub body_read_timeout: Duration,
    pub body_min_rate: u64,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub reserved_ops_connections: usize,
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl ConnectionLimits {
    pub(crate) fn of(settings: &AdminSettings) -> Self {
        ConnectionLimits {
            header_read_timeout: settings.header_read_timeout,
            request_timeout: settings.request_timeout,
            body_read_timeout: settings.body_read_timeout,
            body_min_rate: settings.body_min_rate,
            max_connections: settings.max_connections,
            max_connections_per_client: settings.max_connections_per_client,
            reserved_ops_connections: settings.reserved_ops_connections,
            trusted_proxies: settings.trusted_proxies.clone(),
        }
    }
}

/// Serves `router` (given each connection's peer as `ConnectInfo<SocketAddr>`) until
/// `shutdown`; then stops accepting, lets idle connections go and waits for the requests in
/// flight.
///
/// # Errors
/// Never after binding: a failed `accept` (out of file descriptors) is logged and retried.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: &ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let pace = Pace {
        grace: limits.body_read_timeout,
        min_rate: limits.body_min_rate.max(1),
    };
    let router = router
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
        .layer(axum::middleware::from_fn(
            move |request: Request, next: Next| guard(pace, request, next),
        ));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let general = Arc::new(Semaphore::new(limits.max_connections));
    let reserved = Arc::new(Semaphore::new(limits.reserved_ops_connections));
    let clients = Arc::new(Clients {
        limit: limits.max_connections_per_client,
        exempt: limits.trusted_proxies.clone(),
        open: Mutex::new(HashMap::new()),
    });
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        // A slot first, a general one while there is one: past both caps, connections wait
        // in the kernel's queue, unread.
        let slot = tokio::select! {
            biased;
            () = &mut shutdown => break,
            permit = Arc::clone(&general).acquire_owned() => Slot {
                _permit: permit.expect("never closed"),
                ops_only: false,
            },
            permit = Arc::clone(&reserved).acquire_owned() => Slot {
                _permit: permit.expect("never closed"),
                ops_only: true,
            },
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, most likely: give the connections being
                    // served a moment to end (as axum::serve does).
                    tracing::error!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // A general slot freed while this one waited to be accepted: it gets the full router.
        let slot = match slot.ops_only {
            true => match Arc::clone(&general).try_acquire_owned() {
                Ok(permit) => Slot {
                    _permit: permit,
                    ops_only: false,
                },
                Err(_) => slot,
            },
            false => slot,
        };
        let Some(client) = Clients::admit(&clients, peer.ip()) else {
            // Closed unread: answering would mean reading its request, what the limit is
            // there to avoid.
            tracing::debug!(%peer, "connection closed: over the per-client limit");
            continue;
        };
        let ops_only = slot.ops_only;
        let service =
            router
                .clone()
                .map_request(move |request: hyper::Request<hyper::body::Incoming>| {
                    let mut request = request.map(Body::new);
                    request
                        .extensions_mut()
                        .insert(ConnectInfo::<SocketAddr>(peer));
                    if ops_only {
                        request.extensions_mut().insert(OpsOnly);
                    }
                    request
                });
        // No upgrades: the UI has no WebSocket.
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A client gone, a header timeout: the connection's own end, nothing to report.
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
            drop(slot);
            drop(client);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A connection's place under one of the two caps.
struct Slot {
    _permit: OwnedSemaphorePermit,
    /// Under the reserved share: for the ops endpoints only.
    ops_only: bool,
}

/// Marks a request that came on a connection of the reserved share.
#[derive(Debug, Clone, Copy)]
struct OpsOnly;

/// Open connections by client.
struct Clients {
    limit: usize,
    exempt: Vec<ipnet::IpNet>,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Clients {
    /// One more connection of `ip`, or `None` when it has its share already.
    fn admit(clients: &Arc<Self>, ip: IpAddr) -> Option<ClientSlot> {
        let ip = ip.to_canonical();
        if clients.exempt.iter().any(|net| net.contains(&ip)) {
            return Some(ClientSlot(None));
        }
        let key = client_key(ip);
        let mut open = clients.lock();
        let count = open.entry(key).or_insert(0);
        if *count >= clients.limit {
            return None;
        }
        *count += 1;
        Some(ClientSlot(Some((Arc::clone(clients), key))))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        // The map's counts are updated in one step each: a panic elsewhere leaves them whole.
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A connection counted against its client until dropped (`None`: a trusted proxy's).
struct ClientSlot(Option<(Arc<Clients>, IpAddr)>);

impl Drop for ClientSlot {
    fn drop(&mut self) {
        if let Some((clients, key)) = self.0.take() {
            let mut open = clients.lock();
            if let Some(count) = open.get_mut(&key) {
                *count -= 1;
                if *count == 0 {
                    open.remove(&key);
                }
            }
        }
    }
}

/// What one client is counted as: an IPv4 address, or the /64 of an IPv6 one (a host is
/// given a whole /64 and picks addresses in it at will).
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !(u128::MAX >> 64);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
    }
}

/// The operations endpoints, `/healthz`, `/readyz` and `/metrics` (the `ops` module
/// routes them): all that a connection in the reserved share may ask for.
pub(crate) const OPS_PATHS: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// How fast a request body must come.
#[derive(Debug, Clone, Copy)]
struct Pace {
    grace: Duration,
    /// Bytes per second; at least 1.
    min_rate: u64,
}

/// Answers a request on a reserved connection that is not for an ops endpoint, and a request
/// whose body came too slowly, on a connection then closed.
async fn guard(pace: Pace, request: Request, next: Next) -> Response {
    if request.extensions().get::<OpsOnly>().is_some() && !OPS_PATHS.contains(&request.uri().path())
    {
        let mut response = closing(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is at its connection limit: try again in a few seconds\n",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    let cut = Arc::new(AtomicBool::new(false));
    let paced = Arc::clone(&cut);
    let request = request.map(move |body| {
        Body::new(PacedBody {
            inner: body,
            pace,
            started: Instant::now(),
            received: 0,
            timer: None,
            cut: paced,
        })
    });
    let response = next.run(request).await;
    if cut.load(Ordering::Relaxed) {
        return closing(
            StatusCode::REQUEST_TIMEOUT,
            "the request's body came too slowly\n",
        );
    }
    response
}

fn closing(status: StatusCode, text: &'static str) -> Response {
    let mut response = (status, text).into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A request body that ends in an error once it falls behind its [`Pace`], and says so in
/// `cut` (the handler's own answer to the error is replaced by a 408).
struct PacedBody {
    inner: Body,
    pace: Pace,
    started: Instant,
    received: u64,
    /// Made when the body first waits: most bodies are there at once, or empty.
    timer: Option<Pin<Box<Sleep>>>,
    cut: Arc<AtomicBool>,
}

impl PacedBody {
    fn deadline(&self) -> Instant {
        let earned = Duration::from_secs_f64(self.received as f64 / self.pace.min_rate as f64);
        self.started + self.pace.grace + earned
    }

    fn cut_off(&mut self) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        self.cut.store(true, Ordering::Relaxed);
        Poll::Ready(Some(Err(axum::Error::new(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "request body too slow",
        )))))
    }
}

impl HttpBody for PacedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                }
                let deadline = this.deadline();
                if Instant::now() > deadline {
                    return this.cut_off();
                }
                if let Some(timer) = &mut this.timer {
                    timer.as_mut().reset(deadline);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => {
                let deadline = this.deadline();
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.as_mut().poll(cx).is_ready() {
                    return this.cut_off();
                }
                Poll::Pending
            }
            ended => ended,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_an_ipv4_address_or_an_ipv6_64() {
        let key = |s: &str| client_key(s.parse::<IpAddr>().unwrap().to_canonical());
        assert_eq!(key("192.0.2.7"), "192.0.2.7".parse::<IpAddr>().unwrap());
        assert_eq!(key("2001:db8:1:2:aaaa::1"), key("2001:db8:1:2:ffff::9"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        // An IPv4 client seen on a dual-stack socket is the IPv4 address.
        assert_eq!(key("::ffff:192.0.2.7"), key("192.0.2.7"));
    }

    #[test]
    fn per_client_slots_are_given_back_and_trusted_proxies_are_not_counted() {
        let clients = Arc::new(Clients {
            limit: 2,
            exempt: vec!["10.0.0.0/8".parse().unwrap()],
            open: Mutex::new(HashMap::new()),
        });
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        let first = Clients::admit(&clients, ip).unwrap();
        let _second = Clients::admit(&clients, ip).unwrap();
        assert!(Clients::admit(&clients, ip).is_none());
        assert!(Clients::admit(&clients, "192.0.2.8".parse().unwrap()).is_some());
        drop(first);
        assert!(Clients::admit(&clients, ip).is_some());
        let proxy: IpAddr = "10.1.2.3".parse().unwrap();
        let held: Vec<_> = (0..5)
            .map(|_| Clients::admit(&clients, proxy).unwrap())
            .collect();
        assert_eq!(held.len(), 5);
        assert!(!clients.lock().contains_key(&proxy));
    }
}
