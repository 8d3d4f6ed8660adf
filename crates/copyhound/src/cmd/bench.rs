//! `copyhound bench ...`: throughput figures of the hot paths measured on this machine
//! (`bench fingerprint`, `extract`, `match`, `load`) and the detection quality (`bench
//! quality`, `pipeline`). The flags, harnesses and printing are the `bench` crate's
//! (`bench::cli`); this hands them the settings and standard output.

use anyhow::Result;
use bench::Sections;
use bench::cli::BenchCommand;
use settings::Settings;

/// Runs a `bench` subcommand.
pub fn run(command: BenchCommand, database: &str, settings: &Settings) -> Result<()> {
    let sections = Sections {
        fingerprint: &settings.fingerprint,
        matcher: &settings.matcher,
        crawler: &settings.crawler,
        import: &settings.import,
    };
    let store = super::store_settings();
    bench::cli::run(command, database, &store, &sections, &super::write_stdout)
}
