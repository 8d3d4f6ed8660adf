//! Layered settings: built-in defaults, then an optional TOML file (`--config`), then
//! `COPYHOUND_<SECTION>__<KEY>` environment variables (`__` separates nesting levels;
//! `..._FILE` variables name a file holding the value, for secrets), then command-line flags
//! (applied by each command).
//!
//! Each crate owns its typed settings struct with a `Default` and a `validate` that refuses
//! out-of-range values with a `bounds::OutOfRange` (the constructors that take the settings,
//! such as `Fingerprinter::new` or `Matcher::new`, call it too); this module only stacks the
//! layers, calls each section's `validate`, and says where a refused value came from.
//! `config/default.toml` documents every key with its default (commented out, so each default
//! is written once, in code; a test keeps the two in agreement). Unknown keys are reported as
//! warnings, not errors, so that an old binary can read a newer file.
//!
//! The layers are merged here rather than by the `config` crate, which rounds `2.5` to `2`
//! for an integer key and reads `true` or `yes` as 1. An environment value is typed by the
//! default it replaces (an integer key takes only a whole number, a switch only true or
//! false, a list a TOML array), and the merged tree is deserialized strictly, so a file's
//! `max_pages = 2.5` is an error too.
//!
//! Every process kind (`serve`, `worker`, the one-shot commands, `doctor`) starts here: the
//! crate sits on top of the stages, `pipeline` and `admin`, whose `…Settings` sections it
//! stacks, and below the binary, which only adds its command-line flags. It may use `admin`,
//! `pipeline`, `crawler`, `import`, `matcher`, `fingerprint`, `store`, `timestamp` and
//! `bounds`.
//!
//! # Main items
//!
//! - [`load`] builds a [`Loaded`]: the [`Settings`] (one section per crate) and the keys
//!   nobody knows. It remembers which variable or file set each key and names it when a
//!   value is refused (`serde_path_to_error` names the key of a type error).
//! - [`ServerSettings`] (`[server]`): listen address, uploads, the metrics token, and the
//!   admin UI's limits ([`ServerSettings::admin`]).
//! - What the settings build: [`Settings::handler`] (the job handler: importer, analyser,
//!   crawler, re-checks, time-stamping; [`Settings::shard_handler`] for one shard),
//!   [`Settings::importer`], [`Settings::rechecker`], [`Settings::index_snapshots`],
//!   [`Settings::admin`] and [`Settings::ops`] (the admin UI's and the ops endpoints'
//!   settings), [`Settings::masked_toml`] (`copyhound config`, secrets and URL passwords
//!   masked).
//! - [`diagnose`]: `copyhound doctor`'s findings, broken settings among them.
//! - [`init_logs`]: standard error, filtered by `COPYHOUND_LOG`, as text or JSON.
//! - [`database_url`]: `--database`, `COPYHOUND_DATABASE_URL`, `…_FILE`, else
//!   [`DEFAULT_DATABASE_URL`].
//!
//! ```
//! let vars = [("COPYHOUND_CRAWLER__MAX_PAGES".to_owned(), "50".to_owned())];
//! let loaded = settings::load(None, vars).unwrap();
//! assert_eq!(loaded.settings.crawler.max_pages, Some(50));
//! assert!(loaded.unknown_keys.is_empty());
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The documented defaults, embedded in the binary.
pub const DEFAULT_TOML: &str = include_str!("../../../config/default.toml");

/// The settings whose values are secrets ([`bounds::Secret`]): masked in every message.
pub const SECRET_KEYS: &[&str] = &[
    "server.metrics_token",
    "notify.smtp.password",
    "storage.access_key_id",
    "storage.secret_access_key",
];

/// Prefix of the environment variables read as settings.
const ENV_PREFIX: &str = "COPYHOUND_";

/// Every setting of the process, one section per crate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Fingerprinting parameters (`[fingerprint]`). Changing them changes every fingerprint.
    pub fingerprint: fingerprint::FingerprintSettings,
    /// Matching thresholds (`[matcher]`): index sampling, candidates, alignment, reporting.
    pub matcher: matcher::MatcherSettings,
    /// Crawling (`[crawler]`): fetching, politeness, robots.txt, scope, limits.
    pub crawler: crawler::CrawlSettings,
    /// What one imported file may cost (`[import]`): size, HTML shape, EPUB archive.
    pub import: import::ImportLimits,
    /// Takedown notices (`[notices]`): the rights holder's profile, the default template,
    /// abuse contacts.
    pub notices: takedown::NoticeSettings,
    /// Re-checks after a notice is sent (`[rechecks]`): their intervals and schedule.
    pub rechecks: casework::RecheckSettings,
    /// Evidence beyond the snapshot (`[evidence]`): trusted timestamps.
    pub evidence: casework::EvidenceSettings,
    /// Where page bodies are kept (`[storage]`): the database or an object store.
    pub storage: store::StorageSettings,
    /// How long page bodies are kept (`[retention]`): what `copyhound gc` and the daily
    /// `retention-gc` schedule remove.
    pub retention: store::RetentionSettings,
    /// How workers load the matcher index (`[index]`): from a snapshot, then the change
    /// log, or from the database.
    pub index: detection::LiveIndexSettings,
    /// Discovery of unknown sites (`[discovery]`): query phrases, search providers and their
    /// budgets.
    pub discovery: discovery::DiscoverySettings,
    /// Mail (`[notify]`): the SMTP server notices are sent through, the evidence
    /// attachment's limit.
    pub notify: notification::NotifySettings,
    /// The web server of `copyhound serve` (`[server]`): address, uploads, the metrics
    /// token.
    pub server: ServerSettings,
}

/// How `copyhound serve` listens (`[server]`); its `--listen` and `--upload-dir` flags
/// override the first two.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerSettings {
    /// The address to listen on. Anything but a loopback address should sit behind TLS.
    pub listen: std::net::SocketAddr,
    /// Where uploaded works wait for their import job (shared with the workers).
    pub upload_dir: std::path::PathBuf,
    /// A bearer token `/metrics` requires (also served by `worker --metrics-listen`); unset,
    /// `/metrics` is open and its port must stay internal. A secret: set it with
    /// `COPYHOUND_SERVER__METRICS_TOKEN_FILE`.
    pub metrics_token: Option<bounds::Secret>,
    /// The reverse proxies (CIDRs) whose `X-Forwarded-For`/`Forwarded` names the client;
    /// see [`admin::AdminSettings`] for this and the keys below.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// How long a session lasts without use.
    #[serde(with = "bounds::duration_serde")]
    pub session_idle_timeout: std::time::Duration,
    /// How long a session lasts at most.
    #[serde(with = "bounds::duration_serde")]
    pub session_lifetime: std::time::Duration,
    /// The largest body of a form or an API call, bytes.
    pub max_form_bytes: usize,
    /// The largest uploaded work, bytes.
    pub max_upload_bytes: usize,
    /// How long a connection may take to send its request's headers, or sit idle.
    #[serde(with = "bounds::duration_serde")]
    pub header_read_timeout: std::time::Duration,
    /// How long a request may take, its body included.
    #[serde(with = "bounds::duration_serde")]
    pub request_timeout: std::time::Duration,
    /// How long a request's body may take, plus a second per `body_min_rate` bytes received.
    #[serde(with = "bounds::duration_serde")]
    pub body_read_timeout: std::time::Duration,
    /// Bytes per second a body must keep up to use more than `body_read_timeout`.
    pub body_min_rate: u64,
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections one client address may hold open.
    pub max_connections_per_client: usize,
    /// Connections past `max_connections` kept for `/healthz`, `/readyz` and `/metrics`.
    pub reserved_ops_connections: usize,
}

/// The shortest metrics token accepted: a bearer token is guessed online, one request a try.
pub const MIN_TOKEN_CHARS: usize = 16;

impl Default for ServerSettings {
    fn default() -> Self {
        let admin = admin::AdminSettings::default();
        ServerSettings {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
            upload_dir: std::path::PathBuf::from("data/uploads"),
            metrics_token: None,
            trusted_proxies: admin.trusted_proxies,
            session_idle_timeout: admin.session_idle_timeout,
            session_lifetime: admin.session_lifetime,
            max_form_bytes: admin.max_form_bytes,
            max_upload_bytes: admin.max_upload_bytes,
            header_read_timeout: admin.header_read_timeout,
            request_timeout: admin.request_timeout,
            body_read_timeout: admin.body_read_timeout,
            body_min_rate: admin.body_min_rate,
            max_connections: admin.max_connections,
            max_connections_per_client: admin.max_connections_per_client,
            reserved_ops_connections: admin.reserved_ops_connections,
        }
    }
}

impl ServerSettings {
    /// The admin UI's settings these give; the rest are the admin crate's defaults.
    pub fn admin(&self) -> admin::AdminSettings {
        admin::AdminSettings {
            upload_dir: self.upload_dir.clone(),
            trusted_proxies: self.trusted_proxies.clone(),
            session_idle_timeout: self.session_idle_timeout,
            session_lifetime: self.session_lifetime,
            max_form_bytes: self.max_form_bytes,
            max_upload_bytes: self.max_upload_bytes,
            header_read_timeout: self.header_read_timeout,
            request_timeout: self.request_timeout,
            body_read_timeout: self.body_read_timeout,
            body_min_rate: self.body_min_rate,
            max_connections: self.max_connections,
            max_connections_per_client: self.max_connections_per_client,
            reserved_ops_connections: self.reserved_ops_connections,
            ..admin::AdminSettings::default()
        }
    }

    /// Checks the upload folder, the token's length and the admin UI's limits.
    ///
    /// # Errors
    /// An empty upload folder, a token shorter than [`MIN_TOKEN_CHARS`] (its value is
    /// masked in the message), or a limit out of its range.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        if self.upload_dir.as_os_str().is_empty() {
            return Err(bounds::OutOfRange::new(
                "upload_dir",
                "\"\"",
                "must name a folder",
            ));
        }
        match &self.metrics_token {
            Some(t) if t.expose().chars().count() < MIN_TOKEN_CHARS => {
                Err(bounds::OutOfRange::new(
                    "metrics_token",
                    bounds::MASK,
                    format!(
                        "must be at least {MIN_TOKEN_CHARS} characters (e.g. the output of \
                         `openssl rand -hex 32`)"
                    ),
                ))
            }
            _ => Ok(()),
        }?;
        self.admin().validate()
    }
}

impl Settings {
    /// Checks every section with its crate's own rules; keys in the error are full dotted
    /// paths (`crawler.fetch.timeout`).
    ///
    /// # Errors
    /// The first out-of-range value.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        self.fingerprint
            .validate()
            .map_err(|e| e.in_section("fingerprint"))?;
        self.matcher
            .validate()
            .map_err(|e| e.in_section("matcher"))?;
        self.crawler
            .validate()
            .map_err(|e| e.in_section("crawler"))?;
        self.import.validate().map_err(|e| e.in_section("import"))?;
        self.notices
            .validate()
            .map_err(|e| e.in_section("notices"))?;
        self.rechecks
            .validate()
            .map_err(|e| e.in_section("rechecks"))?;
        self.evidence
            .validate()
            .map_err(|e| e.in_section("evidence"))?;
        self.storage
            .validate()
            .map_err(|e| e.in_section("storage"))?;
        self.retention
            .validate()
            .map_err(|e| e.in_section("retention"))?;
        self.index.validate().map_err(|e| e.in_section("index"))?;
        self.discovery
            .validate()
            .map_err(|e| e.in_section("discovery"))?;
        self.notify.validate().map_err(|e| e.in_section("notify"))?;
        self.server.validate().map_err(|e| e.in_section("server"))
    }
}

impl Settings {
    /// The job handler with these settings: the importer's fingerprint parameters are the
    /// matcher's too, so pages are compared with the works as they were fingerprinted.
    ///
    /// # Errors
    /// The importer or the time-stamping authority cannot be set up with these settings.
    pub fn handler(&self, store: &store::Store) -> Result<pipeline::Handler> {
        self.shard_handler(store, bounds::Shard::ALL)
    }

    /// [`Settings::handler`] of a shard worker (`copyhound worker --shard K/N`): its index
    /// holds the works of `shard` alone. [`bounds::Shard::ALL`] holds everything.
    ///
    /// # Errors
    /// As [`Settings::handler`]; a shard of another count than `[index] shards`.
    pub fn shard_handler(
        &self,
        store: &store::Store,
        shard: bounds::Shard,
    ) -> Result<pipeline::Handler> {
        if !shard.is_all() && shard.count() != self.index.shards {
            anyhow::bail!(
                "shard {shard} is one of {} but [index] shards = {}: start the shard workers \
                 with --shard K/{} (COPYHOUND_INDEX__SHARDS sets the count)",
                shard.count(),
                self.index.shards,
                self.index.shards
            );
        }
        let importer = self.importer(0, Vec::new())?;
        let tsa = timestamp::Tsa::from_settings(&self.evidence.timestamp)
            .context("while setting up the time-stamping authority")?;
        let analyser = detection::Analyser::new(
            store.clone(),
            self.fingerprint.clone(),
            self.matcher.clone(),
        )
        .with_snapshots(self.index_snapshots()?)
        .with_shard(shard)
        .with_stamping(tsa.is_some())
        // Always: who listens (webhooks stored in the UI, users' alerts) changes while the
        // workers run, and an event nobody takes ends at its fan-out.
        .with_events(true);
        let handler =
            pipeline::Handler::new(store.clone(), importer, std::sync::Arc::new(analyser))
                .with_crawler(self.crawler.clone())
                .with_rechecks(self.rechecks.clone())
                .with_mail(self.notices.clone(), self.notify.clone())
                .with_discovery(self.discovery.clone())
                .with_retention(self.retention.clone())
                .with_shards(self.index.shards);
        Ok(match tsa {
            Some(tsa) => handler.with_tsa(tsa),
            None => handler,
        })
    }

    /// Where the matcher index's snapshots are looked for (`[index] snapshot`, with the
    /// `[storage]` object store's endpoint and keys).
    ///
    /// # Errors
    /// An object store the setting names that cannot be set up.
    pub fn index_snapshots(&self) -> Result<Option<detection::SnapshotPlace>> {
        detection::SnapshotPlace::parse(&self.index.snapshot, &self.storage)
            .context("while setting up [index] snapshot")
    }

    /// A re-checker of notices' copies with these settings (`notices recheck`).
    ///
    /// # Errors
    /// The fetcher or the extractor cannot be set up with these settings.
    pub fn rechecker(&self, store: &store::Store) -> Result<casework::Rechecker> {
        let analyser = detection::Analyser::new(
            store.clone(),
            self.fingerprint.clone(),
            self.matcher.clone(),
        )
        .with_snapshots(self.index_snapshots()?);
        let rechecker = casework::Rechecker::new(
            store.clone(),
            std::sync::Arc::new(analyser),
            &self.crawler,
            self.rechecks.clone(),
        );
        Ok(rechecker?)
    }

    /// An importer with the configured fingerprint parameters (the matcher compares with the
    /// same ones) and limits, fingerprinting on `threads` threads (0: one per core), with
    /// `headings` tried after the built-in chapter heading patterns.
    ///
    /// # Errors
    /// A heading pattern is not a valid regex, or the fingerprint settings are out of range.
    pub fn importer(&self, threads: usize, headings: Vec<String>) -> Result<import::Importer> {
        let mut split = import::SplitSettings::default();
        split.heading_patterns.extend(headings);
        import::Importer::new(import::ImportSettings {
            split,
            fingerprint: self.fingerprint.clone(),
            threads,
            limits: self.import.clone(),
        })
        .context("while setting up the importer")
    }

    /// The admin UI's settings: these sections, with the cookie and upload folder that
    /// `serve`'s flags (or the demo) chose.
    #[must_use]
    pub fn admin(
        &self,
        secure_cookies: bool,
        upload_dir: std::path::PathBuf,
    ) -> admin::AdminSettings {
        admin::AdminSettings {
            secure_cookies,
            upload_dir,
            crawler: self.crawler.clone(),
            notices: self.notices.clone(),
            rechecks: self.rechecks.clone(),
            mail_configured: self.notify.smtp.is_configured(),
            ops: self.ops(None),
            discovery: self.discovery.clone(),
            ..self.server.admin()
        }
    }

    /// `/healthz`, `/readyz` and `/metrics`: the metrics token, and the index to report on.
    #[must_use]
    pub fn ops(&self, analyser: Option<std::sync::Arc<detection::Analyser>>) -> admin::OpsSettings {
        admin::OpsSettings {
            metrics_token: self.server.metrics_token.clone(),
            analyser,
            retention: Some(admin::RetentionOutlook::new(self.retention.clone())),
        }
    }
}

impl Settings {
    /// The effective settings as TOML, headed by the database URL, for `copyhound config`:
    /// secrets ([`bounds::Secret`] settings) and the password in any URL are masked, so the
    /// text is safe to paste into an issue.
    ///
    /// # Errors
    /// A setting that TOML cannot hold (none today).
    pub fn masked_toml(&self, database: &str) -> Result<String> {
        Ok(format!(
            "# database = {:?} (--database / {DATABASE_URL_VAR})\n{}",
            store::mask_password(database),
            toml::to_string(&masked_urls(toml::Value::try_from(self)?))?
        ))
    }
}

/// `value` with the password of every URL in it masked.
fn masked_urls(value: toml::Value) -> toml::Value {
    match value {
        toml::Value::String(s) if s.contains("://") => {
            toml::Value::String(bounds::mask_url_password(&s))
        }
        toml::Value::Array(items) => {
            toml::Value::Array(items.into_iter().map(masked_urls).collect())
        }
        toml::Value::Table(table) => toml::Value::Table(
            table
                .into_iter()
                .map(|(k, v)| (k, masked_urls(v)))
                .collect(),
        ),
        other => other,
    }
}

/// Where log lines go and how they look, for every process kind: standard error, filtered
/// by `COPYHOUND_LOG` (tracing's `EnvFilter` syntax; `warn` when unset or not a filter), as
/// text for people (coloured when `color`) or, with `json`, as JSON for a log collector.
pub fn init_logs(json: bool, color: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var(LOG_VAR) {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            eprintln!("warning: {LOG_VAR}={spec:?} is not a log filter ({e}); using warn");
            EnvFilter::new("warn")
        }),
        _ => EnvFilter::new("warn"),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| Masked(std::io::stderr()));
    if json {
        builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init();
    } else {
        builder.with_ansi(color).init();
    }
}

/// A log writer that masks every secret the process has read ([`bounds::mask_known`]) in
/// what it writes. The log formats each event whole and writes it in one call, so a secret
/// is never split across two writes.
struct Masked<W>(W);

impl<W: std::io::Write> std::io::Write for Masked<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let shown = bounds::mask_known(&text);
        if matches!(text, std::borrow::Cow::Borrowed(_))
            && matches!(shown, std::borrow::Cow::Borrowed(_))
        {
            self.0.write_all(buf)?;
        } else {
            self.0.write_all(shown.as_bytes())?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The variable that filters the log (`COPYHOUND_LOG=copyhound=debug,warn`).
pub const LOG_VAR: &str = "COPYHOUND_LOG";

/// The variable `--database` reads; with `_FILE` appended, the one naming a file that holds
/// it (a Docker or Kubernetes secret).
pub const DATABASE_URL_VAR: &str = "COPYHOUND_DATABASE_URL";

/// Where the database is when neither `--database` nor a variable says.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/copyhound.db";

/// The database URL: `--database` (or `COPYHOUND_DATABASE_URL`), else the contents of the
/// file `COPYHOUND_DATABASE_URL_FILE` names, else [`DEFAULT_DATABASE_URL`].
///
/// # Errors
/// The file cannot be read, or holds nothing.
pub fn database_url(given: Option<String>) -> Result<String> {
    let url = database_url_given(given)?;
    // Its password is a secret like the settings' own: masked in every log line and error.
    if let Ok(parsed) = url::Url::parse(&url)
        && let Some(password) = parsed.password()
    {
        bounds::remember(password);
    }
    Ok(url)
}

fn database_url_given(given: Option<String>) -> Result<String> {
    if let Some(url) = given.filter(|u| !u.trim().is_empty()) {
        return Ok(url);
    }
    let file_var = format!("{DATABASE_URL_VAR}_FILE");
    match std::env::var_os(&file_var) {
        Some(path) if !path.is_empty() => {
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!(
                    "reading {file_var}={}",
                    std::path::Path::new(&path).display()
                )
            })?;
            let url = text.trim();
            anyhow::ensure!(
                !url.is_empty(),
                "{file_var}={} names an empty file: write the database URL in it",
                std::path::Path::new(&path).display()
            );
            Ok(url.to_owned())
        }
        _ => Ok(DEFAULT_DATABASE_URL.to_owned()),
    }
}

/// Everything `copyhound doctor` checks, in order: the settings (loaded from `file` and
/// `vars`, so that broken settings are a finding too), the database at `database`, and with
/// settings that load, the outbound (crawling) settings, a fetch of `probe` if given, the
/// time-stamping authority and the notices' rights holder.
pub async fn diagnose(
    file: Option<&Path>,
    vars: impl IntoIterator<Item = (String, String)>,
    database: &str,
    store_settings: &store::StoreSettings,
    probe: Option<&str>,
) -> Vec<pipeline::doctor::Finding> {
    use pipeline::doctor::{self, Finding, Level};
    let mut findings = Vec::new();
    let settings = match load(file, vars) {
        Ok(loaded) => {
            let clean = loaded.unknown_keys.is_empty();
            findings.push(Finding {
                check: "settings",
                level: if clean { Level::Ok } else { Level::Warn },
                detail: if clean {
                    "loaded".to_owned()
                } else {
                    format!("unknown keys ignored: {}", loaded.unknown_keys.join(", "))
                },
                fix: (!clean).then(|| {
                    "remove or correct them (config/default.toml lists every key)".to_owned()
                }),
            });
            Some(loaded.settings)
        }
        Err(e) => {
            findings.push(Finding {
                check: "settings",
                level: Level::Fail,
                detail: format!("{e:#}"),
                fix: Some(
                    "correct the value named; the checks that need settings are skipped".to_owned(),
                ),
            });
            None
        }
    };
    let (found, store) = doctor::database(database, store_settings).await;
    findings.extend(found);
    // The notice settings as drafting sees them: the file's with what was saved on the
    // settings page (the file's alone when the database cannot say).
    let mut notices = settings.as_ref().map(|s| s.notices.clone());
    if let Some(settings) = &settings {
        findings.push(doctor::body_storage(&settings.storage, store.as_ref()).await);
    }
    // What retention will free, read from a schema that is this build's (a database with
    // migrations pending has the `migrations` finding already).
    let migrated = findings
        .iter()
        .any(|f| f.check == "migrations" && f.level == Level::Ok);
    if let (Some(settings), Some(store), true) = (&settings, &store, migrated) {
        findings.push(doctor::retention(&settings.retention, store).await);
        findings.push(doctor::shards(settings.index.shards, store).await);
    }
    if let Some(store) = store {
        if let Some(file) = &mut notices
            && let Ok(effective) = takedown::overrides::effective(&store, file).await
        {
            *file = effective.notices;
        }
        store.close().await;
    }
    if let Some(settings) = &settings {
        findings.extend(doctor::outbound(&settings.crawler, |var| {
            std::env::var(var).ok()
        }));
        if let Some(url) = probe {
            findings.push(doctor::probe(&settings.crawler, url).await);
        }
        findings.push(doctor::time_stamping(&settings.evidence.timestamp).await);
        findings.push(doctor::notices(
            notices.as_ref().unwrap_or(&settings.notices),
        ));
        findings.push(doctor::smtp(&settings.notify.smtp).await);
        findings.push(doctor::rendering(&settings.crawler.render).await);
    }
    // Whatever a check quoted (a URL given to probe, a server's answer, a path), no finding
    // shows a secret the settings hold.
    for finding in &mut findings {
        finding.detail = bounds::mask_known(&finding.detail).into_owned();
        if let Some(fix) = &mut finding.fix {
            *fix = bounds::mask_known(fix).into_owned();
        }
    }
    findings
}

/// Settings together with what was odd about them.
#[derive(Debug)]
pub struct Loaded {
    /// The effective settings.
    pub settings: Settings,
    /// Keys that were given but mean nothing to this version (with where they came from).
    pub unknown_keys: Vec<String>,
}

/// One `COPYHOUND_SECTION__KEY` setting from the environment.
struct EnvSetting {
    /// Dotted key, lower case (`crawler.fetch.timeout`).
    key: String,
    /// The variable it came from (the `..._FILE` one for a value read from a file).
    var: String,
    value: String,
}

/// The `COPYHOUND_SECTION__KEY=value` variables that are settings. Variables without `__`
/// (like `COPYHOUND_LOG`) are not settings. `..._FILE` variables are replaced by the trimmed
/// contents of the file they name.
fn env_settings(vars: impl IntoIterator<Item = (String, String)>) -> Result<Vec<EnvSetting>> {
    let mut out = Vec::new();
    for (name, value) in vars {
        let Some(rest) = name.strip_prefix(ENV_PREFIX) else {
            continue;
        };
        if !rest.contains("__") {
            continue;
        }
        let (path, value) = match rest.strip_suffix("_FILE") {
            Some(path) => {
                let contents = std::fs::read_to_string(&value)
                    .with_context(|| format!("reading {name}={value}"))?;
                (path, contents.trim_end_matches(['\r', '\n']).to_string())
            }
            None => (rest, value),
        };
        out.push(EnvSetting {
            key: path.to_lowercase().replace("__", "."),
            var: name,
            value,
        });
    }
    // A `_FILE` variable and a plain one for the same key: the plain one wins, whatever the
    // order the environment lists them in.
    out.sort_by_key(|s| (s.key.clone(), s.var.ends_with("_FILE")));
    out.reverse();
    Ok(out)
}

/// The environment variable that sets `key`.
fn env_var(key: &str) -> String {
    format!("{ENV_PREFIX}{}", key.to_uppercase().replace('.', "__"))
}

/// Where each key that is not a built-in default was set, for error messages.
#[derive(Debug, Default)]
struct Origins(BTreeMap<String, String>);

impl Origins {
    /// " (set in ...)" for the key of `e`; when that key was left at its default by a rule
    /// between two keys, the other key and where it was set, which is what changed.
    fn of_rule(&self, e: &bounds::OutOfRange) -> String {
        match e.against_key() {
            Some(other) if !self.0.contains_key(e.key()) && self.0.contains_key(other) => {
                format!(
                    " (the built-in default, checked against {other}, {}; set {} or change \
                     {other})",
                    self.where_set(other),
                    env_var(e.key())
                )
            }
            _ => self.of(e.key()),
        }
    }

    /// " (set in ...)" for `key`, naming the variable that would override it.
    fn of(&self, key: &str) -> String {
        format!(" ({})", self.where_set(key))
    }

    /// Where `key` was set ("set in COPYHOUND_…"), or that it was not.
    fn where_set(&self, key: &str) -> String {
        match self.0.get(key) {
            Some(var) if var.starts_with(ENV_PREFIX) => format!("set in {var}"),
            Some(file) => format!("set in {file}; {} overrides it", env_var(key)),
            None => format!(
                "the built-in default; set {} or the config file",
                env_var(key)
            ),
        }
    }
}

/// Merges `layer` into `tree`: tables key by key, anything else replaced. Records `origin` for
/// every leaf `layer` sets.
fn merge(
    tree: &mut Map<String, Value>,
    layer: Map<String, Value>,
    prefix: &str,
    origin: &str,
    origins: &mut Origins,
) {
    for (key, value) in layer {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match (tree.get_mut(&key), value) {
            (Some(Value::Object(inner)), Value::Object(layer)) => {
                merge(inner, layer, &path, origin, origins);
            }
            (_, value) => {
                record_leaves(&value, &path, origin, origins);
                tree.insert(key, value);
            }
        }
    }
}

fn record_leaves(value: &Value, path: &str, origin: &str, origins: &mut Origins) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                record_leaves(value, &format!("{path}.{key}"), origin, origins);
            }
        }
        _ => {
            origins.0.insert(path.to_owned(), origin.to_owned());
        }
    }
}

/// A TOML document as a tree.
fn parse_toml(text: &str, what: &str) -> Result<Map<String, Value>> {
    let table: toml::Table = toml::from_str(text).with_context(|| format!("parsing {what}"))?;
    match serde_json::to_value(table)? {
        Value::Object(map) => Ok(map),
        _ => unreachable!("a TOML document is a table"),
    }
}

/// The value at dotted `key` in `tree`, if any.
fn lookup<'a>(tree: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    let (first, rest) = key.split_once('.').unwrap_or((key, ""));
    let top = tree.get(first)?;
    if rest.is_empty() {
        return Some(top);
    }
    rest.split('.').try_fold(top, |node, part| node.get(part))
}

/// Types the environment value of `key` like the default it replaces (`default`, `None` for
/// a key without a default, which is kept as text).
fn typed_env_value(default: Option<&Value>, value: &str) -> Result<Value, String> {
    let text = value.trim();
    match default {
        Some(Value::Number(n)) if n.is_f64() => match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::from(f)),
            _ => Err("is not a number".to_owned()),
        },
        Some(Value::Number(_)) => text
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| text.parse::<u64>().map(Value::from))
            .map_err(|_| "is not a whole number".to_owned()),
        Some(Value::Bool(_)) => match text.to_ascii_lowercase().as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err("must be true or false".to_owned()),
        },
        Some(Value::Array(_)) => toml::from_str::<toml::Table>(&format!("v = {text}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .filter(toml::Value::is_array)
            .and_then(|v| serde_json::to_value(v).ok())
            .ok_or_else(|| r#"must be a list in TOML syntax, e.g. ["a", "b"]"#.to_owned()),
        Some(Value::Object(_)) => Err("is a section: set its keys one by one".to_owned()),
        Some(Value::String(_)) | Some(Value::Null) | None => Ok(Value::String(value.to_owned())),
    }
}

/// Loads the settings from the embedded defaults, `file` (if any) and the given environment.
///
/// # Errors
/// If the file cannot be read or parsed, a `_FILE` variable names an unreadable file, or a
/// value has the wrong type or is out of range (the message names the key, the value and
/// where it was set).
pub fn load(
    file: Option<&Path>,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<Loaded> {
    let mut origins = Origins::default();
    let mut tree = parse_toml(DEFAULT_TOML, "the built-in defaults")?;
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config file {}", path.display()))?;
        let what = format!("config file {}", path.display());
        let layer = parse_toml(&text, &what)?;
        merge(&mut tree, layer, "", &what, &mut origins);
    }
    let Value::Object(defaults) = serde_json::to_value(Settings::default())? else {
        unreachable!("settings serialize to a table")
    };
    for setting in env_settings(vars)? {
        let value =
            typed_env_value(lookup(&defaults, &setting.key), &setting.value).map_err(|why| {
                anyhow!(
                    "{} = {:?} {why} (set in {})",
                    setting.key,
                    setting.value,
                    setting.var
                )
            })?;
        let layer = setting.key.rsplit('.').fold(value, |inner, part| {
            Value::Object(Map::from_iter([(part.to_owned(), inner)]))
        });
        let Value::Object(layer) = layer else {
            unreachable!("the fold wraps the value in one table at least")
        };
        merge(&mut tree, layer, "", &setting.var, &mut origins);
    }
    let mut unknown_keys = Vec::new();
    let mut on_unknown = |path: serde_ignored::Path<'_>| unknown_keys.push(path.to_string());
    let settings: Settings = serde_path_to_error::deserialize(serde_ignored::Deserializer::new(
        Value::Object(tree.clone()),
        &mut on_unknown,
    ))
    .map_err(|e| {
        let key = e.path().to_string();
        // A secret's value never reaches a message, even a wrong one (serde's message
        // quotes the value it refused).
        let secret = SECRET_KEYS.contains(&key.as_str());
        let shown = match lookup(&tree, &key) {
            Some(_) if secret => format!(" = {}", bounds::MASK),
            Some(v) => format!(" = {v}"),
            None => String::new(),
        };
        let why = if secret {
            "a secret is text, in quotes".to_owned()
        } else {
            e.inner().to_string()
        };
        anyhow!("{key}{shown} is not valid: {why}{}", origins.of(&key))
    })?;
    if let Err(e) = settings.validate() {
        bail!("{e}{}", origins.of_rule(&e));
    }
    Ok(Loaded {
        settings,
        unknown_keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_masks_every_secret_read() {
        use std::io::Write;
        let _token = bounds::Secret::new("log-line-secret-0042");
        let mut out = Masked(Vec::new());
        let line = "WARN delivery to https://hooks.test/?k=log-line-secret-0042 failed\n";
        assert_eq!(out.write(line.as_bytes()).unwrap(), line.len());
        out.write_all(b"a line with nothing to hide\n").unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "WARN delivery to https://hooks.test/?k=******** failed\n\
             a line with nothing to hide\n"
        );
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The error loading with one environment variable set.
    fn env_error(name: &str, value: &str) -> String {
        format!("{:#}", load(None, vars(&[(name, value)])).unwrap_err())
    }

    /// The error loading `toml` as the --config file.
    fn file_error(toml: &str) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("copyhound.toml");
        std::fs::write(&file, toml).unwrap();
        let err = load(Some(&file), vars(&[])).unwrap_err();
        (format!("{err:#}"), file.display().to_string())
    }

    #[test]
    fn defaults_are_the_code_defaults() {
        let loaded = load(None, vars(&[])).unwrap();
        assert_eq!(loaded.settings, Settings::default());
        assert!(loaded.unknown_keys.is_empty());
        Settings::default().validate().unwrap();
    }

    #[test]
    fn documented_defaults_match_the_code() {
        // Uncomment every `# key = value` line of default.toml: the result, loaded as a config
        // file, must give exactly the defaults the code uses, so the documentation cannot drift.
        let uncommented: String = DEFAULT_TOML
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if rest.contains(" = ") || rest.starts_with('[') => rest,
                _ => l,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("uncommented.toml");
        std::fs::write(&file, uncommented).unwrap();
        let loaded = load(Some(&file), vars(&[])).unwrap();
        assert!(loaded.unknown_keys.is_empty(), "{:?}", loaded.unknown_keys);
        assert_eq!(loaded.settings, Settings::default());
    }

    #[test]
    fn matcher_settings_load_and_are_checked() {
        let loaded = load(
            None,
            vars(&[("COPYHOUND_MATCHER__REPORT__MIN_MATCHED_CHARS", "500")]),
        )
        .unwrap();
        assert_eq!(loaded.settings.matcher.report.min_matched_chars, 500);
        assert_eq!(
            env_error("COPYHOUND_MATCHER__CANDIDATES__MAX_CANDIDATES", "0"),
            "matcher.candidates.max_candidates = 0 is out of range: must be at least 1 \
             (set in COPYHOUND_MATCHER__CANDIDATES__MAX_CANDIDATES)"
        );
        assert_eq!(
            env_error("COPYHOUND_MATCHER__REPORT__MIN_COVERAGE", "1.5"),
            "matcher.report.min_coverage = 1.5 is out of range: must be between 0 and 1 \
             (set in COPYHOUND_MATCHER__REPORT__MIN_COVERAGE)"
        );
        assert!(
            env_error("COPYHOUND_MATCHER__REPORT__MIN_COVERAGE", "NaN").contains("not a number")
        );
    }

    #[test]
    fn zero_and_negative_durations_are_refused_naming_the_variable() {
        assert_eq!(
            env_error("COPYHOUND_CRAWLER__FETCH__TIMEOUT", "0s"),
            "crawler.fetch.timeout = 0s is out of range: must be at least 1ms \
             (set in COPYHOUND_CRAWLER__FETCH__TIMEOUT)"
        );
        assert!(
            env_error("COPYHOUND_CRAWLER__ROBOTS__TTL", "0").contains("crawler.robots.ttl = 0s")
        );
        let err = env_error("COPYHOUND_CRAWLER__FETCH__TIMEOUT", "-5s");
        assert!(err.contains("crawler.fetch.timeout = \"-5s\""), "{err}");
        assert!(err.contains("invalid duration"), "{err}");
        let loaded = load(None, vars(&[("COPYHOUND_CRAWLER__FETCH__TIMEOUT", "1.5")])).unwrap();
        assert_eq!(
            loaded.settings.crawler.fetch.timeout,
            std::time::Duration::from_millis(1500)
        );
    }

    #[test]
    fn a_time_stamping_authority_is_set_from_the_environment_and_checked() {
        assert_eq!(Settings::default().evidence.timestamp.url, None);
        let loaded = load(
            None,
            vars(&[
                (
                    "COPYHOUND_EVIDENCE__TIMESTAMP__URL",
                    "https://tsa.example/tsr",
                ),
                (
                    "COPYHOUND_EVIDENCE__TIMESTAMP__CA_CERTIFICATES",
                    "/etc/ca.pem",
                ),
                ("COPYHOUND_EVIDENCE__TIMESTAMP__TIMEOUT", "5s"),
            ]),
        )
        .unwrap();
        let ts = &loaded.settings.evidence.timestamp;
        assert_eq!(ts.url.as_deref(), Some("https://tsa.example/tsr"));
        assert_eq!(
            ts.ca_certificates.as_deref(),
            Some(Path::new("/etc/ca.pem"))
        );
        assert_eq!(ts.timeout, std::time::Duration::from_secs(5));
        assert_eq!(
            env_error("COPYHOUND_EVIDENCE__TIMESTAMP__URL", "ftp://tsa.example/"),
            "evidence.timestamp.url = ftp://tsa.example/ is out of range: must be an http:// \
             or https:// URL (set in COPYHOUND_EVIDENCE__TIMESTAMP__URL)"
        );
    }

    #[test]
    fn a_value_set_in_the_file_names_the_file_and_the_variable() {
        let (err, file) = file_error("[crawler.fetch]\ntimeout = \"0s\"\n");
        assert_eq!(
            err,
            format!(
                "crawler.fetch.timeout = 0s is out of range: must be at least 1ms \
                 (set in config file {file}; COPYHOUND_CRAWLER__FETCH__TIMEOUT overrides it)"
            )
        );
        // A rule between two keys, when the one named was left at its default: the message
        // names the key that was set, and where.
        let (err, file) = file_error("[crawler.politeness]\nbackoff_base = \"700s\"\n");
        assert_eq!(
            err,
            format!(
                "crawler.politeness.backoff_max = 600s is out of range: must be at least 700s \
                 (the built-in default, checked against crawler.politeness.backoff_base, set \
                 in config file {file}; COPYHOUND_CRAWLER__POLITENESS__BACKOFF_BASE overrides \
                 it; set COPYHOUND_CRAWLER__POLITENESS__BACKOFF_MAX or change \
                 crawler.politeness.backoff_base)"
            )
        );
        let err = env_error("COPYHOUND_CRAWLER__RENDER__MAX_HEAP_MIB", "4096");
        assert!(
            err.contains(
                "(the built-in default, checked against crawler.render.max_heap_mib, set in \
                 COPYHOUND_CRAWLER__RENDER__MAX_HEAP_MIB; set \
                 COPYHOUND_CRAWLER__RENDER__MAX_MEMORY_MIB or change crawler.render.max_heap_mib)"
            ),
            "{err}"
        );
        // Both keys set: the one named is where it was set.
        let (err, file) =
            file_error("[crawler.politeness]\nbackoff_base = \"700s\"\nbackoff_max = \"650s\"\n");
        assert!(
            err.ends_with(&format!(
                "(set in config file {file}; COPYHOUND_CRAWLER__POLITENESS__BACKOFF_MAX \
                 overrides it)"
            )),
            "{err}"
        );
    }

    #[test]
    fn integers_must_be_whole_numbers_never_rounded() {
        assert_eq!(
            env_error("COPYHOUND_CRAWLER__MAX_PAGES", "2.5"),
            "crawler.max_pages = \"2.5\" is not a whole number (set in COPYHOUND_CRAWLER__MAX_PAGES)"
        );
        for bad in ["yes", "true", "1e3", "-1", ""] {
            let err = env_error("COPYHOUND_FINGERPRINT__WINNOW_W", bad);
            assert!(err.contains("fingerprint.winnow_w"), "{bad}: {err}");
        }
        let (err, file) = file_error("[crawler]\nmax_pages = 2.5\n");
        assert!(
            err.starts_with("crawler.max_pages = 2.5 is not valid: "),
            "{err}"
        );
        assert!(err.contains("expected u64"), "{err}");
        assert!(err.contains(&file), "{err}");
        let (err, _) = file_error("[crawler]\nmax_depth = true\n");
        assert!(
            err.contains("crawler.max_depth = true is not valid"),
            "{err}"
        );
        // The full range of an unsigned key, which the old layering read through an f64.
        let loaded = load(
            None,
            vars(&[(
                "COPYHOUND_FINGERPRINT__MINHASH_SEED",
                "18446744073709551615",
            )]),
        )
        .unwrap();
        assert_eq!(loaded.settings.fingerprint.minhash_seed, u64::MAX);
    }

    #[test]
    fn environment_values_are_typed_by_the_default_they_replace() {
        let loaded = load(
            None,
            vars(&[
                ("COPYHOUND_CRAWLER__FETCH__ACCEPT_LANGUAGE", "007"),
                ("COPYHOUND_CRAWLER__ROBOTS__OBEY", "FALSE"),
                (
                    "COPYHOUND_CRAWLER__SCOPE__EXTRA_DOMAINS",
                    r#"["mirror.example", "b.example"]"#,
                ),
                ("COPYHOUND_FINGERPRINT__DNA__OVERLAP", "0.5"),
            ]),
        )
        .unwrap();
        let c = &loaded.settings.crawler;
        assert_eq!(c.fetch.accept_language, "007");
        assert!(!c.robots.obey);
        assert_eq!(c.scope.extra_domains, ["mirror.example", "b.example"]);
        assert_eq!(loaded.settings.fingerprint.dna.overlap, 0.5);
        assert!(env_error("COPYHOUND_CRAWLER__ROBOTS__OBEY", "1").contains("true or false"));
        assert!(
            env_error("COPYHOUND_CRAWLER__SCOPE__EXTRA_DOMAINS", "a.example")
                .contains("must be a list")
        );
    }

    #[test]
    fn file_then_environment_override() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("copyhound.toml");
        std::fs::write(&file, "[fingerprint]\nwinnow_w = 40\nshingle_k = 4\n").unwrap();
        let loaded = load(
            Some(&file),
            vars(&[
                ("COPYHOUND_FINGERPRINT__WINNOW_W", "50"),
                ("COPYHOUND_LOG", "debug"),
            ]),
        )
        .unwrap();
        assert_eq!(loaded.settings.fingerprint.winnow_w, 50);
        assert_eq!(loaded.settings.fingerprint.shingle_k, 4);
    }

    #[test]
    fn file_variables_read_secrets_from_files() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("w");
        std::fs::write(&secret, "33\n").unwrap();
        let secret = secret.to_str().unwrap();
        let loaded = load(
            None,
            vars(&[("COPYHOUND_FINGERPRINT__WINNOW_W_FILE", secret)]),
        )
        .unwrap();
        assert_eq!(loaded.settings.fingerprint.winnow_w, 33);
        // The plain variable wins over the _FILE one, whichever comes first.
        for pairs in [
            [
                ("COPYHOUND_FINGERPRINT__WINNOW_W", "44"),
                ("COPYHOUND_FINGERPRINT__WINNOW_W_FILE", secret),
            ],
            [
                ("COPYHOUND_FINGERPRINT__WINNOW_W_FILE", secret),
                ("COPYHOUND_FINGERPRINT__WINNOW_W", "44"),
            ],
        ] {
            let loaded = load(None, vars(&pairs)).unwrap();
            assert_eq!(loaded.settings.fingerprint.winnow_w, 44);
        }
        std::fs::write(dir.path().join("w"), "0\n").unwrap();
        assert!(
            env_error("COPYHOUND_FINGERPRINT__WINNOW_W_FILE", secret)
                .ends_with("(set in COPYHOUND_FINGERPRINT__WINNOW_W_FILE)")
        );
        let err = env_error("COPYHOUND_FINGERPRINT__WINNOW_W_FILE", "/nonexistent/x");
        assert!(
            err.contains("COPYHOUND_FINGERPRINT__WINNOW_W_FILE"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_warn_in_every_section_alike() {
        // One unknown key in each section and subsection, top-level and nested: all warned
        // about, none fatal (the crawler's sections used to refuse them).
        let sections = [
            "fingerprint",
            "fingerprint.dna",
            "matcher.index",
            "matcher.report",
            "crawler",
            "crawler.fetch",
            "crawler.fetch.safety",
            "crawler.robots",
            "crawler.politeness",
            "crawler.scope",
            "crawler.extract",
            "crawler.extract.limits",
            "import",
            "import.html",
            "import.epub",
            "notices",
            "notices.rights_holder",
            "rechecks",
            "evidence.timestamp",
            "notify",
            "notify.smtp",
            "server",
        ];
        let toml: String = sections
            .iter()
            .map(|s| format!("[{s}]\nno_such_key = 1\n"))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("copyhound.toml");
        std::fs::write(&file, toml).unwrap();
        let loaded = load(
            Some(&file),
            vars(&[("COPYHOUND_CRAWLER__FETCH__NOPE", "1")]),
        )
        .unwrap();
        let mut expected: Vec<String> = sections
            .iter()
            .map(|s| format!("{s}.no_such_key"))
            .chain(["crawler.fetch.nope".to_owned()])
            .collect();
        expected.sort();
        let mut got = loaded.unknown_keys.clone();
        got.sort();
        assert_eq!(got, expected);
        assert_eq!(loaded.settings, Settings::default());
    }

    #[test]
    fn server_settings_load_and_a_secret_never_shows() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "0123456789abcdef0123\n").unwrap();
        let loaded = load(
            None,
            vars(&[
                ("COPYHOUND_SERVER__LISTEN", "0.0.0.0:9000"),
                (
                    "COPYHOUND_SERVER__METRICS_TOKEN_FILE",
                    token.to_str().unwrap(),
                ),
            ]),
        )
        .unwrap();
        let server = &loaded.settings.server;
        assert_eq!(server.listen, "0.0.0.0:9000".parse().unwrap());
        let secret = server.metrics_token.as_ref().unwrap();
        assert_eq!(secret.expose(), "0123456789abcdef0123");
        // Neither the settings' Debug nor their TOML shows it.
        assert!(!format!("{:?}", loaded.settings).contains("0123456789abcdef"));
        let toml = toml::to_string(&loaded.settings).unwrap();
        assert!(toml.contains("metrics_token = \"********\""), "{toml}");
        // A wrong type in the file: the key and the masked value, never the value.
        let (err, _) = file_error("[server]\nmetrics_token = 1234567890123456789\n");
        assert!(
            err.starts_with("server.metrics_token = ******** is not valid"),
            "{err}"
        );
        assert!(!err.contains("1234567890123456789"), "{err}");
        assert_eq!(
            env_error("COPYHOUND_SERVER__METRICS_TOKEN", "tooshort"),
            "server.metrics_token = ******** is out of range: must be at least 16 characters \
             (e.g. the output of `openssl rand -hex 32`) (set in COPYHOUND_SERVER__METRICS_TOKEN)"
        );
        assert!(
            env_error("COPYHOUND_SERVER__LISTEN", "nowhere")
                .starts_with("server.listen = \"nowhere\" is not valid: invalid socket address")
        );
    }

    #[test]
    fn unknown_keys_warn_and_bad_values_fail() {
        let loaded = load(None, vars(&[("COPYHOUND_FINGERPRINT__WINNOW_WW", "3")])).unwrap();
        assert_eq!(
            loaded.unknown_keys,
            vec!["fingerprint.winnow_ww".to_string()]
        );
        let err = env_error("COPYHOUND_FINGERPRINT__WINNOW_W", "many");
        assert!(err.contains("winnow_w"), "{err}");
        assert_eq!(
            env_error("COPYHOUND_FINGERPRINT__WINNOW_W", "0"),
            "fingerprint.winnow_w = 0 is out of range: must be between 1 and 1024 \
             (set in COPYHOUND_FINGERPRINT__WINNOW_W)"
        );
    }
}
