//! `copyhound users`: the admin UI's accounts (users, roles, passwords) and API tokens.

use std::path::PathBuf;

use anyhow::{Context, Result};
use chrono::Utc;
use clap::Subcommand;
use store::{ApiTokenId, ApiTokens, Role, Store, UserChanges, Users};

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
pub async fn run(store: &Store, command: UsersCommand) -> Result<()> {
    match command {
        UsersCommand::Add {
            name,
            role,
            display_name,
            password_file,
        } => {
            accounts::check_username(&name)?;
            let password = accounts::read_new_password(password_file.as_deref(), &name)?;
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
            } else {
                super::write_stdout(&accounts::UserTable(&users).to_string())?;
            }
        }
        UsersCommand::SetRole { name, role } => {
            let user = accounts::update_user_named(
                store,
                &name,
                &UserChanges {
                    role: Some(role),
                    ..UserChanges::default()
                },
                ACTOR,
            )
            .await?;
            outln!("user {} is now {}", user.username, user.role);
        }
        UsersCommand::Disable { name } => {
            let user = accounts::update_user_named(
                store,
                &name,
                &UserChanges {
                    disabled: Some(true),
                    ..UserChanges::default()
                },
                ACTOR,
            )
            .await?;
            outln!(
                "user {} is disabled: their sessions ended and their tokens stopped working",
                user.username
            );
        }
        UsersCommand::Enable { name } => {
            let user = accounts::update_user_named(
                store,
                &name,
                &UserChanges {
                    disabled: Some(false),
                    ..UserChanges::default()
                },
                ACTOR,
            )
            .await?;
            outln!("user {} is enabled", user.username);
        }
        UsersCommand::Passwd {
            name,
            password_file,
        } => {
            let user = accounts::user_named(store, &name).await?;
            let password = accounts::read_new_password(password_file.as_deref(), &name)?;
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
            let owner = accounts::user_named(store, &user).await?;
            let expires_at =
                expires_days.map(|d| Utc::now() + chrono::TimeDelta::days(i64::from(d)));
            let issued = accounts::issue_api_token(store, owner.id, &name, expires_at, ACTOR)
                .await
                .with_context(|| format!("while issuing a token for {user:?}"))?;
            super::write_stdout(&issued.to_string())?;
        }
        UsersCommand::Tokens { user, json } => {
            let owner = match user {
                Some(name) => Some(accounts::user_named(store, &name).await?.id),
                None => None,
            };
            let tokens = store.api_tokens(owner).await?;
            if json {
                outln!("{}", serde_json::to_string(&tokens)?);
                return Ok(());
            }
            let now = Utc::now();
            super::write_stdout(
                &accounts::TokenTable {
                    tokens: &tokens,
                    now,
                }
                .to_string(),
            )?;
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
