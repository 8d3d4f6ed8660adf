//! Accounts of the admin UI (issue #13): users and their passwords (argon2id), sign-in,
//! server-side sessions behind a cookie, and bearer tokens for the API. The CLI's `users`
//! commands and the admin UI both go through here; the store only ever sees hashes.
//!
//! Secrets (a cookie value, a token) are 32 or 20 random bytes from the OS, hex-encoded; the
//! store keeps their SHA-256. A fast hash is enough there: unlike a password, a random
//! secret of that size cannot be guessed, so only a leaked database matters, and a hash of
//! it does not open anything.
//!
//! ```no_run
//! # async fn demo(store: &store::Store) -> pipeline::Result<()> {
//! use pipeline::accounts;
//!
//! if let Some(user) = accounts::authenticate(store, "alice", "correct horse battery").await? {
//!     let session = accounts::start_session(store, user.id, std::time::Duration::from_secs(3600)).await?;
//!     // Set `session.cookie` as an HttpOnly cookie and put `session.csrf_token` in forms.
//!     assert!(accounts::session(store, &session.cookie).await?.is_some());
//! }
//! # Ok(()) }
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use chrono::{DateTime, SubsecRound as _, Utc};
use sha2::Digest;
use store::{
    ApiTokenRecord, ApiTokens, NewUser, Role, SessionRecord, Sessions, Store, UserChanges, UserId,
    UserRecord, Users,
};
use tracing::instrument;

use crate::error::store_err;
use crate::{Error, Result};

/// The fewest characters (Unicode scalar values) a password may have.
pub const MIN_PASSWORD_CHARS: usize = 10;
/// The most characters a password may have: argon2 hashes any length, but a request body
/// of megabytes should not be hashed, and no password manager makes them this long.
pub const MAX_PASSWORD_CHARS: usize = 1024;
/// The most characters a user name may have.
pub const MAX_USERNAME_CHARS: usize = 64;
/// The most characters an API token's name may have.
pub const MAX_TOKEN_NAME_CHARS: usize = 100;
/// What every API token starts with, so a leaked one is recognised (by secret scanners too).
pub const TOKEN_PREFIX: &str = "chk_";
/// The name of the admin [`bootstrap_admin`] creates.
pub const BOOTSTRAP_ADMIN: &str = "admin";

/// An argon2id hash (of a random password nobody knows) with the parameters
/// `password_auth::generate_hash` uses, so that signing in as an unknown user costs the same
/// verification as a known one. `dummy_hash_has_the_parameters_of_new_hashes` checks it.
const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2lnbmluZ3Byb2JlMDAwMQ$vXp3WxjY3v8HvO9VdmV4YvXx8U1X0Qm7X0l6w8x3ZrA";

/// Checks a user name: 1 to 64 characters, each a letter (of any script), a digit, or one
/// of `.` `_` `-` `@`. Names are compared exactly, case included.
///
/// # Errors
/// [`Error::Account`] saying what is allowed.
pub fn check_username(name: &str) -> Result<()> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_USERNAME_CHARS {
        return Err(Error::Account(format!(
            "user name {name:?} has {chars} characters: use 1 to {MAX_USERNAME_CHARS}"
        )));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '@')))
    {
        return Err(Error::Account(format!(
            "user name {name:?} contains {bad:?}: use letters, digits and . _ - @ only"
        )));
    }
    Ok(())
}

/// Checks a new password: 10 to 1024 characters. The message never repeats the password.
///
/// # Errors
/// [`Error::Account`] saying how long a password must be.
pub fn check_password(password: &str) -> Result<()> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_CHARS {
        return Err(Error::Account(format!(
            "the password has {chars} characters: use at least {MIN_PASSWORD_CHARS}"
        )));
    }
    if chars > MAX_PASSWORD_CHARS {
        return Err(Error::Account(format!(
            "the password has {chars} characters: use at most {MAX_PASSWORD_CHARS}"
        )));
    }
    Ok(())
}

/// Hashes a password with argon2id (a PHC string with its own salt), on a blocking thread:
/// a hash takes tens of milliseconds of CPU by design.
///
/// # Errors
/// [`Error::Account`] when [`check_password`] refuses it.
pub async fn hash_password(password: &str) -> Result<String> {
    check_password(password)?;
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || password_auth::generate_hash(password))
        .await
        .map_err(|e| Error::task("hashing a password", e))
}

/// Whether `password` matches `hash`, on a blocking thread.
async fn verify_password(password: &str, hash: &str, username: &str) -> Result<bool> {
    let (password, hash) = (password.to_owned(), hash.to_owned());
    let verified =
        tokio::task::spawn_blocking(move || password_auth::verify_password(password, &hash))
            .await
            .map_err(|e| Error::task("verifying a password", e))?;
    match verified {
        Ok(()) => Ok(true),
        Err(password_auth::VerifyError::PasswordInvalid) => Ok(false),
        Err(e) => Err(Error::Account(format!(
            "the stored password hash of user {username:?} cannot be read ({e}): set a new \
             password with `copyhound users passwd {username}`"
        ))),
    }
}

/// Creates a user after checking the name and password; `actor` is audited.
///
/// # Errors
/// [`Error::Account`] for a refused name or password; a store conflict when the name is
/// taken.
#[instrument(skip_all, fields(username, role = %role))]
pub async fn add_user(
    store: &Store,
    username: &str,
    display_name: Option<&str>,
    role: Role,
    password: &str,
    actor: &str,
) -> Result<UserRecord> {
    check_username(username)?;
    let password_hash = hash_password(password).await?;
    store
        .create_user(
            &NewUser {
                username,
                display_name,
                password_hash: &password_hash,
                role,
            },
            actor,
        )
        .await
        .map_err(store_err("creating a user"))
}

/// Sets a user's password; their sessions end (they sign in again with it).
///
/// # Errors
/// [`Error::Account`] for a refused password; a store error for an unknown user.
#[instrument(skip_all, fields(user = %user))]
pub async fn set_password(store: &Store, user: UserId, password: &str, actor: &str) -> Result<()> {
    let password_hash = hash_password(password).await?;
    let changes = UserChanges {
        password_hash: Some(password_hash),
        ..UserChanges::default()
    };
    store
        .update_user(user, &changes, actor)
        .await
        .map_err(store_err("setting a password"))?;
    Ok(())
}

/// Signs a user in: `Some(user)` only for an enabled user with the right password, and
/// then the login is recorded. An unknown name costs one argon2 verification too (against a
/// fixed hash), so the time taken does not tell which names exist.
///
/// # Errors
/// A store error, or [`Error::Account`] when the stored hash is unreadable.
#[instrument(skip_all, fields(username))]
pub async fn authenticate(
    store: &Store,
    username: &str,
    password: &str,
) -> Result<Option<UserRecord>> {
    // The same answer for every name, so no name is told apart by it.
    if password.chars().count() > MAX_PASSWORD_CHARS {
        return Ok(None);
    }
    let found = store
        .user_login(username)
        .await
        .map_err(store_err("looking up a user to sign in"))?;
    let Some((mut user, hash)) = found else {
        verify_password(password, DUMMY_HASH, username).await?;
        return Ok(None);
    };
    if !verify_password(password, &hash, username).await? || user.disabled {
        return Ok(None);
    }
    // Postgres keeps microseconds: the time returned is the time stored.
    let now = Utc::now().trunc_subsecs(6);
    store
        .record_login(user.id, now)
        .await
        .map_err(store_err("recording a sign-in"))?;
    user.last_login_at = Some(now);
    Ok(Some(user))
}

/// `bytes` random bytes from the OS, hex-encoded (URL-safe; twice as many characters).
///
/// # Panics
/// When the OS has no random numbers to give (no `getrandom`, no `/dev/urandom`): nothing
/// secure can be issued then.
pub fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the operating system's random number generator failed");
    hex(&buf)
}

/// The SHA-256 of a secret (a cookie value, an API token): what the store keeps of it.
pub fn token_hash(secret: &str) -> Vec<u8> {
    sha2::Sha256::digest(secret.as_bytes()).to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The key of a session in the store: the hex SHA-256 of its cookie.
fn session_key(cookie: &str) -> String {
    hex(&token_hash(cookie))
}

/// A session just started: set `cookie` in the browser (HttpOnly, Secure, SameSite), put
/// `csrf_token` in forms. Neither is stored as is.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The cookie's value: 32 random bytes, hex.
    pub cookie: String,
    /// The token forms must send back.
    pub csrf_token: String,
    /// When the session ends unless extended.
    pub expires_at: DateTime<Utc>,
}

/// Starts a session of `user` lasting `ttl`.
///
/// # Errors
/// A store error (an unknown user among them).
#[instrument(skip_all, fields(user = %user))]
pub async fn start_session(store: &Store, user: UserId, ttl: Duration) -> Result<NewSession> {
    let cookie = random_token(32);
    let csrf_token = random_token(32);
    let ttl = chrono::TimeDelta::from_std(ttl).unwrap_or(chrono::TimeDelta::MAX);
    let expires_at = Utc::now()
        .checked_add_signed(ttl)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
        .trunc_subsecs(6);
    store
        .create_session(&session_key(&cookie), user, &csrf_token, expires_at)
        .await
        .map_err(store_err("starting a session"))?;
    Ok(NewSession {
        cookie,
        csrf_token,
        expires_at,
    })
}

/// The live session behind a cookie: `None` when unknown, expired or its user disabled.
///
/// # Errors
/// A store error.
#[instrument(skip_all)]
pub async fn session(store: &Store, cookie: &str) -> Result<Option<SessionRecord>> {
    store
        .session(&session_key(cookie), Utc::now())
        .await
        .map_err(store_err("reading a session"))
}

/// Ends the session behind a cookie (an unknown one is fine).
///
/// # Errors
/// A store error.
#[instrument(skip_all)]
pub async fn end_session(store: &Store, cookie: &str) -> Result<()> {
    store
        .delete_session(&session_key(cookie))
        .await
        .map_err(store_err("ending a session"))
}

/// An API token just issued: `token` is shown once and never again (the store keeps its
/// hash).
#[derive(Debug, Clone)]
pub struct IssuedToken {
    /// The bearer token: `chk_` and 40 hex characters.
    pub token: String,
    /// What is stored about it.
    pub record: ApiTokenRecord,
}

/// Issues an API token for `user`, labelled `name` (1 to 100 characters), valid until
/// `expires_at` (or until revoked).
///
/// # Errors
/// [`Error::Account`] for a refused name or an end in the past; a store error for an
/// unknown user.
#[instrument(skip_all, fields(user = %user))]
pub async fn issue_api_token(
    store: &Store,
    user: UserId,
    name: &str,
    expires_at: Option<DateTime<Utc>>,
    actor: &str,
) -> Result<IssuedToken> {
    let name = name.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_TOKEN_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(Error::Account(format!(
            "token name {name:?} is refused: give 1 to {MAX_TOKEN_NAME_CHARS} characters \
             without control characters, saying what the token is for"
        )));
    }
    if let Some(end) = expires_at.filter(|end| *end <= Utc::now()) {
        return Err(Error::Account(format!(
            "token expiry {end} is in the past: give a time to come"
        )));
    }
    let token = format!("{TOKEN_PREFIX}{}", random_token(20));
    let record = store
        .create_api_token(
            user,
            name,
            &token_hash(&token),
            &token[..12],
            expires_at,
            actor,
        )
        .await
        .map_err(store_err("issuing an API token"))?;
    Ok(IssuedToken { token, record })
}

/// The user a bearer token acts for: `None` when the token is unknown, revoked, expired or
/// its user disabled.
///
/// # Errors
/// A store error.
#[instrument(skip_all)]
pub async fn token_user(store: &Store, token: &str) -> Result<Option<UserRecord>> {
    Ok(api_token(store, token).await?.map(|(_, user)| user))
}

/// [`token_user`] with the token's record (its prefix names the actor in the audit log:
/// `api-token:<prefix>`).
///
/// # Errors
/// A store error.
#[instrument(skip_all)]
pub async fn api_token(store: &Store, token: &str) -> Result<Option<(ApiTokenRecord, UserRecord)>> {
    store
        .api_token_user(&token_hash(token.trim()), Utc::now())
        .await
        .map_err(store_err("resolving an API token"))
}

/// On a store without users, creates [`BOOTSTRAP_ADMIN`] (role admin) with a random
/// 20-character password and returns its name and password for `serve` to print once;
/// `None` when there are users (or another process just created the admin).
///
/// # Errors
/// A store error.
#[instrument(skip_all)]
pub async fn bootstrap_admin(store: &Store) -> Result<Option<(String, String)>> {
    let users = store
        .count_users()
        .await
        .map_err(store_err("counting users"))?;
    if users > 0 {
        return Ok(None);
    }
    let password = random_token(10);
    match add_user(
        store,
        BOOTSTRAP_ADMIN,
        None,
        Role::Admin,
        &password,
        "bootstrap",
    )
    .await
    {
        Ok(_) => Ok(Some((BOOTSTRAP_ADMIN.to_owned(), password))),
        Err(Error::Store {
            source: store::Error::Conflict(_),
            ..
        }) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_are_letters_digits_and_a_few_marks() {
        for ok in [
            "alice",
            "a",
            "李雷",
            "Ольга.k",
            "o'neil".replace('\'', "_").as_str(),
            "x@y-z.org",
            &"n".repeat(64),
        ] {
            check_username(ok).unwrap();
        }
        for bad in [
            "",
            "has space",
            "tab\t",
            "nul\0",
            "new\nline",
            "semi;colon",
            "slash/",
            &"n".repeat(65),
        ] {
            let err = check_username(bad).unwrap_err().to_string();
            assert!(err.starts_with("user name "), "{err}");
        }
        let err = check_username("a b").unwrap_err().to_string();
        assert_eq!(
            err,
            r#"user name "a b" contains ' ': use letters, digits and . _ - @ only"#
        );
    }

    #[test]
    fn passwords_have_10_to_1024_chars_and_are_never_echoed() {
        check_password("0123456789").unwrap();
        check_password("密码密码密码密码密码").unwrap();
        check_password(&"p".repeat(1024)).unwrap();
        let short = check_password("hunter2").unwrap_err().to_string();
        assert_eq!(short, "the password has 7 characters: use at least 10");
        assert!(check_password(&"p".repeat(1025)).is_err());
        // Counted in characters, not bytes: nine CJK characters are 27 bytes.
        assert!(check_password("密码密码密码密码密").is_err());
    }

    #[test]
    fn random_tokens_are_hex_and_differ() {
        let a = random_token(32);
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_ne!(a, random_token(32));
        assert_eq!(random_token(10).len(), 20);
    }

    #[test]
    fn token_hash_is_sha256() {
        assert_eq!(
            hex(&token_hash("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[tokio::test]
    async fn hashes_verify_their_password_only() {
        let hash = hash_password("correct horse battery").await.unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(
            verify_password("correct horse battery", &hash, "u")
                .await
                .unwrap()
        );
        assert!(
            !verify_password("correct horse batterY", &hash, "u")
                .await
                .unwrap()
        );
        let err = verify_password("x", "not a hash", "u")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("copyhound users passwd u"), "{err}");
    }

    #[tokio::test]
    async fn dummy_hash_has_the_parameters_of_new_hashes() {
        let hash = hash_password("correct horse battery").await.unwrap();
        let params = |h: &str| h.split('$').take(4).collect::<Vec<_>>().join("$");
        assert_eq!(params(DUMMY_HASH), params(&hash));
        assert!(
            !verify_password("anything at all", DUMMY_HASH, "u")
                .await
                .unwrap()
        );
    }
}
