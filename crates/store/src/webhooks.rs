//! Webhooks added by admins in the UI (issue #29), beside the configured
//! `[[notify.webhooks]]`. The store keeps the URL, the secret (the HMAC key of each delivery,
//! so it is kept as given, and never shown back or audited), the events and whether the
//! webhook is on; whether the URL may be reached is `pipeline`'s check.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::audit::insert_audit;
use crate::db::{durable_tx, read_pool};
use crate::ids::WebhookId;
use crate::{Error, Result, Store};

/// A stored webhook (its secret masked in `Debug`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredWebhook {
    /// Its id.
    pub id: WebhookId,
    /// Where events are POSTed.
    pub url: String,
    /// The HMAC key (never serialised).
    #[serde(skip)]
    pub secret: bounds::Secret,
    /// The events it takes; empty: every event.
    pub events: Vec<String>,
    /// Off: nothing is delivered to it.
    pub enabled: bool,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// Who added it.
    pub created_by: String,
}

/// A webhook to add (checked by the caller).
#[derive(Debug, Clone)]
pub struct NewWebhook<'a> {
    /// Where events are POSTed.
    pub url: &'a str,
    /// The HMAC key.
    pub secret: &'a bounds::Secret,
    /// The events it takes; empty: every event.
    pub events: &'a [String],
}

/// Webhooks kept in the database.
pub trait Webhooks {
    /// Every stored webhook, oldest first.
    fn webhooks(&self) -> impl Future<Output = Result<Vec<StoredWebhook>>> + Send;

    /// Adds a webhook, on, audited `webhook.create` (without its secret).
    ///
    /// # Errors
    /// [`Error::Conflict`] when a webhook with this URL exists.
    fn add_webhook(
        &self,
        hook: &NewWebhook<'_>,
        actor: &str,
    ) -> impl Future<Output = Result<StoredWebhook>> + Send;

    /// Turns a webhook on or off, audited `webhook.update`.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn set_webhook_enabled(
        &self,
        id: WebhookId,
        enabled: bool,
        actor: &str,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Deletes a webhook, audited `webhook.delete`.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn delete_webhook(&self, id: WebhookId, actor: &str)
    -> impl Future<Output = Result<()>> + Send;
}

#[derive(sqlx::FromRow)]
struct WebhookRow {
    id: WebhookId,
    url: String,
    secret: String,
    events: String,
    enabled: bool,
    created_at: DateTime<Utc>,
    created_by: String,
}

impl TryFrom<WebhookRow> for StoredWebhook {
    type Error = Error;
    fn try_from(r: WebhookRow) -> Result<Self> {
        Ok(StoredWebhook {
            events: serde_json::from_str(&r.events)
                .map_err(|e| Error::InvalidInput(format!("webhook {}: events: {e}", r.id)))?,
            id: r.id,
            url: r.url,
            secret: bounds::Secret::new(r.secret),
            enabled: r.enabled,
            created_at: r.created_at,
            created_by: r.created_by,
        })
    }
}

const SELECT_WEBHOOKS: &str =
    "SELECT id, url, secret, events, enabled, created_at, created_by FROM webhooks";

impl Webhooks for Store {
    #[instrument(skip_all)]
    async fn webhooks(&self) -> Result<Vec<StoredWebhook>> {
        let sql = sqlx::AssertSqlSafe(format!("{SELECT_WEBHOOKS} ORDER BY id"));
        let rows: Vec<WebhookRow> =
            read_pool!(self, |pool| { sqlx::query_as(sql).fetch_all(pool).await? });
        rows.into_iter().map(StoredWebhook::try_from).collect()
    }

    #[instrument(skip_all, fields(url = %hook.url))]
    async fn add_webhook(&self, hook: &NewWebhook<'_>, actor: &str) -> Result<StoredWebhook> {
        let now = Utc::now();
        let events = serde_json::to_string(hook.events).unwrap_or_else(|_| "[]".to_owned());
        let row: WebhookRow = durable_tx!(self, |tx| {
            let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM webhooks WHERE url = $1")
                .bind(hook.url)
                .fetch_optional(&mut *tx)
                .await?;
            if taken.is_some() {
                return Err(Error::Conflict(format!(
                    "a webhook to {} exists: delete it first to change its secret",
                    hook.url
                )));
            }
            let id: WebhookId = sqlx::query_scalar(
                "INSERT INTO webhooks (url, secret, events, enabled, created_at, created_by) \
                 VALUES ($1, $2, $3, TRUE, $4, $5) RETURNING id",
            )
            .bind(hook.url)
            .bind(hook.secret.expose())
            .bind(&events)
            .bind(now)
            .bind(actor)
            .fetch_one(&mut *tx)
            .await?;
            let details = serde_json::json!({ "url": hook.url, "events": hook.events });
            insert_audit!(
                &mut *tx,
                actor,
                "webhook.create",
                Some("webhook"),
                Some(id.0),
                &details,
                now
            );
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "{SELECT_WEBHOOKS} WHERE id = $1"
            )))
            .bind(id)
            .fetch_one(&mut *tx)
            .await?
        });
        row.try_into()
    }

    #[instrument(skip_all, fields(webhook = %id, enabled))]
    async fn set_webhook_enabled(&self, id: WebhookId, enabled: bool, actor: &str) -> Result<()> {
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let rows = sqlx::query("UPDATE webhooks SET enabled = $2 WHERE id = $1")
                .bind(id)
                .bind(enabled)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            Error::found(rows, "webhook", id)?;
            insert_audit!(
                &mut *tx,
                actor,
                "webhook.update",
                Some("webhook"),
                Some(id.0),
                &serde_json::json!({ "enabled": enabled }),
                now
            );
        });
        Ok(())
    }

    #[instrument(skip_all, fields(webhook = %id))]
    async fn delete_webhook(&self, id: WebhookId, actor: &str) -> Result<()> {
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let url: Option<String> =
                sqlx::query_scalar("DELETE FROM webhooks WHERE id = $1 RETURNING url")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?;
            let url = url.ok_or_else(|| Error::not_found("webhook", id))?;
            insert_audit!(
                &mut *tx,
                actor,
                "webhook.delete",
                Some("webhook"),
                Some(id.0),
                &serde_json::json!({ "url": url }),
                now
            );
        });
        Ok(())
    }
}
