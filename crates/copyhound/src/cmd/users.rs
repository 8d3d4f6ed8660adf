//! `copyhound users`: the admin UI's accounts (users, roles, passwords) and API tokens.

use std::io::{BufRead as _, IsTerminal as _};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use pipeline::accounts;
use store::{ApiTokenId, ApiTokens, Role, Store, UserChanges, UserRecord, Users};

use super::outln;

/// Who the audit log names for changes made here.
const ACTOR: &str = "cli";

/// `users` subcommands.
#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create a user. The password comes from --password-file, else is asked for twice on
    /// the terminal, else is read as one line from standard input.
    Add {
        /// The name they sign in with: letters, digits and . _ - @ (1 to 64 characters).
        name: String,
        /// admin (everything, users included), reviewer (reviews cases, drafts notices) or
        /// viewer (reads).
        #[arg(long)]
        role: Role,
        /// The name shown in the UI.
        #[arg(long, value_name = "NAME")]
        display_name: Option<String>,
        /// Read the password from the first line of this file.
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
    },
    /// The users, by name.
    List {
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Change what a user may do: admin, reviewer or viewer.
    SetRole {
        /// The user.
        name: String,
        /// The new role.
        role: Role,
    },
    /// Stop a user signing in; their sessions end and their API tokens stop working.
    Disable {
        /// The user.
        name: String,
    },
    /// Let a disabled user sign in again (their tokens work again unless revoked).
    Enable {
        /// The user.
        name: String,
    },
    /// Set a user's password (their sessions end, their API tokens are revoked), read as for
    /// `users add`.
    Passwd {
        /// The user.
        name: String,
        /// Read the password from the first line of this file.
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
    },
    /// Issue an API token acting as a user; it is printed once and never again.
    Token {
        /// The user the token acts as.
        user: String,
        /// What it is for ("nightly upload"), shown in `users tokens`.
        #[arg(long, value_name = "LABEL")]
        name: String,
        /// Stop working after this many days (default: until revoked).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=36_500))]
        expires_days: Option<u32>,
    },
    /// The API tokens, newest first (revoked and expired ones too).
    Tokens {
        /// Only this user's.
        #[arg(long, value_name = "NAME")]
        user: Option<String>,
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Revoke an API token (its id from `users tokens`).
    RevokeToken {
        /// The token's id.
        id: ApiTokenId,
    },
}

/// Runs a `users` subcommand.
pub async fn run(command: UsersCommand, database: &str) -> Result<()> {
    let store = super::open_store(database).await?;
    let result = run_on(&store, command).await;
    store.close().await;
    result
}

async fn run_on(store: &Store, command: UsersCommand) -> Result<()> {
    match command {
        UsersCommand::Add {
            name,
            role,
            display_name,
            password_file,
        } => {
            accounts::check_username(&name)?;
            let password = read_password(password_file.as_deref(), &name)?;
            let user = accounts::add_user(
                store,
                &name,
                display_name.as_deref(),
                role,
                &password,
                ACTOR,
            )
            .await
            .with_context(|| format!("while adding user {name:?}"))?;
            outln!(
                "user {} ({}) added as {}",
                user.username,
                user.id,
                user.role
            );
        }
        UsersCommand::List { json } => {
            let users = store.users().await?;
            if json {
                outln!("{}", serde_json::to_string(&users)?);
                return Ok(());
            }
            if users.is_empty() {
                outln!("no users yet: add one with `copyhound users add NAME --role admin`");
            }
            for u in &users {
                outln!(
                    "{:>5}  {:<24} {:<8} {:<8} last login {}{}",
                    u.id,
                    u.username,
                    u.role,
                    if u.disabled { "disabled" } else { "enabled" },
                    time(u.last_login_at),
                    u.display_name
                        .as_deref()
                        .map(|d| format!("  ({d})"))
                        .unwrap_or_default()
                );
            }
        }
        UsersCommand::SetRole { name, role } => {
            let user = update(
                store,
                &name,
                UserChanges {
                    role: Some(role),
                    ..UserChanges::default()
                },
            )
            .await?;
            outln!("user {} is now {}", user.username, user.role);
        }
        UsersCommand::Disable { name } => {
            let user = update(
                store,
                &name,
                UserChanges {
                    disabled: Some(true),
                    ..UserChanges::default()
                },
            )
            .await?;
            outln!(
                "user {} is disabled: their sessions ended and their tokens stopped working",
                user.username
            );
        }
        UsersCommand::Enable { name } => {
            let user = update(
                store,
                &name,
                UserChanges {
                    disabled: Some(false),
                    ..UserChanges::default()
                },
            )
            .await?;
            outln!("user {} is enabled", user.username);
        }
        UsersCommand::Passwd {
            name,
            password_file,
        } => {
            let user = user_named(store, &name).await?;
            let password = read_password(password_file.as_deref(), &name)?;
            let reset = accounts::set_password(store, user.id, &password, ACTOR)
                .await
                .with_context(|| format!("while setting the password of {name:?}"))?;
            outln!(
                "password of {} changed; their sessions ended and {} API token(s) were revoked \
                 (issue new ones with `copyhound users token {}`)",
                user.username,
                reset.tokens_revoked.len(),
                user.username
            );
        }
        UsersCommand::Token {
            user,
            name,
            expires_days,
        } => {
            let owner = user_named(store, &user).await?;
            let expires_at =
                expires_days.map(|d| Utc::now() + chrono::TimeDelta::days(i64::from(d)));
            let issued = accounts::issue_api_token(store, owner.id, &name, expires_at, ACTOR)
                .await
                .with_context(|| format!("while issuing a token for {user:?}"))?;
            outln!("{}", issued.token);
            outln!(
                "token {} ({}) for {}, {}: copy it now, it will not be shown again",
                issued.record.id,
                issued.record.prefix,
                issued.record.username,
                expires_at.map_or_else(
                    || "valid until revoked".to_owned(),
                    |t| format!("expires {}", t.format("%Y-%m-%d %H:%M UTC"))
                )
            );
        }
        UsersCommand::Tokens { user, json } => {
            let owner = match user {
                Some(name) => Some(user_named(store, &name).await?.id),
                None => None,
            };
            let tokens = store.api_tokens(owner).await?;
            if json {
                outln!("{}", serde_json::to_string(&tokens)?);
                return Ok(());
            }
            if tokens.is_empty() {
                outln!("no API tokens: issue one with `copyhound users token NAME --name LABEL`");
            }
            let now = Utc::now();
            for t in &tokens {
                let state = match (t.revoked_at, t.expires_at) {
                    (Some(at), _) => format!("revoked {}", time(Some(at))),
                    (None, Some(end)) if end <= now => format!("expired {}", time(Some(end))),
                    (None, Some(end)) => format!("expires {}", time(Some(end))),
                    (None, None) => "live".to_owned(),
                };
                outln!(
                    "{:>5}  {}…  {:<16} {:<24} last used {:<20} {}",
                    t.id,
                    t.prefix,
                    t.username,
                    t.name,
                    time(t.last_used_at),
                    state
                );
            }
        }
        UsersCommand::RevokeToken { id } => {
            store.revoke_api_token(id, ACTOR).await.with_context(|| {
                format!("while revoking token {id} (see `copyhound users tokens`)")
            })?;
            outln!("token {id} is revoked");
        }
    }
    Ok(())
}

fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "never".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

async fn user_named(store: &Store, name: &str) -> Result<UserRecord> {
    match store.user_by_name(name).await? {
        Some(user) => Ok(user),
        None => bail!("no user is named {name:?}: see `copyhound users list`"),
    }
}

async fn update(store: &Store, name: &str, changes: UserChanges) -> Result<UserRecord> {
    let user = user_named(store, name).await?;
    store
        .update_user(user.id, &changes, ACTOR)
        .await
        .with_context(|| format!("while changing user {name:?}"))
}

/// The new password: the first line of `file`, else asked for twice on the terminal, else
/// one line of standard input (a script's pipe).
fn read_password(file: Option<&Path>, name: &str) -> Result<String> {
    let password = if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("while reading the password file {}", file.display()))?;
        text.lines().next().unwrap_or_default().to_owned()
    } else if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password(format!("new password for {name}: "))
            .context("while reading the password from the terminal")?;
        accounts::check_password(&first, name)?;
        let again = rpassword::prompt_password("the same password again: ")
            .context("while reading the password from the terminal")?;
        if again != first {
            bail!("the two passwords differ: run the command again");
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("while reading the password from standard input")?;
        line.trim_end_matches(['\n', '\r']).to_owned()
    };
    if password.is_empty() {
        bail!(
            "no password given: put it on the first line of --password-file FILE, type it on \
             a terminal, or pipe it in"
        );
    }
    accounts::check_password(&password, name)?;
    Ok(password)
}
