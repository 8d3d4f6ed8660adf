//! `copyhound config`: the effective settings as TOML. Secrets (`bounds::Secret` settings,
//! the database password, the password in any URL setting) are masked: the output is safe to
//! paste into an issue, and a secret copied from it must be written back by hand.

use anyhow::Result;

use settings::Settings;

/// Prints the settings and the database they would be used with.
pub fn run(settings: &Settings, database: &str) -> Result<()> {
    let text = format!(
        "# database = {:?} (--database / {})\n{}",
        super::masked(database),
        settings::DATABASE_URL_VAR,
        toml::to_string(&masked_urls(toml::Value::try_from(settings)?))?
    );
    super::write_stdout(&text)
}

/// `value` with the password of every URL in it masked (`bounds::mask_url_password`).
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
