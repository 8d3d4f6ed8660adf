//! `copyhound doctor`'s checks: each looks at one thing a deployment needs, says what it
//! found and, when something is wrong, what to change (the setting, its variable, the
//! command). The binary only prints the [`Finding`]s.
//!
//! - [`database`]: the database opens, answers, and its schema is this build's (pending
//!   migrations, or ones a newer copyhound applied); dead jobs waiting for a look.
//! - [`outbound`]: the crawler's HTTP client builds from the settings; the contact URL in
//!   the User-Agent is not the placeholder; robots.txt and the private-address guard are on;
//!   which proxy requests go through. [`probe`] fetches one URL the way a crawl would.
//! - [`time_stamping`]: with a TSA configured, a real stamp of a throw-away digest, verified
//!   (against the configured CA when there is one).
//! - [`notices`]: the rights holder's profile every notice needs.
//! - [`smtp`]: with an SMTP server configured, a connection to it as a send makes one (TLS,
//!   login), nothing sent.
//! - [`rendering`]: whether the rendered fetch can run (Chromium and chromedriver installed,
//!   a page rendered).

use std::time::{Duration, Instant};

use jobs::chain;
use store::{OpsReads, Store, StoreSettings};
use takedown::NoticeSettings;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Fine.
    Ok,
    /// Works, but likely not as meant.
    Warn,
    /// Broken: copyhound cannot do this part of its work.
    Fail,
}

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// What was checked (`database`, `migrations`, `outbound`, `tsa`, ...).
    pub check: &'static str,
    /// How it came out.
    pub level: Level,
    /// What was found.
    pub detail: String,
    /// What to change, when something should change.
    pub fix: Option<String>,
}

/// `LEVEL  CHECK       DETAIL`, and a `fix:` line under it when there is one.
impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.level {
            Level::Ok => "ok",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
        };
        writeln!(f, "{level:<4}  {:<10}  {}", self.check, self.detail)?;
        if let Some(fix) = &self.fix {
            writeln!(f, "{:<16}fix: {fix}", "")?;
        }
        Ok(())
    }
}

impl Finding {
    fn ok(check: &'static str, detail: impl Into<String>) -> Self {
        Finding {
            check,
            level: Level::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn warn(check: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding {
            check,
            level: Level::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn fail(check: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding {
            check,
            level: Level::Fail,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Opens the database at `url` (without migrating it) and checks it; returns the store when
/// it opened, for the checks after.
pub async fn database(url: &str, settings: &StoreSettings) -> (Vec<Finding>, Option<Store>) {
    let shown = store::mask_password(url);
    let store = match Store::connect(url, settings).await {
        Ok(store) => store,
        Err(e) => {
            let fix = match e {
                store::Error::UnsupportedUrl { .. } => "give a sqlite:// or postgres:// URL with \
                     --database, COPYHOUND_DATABASE_URL or COPYHOUND_DATABASE_URL_FILE"
                    .to_owned(),
                _ => "check the URL (--database, COPYHOUND_DATABASE_URL or \
                     COPYHOUND_DATABASE_URL_FILE), that the server is up and reachable from \
                     here (`pg_isready -d URL` for Postgres) and the user's password; for \
                     SQLite, that the folder is writable"
                    .to_owned(),
            };
            let finding = Finding::fail("database", format!("cannot open {shown}: {e}"), fix);
            return (vec![finding], None);
        }
    };
    let mut findings = Vec::new();
    if let Err(e) = store.ping().await {
        findings.push(Finding::fail(
            "database",
            format!("{shown} opened but does not answer: {e}"),
            "check the database server's logs and its connection limits",
        ));
        return (findings, Some(store));
    }
    findings.push(Finding::ok(
        "database",
        format!("{} at {shown} answers", store.kind()),
    ));
    findings.push(match store.schema_state().await {
        Ok(s) if !s.unknown.is_empty() => Finding::fail(
            "migrations",
            format!(
                "the database has migrations this build does not know: {:?}",
                s.unknown
            ),
            "a newer copyhound migrated this database: run that version (never an older one \
             against it)",
        ),
        Ok(s) if !s.pending.is_empty() => Finding::warn(
            "migrations",
            format!(
                "{} migrations pending, from {} {}",
                s.pending.len(),
                s.pending[0].version,
                s.pending[0].description
            ),
            "run `copyhound migrate` (serve and worker also apply them when they start)",
        ),
        Ok(_) => Finding::ok("migrations", "every migration of this build is applied"),
        Err(e) => Finding::fail(
            "migrations",
            format!("cannot read the migrations table: {e}"),
            "check that the database user may read _sqlx_migrations",
        ),
    });
    match store.job_depth().await {
        Ok(depth) => {
            let dead: u64 = depth
                .iter()
                .filter(|d| d.status == "dead")
                .map(|d| d.jobs)
                .sum();
            if dead > 0 {
                findings.push(Finding::warn(
                    "jobs",
                    format!("{dead} dead jobs (failed on every attempt)"),
                    "read their errors on the admin UI's Jobs page and retry them there once \
                     the cause is fixed",
                ));
            } else {
                let queued: u64 = depth
                    .iter()
                    .filter(|d| d.status == "queued")
                    .map(|d| d.jobs)
                    .sum();
                findings.push(Finding::ok(
                    "jobs",
                    format!("no dead jobs; {queued} queued"),
                ));
            }
        }
        // The schema check said why already when the table is missing.
        Err(e) => findings.push(Finding::warn(
            "jobs",
            format!("cannot count the jobs: {e}"),
            "run `copyhound migrate`",
        )),
    }
    (findings, Some(store))
}

/// The proxy variables reqwest follows, in the order it reads them.
const PROXY_VARS: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The crawler's outbound settings. `env` gives the process's variables (for the proxy).
pub fn outbound(
    crawler: &crawler::CrawlSettings,
    env: impl Fn(&str) -> Option<String>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Err(e) = crawler::Fetcher::new(crawler.fetch.clone()) {
        findings.push(Finding::fail(
            "outbound",
            format!("the HTTP client cannot be built: {e}"),
            "check the [crawler.fetch] settings",
        ));
        return findings;
    }
    let contact = &crawler.fetch.contact_url;
    if contact.contains("example.invalid") || contact.trim().is_empty() {
        findings.push(Finding::warn(
            "outbound",
            format!(
                "the User-Agent names the placeholder contact page {contact}: site operators \
                 cannot tell who crawls them"
            ),
            "set crawler.fetch.contact_url (COPYHOUND_CRAWLER__FETCH__CONTACT_URL) to a page \
             saying who you are and how to reach you",
        ));
    } else {
        findings.push(Finding::ok(
            "outbound",
            format!(
                "User-Agent {}/{} with contact {contact}",
                crawler.fetch.agent,
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
    if !crawler.robots.obey {
        findings.push(Finding::warn(
            "outbound",
            "robots.txt is ignored on every host",
            "set crawler.robots.obey = true (COPYHOUND_CRAWLER__ROBOTS__OBEY), and list the \
             hosts to ignore it for in crawler.robots.ignore_for",
        ));
    }
    if crawler.fetch.safety.allow_private {
        findings.push(Finding::warn(
            "outbound",
            "crawls may reach loopback and private addresses (this machine, its network)",
            "set crawler.fetch.safety.allow_private = false \
             (COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE) and list only the networks \
             needed in allowed_networks",
        ));
    }
    let proxy = PROXY_VARS
        .iter()
        .find_map(|var| env(var).filter(|v| !v.is_empty()).map(|v| (*var, v)));
    findings.push(match proxy {
        Some((var, value)) => Finding::ok(
            "proxy",
            format!(
                "requests go through {} (from {var}; NO_PROXY exempts hosts)",
                store::mask_password(&value)
            ),
        ),
        None => Finding::ok(
            "proxy",
            "no proxy: requests go out directly (HTTPS_PROXY would route them)",
        ),
    });
    findings
}

/// Fetches `url` as a crawl would (the configured client, safety guard and limits).
pub async fn probe(crawler: &crawler::CrawlSettings, url: &str) -> Finding {
    let parsed = match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u,
        _ => {
            return Finding::fail(
                "probe",
                format!("{url:?} is not an http(s) URL"),
                "give a URL such as https://example.com/",
            );
        }
    };
    let fetcher = match crawler::Fetcher::new(crawler.fetch.clone()) {
        Ok(f) => f,
        Err(e) => {
            return Finding::fail(
                "probe",
                format!("the HTTP client cannot be built: {e}"),
                "check the [crawler.fetch] settings",
            );
        }
    };
    let started = Instant::now();
    match fetcher.fetch(&crawler::FetchRequest::get(parsed)).await {
        Ok(snapshot) => {
            let took = started.elapsed().as_millis();
            let detail = format!(
                "{url}: HTTP {} in {took} ms, {} bytes{}",
                snapshot.status,
                snapshot.body.len(),
                if snapshot.final_url.as_str() == url {
                    String::new()
                } else {
                    format!(", redirected to {}", snapshot.final_url)
                }
            );
            if snapshot.status >= 400 {
                Finding::warn(
                    "probe",
                    detail,
                    "the site answered with an error: try another URL, or check whether it \
                     refuses this User-Agent",
                )
            } else {
                Finding::ok("probe", detail)
            }
        }
        Err(e) => Finding::fail(
            "probe",
            format!("{url}: {}", chain(&e)),
            "check DNS and the route out (a proxy: HTTPS_PROXY), the timeouts in \
             [crawler.fetch], and crawler.fetch.safety for private addresses",
        ),
    }
}

/// Stamps a throw-away digest at the configured TSA and verifies the token.
pub async fn time_stamping(settings: &timestamp::TimestampSettings) -> Finding {
    let tsa = match timestamp::Tsa::from_settings(settings) {
        Ok(Some(tsa)) => tsa,
        Ok(None) => {
            return Finding::ok(
                "tsa",
                "off: evidence is not timestamped (set evidence.timestamp.url to turn it on)",
            );
        }
        Err(e) => {
            return Finding::fail(
                "tsa",
                format!("cannot set up the time-stamping authority: {e}"),
                "check evidence.timestamp.ca_certificates \
                 (COPYHOUND_EVIDENCE__TIMESTAMP__CA_CERTIFICATES): a readable PEM file of CA \
                 certificates",
            );
        }
    };
    // A digest of nothing anyone holds: the token proves only that the TSA answers.
    let mut digest = [0u8; 32];
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_nanos()
        .to_be_bytes();
    digest[..16].copy_from_slice(&now);
    digest[16..].copy_from_slice(b"copyhound doctor");
    let started = Instant::now();
    match tsa.stamp(&digest).await {
        Ok(stamp) => Finding::ok(
            "tsa",
            format!(
                "{} stamped a test digest in {} ms (time {}){}",
                tsa.url(),
                started.elapsed().as_millis(),
                stamp.verified.gen_time,
                if tsa.trust().is_some() {
                    ", signer chained to the configured CA"
                } else {
                    "; its signer is not checked: set evidence.timestamp.ca_certificates"
                }
            ),
        ),
        Err(e) => Finding::fail(
            "tsa",
            format!("{}: {}", tsa.url(), chain(&e)),
            "check evidence.timestamp.url (COPYHOUND_EVIDENCE__TIMESTAMP__URL), that the TSA \
             is reachable from here (a proxy: HTTPS_PROXY), evidence.timestamp.timeout, and \
             that its certificate chains to evidence.timestamp.ca_certificates",
        ),
    }
}

/// The rights holder's profile.
pub fn notices(settings: &NoticeSettings) -> Finding {
    let missing = settings.rights_holder.missing();
    if missing.is_empty() {
        Finding::ok(
            "notices",
            format!("notices speak for {}", settings.rights_holder.name),
        )
    } else {
        let vars: Vec<String> = missing
            .iter()
            .map(|k| format!("COPYHOUND_{}", k.to_uppercase().replace('.', "__")))
            .collect();
        Finding::warn(
            "notices",
            format!(
                "no takedown notice can be drafted: {} unset",
                missing.join(", ")
            ),
            format!(
                "set them on the admin UI's settings page, in the config file, or {}",
                vars.join(", ")
            ),
        )
    }
}

/// With `[notify.smtp]` set, connects to the server the way a send does (TLS, login) and
/// says whether it answered; without it, that nothing is mailed.
pub async fn smtp(settings: &notification::mail::SmtpSettings) -> Finding {
    const CHECK: &str = "smtp";
    if !settings.is_configured() {
        return Finding::ok(
            CHECK,
            "no SMTP server: alerts and notices are not mailed (notices are sent by hand)",
        );
    }
    let mailer = match notification::mail::Mailer::new(settings) {
        Ok(m) => m,
        Err(e) => {
            return Finding::fail(
                CHECK,
                e.to_string(),
                "fix notify.smtp (COPYHOUND_NOTIFY__SMTP__...)",
            );
        }
    };
    match mailer.check().await {
        Ok(()) => Finding::ok(
            CHECK,
            format!(
                "{} answered ({}), sender {}",
                mailer.server(),
                match settings.tls {
                    notification::mail::SmtpTls::None => "no TLS",
                    notification::mail::SmtpTls::Starttls => "STARTTLS",
                    notification::mail::SmtpTls::Tls => "TLS",
                },
                mailer.from()
            ),
        ),
        Err(e) => Finding::fail(
            CHECK,
            e.reason,
            "check notify.smtp.host, port, tls, user and password (`copyhound notify test \
             ADDRESS` sends a test message)",
        ),
    }
}

/// Whether the rendered fetch can run: Chromium and chromedriver are where the settings say,
/// and a browser starts and renders a page (an inline `data:` page, so nothing is fetched).
pub async fn rendering(settings: &crawler::RenderSettings) -> Finding {
    let mut finding = try_rendering(settings).await;
    // Only crawls that ask for it need the browser: otherwise a broken one is a warning.
    if finding.level == Level::Fail && !settings.enabled {
        finding.level = Level::Warn;
    }
    finding
}

async fn try_rendering(settings: &crawler::RenderSettings) -> Finding {
    const INSTALL: &str = "install the Debian packages chromium and chromium-driver \
         (apt-get install chromium chromium-driver), or set crawler.render.chromium and \
         crawler.render.chromedriver";
    let renderer = match crawler::Renderer::new(settings.clone()) {
        Ok(r) => r,
        Err(e) => {
            let detail = format!("{e}");
            return if settings.enabled {
                Finding::fail("rendering", detail, INSTALL)
            } else {
                Finding::warn(
                    "rendering",
                    format!("{detail}; crawls work without it, placeholder pages are not rendered"),
                    INSTALL,
                )
            };
        }
    };
    let extractor = match extract::Extractor::new(&extract::ExtractSettings::default()) {
        Ok(e) => std::sync::Arc::new(e),
        Err(e) => return Finding::fail("rendering", e.to_string(), "report this as a bug"),
    };
    let request = crawler::RenderRequest {
        url: url::Url::parse("data:text/html,<div id=content><p>copyhound</p></div>")
            .expect("a data url"),
        policy: std::sync::Arc::new(crawler::AddressPolicy::public_only()),
        allow_url: None,
        screenshot: false,
    };
    let started = Instant::now();
    match renderer.render(&extractor, request).await {
        Ok(r) if r.text.contains("copyhound") => Finding::ok(
            "rendering",
            format!(
                "{} renders pages ({} ms to start and render one); pool of {}",
                settings.chromium.display(),
                started.elapsed().as_millis(),
                settings.pool_size
            ),
        ),
        Ok(r) => Finding::fail(
            "rendering",
            format!("the browser rendered a test page as {:?}", r.text),
            INSTALL,
        ),
        Err(e) => Finding::fail("rendering", e.to_string(), INSTALL),
    }
}

/// Where page bodies are kept (`[storage]`): with an object store, a probe object written,
/// read back and deleted; with `store` (the database, when it opened), how many bodies and
/// bytes are in the database and how many in segments.
pub async fn body_storage(settings: &store::StorageSettings, store: Option<&Store>) -> Finding {
    const CHECK: &str = "storage";
    let totals = match store {
        Some(store) => match store.body_totals().await {
            Ok(t) => format!(
                "; {} bodies ({}) and {} screenshots ({}) in the database, {} bodies ({}) and \
                 {} screenshots ({}) in {} segments ({}, of which {} dead until gc deletes or \
                 compacts them)",
                t.db_bodies,
                human_bytes(t.db_bytes),
                t.screenshots,
                human_bytes(t.screenshot_bytes),
                t.store_bodies,
                human_bytes(t.store_bytes),
                t.store_screenshots,
                human_bytes(t.store_screenshot_bytes),
                t.segments,
                human_bytes(t.segment_bytes),
                human_bytes(t.segment_bytes.saturating_sub(t.segment_live_bytes)),
            ),
            Err(e) => format!("; bodies not counted: {e}"),
        },
        None => String::new(),
    };
    let bodies = match store::BodyStore::open(settings) {
        Ok(Some(bodies)) => bodies,
        Ok(None) => return Finding::ok(CHECK, format!("bodies in the database{totals}")),
        Err(e) => {
            return Finding::fail(
                CHECK,
                e.to_string(),
                "correct [storage] (bodies = \"db\", \"file:///path\" or \"s3://bucket/prefix\")",
            );
        }
    };
    let started = Instant::now();
    match tokio::time::timeout(Duration::from_secs(30), bodies.probe()).await {
        Ok(Ok(())) => Finding::ok(
            CHECK,
            format!(
                "{} answered a probe object in {} ms{totals}",
                bodies.describe(),
                started.elapsed().as_millis()
            ),
        ),
        Ok(Err(e)) => Finding::fail(
            CHECK,
            e.to_string(),
            "check storage.endpoint, region and the keys, that the bucket exists and that \
             these keys may put, get and delete in it",
        ),
        Err(_) => Finding::fail(
            CHECK,
            format!("{} did not answer within 30 s", bodies.describe()),
            "check storage.endpoint and that the store is up",
        ),
    }
}

/// What the retention policy (`[retention]`) will free: `gc`'s dry run now.
pub async fn retention(settings: &store::RetentionSettings, store: &Store) -> Finding {
    const CHECK: &str = "retention";
    match store.retention_outlook(settings).await {
        Ok(r) => Finding::ok(CHECK, retention_words(settings, &r)),
        Err(e) => Finding::fail(
            CHECK,
            format!("what gc would remove could not be read: {e}"),
            "correct [retention], or see the database finding",
        ),
    }
}

/// The index's shards (`[index] shards`): each shard's match queue and what waits there,
/// and a warning for match jobs waiting on the queue of a shard count no longer configured
/// (after `shards` was changed, no worker serves them).
pub async fn shards(shards: u32, store: &Store) -> Finding {
    const CHECK: &str = "shards";
    let depth = match store.job_depth().await {
        Ok(depth) => depth,
        Err(e) => {
            return Finding::warn(
                CHECK,
                format!("cannot count the shards' jobs: {e}"),
                "see the database finding",
            );
        }
    };
    let mut waiting: std::collections::BTreeMap<String, u64> = Default::default();
    for row in depth.iter().filter(|d| d.status != "dead") {
        if row.queue.starts_with("match-") {
            *waiting.entry(row.queue.clone()).or_default() += row.jobs;
        }
    }
    let current: Vec<String> = (0..shards)
        .filter_map(|k| bounds::Shard::new(k, shards))
        .map(jobs::shard_queue)
        .collect();
    let stale: Vec<String> = waiting
        .iter()
        .filter(|(queue, n)| **n > 0 && !current.contains(queue))
        .map(|(queue, n)| format!("{queue}: {n}"))
        .collect();
    if !stale.is_empty() {
        return Finding::warn(
            CHECK,
            format!(
                "match jobs wait on the queues of another shard count than [index] shards = \
                 {shards}, which no worker of this deployment serves: {}",
                stale.join(", ")
            ),
            "run `copyhound worker --shard K/N` of that count until those queues are empty \
             (or `rematch` the pages)",
        );
    }
    if shards <= 1 {
        return Finding::ok(CHECK, "one index holds every work ([index] shards = 1)");
    }
    let each: Vec<String> = current
        .iter()
        .map(|queue| format!("{queue}: {}", waiting.get(queue).copied().unwrap_or(0)))
        .collect();
    Finding::ok(
        CHECK,
        format!(
            "{shards} shards, each served by `copyhound worker --shard K/{shards}`; match jobs \
             waiting or running: {}",
            each.join(", ")
        ),
    )
}

/// A dry run's report in words: what `gc` would remove and free now.
fn retention_words(settings: &store::RetentionSettings, r: &store::GcReport) -> String {
    format!(
        "gc would remove {} bodies ({}) of {} snapshots{}{}, delete {} segments{} and compact {} \
         ({} of objects); unmatched pages keep their bodies {}, evidence {} after its case was \
         last seen",
        r.bodies,
        human_bytes(r.bytes),
        r.snapshots,
        if r.screenshots > 0 {
            format!(
                ", {} screenshots ({})",
                r.screenshots,
                human_bytes(r.screenshot_bytes)
            )
        } else {
            String::new()
        },
        if r.texts > 0 {
            format!(" and {} page texts", r.texts)
        } else {
            String::new()
        },
        r.segments_deleted + r.orphan_segments,
        if r.orphan_objects > 0 {
            format!(
                " and {} orphan objects ({})",
                r.orphan_objects,
                human_bytes(r.orphan_object_bytes)
            )
        } else {
            String::new()
        },
        r.segments_compacted,
        human_bytes(r.segment_bytes),
        bounds::duration_serde::short(settings.unmatched),
        bounds::duration_serde::short(settings.evidence),
    )
}

/// `12.3 MiB`.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
