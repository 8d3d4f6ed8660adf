//! `copyhound notify`: the mail settings (`[notify.smtp]`) tried out.

use anyhow::{Context, Result};
use clap::Subcommand;
use settings::Settings;

use super::outln;

/// `notify` subcommands.
#[derive(Debug, Subcommand)]
pub enum NotifyCommand {
    /// Mail a test message through the configured SMTP server (notify.smtp) and print its
    /// reply.
    Test {
        /// Where to send it.
        address: String,
    },
}

/// Runs a `notify` subcommand.
pub async fn run(command: NotifyCommand, settings: &Settings) -> Result<()> {
    match command {
        NotifyCommand::Test { address } => {
            let mailer = notification::Mailer::new(&settings.notify.smtp)?;
            let accepted = mailer
                .send_test(&address)
                .await
                .with_context(|| format!("while mailing a test message to {address}"))?;
            outln!(
                "test message to {address} accepted: {}\nsha256 {}",
                accepted.reply,
                accepted.sha256
            );
            Ok(())
        }
    }
}
