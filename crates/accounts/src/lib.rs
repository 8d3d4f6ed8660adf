//! Accounts of the admin UI (issue #13): users and their passwords (argon2id), sign-in,
//! server-side sessions behind a cookie, and bearer tokens for the API. The CLI's `users`
//! commands and the admin UI both go through here; the store only ever sees hashes.
//!
//! Secrets (a cookie value, a token) are 32 or 20 random bytes from the OS, hex-encoded; the
//! store keeps their SHA-256. A fast hash is enough there: unlike a password, a random
//! secret of that size cannot be guessed, so only a leaked database matters, and a hash of
//! it does not open anything.
//!
//! It may use the store and the error of the `jobs` crate, nothing else of copyhound's.
//!
//! ```no_run
//! # async fn demo(store: &store::Store) -> jobs::Result<()> {
//! if let Some(user) = accounts::authenticate(store, "alice", "correct horse battery").await? {
//!     let session = accounts::start_session(store, user.id, std::time::Duration::from_secs(3600)).await?;
//!     // Set `session.cookie` as an HttpOnly cookie and put `session.csrf_token` in forms.
//!     let idle = std::time::Duration::from_secs(2 * 3600);
//!     assert!(accounts::session(store, &session.cookie, idle).await?.is_some());
//! }
//! # Ok(()) }
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use chrono::{DateTime, SubsecRound as _, Utc};
use jobs::{Error, Result, store_err};
use sha2::Digest;
use store::{
    ApiTokenRecord, ApiTokens, NewUser, PasswordReset, Role, SessionRecord, Sessions, Store,
    UserId, UserRecord, Users,
};
use tracing::instrument;

/// The fewest characters (Unicode scalar values) a password may have (OWASP ASVS 2.1.1).
pub const MIN_PASSWORD_CHARS: usize = 12;
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

/// Passwords people choose most often, of [`MIN_PASSWORD_CHARS`] characters or more,
/// lower-case, one a line (sources and licences in `data/README.md`).
const COMMON_PASSWORDS: &str = include_str!("../data/common-passwords.txt");

/// How long a session's last use may be stale before a request records it again: a write
/// per request would serialise every page view on SQLite's one writer.
const TOUCH_GRANULARITY: chrono::TimeDelta = chrono::TimeDelta::minutes(1);

/// Checks a user name: 1 to 64 characters, each a letter (of any script), a digit, or one
/// of `.` `_` `-` `@`. Signing in compares names exactly; [`add_user`] also refuses a name
/// that looks like an existing user's ([`usernames_look_alike`]).
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

/// Whether two user names could be taken for each other: a look-alike form of one
/// ([`store::username_keys`]: the TR39 confusable skeleton, case, `.`, `_`, `-` and `@`
/// ignored) is the other's. Two such users could be mixed up in the audit log and the users
/// page; the store keeps the forms unique, so two creations at once cannot both pass.
pub fn usernames_look_alike(a: &str, b: &str) -> bool {
    let (a_key, a_cased) = store::username_keys(a);
    let (b_key, b_cased) = store::username_keys(b);
    a_key == b_key || a_cased == b_cased
}

/// Checks a new password for `username`: 12 to 1024 characters (ASVS 2.1.1), not one of the
/// bundled common passwords (nor one written with digits or signs for letters, `p@ssw0rd`),
/// not one character repeated, not containing the product's name and not the user name,
/// case ignored (ASVS 2.1.7). The message never repeats the password.
///
/// # Errors
/// [`Error::Account`] saying what a password must be.
pub fn check_password(password: &str, username: &str) -> Result<()> {
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
    let folded = password.to_lowercase();
    if folded == username.to_lowercase() {
        return Err(Error::Account(
            "the password is the user name: choose one nobody could guess from it".into(),
        ));
    }
    let mut distinct = folded.chars();
    if let Some(first) = distinct.next()
        && distinct.all(|c| c == first)
    {
        return Err(Error::Account(
            "the password is one character repeated: choose one nobody could guess (a few \
             unrelated words make a good one)"
                .into(),
        ));
    }
    let plain = unleet(&folded);
    if plain.contains(PRODUCT_NAME) {
        return Err(Error::Account(format!(
            "the password contains the name of this software, {PRODUCT_NAME:?}, which \
             attackers try first: choose another (a few unrelated words make a good one)"
        )));
    }
    if common_passwords().contains(&plain) {
        return Err(Error::Account(
            "the password is on a list of the most common passwords, which attackers try \
             first, or one of them with letters written as digits or signs: choose another \
             (a few unrelated words make a good one)"
                .into(),
        ));
    }
    Ok(())
}

/// The product's name, which a guesser tries with the common passwords.
const PRODUCT_NAME: &str = "copyhound";

/// `password` (lower-cased) with the digits and signs that stand for letters read as the
/// letters (`p@ssw0rd` is `password`), and `l` read as `i` as `1` is: a common password
/// written so is as easily guessed, since crackers' rules make the same swaps. The list is
/// read so too, so a digit that is only a digit (`password1234`) is compared alike.
fn unleet(password: &str) -> String {
    password
        .chars()
        .map(|c| match c {
            '0' => 'o',
            '1' | '!' | '|' | 'l' => 'i',
            '3' => 'e',
            '4' | '@' => 'a',
            '5' | '$' => 's',
            '7' | '+' => 't',
            '8' => 'b',
            '9' => 'g',
            other => other,
        })
        .collect()
}

/// [`COMMON_PASSWORDS`] read by [`unleet`], once.
fn common_passwords() -> &'static std::collections::HashSet<String> {
    static LIST: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    LIST.get_or_init(|| COMMON_PASSWORDS.lines().map(unleet).collect())
}

/// Hashes a password with argon2id (a PHC string with its own salt), on a blocking thread:
/// a hash takes tens of milliseconds of CPU by design. Checks nothing: callers check the
/// password with [`check_password`] first.
async fn hash_password(password: &str) -> Result<String> {
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

/// Creates a user after checking the name and password; `actor` is audited. A display name
/// is kept without control characters or bidi overrides.
///
/// # Errors
/// [`Error::Account`] for a refused name or password, or a name that looks like an existing
/// user's ([`usernames_look_alike`]); a store conflict when the name is taken.
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
    check_password(password, username)?;
    let users = store
        .users()
        .await
        .map_err(store_err("reading the users a new name must not look like"))?;
    // The same name exactly is the store's conflict ("is taken").
    if let Some(like) = users
        .iter()
        .find(|u| u.username != username && usernames_look_alike(&u.username, username))
    {
        return Err(Error::Account(format!(
            "user name {username:?} looks like the existing user {:?}: choose a name that \
             cannot be taken for theirs",
            like.username
        )));
    }
    let display_name = display_name
        .map(|d| bounds::text::strip_controls(d).into_owned())
        .filter(|d| !d.is_empty());
    let password_hash = hash_password(password).await?;
    store
        .create_user(
            &NewUser {
                username,
                display_name: display_name.as_deref(),
                password_hash: &password_hash,
                role,
            },
            actor,
        )
        .await
        .map_err(store_err("creating a user"))
}

/// Sets a user's password (a reset by an admin in the UI or `users passwd`): their sessions
/// end and their API tokens are revoked, since whoever knew the old password may hold them;
/// the audit log names the tokens. The user signs in again and issues new tokens.
///
/// # Errors
/// [`Error::Account`] for a refused password; a store error for an unknown user.
#[instrument(skip_all, fields(user = %user))]
pub async fn set_password(
    store: &Store,
    user: UserId,
    password: &str,
    actor: &str,
) -> Result<PasswordReset> {
    let record = store
        .user(user)
        .await
        .map_err(store_err("reading the user whose password is set"))?;
    check_password(password, &record.username)?;
    let password_hash = hash_password(password).await?;
    store
        .reset_password(user, &password_hash, actor)
        .await
        .map_err(store_err("setting a password"))
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

/// The live session behind a cookie: `None` when unknown, expired, unused for `idle` or
/// longer (then it is ended), or its user disabled. A use is recorded at most once a minute.
///
/// # Errors
/// A store error.
#[instrument(skip_all)]
pub async fn session(store: &Store, cookie: &str, idle: Duration) -> Result<Option<SessionRecord>> {
    let key = session_key(cookie);
    let now = Utc::now();
    let Some(mut session) = store
        .session(&key, now)
        .await
        .map_err(store_err("reading a session"))?
    else {
        return Ok(None);
    };
    let unused = now - session.last_seen_at;
    if unused >= chrono::TimeDelta::from_std(idle).unwrap_or(chrono::TimeDelta::MAX) {
        store
            .delete_session(&key)
            .await
            .map_err(store_err("ending an idle session"))?;
        return Ok(None);
    }
    if unused >= TOUCH_GRANULARITY {
        // Postgres keeps microseconds: the time returned is the time stored.
        let now = now.trunc_subsecs(6);
        match store.touch_session(&key, now).await {
            Ok(()) => session.last_seen_at = now,
            // Ended by a logout or a password reset since it was read.
            Err(store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(store_err("recording a session's use")(e)),
        }
    }
    Ok(Some(session))
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

/// The token on a line of its own, then what it is: shown once, when it is issued.
impl std::fmt::Display for IssuedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.record;
        let expiry = r.expires_at.map_or_else(
            || "valid until revoked".to_owned(),
            |t| format!("expires {}", t.format("%Y-%m-%d %H:%M UTC")),
        );
        writeln!(f, "{}", self.token)?;
        writeln!(
            f,
            "token {} ({}) for {}, {expiry}: copy it now, it will not be shown again",
            r.id, r.prefix, r.username
        )
    }
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
    fn passwords_have_12_to_1024_chars_are_uncommon_and_never_echoed() {
        check_password("012345678912", "u").unwrap();
        check_password("密码密码密码密码密码密码", "u").unwrap();
        let long: String = "correct horse battery staple "
            .repeat(40)
            .chars()
            .take(1024)
            .collect();
        check_password(&long, "u").unwrap();
        let short = check_password("hunter2hunt", "u").unwrap_err().to_string();
        assert_eq!(short, "the password has 11 characters: use at least 12");
        assert!(check_password(&"p".repeat(1025), "u").is_err());
        // Counted in characters, not bytes: eleven CJK characters are 33 bytes.
        assert!(check_password("密码密码密码密码密码密", "u").is_err());
        // ASVS 2.1.7: a common password, in any case, and the user's own name are refused.
        for common in [
            "password1234",
            "QwertyQwerty",
            "1qaz2wsx3edc",
            "p@ssw0rd1234",
            "P@$$W0RD1234",
            "qw3rtyqw3rty",
        ] {
            let err = check_password(common, "u").unwrap_err().to_string();
            assert!(err.contains("most common passwords"), "{common}: {err}");
            assert!(!err.contains(common), "{err}");
        }
        // One character repeated, and the product's own name in any spelling.
        for weak in ["aaaaaaaaaaaa", "############", "谁谁谁谁谁谁谁谁谁谁谁谁"] {
            let err = check_password(weak, "u").unwrap_err().to_string();
            assert!(err.contains("one character repeated"), "{weak}: {err}");
        }
        for named in ["copyhound2026", "CopyHound!!!", "my-c0pyh0und-pw"] {
            let err = check_password(named, "u").unwrap_err().to_string();
            assert!(err.contains("name of this software"), "{named}: {err}");
        }
        let err = check_password("Administrator.1", "administrator.1")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is the user name"), "{err}");
        check_password("administrator.1 and more", "administrator.1").unwrap();
    }

    #[test]
    fn the_common_list_is_lower_case_and_long_enough_to_matter() {
        let entries: Vec<&str> = COMMON_PASSWORDS.lines().collect();
        assert!(entries.len() > 300, "{}", entries.len());
        for e in entries {
            assert_eq!(e, e.to_lowercase(), "{e}");
            assert!(e.chars().count() >= MIN_PASSWORD_CHARS, "{e}");
        }
    }

    #[test]
    fn look_alike_user_names_are_told() {
        for like in [
            "alice",
            "Alice",
            "ALICE",
            "aIice",
            "\u{430}lice",
            "\u{410}LICE",
            "al\u{131}ce",
        ] {
            assert!(usernames_look_alike(like, "alice"), "{like}");
        }
        assert!(!usernames_look_alike("alicia", "alice"));
        assert!(!usernames_look_alike("bob", "alice"));
        assert!(usernames_look_alike("rn0", "mo"));
        assert!(usernames_look_alike("李雷", "李雷"));
        for punctuated in ["alice.", "alice_", "a.lice", "-alice-", "alice@", "Al_ice"] {
            assert!(usernames_look_alike(punctuated, "alice"), "{punctuated}");
        }
        assert!(!usernames_look_alike("李雷", "李云"));
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

/// The user named `name`, or a refusal that says so.
pub async fn user_named(store: &Store, name: &str) -> Result<UserRecord> {
    match store
        .user_by_name(name)
        .await
        .map_err(store_err("reading the user"))?
    {
        Some(user) => Ok(user),
        None => Err(Error::Account(format!(
            "no user is named {name:?}: see `copyhound users list`"
        ))),
    }
}

/// Changes the user named `name`, recorded in the audit log as `actor`'s.
pub async fn update_user_named(
    store: &Store,
    name: &str,
    changes: &store::UserChanges,
    actor: &str,
) -> Result<UserRecord> {
    let user = user_named(store, name).await?;
    store
        .update_user(user.id, changes, actor)
        .await
        .map_err(store_err("changing the user"))
}

/// A new password for `name`, checked by [`check_password`]: the first line of `file`,
/// else asked for twice on the terminal, else one line of standard input (a script's pipe).
pub fn read_new_password(file: Option<&std::path::Path>, name: &str) -> Result<String> {
    use std::io::{BufRead as _, IsTerminal as _};
    let io = |doing: &'static str| move |e: std::io::Error| Error::Account(format!("{doing}: {e}"));
    let password = if let Some(file) = file {
        let text = std::fs::read_to_string(file).map_err(|source| Error::Read {
            path: file.to_owned(),
            source,
        })?;
        text.lines().next().unwrap_or_default().to_owned()
    } else if std::io::stdin().is_terminal() {
        let terminal = "cannot read the password from the terminal";
        let first = rpassword::prompt_password(format!("new password for {name}: "))
            .map_err(io(terminal))?;
        check_password(&first, name)?;
        let again =
            rpassword::prompt_password("the same password again: ").map_err(io(terminal))?;
        if again != first {
            return Err(Error::Account(
                "the two passwords differ: run the command again".to_owned(),
            ));
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(io("cannot read the password from standard input"))?;
        line.trim_end_matches(['\n', '\r']).to_owned()
    };
    if password.is_empty() {
        return Err(Error::Account(
            "no password given: put it on the first line of --password-file FILE, type it on \
             a terminal, or pipe it in"
                .to_owned(),
        ));
    }
    check_password(&password, name)?;
    Ok(password)
}

/// A time as the account listings show it, or `never`.
fn when(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "never".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

/// The users as `users list` prints them, or a hint when there are none.
#[derive(Debug)]
pub struct UserTable<'a>(pub &'a [UserRecord]);

impl std::fmt::Display for UserTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            writeln!(
                f,
                "no users yet: add one with `copyhound users add NAME --role admin`"
            )?;
        }
        for u in self.0 {
            writeln!(
                f,
                "{:>5}  {:<24} {:<8} {:<8} last login {}{}",
                u.id,
                u.username,
                u.role,
                if u.disabled { "disabled" } else { "enabled" },
                when(u.last_login_at),
                u.display_name
                    .as_deref()
                    .map(|d| format!("  ({d})"))
                    .unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

/// API tokens as `users tokens` prints them, with their state at `now`.
#[derive(Debug)]
pub struct TokenTable<'a> {
    /// The tokens.
    pub tokens: &'a [ApiTokenRecord],
    /// What "expired" is measured against.
    pub now: DateTime<Utc>,
}

impl std::fmt::Display for TokenTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tokens.is_empty() {
            writeln!(
                f,
                "no API tokens: issue one with `copyhound users token NAME --name LABEL`"
            )?;
        }
        for t in self.tokens {
            let state = match (t.revoked_at, t.expires_at) {
                (Some(at), _) => format!("revoked {}", when(Some(at))),
                (None, Some(end)) if end <= self.now => format!("expired {}", when(Some(end))),
                (None, Some(end)) => format!("expires {}", when(Some(end))),
                (None, None) => "live".to_owned(),
            };
            writeln!(
                f,
                "{:>5}  {}…  {:<16} {:<24} last used {:<20} {state}",
                t.id,
                t.prefix,
                t.username,
                t.name,
                when(t.last_used_at)
            )?;
        }
        Ok(())
    }
}
