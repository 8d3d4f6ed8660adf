//! Raw HTTP/1.1 over TCP for the connection tests: what a client past the cap sees.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Asks `/healthz` on `stream` and checks that nothing comes back while the cap holds: the
/// connection waits, unread, until one that is served ends. `why` is the failure's message.
pub async fn ask_healthz_and_see_it_wait(stream: &mut TcpStream, why: &str) {
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stream.read(&mut byte))
            .await
            .is_err(),
        "{why}"
    );
}
