//! Settings an admin changed in the UI: each row overrides the settings file's value of its
//! key (`notices.rights_holder.name`, `server.time_zone`, ...) until it is cleared. What the
//! keys mean and which values are allowed is `pipeline`'s (`pipeline::settings`); here they
//! are text, and every change is audited in the transaction that writes it.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::audit::insert_audit;
use crate::db::{durable_tx, read_pool};
use crate::{Result, Store};

/// A value saved in the UI.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct SettingOverride {
    /// The setting's dotted key.
    pub key: String,
    /// Its value as text.
    pub value: String,
    /// When it was saved.
    pub updated_at: DateTime<Utc>,
    /// Who saved it.
    pub updated_by: String,
}

/// One key's new state: `Some` saves a value, `None` clears it (the file's value applies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingChange {
    /// The setting's dotted key.
    pub key: String,
    /// The value to save, or `None` to clear the override.
    pub value: Option<String>,
}

/// The overrides of settings saved in the UI.
pub trait SettingOverrides {
    /// Every saved value, by key.
    fn setting_overrides(&self) -> impl Future<Output = Result<Vec<SettingOverride>>> + Send;

    /// Applies `changes` in one transaction with one `settings.change` audit row naming each
    /// key that changed with its value before and after (`null`: the file's). A change that
    /// leaves a key as it was is not recorded; returns the keys that changed.
    fn save_setting_overrides(
        &self,
        changes: &[SettingChange],
        actor: &str,
    ) -> impl Future<Output = Result<Vec<String>>> + Send;
}

impl SettingOverrides for Store {
    async fn setting_overrides(&self) -> Result<Vec<SettingOverride>> {
        Ok(read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT key, value, updated_at, updated_by FROM setting_overrides ORDER BY key",
            )
            .fetch_all(pool)
            .await?
        }))
    }

    #[instrument(skip_all, fields(changes = changes.len()))]
    async fn save_setting_overrides(
        &self,
        changes: &[SettingChange],
        actor: &str,
    ) -> Result<Vec<String>> {
        let now = Utc::now();
        Ok(durable_tx!(self, |tx| {
            let mut changed = Vec::new();
            let mut details = serde_json::Map::new();
            for change in changes {
                let before: Option<String> =
                    sqlx::query_scalar("SELECT value FROM setting_overrides WHERE key = $1")
                        .bind(&change.key)
                        .fetch_optional(&mut *tx)
                        .await?;
                if before == change.value {
                    continue;
                }
                match &change.value {
                    Some(value) => {
                        sqlx::query(
                            "INSERT INTO setting_overrides (key, value, updated_at, updated_by) \
                             VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO UPDATE SET \
                             value = $2, updated_at = $3, updated_by = $4",
                        )
                        .bind(&change.key)
                        .bind(value)
                        .bind(now)
                        .bind(actor)
                        .execute(&mut *tx)
                        .await?;
                    }
                    None => {
                        sqlx::query("DELETE FROM setting_overrides WHERE key = $1")
                            .bind(&change.key)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                details.insert(
                    change.key.clone(),
                    serde_json::json!({ "before": before, "after": change.value }),
                );
                changed.push(change.key.clone());
            }
            if !changed.is_empty() {
                let details = serde_json::Value::Object(details);
                insert_audit!(
                    &mut *tx,
                    actor,
                    "settings.change",
                    Some("settings"),
                    None,
                    &details,
                    now
                );
            }
            changed
        }))
    }
}
