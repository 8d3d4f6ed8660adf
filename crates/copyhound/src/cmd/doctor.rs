//! `copyhound doctor`: checks what a deployment needs (`pipeline::doctor`) and prints each
//! finding with what to fix. Exits 1 when a check failed, so a script or a container's
//! start-up can stop on it.

use std::path::Path;

use anyhow::{Result, bail};
use clap::Args;
use pipeline::doctor::{self, Finding, Level};

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

/// Runs every check, loading the settings itself so that broken settings are a finding too.
pub async fn run(args: DoctorArgs, config: Option<&Path>, database: &str) -> Result<()> {
    let mut findings = Vec::new();
    let settings = match crate::settings::load(config, std::env::vars()) {
        Ok(loaded) => {
            findings.push(Finding {
                check: "settings",
                level: if loaded.unknown_keys.is_empty() {
                    Level::Ok
                } else {
                    Level::Warn
                },
                detail: if loaded.unknown_keys.is_empty() {
                    "loaded".to_owned()
                } else {
                    format!("unknown keys ignored: {}", loaded.unknown_keys.join(", "))
                },
                fix: (!loaded.unknown_keys.is_empty()).then(|| {
                    "remove or correct them (config/default.toml lists every key)".to_owned()
                }),
            });
            Some(loaded.settings)
        }
        Err(e) => {
            findings.push(Finding {
                check: "settings",
                level: Level::Fail,
                detail: format!("{e:#}"),
                fix: Some(
                    "correct the value named; the checks that need settings are skipped".to_owned(),
                ),
            });
            None
        }
    };
    let (found, store) = doctor::database(database, &super::store_settings()).await;
    findings.extend(found);
    if let Some(store) = store {
        store.close().await;
    }
    if let Some(settings) = &settings {
        findings.extend(doctor::outbound(&settings.crawler, |var| {
            std::env::var(var).ok()
        }));
        if let Some(url) = &args.probe {
            findings.push(doctor::probe(&settings.crawler, url).await);
        }
        findings.push(doctor::time_stamping(&settings.evidence.timestamp).await);
        findings.push(doctor::notices(&settings.notices));
    }
    for f in &findings {
        if args.json {
            outln!("{}", serde_json::to_string(f)?);
            continue;
        }
        let level = match f.level {
            Level::Ok => "ok",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
        };
        outln!("{level:<4}  {:<10}  {}", f.check, f.detail);
        if let Some(fix) = &f.fix {
            outln!("{:<16}fix: {fix}", "");
        }
    }
    let failed = findings.iter().filter(|f| f.level == Level::Fail).count();
    if failed > 0 {
        bail!("{failed} of {} checks failed", findings.len());
    }
    Ok(())
}
