//! What every handler shares.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pipeline::{NoticeSettings, RecheckSettings};
use store::Store;

use crate::auth::{LoginLimiter, LoginLimits};

/// How the admin UI behaves; the binary fills it from its settings.
#[derive(Debug, Clone)]
pub struct AdminSettings {
    /// Mark the session cookie `Secure` (and name it `__Host-…`). Off only for plain HTTP
    /// on a loopback address (tests, the demo); behind TLS always on.
    pub secure_cookies: bool,
    /// How long a session lasts without use.
    pub session_ttl: Duration,
    /// Where uploaded works are kept until their import job has read them.
    pub upload_dir: PathBuf,
    /// The largest request body (an uploaded work), bytes.
    pub max_upload_bytes: usize,
    /// Failed logins allowed before the next attempt must wait.
    pub login: LoginLimits,
    /// Rows per page of a listing.
    pub page_size: u32,
    /// The crawler's settings, the base a suspect site's own limits apply to.
    pub crawler: crawler::CrawlSettings,
    /// How long the dashboard's and analytics page's figures are reused before they are
    /// counted again: they read every case and match, and a team of people refreshing the
    /// dashboard should not count them once each.
    pub figures_ttl: Duration,
    /// The rights holder and templates of takedown notices.
    pub notices: NoticeSettings,
    /// When re-checks run after a notice is sent.
    pub rechecks: RecheckSettings,
    /// `/healthz`, `/readyz`, `/metrics`: the metrics token and the index to report on.
    pub ops: crate::OpsSettings,
}

impl Default for AdminSettings {
    fn default() -> Self {
        AdminSettings {
            secure_cookies: true,
            session_ttl: Duration::from_secs(12 * 3600),
            upload_dir: PathBuf::from("data/uploads"),
            // An EPUB of a long novel is a few MiB; the importer's own limits apply after.
            max_upload_bytes: 32 << 20,
            login: LoginLimits::default(),
            page_size: 50,
            figures_ttl: Duration::from_secs(10),
            crawler: crawler::CrawlSettings::default(),
            notices: NoticeSettings::default(),
            rechecks: RecheckSettings::default(),
            ops: crate::OpsSettings::default(),
        }
    }
}

/// The store and settings every handler shares; cloning is a reference count.
#[derive(Debug, Clone)]
pub struct AdminState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    settings: AdminSettings,
    limiter: LoginLimiter,
    figures: crate::pages::dashboard::FiguresCache,
    texts: pipeline::TextCache,
}

impl AdminState {
    /// The state over `store`.
    pub fn new(store: Store, settings: AdminSettings) -> Self {
        let limiter = LoginLimiter::new(settings.login.clone());
        AdminState {
            inner: Arc::new(Inner {
                store,
                settings,
                limiter,
                figures: Default::default(),
                texts: Default::default(),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The settings.
    pub fn settings(&self) -> &AdminSettings {
        &self.inner.settings
    }

    pub(crate) fn limiter(&self) -> &LoginLimiter {
        &self.inner.limiter
    }

    /// Chapter texts the case pages showed, kept (bounded) since a chapter never changes.
    pub(crate) fn texts(&self) -> &pipeline::TextCache {
        &self.inner.texts
    }

    pub(crate) fn figures(&self) -> &crate::pages::dashboard::FiguresCache {
        &self.inner.figures
    }
}
