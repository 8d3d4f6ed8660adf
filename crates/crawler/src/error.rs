//! The crate's one error type and the coarse [`ErrorKind`] a crawl report counts by.

use std::net::IpAddr;
use std::time::Duration;

/// Everything the crawler can fail with, split by what a caller does about it.
///
/// A non-2xx HTTP status is **not** an error: the response is evidence and comes back as a
/// [`Snapshot`](crate::Snapshot); the crawl decides what the status means.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A URL that cannot be parsed or used.
    #[error("invalid url {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },

    /// A scheme the crawler never fetches (only `http` and `https` are fetched).
    #[error("unsupported scheme {scheme:?} in {url}; only http and https are fetched")]
    UnsupportedScheme { url: String, scheme: String },

    /// The safety guard refused an address, before or after DNS, on the first hop or a redirect.
    #[error(
        "refused to fetch {host}: it resolves to {class} address {addr}; \
         set crawler.fetch.safety.allow_private = true (environment: \
         COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE=true; `crawl` and `check` take \
         --allow-private) or add the network to crawler.fetch.safety.allowed_networks to \
         crawl it"
    )]
    AddressRefused {
        host: String,
        addr: IpAddr,
        class: AddressClass,
    },

    /// The host name did not resolve.
    #[error("dns lookup failed for {host}: {reason}")]
    Dns { host: String, reason: String },

    /// Connect, read or whole-fetch timeout.
    #[error("timed out ({phase}) after {after:?} fetching {url}")]
    Timeout {
        url: String,
        phase: TimeoutPhase,
        after: Duration,
    },

    /// The TCP or TLS connection failed (refused, reset, unreachable, bad certificate).
    #[error("could not connect to {url}: {reason}")]
    Connect { url: String, reason: String },

    /// The connection broke or the server spoke bad HTTP after connecting.
    #[error("transfer from {url} failed: {reason}")]
    Transport { url: String, reason: String },

    /// A body whose `Content-Encoding` cannot be undone: an unknown coding, a corrupt or
    /// truncated stream, or one that decodes beyond `fetch.max_decoded_bytes` or
    /// `fetch.max_decoding_ratio` (a decompression bomb).
    #[error("cannot decode {coding} body of {url}: {reason}")]
    ContentCoding {
        url: String,
        coding: String,
        reason: String,
    },

    /// More redirects than `fetch.max_redirects`.
    #[error(
        "more than {limit} redirects starting at {url}; raise fetch.max_redirects if this is legitimate"
    )]
    TooManyRedirects { url: String, limit: usize },

    /// A redirect points back to a URL already visited in the same fetch.
    #[error("redirect loop: {url} redirects back to {target}")]
    RedirectLoop { url: String, target: String },

    /// A redirect without a usable `Location`.
    #[error("redirect from {url} has an unusable location {location:?}")]
    BadRedirect { url: String, location: String },

    /// A redirect not followed: to another host from a request that carries a key, to a
    /// scheme other than http(s), or past the limit ([`crate::outbound`]).
    #[error("refused to follow the redirect from {url} to {target}: {reason}")]
    RedirectRefused {
        url: String,
        target: String,
        reason: String,
    },

    /// robots.txt forbids the URL for our user agent.
    #[error("robots.txt for {host} denied {path}")]
    RobotsDenied { host: String, path: String },

    /// Rendering in the headless browser is asked for but cannot run here.
    #[error(
        "rendering is unavailable: {reason}; install the Debian packages chromium and \
         chromium-driver (or set crawler.render.chromium and crawler.render.chromedriver)"
    )]
    RenderUnavailable { reason: String },

    /// The headless browser did not render a page within its budget, or died doing it.
    #[error("rendering {url} failed: {reason}")]
    Render {
        url: String,
        reason: String,
        /// The browser failed (it did not start, crashed, or answered too slowly on a busy
        /// machine), not the page: another browser may render it. A page over its budget
        /// or its memory cap is not tried again.
        retry: bool,
    },

    /// A configured pattern (scope regex, CSS selector) does not compile.
    #[error("invalid {what} {pattern:?}: {reason}")]
    InvalidPattern {
        what: &'static str,
        pattern: String,
        reason: String,
    },

    /// A setting has a value the crawler cannot work with.
    #[error("invalid setting {name} = {value}: {reason}")]
    InvalidSetting {
        name: &'static str,
        value: String,
        reason: String,
    },

    /// A setting is out of range (the key is relative to [`CrawlSettings`](crate::CrawlSettings)).
    #[error("invalid crawl settings: {0}")]
    OutOfRange(#[from] bounds::OutOfRange),

    /// Stored evidence (a compressed body, a header block) is corrupt or larger than allowed.
    #[error("corrupt stored evidence: {reason}")]
    CorruptEvidence { reason: String },

    /// A WARC file does not follow ISO 28500.
    #[error("malformed warc record at byte {offset}: {reason}")]
    Warc { offset: u64, reason: String },

    /// Local I/O (writing a WARC, compressing).
    #[error("i/o error while {doing}: {source}")]
    Io {
        doing: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// A frontier, sink or host-state backend failed; the source is the backend's own error.
    #[error("storage backend failed while {doing}: {source}")]
    Store {
        doing: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Why an address is not a public unicast address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`) and IPv6 unique-local `fc00::/7`.
    Private,
    /// `169.254/16` (includes cloud metadata services), `fe80::/10`.
    LinkLocal,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0/8` and `::`; on Linux a connect to `0.0.0.0` reaches the local host.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// Carrier-grade NAT `100.64/10`.
    SharedAddressSpace,
    /// IETF protocol assignments, documentation, benchmarking, `240/4`, Teredo and the
    /// deprecated site-local range: nothing a public web site lives on.
    Reserved,
}

impl std::fmt::Display for AddressClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Loopback => "a loopback",
            Self::Private => "a private",
            Self::LinkLocal => "a link-local",
            Self::Multicast => "a multicast",
            Self::Unspecified => "an unspecified",
            Self::Broadcast => "a broadcast",
            Self::SharedAddressSpace => "a shared (carrier-grade nat)",
            Self::Reserved => "a reserved",
        })
    }
}

/// `Result` with the crawler's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which timeout fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeoutPhase {
    /// `fetch.connect_timeout`: TCP and TLS set-up.
    Connect,
    /// `fetch.read_timeout`: no bytes for that long.
    Read,
    /// `fetch.timeout`: the whole fetch, all redirects and the body.
    Total,
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Connect => "connect",
            Self::Read => "read",
            Self::Total => "total",
        })
    }
}

/// Coarse error classes for crawl reports and the `last_error_kind` column of a frontier row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    InvalidUrl,
    AddressRefused,
    Dns,
    Timeout,
    Connect,
    Transport,
    Redirect,
    ContentCoding,
    RobotsDenied,
    Config,
    Evidence,
    Store,
    Render,
}

impl ErrorKind {
    /// Stable lower-case name, for reports and database columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidUrl => "invalid_url",
            Self::AddressRefused => "address_refused",
            Self::Dns => "dns",
            Self::Timeout => "timeout",
            Self::Connect => "connect",
            Self::Transport => "transport",
            Self::Redirect => "redirect",
            Self::ContentCoding => "content_coding",
            Self::RobotsDenied => "robots_denied",
            Self::Config => "config",
            Self::Evidence => "evidence",
            Self::Store => "store",
            Self::Render => "render",
        }
    }

    /// Whether trying the same URL again later can succeed.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Self::Dns | Self::Timeout | Self::Connect | Self::Transport | Self::Store
        )
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidUrl { .. } | Self::UnsupportedScheme { .. } => ErrorKind::InvalidUrl,
            Self::AddressRefused { .. } => ErrorKind::AddressRefused,
            Self::Dns { .. } => ErrorKind::Dns,
            Self::Timeout { .. } => ErrorKind::Timeout,
            Self::Connect { .. } => ErrorKind::Connect,
            Self::Transport { .. } => ErrorKind::Transport,
            Self::TooManyRedirects { .. }
            | Self::RedirectLoop { .. }
            | Self::BadRedirect { .. }
            | Self::RedirectRefused { .. } => ErrorKind::Redirect,
            Self::ContentCoding { .. } => ErrorKind::ContentCoding,
            Self::RobotsDenied { .. } => ErrorKind::RobotsDenied,
            Self::InvalidPattern { .. } | Self::InvalidSetting { .. } | Self::OutOfRange(_) => {
                ErrorKind::Config
            }
            Self::CorruptEvidence { .. } | Self::Warc { .. } | Self::Io { .. } => {
                ErrorKind::Evidence
            }
            Self::Store { .. } => ErrorKind::Store,
            Self::Render { .. } => ErrorKind::Render,
            Self::RenderUnavailable { .. } => ErrorKind::Config,
        }
    }

    /// Wraps a backend error (database, queue) for the [`Frontier`](crate::Frontier),
    /// [`SnapshotSink`](crate::SnapshotSink) and [`HostStateStore`](crate::HostStateStore)
    /// implementations.
    pub fn store(
        doing: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Store {
            doing,
            source: Box::new(source),
        }
    }

    pub(crate) fn invalid_url(url: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self::InvalidUrl {
            url: url.into(),
            reason: reason.to_string(),
        }
    }
}

/// A site's extraction rule that does not compile is a setting refused like any other
/// pattern ([`ErrorKind::Config`]); so is an OCR engine the settings name that cannot run (the
/// crawl itself only logs it and reads no images; an image's own errors stay notes).
impl From<extract::Error> for Error {
    fn from(e: extract::Error) -> Self {
        match e {
            extract::Error::InvalidPattern {
                what,
                pattern,
                reason,
            } => Self::InvalidPattern {
                what,
                pattern,
                reason,
            },
            other => Self::InvalidSetting {
                name: "extract.ocr",
                value: String::new(),
                reason: other.to_string(),
            },
        }
    }
}
