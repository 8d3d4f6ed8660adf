//! Layered settings: built-in defaults, then an optional TOML file (`--config`), then
//! `COPYHOUND_<SECTION>__<KEY>` environment variables (`__` separates nesting levels;
//! `..._FILE` variables name a file holding the value, for secrets), then command-line flags
//! (applied by each command).
//!
//! Each crate owns its typed settings struct with a `Default`; this module only stacks the
//! layers. `config/default.toml` documents every key with its default (commented out, so each
//! default is written once, in code; a test keeps the two in agreement). Unknown keys are
//! reported as warnings, not errors, so that an old binary can read a newer file.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use config::{Config, Environment, File, FileFormat};
use serde::{Deserialize, Serialize};

/// The documented defaults, embedded in the binary.
pub const DEFAULT_TOML: &str = include_str!("../../../config/default.toml");

/// Prefix of the environment variables read as settings.
const ENV_PREFIX: &str = "COPYHOUND_";

/// Every setting of the process, one section per crate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Fingerprinting parameters (`[fingerprint]`). Changing them changes every fingerprint.
    pub fingerprint: fingerprint::FingerprintSettings,
    /// Matching thresholds (`[matcher]`): index sampling, candidates, alignment, reporting.
    pub matcher: matcher::MatcherSettings,
    /// Crawling (`[crawler]`): fetching, politeness, robots.txt, scope, limits.
    pub crawler: crawler::CrawlSettings,
}

/// Settings together with what was odd about them.
#[derive(Debug)]
pub struct Loaded {
    /// The effective settings.
    pub settings: Settings,
    /// Keys that were given but mean nothing to this version (with where they came from).
    pub unknown_keys: Vec<String>,
}

/// Turns `COPYHOUND_SECTION__KEY=value` variables into settings sources. Variables without
/// `__` (like `COPYHOUND_LOG`) are not settings. `..._FILE` variables are replaced by the
/// trimmed contents of the file they name.
fn env_settings(
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (name, value) in vars {
        let Some(rest) = name.strip_prefix(ENV_PREFIX) else {
            continue;
        };
        if !rest.contains("__") {
            continue;
        }
        if let Some(key) = rest.strip_suffix("_FILE") {
            let contents = std::fs::read_to_string(&value)
                .with_context(|| format!("reading {name}={value}"))?;
            out.insert(
                format!("{ENV_PREFIX}{key}"),
                contents.trim_end_matches(['\r', '\n']).to_string(),
            );
        } else {
            out.insert(name, value);
        }
    }
    Ok(out)
}

/// Loads the settings from the embedded defaults, `file` (if any) and the given environment.
///
/// # Errors
/// If the file cannot be read or parsed, a `_FILE` variable names an unreadable file, or a
/// value has the wrong type (the message names the key).
pub fn load(
    file: Option<&Path>,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<Loaded> {
    let mut builder = Config::builder().add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml));
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config file {}", path.display()))?;
        builder = builder.add_source(File::from_str(&text, FileFormat::Toml));
    }
    let env = env_settings(vars)?;
    builder = builder.add_source(
        Environment::with_prefix("COPYHOUND")
            .prefix_separator("_")
            .separator("__")
            .try_parsing(true)
            .source(Some(env.into_iter().collect())),
    );
    let config = builder.build().context("combining the settings layers")?;
    let mut unknown_keys = Vec::new();
    let settings: Settings = serde_ignored::deserialize(config, |path| {
        unknown_keys.push(path.to_string());
    })
    .context(
        "reading the settings (check the key named above in --config or COPYHOUND_* variables)",
    )?;
    settings
        .fingerprint
        .validate()
        .context("checking [fingerprint] settings")?;
    settings
        .matcher
        .validate()
        .context("checking [matcher] settings")?;
    Ok(Loaded {
        settings,
        unknown_keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_are_the_code_defaults() {
        let loaded = load(None, vars(&[])).unwrap();
        assert_eq!(loaded.settings, Settings::default());
        assert!(loaded.unknown_keys.is_empty());
    }

    #[test]
    fn documented_defaults_match_the_code() {
        // Uncomment every `# key = value` line of default.toml: the result must parse to
        // exactly the defaults the code uses, so the documentation cannot drift.
        let uncommented: String = DEFAULT_TOML
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if rest.contains(" = ") || rest.starts_with('[') => rest,
                _ => l,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let parsed: Settings = Config::builder()
            .add_source(File::from_str(&uncommented, FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap();
        assert_eq!(parsed, Settings::default());
    }

    #[test]
    fn matcher_settings_load_and_are_checked() {
        let loaded = load(
            None,
            vars(&[("COPYHOUND_MATCHER__REPORT__MIN_MATCHED_CHARS", "500")]),
        )
        .unwrap();
        assert_eq!(loaded.settings.matcher.report.min_matched_chars, 500);
        let bad = load(
            None,
            vars(&[("COPYHOUND_MATCHER__CANDIDATES__MAX_CANDIDATES", "0")]),
        )
        .unwrap_err();
        assert!(format!("{bad:#}").contains("[matcher]"), "{bad:#}");
    }

    #[test]
    fn file_then_environment_override() {
        let dir = std::env::temp_dir().join(format!("copyhound-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("copyhound.toml");
        std::fs::write(&file, "[fingerprint]\nwinnow_w = 40\nshingle_k = 4\n").unwrap();
        let loaded = load(
            Some(&file),
            vars(&[
                ("COPYHOUND_FINGERPRINT__WINNOW_W", "50"),
                ("COPYHOUND_LOG", "debug"),
            ]),
        )
        .unwrap();
        assert_eq!(loaded.settings.fingerprint.winnow_w, 50);
        assert_eq!(loaded.settings.fingerprint.shingle_k, 4);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn file_variables_read_secrets_from_files() {
        let dir = std::env::temp_dir().join(format!("copyhound-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let secret = dir.join("w");
        std::fs::write(&secret, "33\n").unwrap();
        let loaded = load(
            None,
            vars(&[(
                "COPYHOUND_FINGERPRINT__WINNOW_W_FILE",
                secret.to_str().unwrap(),
            )]),
        )
        .unwrap();
        assert_eq!(loaded.settings.fingerprint.winnow_w, 33);
        let err = load(
            None,
            vars(&[("COPYHOUND_FINGERPRINT__WINNOW_W_FILE", "/nonexistent/x")]),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("COPYHOUND_FINGERPRINT__WINNOW_W_FILE"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn unknown_keys_warn_and_bad_values_fail() {
        let loaded = load(None, vars(&[("COPYHOUND_FINGERPRINT__WINNOW_WW", "3")])).unwrap();
        assert_eq!(
            loaded.unknown_keys,
            vec!["fingerprint.winnow_ww".to_string()]
        );
        let err = load(None, vars(&[("COPYHOUND_FINGERPRINT__WINNOW_W", "many")])).unwrap_err();
        assert!(format!("{err:#}").contains("winnow_w"), "{err:#}");
        let err = load(None, vars(&[("COPYHOUND_FINGERPRINT__WINNOW_W", "0")])).unwrap_err();
        assert!(
            format!("{err:#}").contains("winnow_w 0 must be between"),
            "{err:#}"
        );
    }
}
