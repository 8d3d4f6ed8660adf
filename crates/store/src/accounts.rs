//! Accounts of the admin UI (issue #13): users with a role ([`Users`]), their server-side
//! sessions ([`Sessions`]) and bearer tokens for the API ([`ApiTokens`]).
//!
//! The store keeps what it is given: a password hash (hashing is the pipeline's), a hash of
//! a session cookie and of a token (never the secrets themselves). A disabled user's
//! sessions and tokens stop resolving at once; disabling a user also deletes their sessions,
//! and a new password ([`Users::reset_password`]) ends their sessions and revokes their API
//! tokens.

use std::fmt;
use std::future::Future;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::audit::insert_audit;
use crate::db::{durable_tx, read_pool, write_pool};
use crate::ids::{ApiTokenId, UserId};
use crate::{Error, Result, Store};

/// What a user may do, ordered by power: `Viewer < Reviewer < Admin`, so a check reads
/// `user.role >= Role::Reviewer`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads cases, works and reports.
    Viewer,
    /// Also reviews cases and drafts notices.
    Reviewer,
    /// Also manages users, tokens and settings.
    Admin,
}

impl Role {
    /// Every role, least powerful first.
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Reviewer, Role::Admin];

    /// The name kept in `users.role` and used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Reviewer => "reviewer",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The look-alike forms of a user name, kept unique in `users.name_key` and
/// `users.name_key_cased`: its TR39 confusable skeleton (Unicode's `confusables.txt`) with
/// `.`, `_`, `-` and `@` left out, case ignored. Two forms, of the name lower-cased first
/// (so `ALICE` and `аlice`, with a Cyrillic а, are `alice`) and of the name as written,
/// lower-cased after (so is `aIice`, with a capital i: lower-casing first would make its I
/// an i). Two names with either form alike could be taken for each other in the audit log
/// and on the users page; `alice.` and `alice_` are `alice` too.
pub fn username_keys(name: &str) -> (String, String) {
    let unmarked = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '.' | '_' | '-' | '@'))
            .collect()
    };
    let skeleton = |s: &str| {
        unmarked(&unicode_security::skeleton(&unmarked(s)).collect::<String>()).to_lowercase()
    };
    (skeleton(&name.to_lowercase()), skeleton(name))
}

impl Store {
    /// Gives the users made before `users.name_key` existed their look-alike forms
    /// ([`username_keys`]), the oldest first (migration `20261207130000`). A user whose
    /// form an older one holds keeps none: they sign in as before, a new name like theirs
    /// is still refused (by the check against every name), and each run logs them for an
    /// admin to disable; the migration never fails over them.
    ///
    /// # Errors
    /// [`Error::Backend`] when the users cannot be read or written.
    pub(crate) async fn backfill_username_keys(&self) -> Result<()> {
        let rows: Vec<(i64, String)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT id, username FROM users \
                 WHERE name_key IS NULL OR name_key_cased IS NULL ORDER BY id",
            )
            .fetch_all(pool)
            .await?
        });
        for (id, username) in rows {
            let (key, key_cased) = username_keys(&username);
            let updated = write_pool!(self, |pool| {
                sqlx::query("UPDATE users SET name_key = $1, name_key_cased = $2 WHERE id = $3")
                    .bind(&key)
                    .bind(&key_cased)
                    .bind(id)
                    .execute(pool)
                    .await
                    .map(drop)
            });
            match updated.map_err(Error::from) {
                Ok(_) => {}
                Err(Error::Conflict(_)) => tracing::warn!(
                    user = %username,
                    "a user name looks like an older user's: it stays, without a look-alike \
                     form; disable one of the two (`copyhound users disable`) if they are \
                     not the same person"
                ),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// A role name that is none of [`Role::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role {0:?}: use admin, reviewer or viewer")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<Self, UnknownRole> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownRole(s.to_owned()))
    }
}

/// A stored user (never with its password hash: see [`Users::user_login`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct UserRecord {
    /// Its id.
    pub id: UserId,
    /// The name they sign in with (unique, case-sensitively).
    pub username: String,
    /// The name shown in the UI, when set.
    pub display_name: Option<String>,
    /// What they may do.
    pub role: Role,
    /// A disabled user cannot sign in and their sessions and tokens do not resolve.
    pub disabled: bool,
    /// Their UI language (a BCP 47 tag); `None` follows the browser's Accept-Language.
    pub locale: Option<String>,
    /// Where their alerts are mailed; `None`: they get none.
    pub email: Option<String>,
    /// When the user was created.
    pub created_at: DateTime<Utc>,
    /// When they last signed in.
    pub last_login_at: Option<DateTime<Utc>>,
}

/// A user to create.
#[derive(Debug, Clone)]
pub struct NewUser<'a> {
    /// The name they sign in with (checked by the caller; the store keeps it, and its
    /// look-alike forms ([`username_keys`]), unique).
    pub username: &'a str,
    /// The name shown in the UI.
    pub display_name: Option<&'a str>,
    /// Their password, hashed (a PHC string such as `$argon2id$...`).
    pub password_hash: &'a str,
    /// What they may do.
    pub role: Role,
}

/// Changes to a user; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct UserChanges {
    /// A new role.
    pub role: Option<Role>,
    /// Disable (`Some(true)`) or enable (`Some(false)`).
    pub disabled: Option<bool>,
    /// A new display name (`Some(None)` clears it).
    pub display_name: Option<Option<String>>,
    /// A new UI language (`Some(None)` follows the browser again).
    pub locale: Option<Option<String>>,
    /// A new alert address (`Some(None)` clears it); checked by the caller.
    pub email: Option<Option<String>>,
}

/// Users: created, read, changed, signed in.
pub trait Users {
    /// Creates a user, audited `user.create` by `actor` in the same transaction.
    ///
    /// # Errors
    /// [`Error::Conflict`] when the name is taken (exactly: names differing in case are two
    /// users).
    fn create_user(
        &self,
        user: &NewUser<'_>,
        actor: &str,
    ) -> impl Future<Output = Result<UserRecord>> + Send;

    /// One user.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn user(&self, id: UserId) -> impl Future<Output = Result<UserRecord>> + Send;

    /// The user with this name, if any.
    fn user_by_name(
        &self,
        username: &str,
    ) -> impl Future<Output = Result<Option<UserRecord>>> + Send;

    /// The user and their password hash, for logging in (disabled users included: the
    /// caller decides).
    fn user_login(
        &self,
        username: &str,
    ) -> impl Future<Output = Result<Option<(UserRecord, String)>>> + Send;

    /// Every user, ordered by name.
    fn users(&self) -> impl Future<Output = Result<Vec<UserRecord>>> + Send;

    /// How many users there are (disabled ones included).
    fn count_users(&self) -> impl Future<Output = Result<u64>> + Send;

    /// Applies the changes in one durable transaction, audited `user.update` with the
    /// changed fields in its details. Disabling a user deletes their sessions in the same
    /// transaction. Changes that change nothing write nothing. (A password is changed by
    /// [`Users::reset_password`].)
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id; [`Error::Conflict`] when the change would
    /// demote or disable the last enabled admin.
    fn update_user(
        &self,
        id: UserId,
        changes: &UserChanges,
        actor: &str,
    ) -> impl Future<Output = Result<UserRecord>> + Send;

    /// Sets a user's password hash and ends what the old password let in, in one durable
    /// transaction: every session of the user is deleted and every live API token revoked
    /// (whoever learnt the old password may have issued one). Audited `user.update` with
    /// `"password": "changed"` (never the hash), how many sessions ended and which tokens
    /// were revoked, and `api_token.revoke` for each token.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn reset_password(
        &self,
        id: UserId,
        password_hash: &str,
        actor: &str,
    ) -> impl Future<Output = Result<PasswordReset>> + Send;

    /// Records a successful sign-in at `at`.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn record_login(
        &self,
        id: UserId,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// What a new password ended ([`Users::reset_password`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PasswordReset {
    /// The user, as stored now.
    pub user: UserRecord,
    /// How many of their sessions were deleted.
    pub sessions_ended: u64,
    /// Their API tokens that were live and are revoked now.
    pub tokens_revoked: Vec<ApiTokenRecord>,
}

/// A live session and whose it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SessionRecord {
    /// Its user (enabled, or the session would not resolve).
    pub user: UserRecord,
    /// The token forms must echo (double-submit protection against CSRF).
    pub csrf_token: String,
    /// When it ends unless extended.
    pub expires_at: DateTime<Utc>,
    /// When it was last used, as [`Sessions::touch_session`] recorded it (its start at
    /// first): the caller ends a session idle for too long.
    pub last_seen_at: DateTime<Utc>,
}

/// Server-side sessions of the admin UI, keyed by a hash of the cookie value.
pub trait Sessions {
    /// Stores a session, last used now. `id_hash` is a hash of the cookie value (the store
    /// never sees the cookie itself); the CSRF token is kept in the row's `data` as JSON.
    ///
    /// # Errors
    /// [`Error::Conflict`] when a session with this hash exists; a backend error for an
    /// unknown user.
    fn create_session(
        &self,
        id_hash: &str,
        user: UserId,
        csrf_token: &str,
        expires_at: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// The session, or `None` when it is missing, expired at `now` or its user is disabled.
    fn session(
        &self,
        id_hash: &str,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Option<SessionRecord>>> + Send;

    /// Moves a session's end to `expires_at`.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such session (it ended meanwhile).
    fn extend_session(
        &self,
        id_hash: &str,
        expires_at: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Records that a session was used at `at`.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such session (it ended meanwhile).
    fn touch_session(
        &self,
        id_hash: &str,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Ends a session (a missing one is fine: logging out twice is not an error).
    fn delete_session(&self, id_hash: &str) -> impl Future<Output = Result<()>> + Send;

    /// Ends every session of a user; returns how many there were.
    fn delete_sessions_of(&self, user: UserId) -> impl Future<Output = Result<u64>> + Send;

    /// Deletes the sessions expired at `now`; returns how many.
    fn purge_expired_sessions(
        &self,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<u64>> + Send;
}

/// A stored API token (never the token itself, which is shown once when issued).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ApiTokenRecord {
    /// Its id.
    pub id: ApiTokenId,
    /// Whose it is.
    pub user_id: UserId,
    /// Their name.
    pub username: String,
    /// What it is for, as its owner labelled it.
    pub name: String,
    /// Its first characters, to recognise it in a list.
    pub prefix: String,
    /// When it was issued.
    pub created_at: DateTime<Utc>,
    /// When it was last used, to within a minute (see [`ApiTokens::api_token_user`]).
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was revoked.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Bearer tokens for the API, kept as hashes.
pub trait ApiTokens {
    /// Stores a token's hash and prefix for `user`, audited `api_token.create` by `actor`.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown user; [`Error::Conflict`] when the hash is taken.
    fn create_api_token(
        &self,
        user: UserId,
        name: &str,
        token_hash: &[u8],
        prefix: &str,
        expires_at: Option<DateTime<Utc>>,
        actor: &str,
    ) -> impl Future<Output = Result<ApiTokenRecord>> + Send;

    /// The live token with this hash and its user: `None` when unknown, revoked, expired at
    /// `now` or its user disabled. Records the use only when the last one recorded is a
    /// minute old or more, so an API under load does not write on every request (SQLite has
    /// one writer).
    fn api_token_user(
        &self,
        token_hash: &[u8],
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Option<(ApiTokenRecord, UserRecord)>>> + Send;

    /// The tokens of one user, or everyone's; newest first. Revoked and expired ones too.
    fn api_tokens(
        &self,
        user: Option<UserId>,
    ) -> impl Future<Output = Result<Vec<ApiTokenRecord>>> + Send;

    /// Revokes a token, audited `api_token.revoke`; revoking a revoked token changes
    /// nothing.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn revoke_api_token(
        &self,
        id: ApiTokenId,
        actor: &str,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// How stale `last_used_at` may get before a use is written again.
const LAST_USED_GRANULARITY: chrono::TimeDelta = chrono::TimeDelta::minutes(1);

/// A user's columns, aliased so they can be joined beside a session's or token's.
pub(crate) const USER_COLUMNS: &str = "u.id AS user_id, u.username, u.display_name, u.role, u.disabled, \
     u.locale, u.email, u.created_at AS user_created_at, u.last_login_at";

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    user_id: UserId,
    username: String,
    display_name: Option<String>,
    role: String,
    disabled: bool,
    locale: Option<String>,
    email: Option<String>,
    user_created_at: DateTime<Utc>,
    last_login_at: Option<DateTime<Utc>>,
}

impl TryFrom<UserRow> for UserRecord {
    type Error = Error;
    fn try_from(r: UserRow) -> Result<Self> {
        Ok(UserRecord {
            id: r.user_id,
            role: r.role.parse().map_err(|e: UnknownRole| {
                Error::InvalidInput(format!("user {}: {e}", r.user_id))
            })?,
            username: r.username,
            display_name: r.display_name,
            disabled: r.disabled,
            locale: r.locale,
            email: r.email,
            created_at: r.user_created_at,
            last_login_at: r.last_login_at,
        })
    }
}

#[derive(sqlx::FromRow)]
struct LoginRow {
    #[sqlx(flatten)]
    user: UserRow,
    password_hash: String,
}

#[derive(sqlx::FromRow)]
struct SessionRow {
    #[sqlx(flatten)]
    user: UserRow,
    data: Vec<u8>,
    expires_at: DateTime<Utc>,
    last_seen_at: DateTime<Utc>,
}

/// What a session row's `data` holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct SessionData {
    csrf: String,
}

#[derive(sqlx::FromRow)]
struct TokenRow {
    #[sqlx(flatten)]
    user: UserRow,
    id: ApiTokenId,
    name: String,
    prefix: String,
    created_at: DateTime<Utc>,
    last_used_at: Option<DateTime<Utc>>,
    expires_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

impl TokenRow {
    fn split(self) -> Result<(ApiTokenRecord, UserRecord)> {
        let user = UserRecord::try_from(self.user)?;
        let token = ApiTokenRecord {
            id: self.id,
            user_id: user.id,
            username: user.username.clone(),
            name: self.name,
            prefix: self.prefix,
            created_at: self.created_at,
            last_used_at: self.last_used_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
        };
        Ok((token, user))
    }
}

fn select_users(filter: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!("SELECT {USER_COLUMNS} FROM users u {filter}"))
}

fn select_tokens(filter: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!(
        "SELECT {USER_COLUMNS}, t.id, t.name, t.prefix, t.created_at, t.last_used_at, \
         t.expires_at, t.revoked_at FROM api_tokens t JOIN users u ON u.id = t.user_id {filter}"
    ))
}

/// One user read inside a transaction; evaluates to `Option<UserRecord>`.
macro_rules! user_in_tx {
    ($tx:expr, $id:expr) => {{
        let id: UserId = $id;
        let row: Option<UserRow> = sqlx::query_as(select_users("WHERE u.id = $1"))
            .bind(id)
            .fetch_optional(&mut *$tx)
            .await?;
        row.map(UserRecord::try_from).transpose()?
    }};
}

/// One token read inside a transaction; evaluates to `Option<ApiTokenRecord>`.
macro_rules! token_in_tx {
    ($tx:expr, $id:expr) => {{
        let id: ApiTokenId = $id;
        let row: Option<TokenRow> = sqlx::query_as(select_tokens("WHERE t.id = $1"))
            .bind(id)
            .fetch_optional(&mut *$tx)
            .await?;
        row.map(|r| r.split().map(|(t, _)| t)).transpose()?
    }};
}

/// What `changes` changes in `user`, as the audit row's details (empty when nothing).
fn changed_fields(
    user: &UserRecord,
    changes: &UserChanges,
) -> serde_json::Map<String, serde_json::Value> {
    let mut details = serde_json::Map::new();
    if let Some(role) = changes.role.filter(|r| *r != user.role) {
        details.insert("role".into(), role.as_str().into());
    }
    if let Some(disabled) = changes.disabled.filter(|d| *d != user.disabled) {
        details.insert("disabled".into(), disabled.into());
    }
    if let Some(name) = changes
        .display_name
        .as_ref()
        .filter(|n| **n != user.display_name)
    {
        details.insert("display_name".into(), name.clone().into());
    }
    if let Some(locale) = changes.locale.as_ref().filter(|l| **l != user.locale) {
        details.insert("locale".into(), locale.clone().into());
    }
    if let Some(email) = changes.email.as_ref().filter(|e| **e != user.email) {
        details.insert("email".into(), email.clone().into());
    }
    details
}

impl Users for Store {
    #[instrument(skip_all, fields(username = %user.username, role = %user.role))]
    async fn create_user(&self, user: &NewUser<'_>, actor: &str) -> Result<UserRecord> {
        let now = Utc::now();
        let user = durable_tx!(self, |tx| {
            let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE username = $1")
                .bind(user.username)
                .fetch_optional(&mut *tx)
                .await?;
            if taken.is_some() {
                return Err(Error::Conflict(format!(
                    "user name {:?} is taken: choose another",
                    user.username
                )));
            }
            let (key, key_cased) = username_keys(user.username);
            let look_alike = |existing: &str| {
                Error::Conflict(format!(
                    "user name {:?} looks like the existing user {existing:?}: choose a name \
                     that cannot be taken for theirs",
                    user.username
                ))
            };
            let like: Option<String> = sqlx::query_scalar(
                "SELECT username FROM users WHERE name_key = $1 OR name_key_cased = $2 LIMIT 1",
            )
            .bind(&key)
            .bind(&key_cased)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(existing) = like {
                return Err(look_alike(&existing));
            }
            // Two creations at once both pass the check above on Postgres; the unique
            // indexes let one insert through.
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO users \
                 (username, display_name, password_hash, role, created_at, name_key, \
                  name_key_cased) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
            )
            .bind(user.username)
            .bind(user.display_name)
            .bind(user.password_hash)
            .bind(user.role.as_str())
            .bind(now)
            .bind(&key)
            .bind(&key_cased)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| match Error::from(e) {
                Error::Conflict(_) => look_alike("created at the same moment"),
                other => other,
            })?;
            let details = serde_json::json!({
                "username": user.username, "role": user.role, "display_name": user.display_name,
            });
            insert_audit!(
                &mut *tx,
                actor,
                "user.create",
                Some("user"),
                Some(id),
                &details,
                now
            );
            user_in_tx!(tx, UserId(id)).ok_or_else(|| Error::not_found("user", id))?
        });
        Ok(user)
    }

    #[instrument(skip_all, fields(user = %id))]
    async fn user(&self, id: UserId) -> Result<UserRecord> {
        let row: Option<UserRow> = read_pool!(self, |pool| {
            sqlx::query_as(select_users("WHERE u.id = $1"))
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        row.ok_or_else(|| Error::not_found("user", id))?.try_into()
    }

    #[instrument(skip_all, fields(username))]
    async fn user_by_name(&self, username: &str) -> Result<Option<UserRecord>> {
        let row: Option<UserRow> = read_pool!(self, |pool| {
            sqlx::query_as(select_users("WHERE u.username = $1"))
                .bind(username)
                .fetch_optional(pool)
                .await?
        });
        row.map(UserRecord::try_from).transpose()
    }

    #[instrument(skip_all, fields(username))]
    async fn user_login(&self, username: &str) -> Result<Option<(UserRecord, String)>> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT {USER_COLUMNS}, u.password_hash FROM users u WHERE u.username = $1"
        ));
        let row: Option<LoginRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql)
                .bind(username)
                .fetch_optional(pool)
                .await?
        });
        row.map(|r| Ok((UserRecord::try_from(r.user)?, r.password_hash)))
            .transpose()
    }

    #[instrument(skip_all)]
    async fn users(&self) -> Result<Vec<UserRecord>> {
        let rows: Vec<UserRow> = read_pool!(self, |pool| {
            sqlx::query_as(select_users("ORDER BY u.username, u.id"))
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(UserRecord::try_from).collect()
    }

    #[instrument(skip_all)]
    async fn count_users(&self) -> Result<u64> {
        let n: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT COUNT(*) FROM users")
                .fetch_one(pool)
                .await?
        });
        Ok(u64::try_from(n).unwrap_or(0))
    }

    #[instrument(skip_all, fields(user = %id))]
    async fn update_user(
        &self,
        id: UserId,
        changes: &UserChanges,
        actor: &str,
    ) -> Result<UserRecord> {
        let now = Utc::now();
        let user = durable_tx!(self, |tx| {
            // Lock the enabled admins first (an update that changes nothing takes the row
            // locks on Postgres; SQLite has one writer), so two admins demoting each other
            // at once cannot both pass the check below.
            let admins: Vec<UserId> = sqlx::query_scalar(
                "UPDATE users SET role = role WHERE role = 'admin' AND NOT disabled RETURNING id",
            )
            .fetch_all(&mut *tx)
            .await?;
            let user = user_in_tx!(tx, id).ok_or_else(|| Error::not_found("user", id))?;
            let details = changed_fields(&user, changes);
            if details.is_empty() {
                return Ok(user);
            }
            let role = changes.role.unwrap_or(user.role);
            let disabled = changes.disabled.unwrap_or(user.disabled);
            let loses_admin =
                user.role == Role::Admin && !user.disabled && (role != Role::Admin || disabled);
            if loses_admin && admins.iter().all(|a| *a == id) {
                return Err(Error::Conflict(format!(
                    "{:?} is the last enabled admin: make another user admin first",
                    user.username
                )));
            }
            let display_name = changes
                .display_name
                .clone()
                .unwrap_or_else(|| user.display_name.clone());
            let locale = changes
                .locale
                .clone()
                .unwrap_or_else(|| user.locale.clone());
            let email = changes.email.clone().unwrap_or_else(|| user.email.clone());
            sqlx::query(
                "UPDATE users SET role = $2, disabled = $3, display_name = $4, locale = $5, \
                 email = $6 WHERE id = $1",
            )
            .bind(id)
            .bind(role.as_str())
            .bind(disabled)
            .bind(display_name)
            .bind(locale)
            .bind(email)
            .execute(&mut *tx)
            .await?;
            if disabled && !user.disabled {
                sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            insert_audit!(
                &mut *tx,
                actor,
                "user.update",
                Some("user"),
                Some(id.0),
                &serde_json::Value::Object(details),
                now
            );
            user_in_tx!(tx, id).ok_or_else(|| Error::not_found("user", id))?
        });
        Ok(user)
    }

    #[instrument(skip_all, fields(user = %id))]
    async fn reset_password(
        &self,
        id: UserId,
        password_hash: &str,
        actor: &str,
    ) -> Result<PasswordReset> {
        let now = Utc::now();
        let reset = durable_tx!(self, |tx| {
            let updated = sqlx::query("UPDATE users SET password_hash = $2 WHERE id = $1")
                .bind(id)
                .bind(password_hash)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if updated == 0 {
                return Err(Error::not_found("user", id));
            }
            let sessions_ended = sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            let revoked: Vec<ApiTokenId> = sqlx::query_scalar(
                "UPDATE api_tokens SET revoked_at = $2 WHERE user_id = $1 \
                 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2) \
                 RETURNING id",
            )
            .bind(id)
            .bind(now)
            .fetch_all(&mut *tx)
            .await?;
            let mut tokens_revoked = Vec::with_capacity(revoked.len());
            for token in revoked {
                insert_audit!(
                    &mut *tx,
                    actor,
                    "api_token.revoke",
                    Some("api_token"),
                    Some(token.0),
                    &serde_json::json!({"reason": "password reset"}),
                    now
                );
                tokens_revoked.push(
                    token_in_tx!(tx, token).ok_or_else(|| Error::not_found("api token", token))?,
                );
            }
            tokens_revoked.sort_by_key(|t| t.id);
            let details = serde_json::json!({
                "password": "changed",
                "sessions_ended": sessions_ended,
                "api_tokens_revoked": tokens_revoked
                    .iter()
                    .map(|t| serde_json::json!({"id": t.id.0, "prefix": t.prefix, "name": t.name}))
                    .collect::<Vec<_>>(),
            });
            insert_audit!(
                &mut *tx,
                actor,
                "user.update",
                Some("user"),
                Some(id.0),
                &details,
                now
            );
            PasswordReset {
                user: user_in_tx!(tx, id).ok_or_else(|| Error::not_found("user", id))?,
                sessions_ended,
                tokens_revoked,
            }
        });
        Ok(reset)
    }

    #[instrument(skip_all, fields(user = %id))]
    async fn record_login(&self, id: UserId, at: DateTime<Utc>) -> Result<()> {
        let rows = write_pool!(self, |pool| {
            sqlx::query("UPDATE users SET last_login_at = $2 WHERE id = $1")
                .bind(id)
                .bind(at)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Error::found(rows, "user", id)
    }
}

impl Store {
    /// Sets one of a session's times (`column`: a name of ours, never input).
    async fn set_session_time(
        &self,
        column: &'static str,
        id_hash: &str,
        at: DateTime<Utc>,
    ) -> Result<()> {
        let sql = format!("UPDATE sessions SET {column} = $2 WHERE id = $1");
        let rows = write_pool!(self, |pool| {
            sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .bind(id_hash)
                .bind(at)
                .execute(pool)
                .await?
                .rows_affected()
        });
        // The key is a hash of a secret: the message does not repeat it.
        Error::found(rows, "session", "(hash withheld)")
    }
}

impl Sessions for Store {
    #[instrument(skip_all, fields(user = %user))]
    async fn create_session(
        &self,
        id_hash: &str,
        user: UserId,
        csrf_token: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<()> {
        let data = serde_json::to_vec(&SessionData {
            csrf: csrf_token.to_owned(),
        })
        .map_err(|e| Error::InvalidInput(format!("session data: {e}")))?;
        let now = Utc::now();
        write_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO sessions (id, user_id, data, expires_at, last_seen_at) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(id_hash)
            .bind(user)
            .bind(&data)
            .bind(expires_at)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(())
    }

    #[instrument(skip_all)]
    async fn session(&self, id_hash: &str, now: DateTime<Utc>) -> Result<Option<SessionRecord>> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT {USER_COLUMNS}, s.data, s.expires_at, \
             COALESCE(s.last_seen_at, s.expires_at) AS last_seen_at FROM sessions s \
             JOIN users u ON u.id = s.user_id \
             WHERE s.id = $1 AND s.expires_at > $2 AND NOT u.disabled"
        ));
        let row: Option<SessionRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql)
                .bind(id_hash)
                .bind(now)
                .fetch_optional(pool)
                .await?
        });
        let Some(row) = row else { return Ok(None) };
        let user = UserRecord::try_from(row.user)?;
        let data: SessionData = serde_json::from_slice(&row.data).map_err(|e| {
            Error::InvalidInput(format!(
                "session of user {} holds unreadable data ({e}): delete it, the user signs in again",
                user.id
            ))
        })?;
        Ok(Some(SessionRecord {
            user,
            csrf_token: data.csrf,
            expires_at: row.expires_at,
            last_seen_at: row.last_seen_at,
        }))
    }

    #[instrument(skip_all)]
    async fn touch_session(&self, id_hash: &str, at: DateTime<Utc>) -> Result<()> {
        self.set_session_time("last_seen_at", id_hash, at).await
    }

    #[instrument(skip_all)]
    async fn extend_session(&self, id_hash: &str, expires_at: DateTime<Utc>) -> Result<()> {
        self.set_session_time("expires_at", id_hash, expires_at)
            .await
    }

    #[instrument(skip_all)]
    async fn delete_session(&self, id_hash: &str) -> Result<()> {
        write_pool!(self, |pool| {
            sqlx::query("DELETE FROM sessions WHERE id = $1")
                .bind(id_hash)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    #[instrument(skip_all, fields(user = %user))]
    async fn delete_sessions_of(&self, user: UserId) -> Result<u64> {
        Ok(write_pool!(self, |pool| {
            sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                .bind(user)
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }

    #[instrument(skip_all)]
    async fn purge_expired_sessions(&self, now: DateTime<Utc>) -> Result<u64> {
        Ok(write_pool!(self, |pool| {
            sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
                .bind(now)
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }
}

impl ApiTokens for Store {
    #[instrument(skip_all, fields(user = %user, name))]
    async fn create_api_token(
        &self,
        user: UserId,
        name: &str,
        token_hash: &[u8],
        prefix: &str,
        expires_at: Option<DateTime<Utc>>,
        actor: &str,
    ) -> Result<ApiTokenRecord> {
        let now = Utc::now();
        let token = durable_tx!(self, |tx| {
            let owner = user_in_tx!(tx, user).ok_or_else(|| Error::not_found("user", user))?;
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO api_tokens (user_id, name, token_hash, prefix, created_at, \
                 expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(user)
            .bind(name)
            .bind(token_hash)
            .bind(prefix)
            .bind(now)
            .bind(expires_at)
            .fetch_one(&mut *tx)
            .await?;
            let details = serde_json::json!({
                "user": user.0, "username": owner.username, "name": name, "prefix": prefix,
                "expires_at": expires_at,
            });
            insert_audit!(
                &mut *tx,
                actor,
                "api_token.create",
                Some("api_token"),
                Some(id),
                &details,
                now
            );
            token_in_tx!(tx, ApiTokenId(id)).ok_or_else(|| Error::not_found("api token", id))?
        });
        Ok(token)
    }

    #[instrument(skip_all)]
    async fn api_token_user(
        &self,
        token_hash: &[u8],
        now: DateTime<Utc>,
    ) -> Result<Option<(ApiTokenRecord, UserRecord)>> {
        let sql = select_tokens(
            "WHERE t.token_hash = $1 AND t.revoked_at IS NULL \
             AND (t.expires_at IS NULL OR t.expires_at > $2) AND NOT u.disabled",
        );
        let row: Option<TokenRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql)
                .bind(token_hash)
                .bind(now)
                .fetch_optional(pool)
                .await?
        });
        let Some((mut token, user)) = row.map(TokenRow::split).transpose()? else {
            return Ok(None);
        };
        let stale = now - LAST_USED_GRANULARITY;
        if token.last_used_at.is_none_or(|t| t <= stale) {
            let written = write_pool!(self, |pool| {
                sqlx::query(
                    "UPDATE api_tokens SET last_used_at = $2 WHERE id = $1 \
                     AND (last_used_at IS NULL OR last_used_at <= $3)",
                )
                .bind(token.id)
                .bind(now)
                .bind(stale)
                .execute(pool)
                .await?
                .rows_affected()
            });
            if written > 0 {
                token.last_used_at = Some(now);
            }
        }
        Ok(Some((token, user)))
    }

    #[instrument(skip_all, fields(user = ?user))]
    async fn api_tokens(&self, user: Option<UserId>) -> Result<Vec<ApiTokenRecord>> {
        let sql = select_tokens("WHERE ($1 IS NULL OR t.user_id = $1) ORDER BY t.id DESC");
        let rows: Vec<TokenRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql)
                .bind(user.map(|u| u.0))
                .fetch_all(pool)
                .await?
        });
        rows.into_iter()
            .map(|r| r.split().map(|(t, _)| t))
            .collect()
    }

    #[instrument(skip_all, fields(token = %id))]
    async fn revoke_api_token(&self, id: ApiTokenId, actor: &str) -> Result<()> {
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let revoked: Option<Option<DateTime<Utc>>> =
                sqlx::query_scalar("SELECT revoked_at FROM api_tokens WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?;
            match revoked {
                None => return Err(Error::not_found("api token", id)),
                Some(Some(_)) => {}
                Some(None) => {
                    sqlx::query("UPDATE api_tokens SET revoked_at = $2 WHERE id = $1")
                        .bind(id)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    insert_audit!(
                        &mut *tx,
                        actor,
                        "api_token.revoke",
                        Some("api_token"),
                        Some(id.0),
                        &serde_json::json!({}),
                        now
                    );
                }
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_print_and_order() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>().unwrap(), role);
            assert_eq!(role.to_string(), role.as_str());
        }
        assert!(Role::Viewer < Role::Reviewer && Role::Reviewer < Role::Admin);
        let err = "Admin".parse::<Role>().unwrap_err().to_string();
        assert_eq!(
            err,
            r#"unknown role "Admin": use admin, reviewer or viewer"#
        );
        assert_eq!(
            serde_json::to_string(&Role::Reviewer).unwrap(),
            r#""reviewer""#
        );
    }
}
