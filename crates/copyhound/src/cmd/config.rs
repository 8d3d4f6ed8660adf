//! `copyhound config`: the effective settings as TOML. Secrets (`bounds::Secret` settings,
//! the database password) are masked: the output is safe to paste into an issue, and a
//! secret copied from it must be written back by hand.

use anyhow::Result;

use settings::Settings;

/// Prints the settings and the database they would be used with.
pub fn run(settings: &Settings, database: &str) -> Result<()> {
    let text = format!(
        "# database = {:?} (--database / {})\n{}",
        super::masked(database),
        settings::DATABASE_URL_VAR,
        toml::to_string(settings)?
    );
    super::write_stdout(&text)
}
