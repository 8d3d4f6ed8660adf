//! Signed webhooks (`[[notify.webhooks]]`): a JSON body per event, POSTed by jobs in the
//! queue.
//!
//! Where something happens (a case opened or reopened, a copy back up after a notice, a case
//! removed, a crawl failed, a notice sent), [`jobs::emit`] queues one [`Job::Event`]; the handler,
//! which has the settings, queues a [`Job::DeliverWebhook`] for each webhook that takes the
//! event, so the places that emit know nothing of webhooks. A delivery is retried with the
//! queue's backoff until the receiver answers 2xx, and given up (dead, on the jobs page) a
//! day after the event.
//!
//! The body is `{"id", "event", "timestamp", "occurred_at", "data"}`, built at delivery:
//! `timestamp` (Unix seconds) is also sent as `X-Copyhound-Timestamp`, and
//! `X-Copyhound-Signature: sha256=<hex HMAC-SHA256 of the body with the webhook's secret>`
//! covers it, so a receiver that checks the signature, that the header equals the body's
//! `timestamp` and that it is recent refuses a replayed delivery. `id` is the same on every
//! attempt of one delivery, so a receiver can drop a second copy.
//!
//! The URL is fetched by the crawler's [`crawler::Fetcher::post`]: the crawler's address
//! rules and its `allow_private` setting apply (no SSRF through a webhook), and redirects
//! are not followed.

use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use chrono::{DateTime, Utc};
use hmac::{KeyInit, Mac};
use jobs::{Event, Job, Result, store_err};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use store::{JobQueue, NewJob, Store, Webhooks};

/// Deliveries still failing this long after their event are given up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The shortest webhook secret accepted.
pub const MIN_SECRET_CHARS: usize = 16;

/// One webhook (`[[notify.webhooks]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookSettings {
    /// Where the events are POSTed (http or https).
    pub url: String,
    /// The HMAC key of the signature, a secret of at least 16 characters.
    pub secret: bounds::Secret,
    /// The events it takes (`case.opened`, ...); empty: every event.
    #[serde(default)]
    pub events: Vec<String>,
}

impl WebhookSettings {
    /// Whether it takes `event`.
    pub fn takes(&self, event: Event) -> bool {
        self.events.is_empty() || self.events.iter().any(|e| e == event.as_str())
    }

    /// Checks the URL's form, the secret's length and the event names. Where the URL
    /// points is checked at each delivery, after DNS, by the crawler's address rules.
    ///
    /// # Errors
    /// The first value out of range.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        let url_ok = url::Url::parse(&self.url)
            .is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.host().is_some());
        if !url_ok {
            return Err(bounds::OutOfRange::new(
                "url",
                &self.url,
                "must be an http(s) URL",
            ));
        }
        if self.secret.expose().chars().count() < MIN_SECRET_CHARS {
            return Err(bounds::OutOfRange::new(
                "secret",
                bounds::MASK,
                format!("must be at least {MIN_SECRET_CHARS} characters (`openssl rand -hex 32`)"),
            ));
        }
        if let Some(bad) = self.events.iter().find(|e| Event::parse(e).is_none()) {
            return Err(bounds::OutOfRange::new(
                "events",
                bad,
                format!(
                    "must name events among {}",
                    Event::ALL.map(Event::as_str).join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// The configured webhooks, then the enabled ones admins stored (a stored webhook with a
/// configured one's URL is left out: the settings file's wins).
///
/// # Errors
/// A database failure.
pub async fn all_webhooks(
    store: &Store,
    configured: &[WebhookSettings],
) -> Result<Vec<WebhookSettings>> {
    let stored = store
        .webhooks()
        .await
        .map_err(store_err("reading the stored webhooks"))?;
    let mut all = configured.to_vec();
    for hook in stored.into_iter().filter(|h| h.enabled) {
        if !all.iter().any(|c| c.url == hook.url) {
            all.push(WebhookSettings {
                url: hook.url,
                secret: hook.secret,
                events: hook.events,
            });
        }
    }
    Ok(all)
}

/// Adds a webhook to the store (the admins' webhooks page): the URL, the secret and the
/// events are checked as a configured webhook's are, and the URL's host against the crawler's
/// address rules (`crawl.fetch.safety`) now, as every delivery checks it again.
///
/// # Errors
/// [`jobs::Error::Refused`] for a URL, secret or event list out of range, or an address the
/// crawler refuses; a store conflict for a URL stored already; database failures.
pub async fn add_webhook(
    store: &Store,
    crawl: &crawler::CrawlSettings,
    url: &str,
    secret: &str,
    events: &[String],
    actor: &str,
) -> Result<store::StoredWebhook> {
    let hook = WebhookSettings {
        url: url.trim().to_owned(),
        secret: bounds::Secret::new(secret.trim()),
        events: events.to_vec(),
    };
    hook.validate()
        .map_err(|e| jobs::Error::Refused(e.to_string()))?;
    check_address(crawl, &hook.url).await?;
    store
        .add_webhook(
            &store::NewWebhook {
                url: &hook.url,
                secret: &hook.secret,
                events: &hook.events,
            },
            actor,
        )
        .await
        .map_err(store_err("storing a webhook"))
}

/// Refuses a webhook URL whose host is, or resolves to, an address the crawler's rules
/// refuse. A name that does not resolve now is let through: each delivery resolves and
/// checks it again.
async fn check_address(crawl: &crawler::CrawlSettings, url: &str) -> Result<()> {
    let parsed = url::Url::parse(url).map_err(|e| jobs::Error::Refused(format!("{url}: {e}")))?;
    let refused = |e: crawler::Error| jobs::Error::Refused(format!("{url}: {e}"));
    let policy = crawler::safety::AddressPolicy::new(&crawl.fetch.safety);
    policy.check_literal(&parsed).map_err(refused)?;
    let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
        return Ok(());
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(addrs) = tokio::net::lookup_host((host, port)).await {
        for addr in addrs {
            policy.check(host, addr.ip()).map_err(refused)?;
        }
    }
    Ok(())
}

/// POSTs a signed `webhook.test` event to stored webhook `id` now (the webhooks page's
/// "send test"), through the crawler's fetcher and address rules; returns the receiver's
/// status.
///
/// # Errors
/// [`jobs::Error::is_not_found`] for an unknown webhook; [`jobs::Error::Refused`] when it was not
/// delivered (not a 2xx, refused address, network failure), saying why.
pub async fn send_test(
    store: &Store,
    crawl: &crawler::CrawlSettings,
    id: store::WebhookId,
) -> Result<u16> {
    let hook = store
        .webhooks()
        .await
        .map_err(store_err("reading the stored webhooks"))?
        .into_iter()
        .find(|h| h.id == id)
        .ok_or_else(|| {
            store_err("reading a stored webhook")(store::Error::NotFound {
                what: "webhook",
                key: id.to_string(),
            })
        })?;
    let fetcher = crawler::Fetcher::new(crawl.fetch.clone())?;
    let settings = WebhookSettings {
        url: hook.url.clone(),
        secret: hook.secret,
        events: Vec::new(),
    };
    let now = Utc::now();
    let data = serde_json::json!({ "webhook": id.0, "test": true });
    let delivery_id = delivery_id(&hook.url, Event::Test, now, &data);
    deliver(
        &fetcher,
        std::slice::from_ref(&settings),
        (
            hook.url.as_str(),
            delivery_id.as_str(),
            Event::Test,
            now,
            &data,
        ),
        now,
    )
    .await
    .map_err(|e| jobs::Error::Refused(e.reason))
}

/// The stable id of one delivery: the same on every attempt and every run of the fan-out.
fn delivery_id(url: &str, event: Event, at: DateTime<Utc>, data: &serde_json::Value) -> String {
    let mut h = sha2::Sha256::new();
    for part in [url, event.as_str(), &at.to_rfc3339(), &data.to_string()] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    crate::mail::hex(&h.finalize()[..16])
}

/// Queues a delivery of the event to each webhook that takes it (the handler of
/// [`Job::Event`]); returns how many.
///
/// # Errors
/// A database failure.
pub async fn fan_out(
    store: &Store,
    hooks: &[WebhookSettings],
    event: Event,
    at: DateTime<Utc>,
    data: &serde_json::Value,
) -> Result<usize> {
    let mut queued = 0;
    for hook in hooks.iter().filter(|h| h.takes(event)) {
        let id = delivery_id(&hook.url, event, at, data);
        let job = NewJob::new(&Job::DeliverWebhook {
            url: hook.url.clone(),
            id: id.clone(),
            event,
            at,
            data: data.clone(),
        })
        .map_err(store_err("queueing a webhook delivery"))?
        .dedupe_key(format!("webhook:{id}"))
        // Retried with the queue's backoff until a day has passed (checked at delivery).
        .max_attempts(100);
        store
            .enqueue(&job)
            .await
            .map_err(store_err("queueing a webhook delivery"))?;
        queued += 1;
    }
    Ok(queued)
}

/// A delivery's body and headers, signed with `secret` at `now`.
pub fn signed_request(
    secret: &bounds::Secret,
    id: &str,
    event: Event,
    at: DateTime<Utc>,
    data: &serde_json::Value,
    now: DateTime<Utc>,
) -> (HeaderMap, Vec<u8>) {
    let timestamp = now.timestamp();
    let body = serde_json::to_vec(&serde_json::json!({
        "id": id,
        "event": event.as_str(),
        "timestamp": timestamp,
        "occurred_at": at,
        "data": data,
    }))
    .unwrap_or_default();
    let signature = sign(secret.expose().as_bytes(), &body);
    let mut headers = HeaderMap::new();
    let mut set = |name: &'static str, value: String| {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), v);
        }
    };
    set("content-type", "application/json".to_owned());
    set("x-copyhound-event", event.as_str().to_owned());
    set("x-copyhound-delivery", id.to_owned());
    set("x-copyhound-timestamp", timestamp.to_string());
    set("x-copyhound-signature", format!("sha256={signature}"));
    (headers, body)
}

/// Hex HMAC-SHA256 of `body` under `key`.
pub fn sign(key: &[u8], body: &[u8]) -> String {
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes a key of any size");
    mac.update(body);
    crate::mail::hex(&mac.finalize().into_bytes())
}

/// Why a delivery failed, and whether trying again can help.
#[derive(Debug)]
pub struct Undelivered {
    /// In words.
    pub reason: String,
    /// Trying again cannot help (refused address, gone webhook, a day passed, 410).
    pub permanent: bool,
}

/// POSTs one delivery with `fetcher`.
///
/// # Errors
/// [`Undelivered`]: not a 2xx, the address refused, a network failure, or given up.
pub async fn deliver(
    fetcher: &crawler::Fetcher,
    hooks: &[WebhookSettings],
    delivery: (&str, &str, Event, DateTime<Utc>, &serde_json::Value),
    now: DateTime<Utc>,
) -> std::result::Result<u16, Undelivered> {
    let (url, id, event, at, data) = delivery;
    let permanent = |reason: String| Undelivered {
        reason,
        permanent: true,
    };
    let Some(hook) = hooks.iter().find(|h| h.url == url) else {
        return Err(permanent(format!(
            "no webhook {url} is configured (notify.webhooks) or stored and on any more: not delivered"
        )));
    };
    if (now - at).to_std().unwrap_or_default() > GIVE_UP_AFTER {
        return Err(permanent(format!(
            "{} of {at} to {url}: still undelivered a day later, given up",
            event.as_str()
        )));
    }
    let target = url::Url::parse(url).map_err(|e| permanent(format!("{url}: {e}")))?;
    let (headers, body) = signed_request(&hook.secret, id, event, at, data, now);
    match fetcher.post(&target, headers, body).await {
        Ok(status) if (200..300).contains(&status) => Ok(status),
        Ok(status) => Err(Undelivered {
            reason: format!("{url} answered HTTP {status}"),
            permanent: status == 410,
        }),
        Err(e) => Err(Undelivered {
            permanent: e.kind() == crawler::ErrorKind::AddressRefused,
            reason: jobs::chain(&e),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_of_the_body_and_covers_the_timestamp() {
        // RFC 4231 test case 2.
        assert_eq!(
            sign(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let secret = bounds::Secret::new("0123456789abcdef0123");
        let at = Utc::now();
        let data = serde_json::json!({"case": 7});
        let (headers, body) = signed_request(&secret, "d1", Event::CaseOpened, at, &data, at);
        let sig = headers["x-copyhound-signature"].to_str().unwrap();
        assert_eq!(
            sig,
            format!("sha256={}", sign(secret.expose().as_bytes(), &body))
        );
        let parsed: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(parsed["event"], "case.opened");
        assert_eq!(
            parsed["timestamp"].to_string(),
            headers["x-copyhound-timestamp"].to_str().unwrap()
        );
        assert_eq!(parsed["data"], data);
    }

    #[test]
    fn webhooks_are_checked_and_take_their_events() {
        let mut hook = WebhookSettings {
            url: "https://hooks.press.example/copyhound".into(),
            secret: bounds::Secret::new("0123456789abcdef"),
            events: vec!["case.opened".into()],
        };
        hook.validate().unwrap();
        assert!(hook.takes(Event::CaseOpened) && !hook.takes(Event::NoticeSent));
        hook.events.push("case.exploded".into());
        assert!(
            hook.validate()
                .unwrap_err()
                .to_string()
                .contains("case.exploded")
        );
        hook.events.clear();
        assert!(hook.takes(Event::NoticeSent));
        hook.secret = bounds::Secret::new("short");
        let err = hook.validate().unwrap_err().to_string();
        assert!(!err.contains("short"), "the secret never shows: {err}");
        hook.secret = bounds::Secret::new("0123456789abcdef");
        hook.url = "file:///etc/passwd".into();
        assert!(hook.validate().is_err());
        for e in Event::ALL {
            assert_eq!(Event::parse(e.as_str()), Some(e));
            assert_eq!(serde_json::to_value(e).unwrap(), e.as_str());
        }
    }
}
