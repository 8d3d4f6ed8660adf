//! Per-user alerts (issue #29): which events each user wants mailed and how
//! ([`AlertDelivery`]), the events they were alerted of, and each alert mail, recorded before
//! the SMTP server is asked and marked sent after it accepted, so nothing is mailed twice.
//!
//! Event names (`case.opened`, ...) are text here; what they mean is `pipeline`'s.
//!
//! A mail's life: [`Alerts::begin_alert_mail`] (an immediate alert) or
//! [`Alerts::begin_digest`] (the user's pending digest items claimed by one mail) writes the
//! mail's row; [`Alerts::finish_alert_mail`] marks it sent once the server accepted, or
//! [`Alerts::release_alert_mail`] deletes it when the server refused, so a retry mails it
//! (the digest's items are pending again). A row left with neither (a crash mid-send) keeps
//! a retry from sending it again.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::audit::insert_audit;
use crate::db::{durable_tx, read_pool, write_pool, write_tx};
use crate::ids::{AlertEventId, AlertMailId, UserId};
use crate::{Error, Result, Store, UserRecord};

/// How a user hears of one kind of event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertDelivery {
    /// Not at all (no row is kept).
    Off,
    /// A mail per event, as it happens.
    Immediate,
    /// Gathered into the daily digest.
    Digest,
}

impl AlertDelivery {
    /// Every choice, in the order a form shows them.
    pub const ALL: [AlertDelivery; 3] = [
        AlertDelivery::Off,
        AlertDelivery::Immediate,
        AlertDelivery::Digest,
    ];

    /// Its name (`off`, `immediate`, `digest`), as kept in `alert_preferences.delivery`.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertDelivery::Off => "off",
            AlertDelivery::Immediate => "immediate",
            AlertDelivery::Digest => "digest",
        }
    }

    /// The choice named `s`.
    pub fn parse(s: &str) -> Option<AlertDelivery> {
        AlertDelivery::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// An event as alerts keep it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AlertEvent {
    /// Its id.
    pub id: AlertEventId,
    /// Its name (`case.opened`).
    pub event: String,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// What it is about, as JSON (`{"case": 7}`).
    pub data: serde_json::Value,
}

/// What [`Alerts::begin_alert_mail`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertStart {
    /// Recorded now: mail it, then finish or release it.
    Begun(AlertMailId),
    /// Mailed already.
    AlreadySent,
    /// An earlier attempt has no outcome (cut off mid-send): it is not mailed again.
    Unfinished,
}

/// Users' alert choices, the events and the mails.
pub trait Alerts {
    /// The user's choices, by event name (events left off are off).
    fn alert_preferences(
        &self,
        user: UserId,
    ) -> impl Future<Output = Result<Vec<(String, AlertDelivery)>>> + Send;

    /// Sets the user's choice for each event given (others stay as they are) in one
    /// transaction, audited `user.alerts` by `actor` with what changed.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown user.
    fn set_alert_preferences(
        &self,
        user: UserId,
        choices: &[(String, AlertDelivery)],
        actor: &str,
    ) -> impl Future<Output = Result<()>> + Send;

    /// The enabled users with an address who want `event`, and how.
    fn alert_recipients(
        &self,
        event: &str,
    ) -> impl Future<Output = Result<Vec<(UserRecord, AlertDelivery)>>> + Send;

    /// Records an event once per `key`: a second call with the key returns the first row.
    fn record_alert_event(
        &self,
        key: &str,
        event: &str,
        occurred_at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> impl Future<Output = Result<AlertEvent>> + Send;

    /// One event.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn alert_event(&self, id: AlertEventId) -> impl Future<Output = Result<AlertEvent>> + Send;

    /// Puts an event in the user's next digest (once: a second call changes nothing).
    fn add_digest_item(
        &self,
        user: UserId,
        event: AlertEventId,
    ) -> impl Future<Output = Result<()>> + Send;

    /// The users with events waiting for their digest.
    fn users_with_digest_items(&self) -> impl Future<Output = Result<Vec<UserId>>> + Send;

    /// Records the start of the user's immediate alert of `event` at `now`, unless it was
    /// mailed or begun before.
    fn begin_alert_mail(
        &self,
        user: UserId,
        event: AlertEventId,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<AlertStart>> + Send;

    /// Claims the user's waiting digest items for one new mail in one transaction; `None`
    /// when nothing waits. The events come oldest first.
    fn begin_digest(
        &self,
        user: UserId,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Option<(AlertMailId, Vec<AlertEvent>)>>> + Send;

    /// Marks a mail sent at `now` (the server accepted it).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown mail.
    fn finish_alert_mail(
        &self,
        mail: AlertMailId,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Forgets a mail the server did not take, in one transaction: its digest items wait
    /// for the next digest and an immediate alert may be begun again. A mail marked sent,
    /// or unknown, is left as it is.
    fn release_alert_mail(&self, mail: AlertMailId) -> impl Future<Output = Result<()>> + Send;
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: AlertEventId,
    event: String,
    occurred_at: DateTime<Utc>,
    data: String,
}

impl TryFrom<EventRow> for AlertEvent {
    type Error = Error;
    fn try_from(r: EventRow) -> Result<Self> {
        Ok(AlertEvent {
            data: serde_json::from_str(&r.data)
                .map_err(|e| Error::InvalidInput(format!("alert event {}: {e}", r.id)))?,
            id: r.id,
            event: r.event,
            occurred_at: r.occurred_at,
        })
    }
}

fn delivery(s: &str) -> Result<AlertDelivery> {
    AlertDelivery::parse(s).ok_or_else(|| Error::InvalidInput(format!("alert delivery {s:?}")))
}

impl Alerts for Store {
    #[instrument(skip_all, fields(user = %user))]
    async fn alert_preferences(&self, user: UserId) -> Result<Vec<(String, AlertDelivery)>> {
        let rows: Vec<(String, String)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT event, delivery FROM alert_preferences WHERE user_id = $1 ORDER BY event",
            )
            .bind(user)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter()
            .map(|(e, d)| Ok((e, delivery(&d)?)))
            .collect()
    }

    #[instrument(skip_all, fields(user = %user, choices = choices.len()))]
    async fn set_alert_preferences(
        &self,
        user: UserId,
        choices: &[(String, AlertDelivery)],
        actor: &str,
    ) -> Result<()> {
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let known: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE id = $1")
                .bind(user)
                .fetch_optional(&mut *tx)
                .await?;
            if known.is_none() {
                return Err(Error::not_found("user", user));
            }
            let mut details = serde_json::Map::new();
            for (event, choice) in choices {
                let before: Option<String> = sqlx::query_scalar(
                    "SELECT delivery FROM alert_preferences WHERE user_id = $1 AND event = $2",
                )
                .bind(user)
                .bind(event)
                .fetch_optional(&mut *tx)
                .await?;
                let before = before.as_deref().unwrap_or("off");
                if before == choice.as_str() {
                    continue;
                }
                if *choice == AlertDelivery::Off {
                    sqlx::query("DELETE FROM alert_preferences WHERE user_id = $1 AND event = $2")
                        .bind(user)
                        .bind(event)
                        .execute(&mut *tx)
                        .await?;
                } else {
                    sqlx::query(
                        "INSERT INTO alert_preferences (user_id, event, delivery) \
                         VALUES ($1, $2, $3) ON CONFLICT (user_id, event) \
                         DO UPDATE SET delivery = $3",
                    )
                    .bind(user)
                    .bind(event)
                    .bind(choice.as_str())
                    .execute(&mut *tx)
                    .await?;
                }
                details.insert(event.clone(), choice.as_str().into());
            }
            if !details.is_empty() {
                insert_audit!(
                    &mut *tx,
                    actor,
                    "user.alerts",
                    Some("user"),
                    Some(user.0),
                    &serde_json::Value::Object(details),
                    now
                );
            }
        });
        Ok(())
    }

    #[instrument(skip_all, fields(event))]
    async fn alert_recipients(&self, event: &str) -> Result<Vec<(UserRecord, AlertDelivery)>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            #[sqlx(flatten)]
            user: crate::accounts::UserRow,
            delivery: String,
        }
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT {}, p.delivery FROM alert_preferences p JOIN users u ON u.id = p.user_id \
             WHERE p.event = $1 AND NOT u.disabled AND u.email IS NOT NULL AND u.email <> '' \
             ORDER BY u.id",
            crate::accounts::USER_COLUMNS
        ));
        let rows: Vec<Row> = read_pool!(self, |pool| {
            sqlx::query_as(sql).bind(event).fetch_all(pool).await?
        });
        rows.into_iter()
            .map(|r| Ok((UserRecord::try_from(r.user)?, delivery(&r.delivery)?)))
            .collect()
    }

    #[instrument(skip_all, fields(event))]
    async fn record_alert_event(
        &self,
        key: &str,
        event: &str,
        occurred_at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> Result<AlertEvent> {
        let row: EventRow = write_tx!(self, |tx| {
            sqlx::query(
                "INSERT INTO alert_events (key, event, occurred_at, data) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(key)
            .bind(event)
            .bind(occurred_at)
            .bind(data.to_string())
            .execute(&mut *tx)
            .await?;
            sqlx::query_as("SELECT id, event, occurred_at, data FROM alert_events WHERE key = $1")
                .bind(key)
                .fetch_one(&mut *tx)
                .await?
        });
        row.try_into()
    }

    #[instrument(skip_all, fields(event = %id))]
    async fn alert_event(&self, id: AlertEventId) -> Result<AlertEvent> {
        let row: Option<EventRow> = read_pool!(self, |pool| {
            sqlx::query_as("SELECT id, event, occurred_at, data FROM alert_events WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        row.ok_or_else(|| Error::not_found("alert event", id))?
            .try_into()
    }

    #[instrument(skip_all, fields(user = %user, event = %event))]
    async fn add_digest_item(&self, user: UserId, event: AlertEventId) -> Result<()> {
        write_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO alert_digest_items (user_id, event_id) VALUES ($1, $2) \
                 ON CONFLICT (user_id, event_id) DO NOTHING",
            )
            .bind(user)
            .bind(event)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(())
    }

    #[instrument(skip_all)]
    async fn users_with_digest_items(&self) -> Result<Vec<UserId>> {
        Ok(read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT DISTINCT user_id FROM alert_digest_items WHERE mail_id IS NULL \
                 ORDER BY user_id",
            )
            .fetch_all(pool)
            .await?
        }))
    }

    #[instrument(skip_all, fields(user = %user, event = %event))]
    async fn begin_alert_mail(
        &self,
        user: UserId,
        event: AlertEventId,
        now: DateTime<Utc>,
    ) -> Result<AlertStart> {
        Ok(write_tx!(self, |tx| {
            let before: Option<Option<DateTime<Utc>>> = sqlx::query_scalar(
                "SELECT sent_at FROM alert_mails WHERE user_id = $1 AND event_id = $2",
            )
            .bind(user)
            .bind(event)
            .fetch_optional(&mut *tx)
            .await?;
            match before {
                Some(Some(_)) => AlertStart::AlreadySent,
                Some(None) => AlertStart::Unfinished,
                None => AlertStart::Begun(
                    sqlx::query_scalar(
                        "INSERT INTO alert_mails (user_id, event_id, started_at) \
                         VALUES ($1, $2, $3) RETURNING id",
                    )
                    .bind(user)
                    .bind(event)
                    .bind(now)
                    .fetch_one(&mut *tx)
                    .await?,
                ),
            }
        }))
    }

    #[instrument(skip_all, fields(user = %user))]
    async fn begin_digest(
        &self,
        user: UserId,
        now: DateTime<Utc>,
    ) -> Result<Option<(AlertMailId, Vec<AlertEvent>)>> {
        let claimed: Option<(AlertMailId, Vec<EventRow>)> = write_tx!(self, |tx| {
            let waiting: Vec<EventRow> = sqlx::query_as(
                "SELECT e.id, e.event, e.occurred_at, e.data FROM alert_digest_items i \
                 JOIN alert_events e ON e.id = i.event_id \
                 WHERE i.user_id = $1 AND i.mail_id IS NULL ORDER BY e.occurred_at, e.id",
            )
            .bind(user)
            .fetch_all(&mut *tx)
            .await?;
            if waiting.is_empty() {
                None
            } else {
                let mail: AlertMailId = sqlx::query_scalar(
                    "INSERT INTO alert_mails (user_id, started_at) VALUES ($1, $2) RETURNING id",
                )
                .bind(user)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                for row in &waiting {
                    sqlx::query(
                        "UPDATE alert_digest_items SET mail_id = $3 \
                         WHERE user_id = $1 AND event_id = $2",
                    )
                    .bind(user)
                    .bind(row.id)
                    .bind(mail)
                    .execute(&mut *tx)
                    .await?;
                }
                Some((mail, waiting))
            }
        });
        claimed
            .map(|(mail, rows)| {
                Ok((
                    mail,
                    rows.into_iter()
                        .map(AlertEvent::try_from)
                        .collect::<Result<_>>()?,
                ))
            })
            .transpose()
    }

    #[instrument(skip_all, fields(mail = %mail))]
    async fn finish_alert_mail(&self, mail: AlertMailId, now: DateTime<Utc>) -> Result<()> {
        let rows = write_pool!(self, |pool| {
            sqlx::query("UPDATE alert_mails SET sent_at = $2 WHERE id = $1")
                .bind(mail)
                .bind(now)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Error::found(rows, "alert mail", mail)
    }

    #[instrument(skip_all, fields(mail = %mail))]
    async fn release_alert_mail(&self, mail: AlertMailId) -> Result<()> {
        write_tx!(self, |tx| {
            // A mail marked sent keeps its record and its items, whoever asks.
            let unsent: Option<i64> =
                sqlx::query_scalar("SELECT id FROM alert_mails WHERE id = $1 AND sent_at IS NULL")
                    .bind(mail)
                    .fetch_optional(&mut *tx)
                    .await?;
            if unsent.is_some() {
                sqlx::query("UPDATE alert_digest_items SET mail_id = NULL WHERE mail_id = $1")
                    .bind(mail)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM alert_mails WHERE id = $1")
                    .bind(mail)
                    .execute(&mut *tx)
                    .await?;
            }
        });
        Ok(())
    }
}
