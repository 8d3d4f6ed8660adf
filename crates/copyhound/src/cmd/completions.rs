//! `copyhound completions SHELL`: a completion script for the shell, generated from the
//! command line's own definition by clap_complete, so it never lags behind the commands.

use anyhow::Result;
use clap::Args;
use clap_complete::Shell;

/// Options of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell. Install, e.g.: `copyhound completions bash > ~/.local/share/bash-completion/completions/copyhound`,
    /// `copyhound completions zsh > "${fpath[1]}/_copyhound"`,
    /// `copyhound completions fish > ~/.config/fish/completions/copyhound.fish`.
    #[arg(value_enum)]
    shell: Shell,
}

/// Writes the script to standard output.
pub fn run(args: CompletionsArgs, command: &mut clap::Command) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, command, "copyhound", &mut script);
    super::write_stdout(&String::from_utf8_lossy(&script))
}
