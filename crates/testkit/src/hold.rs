//! A gate in a test's HTTP server: it answers a number of requests, then holds the rest until
//! the test releases them. A test that must stop a crawl (or kill the process crawling)
//! part-way waits for [`Hold::held`] instead of racing the crawl with a timer: while the
//! gate holds, the crawl cannot run out of work, however fast the machine is.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! let hold = Arc::new(testkit::hold::Hold::new());
//! hold.after(1);
//! hold.pass().await; // the first request is answered
//! let second = tokio::spawn({
//!     let hold = Arc::clone(&hold);
//!     async move { hold.pass().await }
//! });
//! hold.held().await; // the second is held: stop the crawler here
//! hold.release();
//! second.await.unwrap();
//! # });
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, watch};

/// How long a held request waits for [`Hold::release`] at most, so that a server whose test
/// never releases it (a test that failed first) does not hang.
const HOLD_AT_MOST: Duration = Duration::from_secs(120);

/// How long [`Hold::held`] waits for a request to be held before it fails the test.
const HELD_WITHIN: Duration = Duration::from_secs(60);

/// The gate; share it with the server's handler in an `Arc`.
#[derive(Debug)]
pub struct Hold {
    /// Requests answered before the rest wait; `usize::MAX` until [`Hold::after`].
    after: AtomicUsize,
    seen: AtomicUsize,
    open: watch::Sender<bool>,
    held: Notify,
}

impl Default for Hold {
    fn default() -> Self {
        Self::new()
    }
}

impl Hold {
    /// A gate that lets every request through until [`Hold::after`] sets a limit.
    #[must_use]
    pub fn new() -> Self {
        Hold {
            after: AtomicUsize::new(usize::MAX),
            seen: AtomicUsize::new(0),
            open: watch::Sender::new(false),
            held: Notify::new(),
        }
    }

    /// Lets `n` more requests through and holds the ones after them.
    pub fn after(&self, n: usize) {
        self.seen.store(0, Ordering::SeqCst);
        self.after.store(n, Ordering::SeqCst);
    }

    /// For the handler, before it answers: returns at once while requests are let through,
    /// else once the test releases them.
    pub async fn pass(&self) {
        if self.seen.fetch_add(1, Ordering::SeqCst) < self.after.load(Ordering::SeqCst) {
            return;
        }
        let mut open = self.open.subscribe();
        self.held.notify_one();
        let _ = tokio::time::timeout(HOLD_AT_MOST, open.wait_for(|open| *open)).await;
    }

    /// Waits until a request is held.
    ///
    /// # Panics
    /// When none is within a minute (the crawl never got that far).
    pub async fn held(&self) {
        tokio::time::timeout(HELD_WITHIN, self.held.notified())
            .await
            .unwrap_or_else(|_| panic!("no request was held within {HELD_WITHIN:?}"));
    }

    /// Answers the held requests and every later one.
    pub fn release(&self) {
        self.open.send_replace(true);
    }
}
