//! Where log lines go and how they look: standard error, filtered by `COPYHOUND_LOG`
//! (tracing's `EnvFilter` syntax; `warn` when unset), as text for people (coloured on a
//! terminal unless `NO_COLOR` is set) or as JSON for a log collector (`--log-format json`).

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// The variable that picks the log lines.
pub const LOG_VAR: &str = "COPYHOUND_LOG";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text per event.
    Text,
    /// One JSON object per event: timestamp, level, target, fields and the spans it is in.
    Json,
}

/// Installs the global subscriber. A `COPYHOUND_LOG` that does not parse is reported and
/// replaced by the default, rather than silently logging nothing.
pub fn init(format: LogFormat) {
    let filter = match std::env::var(LOG_VAR) {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            eprintln!("warning: {LOG_VAR}={spec:?} is not a log filter ({e}); using warn");
            EnvFilter::new("warn")
        }),
        _ => EnvFilter::new("warn"),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder
            .with_ansi(super::use_color(std::io::stderr().is_terminal()))
            .init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}
