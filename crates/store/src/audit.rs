//! The audit log: who did what to which row, and when. Case writes add their rows in their
//! own transaction ([`crate::CaseWrites`], [`crate::MatchWrites::record_matches`]); other
//! writers (work edits, licensed domains, notices) call [`AuditLog::record_audit`].

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::{durable_tx, read_pool};
use crate::ids::AuditId;
use crate::{Result, Store};

/// One row of the audit log.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AuditRecord {
    /// Its id (ascending in the order rows were written).
    pub id: AuditId,
    /// When.
    pub at: DateTime<Utc>,
    /// Who: a user name, `cli`, `worker`, `api-token:<prefix>`.
    pub actor: String,
    /// What, as `<target type>.<verb>` (`case.open`, `case.confirmed`, `case.reopen`, ...).
    pub action: String,
    /// The kind of row acted on (`case`, `work`, ...).
    pub target_type: Option<String>,
    /// Its id.
    pub target_id: Option<i64>,
    /// What else the writer recorded, as JSON (an object; `note` holds a reviewer's note).
    pub details: serde_json::Value,
}

impl AuditRecord {
    /// The `note` in the details, if any.
    pub fn note(&self) -> Option<&str> {
        self.details.get("note").and_then(serde_json::Value::as_str)
    }
}

/// Writes and reads of the audit log.
pub trait AuditLog {
    /// Appends a row at the current time and returns its id.
    fn record_audit(
        &self,
        actor: &str,
        action: &str,
        target_type: Option<&str>,
        target_id: Option<i64>,
        details: &serde_json::Value,
    ) -> impl Future<Output = Result<AuditId>> + Send;

    /// The rows about one target, oldest first (empty when there are none).
    fn audit_of(
        &self,
        target_type: &str,
        target_id: i64,
    ) -> impl Future<Output = Result<Vec<AuditRecord>>> + Send;

    /// At most `limit` rows, newest first, before `before` (`None`: from the newest).
    fn recent_audit(
        &self,
        before: Option<AuditId>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<AuditRecord>>> + Send;
}

/// Appends an `audit_log` row on any executor of either backend (a transaction); evaluates
/// to its id.
macro_rules! insert_audit {
    ($exec:expr, $actor:expr, $action:expr, $target_type:expr, $target_id:expr,
     $details:expr, $at:expr) => {{
        let target_type: Option<&str> = $target_type;
        let target_id: Option<i64> = $target_id;
        let details: &serde_json::Value = $details;
        sqlx::query_scalar::<_, i64>(
            "INSERT INTO audit_log (at, actor, action, target_type, target_id, details) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind($at)
        .bind($actor)
        .bind($action)
        .bind(target_type)
        .bind(target_id)
        .bind(details.to_string())
        .fetch_one($exec)
        .await?
    }};
}
pub(crate) use insert_audit;

#[derive(sqlx::FromRow)]
struct AuditRow {
    id: AuditId,
    at: DateTime<Utc>,
    actor: String,
    action: String,
    target_type: Option<String>,
    target_id: Option<i64>,
    details: String,
}

impl AuditLog for Store {
    #[instrument(skip(self, details))]
    async fn record_audit(
        &self,
        actor: &str,
        action: &str,
        target_type: Option<&str>,
        target_id: Option<i64>,
        details: &serde_json::Value,
    ) -> Result<AuditId> {
        let now = Utc::now();
        let id = durable_tx!(self, |tx| insert_audit!(
            &mut *tx,
            actor,
            action,
            target_type,
            target_id,
            details,
            now
        ));
        Ok(AuditId(id))
    }

    #[instrument(skip(self))]
    async fn audit_of(&self, target_type: &str, target_id: i64) -> Result<Vec<AuditRecord>> {
        let rows: Vec<AuditRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT id, at, actor, action, target_type, target_id, details FROM audit_log \
                 WHERE target_type = $1 AND target_id = $2 ORDER BY id",
            )
            .bind(target_type)
            .bind(target_id)
            .fetch_all(pool)
            .await?
        });
        Ok(rows.into_iter().map(AuditRow::into_record).collect())
    }

    #[instrument(skip(self))]
    async fn recent_audit(&self, before: Option<AuditId>, limit: u32) -> Result<Vec<AuditRecord>> {
        // The limit is written into the text: see `CaseReads::cases`.
        let sql = format!(
            "SELECT id, at, actor, action, target_type, target_id, details FROM audit_log \
             WHERE id < $1 ORDER BY id DESC LIMIT {limit}"
        );
        let before = before.map_or(i64::MAX, |b| b.0);
        let rows: Vec<AuditRow> = read_pool!(self, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(before)
                .fetch_all(pool)
                .await?
        });
        Ok(rows.into_iter().map(AuditRow::into_record).collect())
    }
}

impl AuditRow {
    fn into_record(self) -> AuditRecord {
        let r = self;
        AuditRecord {
            id: r.id,
            at: r.at,
            actor: r.actor,
            action: r.action,
            target_type: r.target_type,
            target_id: r.target_id,
            // Rows written by hand may hold plain text: keep it as a JSON string.
            details: serde_json::from_str(&r.details)
                .unwrap_or(serde_json::Value::String(r.details)),
        }
    }
}
