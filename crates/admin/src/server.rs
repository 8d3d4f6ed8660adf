//! The HTTP server under [`crate::serve`] and [`crate::serve_ops`]: hyper's HTTP/1 with the
//! limits `axum::serve` does not set. A client that sends half a request line, or keeps a
//! connection idle, is closed after `header_read_timeout` (hyper's header timer, which also
//! runs while a kept-alive connection waits for its next request); a request whose body or
//! handler takes longer than `request_timeout` is answered 408 (tower-http); at most
//! `max_connections` are served at once, the rest wait in the listen queue until one ends.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt as _;
use tower_http::timeout::TimeoutLayer;

use crate::state::AdminSettings;

/// What a connection may cost (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub request_timeout: Duration,
    pub max_connections: usize,
}

impl ConnectionLimits {
    pub(crate) fn of(settings: &AdminSettings) -> Self {
        ConnectionLimits {
            header_read_timeout: settings.header_read_timeout,
            request_timeout: settings.request_timeout,
            max_connections: settings.max_connections,
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
    let router = router.layer(TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        limits.request_timeout,
    ));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        // A slot first: past the cap, connections wait in the kernel's queue, unread.
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
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
        let service =
            router
                .clone()
                .map_request(move |request: hyper::Request<hyper::body::Incoming>| {
                    let mut request = request.map(axum::body::Body::new);
                    request
                        .extensions_mut()
                        .insert(ConnectInfo::<SocketAddr>(peer));
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
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
