//! `copyhound config`: the effective settings as TOML. Secrets (`bounds::Secret` settings,
//! the database password, the password in any URL setting) are masked: the output is safe to
//! paste into an issue, and a secret copied from it must be written back by hand.

use anyhow::Result;

use settings::Settings;

/// Prints the settings ([`Settings::masked_toml`]).
pub fn run(settings: &Settings, database: &str) -> Result<()> {
    super::write_stdout(&settings.masked_toml(database)?)
}
