//! `copyhound doctor`: checks what a deployment needs (`pipeline::doctor`) and prints each
//! finding with what to fix. Exits 1 when a check failed, so a script or a container's
//! start-up can stop on it.

use std::path::Path;

use anyhow::{Result, bail};
use clap::Args;
use pipeline::doctor::Level;

use super::outln;

/// Options of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Also fetch this URL the way a crawl would (the configured client, proxy, limits).
    #[arg(long, value_name = "URL")]
    probe: Option<String>,
    /// Print the findings as JSON lines.
    #[arg(long)]
    json: bool,
}

/// Runs every check ([`settings::diagnose`]) and prints the findings.
pub async fn run(args: DoctorArgs, config: Option<&Path>, database: &str) -> Result<()> {
    let findings = settings::diagnose(
        config,
        std::env::vars(),
        database,
        &super::store_settings(),
        args.probe.as_deref(),
    )
    .await;
    for f in &findings {
        if args.json {
            outln!("{}", serde_json::to_string(f)?);
        } else {
            super::write_stdout(&f.to_string())?;
        }
    }
    let failed = findings.iter().filter(|f| f.level == Level::Fail).count();
    if failed > 0 {
        bail!("{failed} of {} checks failed", findings.len());
    }
    Ok(())
}
