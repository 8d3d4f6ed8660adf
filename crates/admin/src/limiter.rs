//! The limit on login attempts: budgets per user name and address, per address, and per
//! device cookie, counted in memory before each password check; and the signatures of the
//! device cookies and login-form tokens it hands out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};

use crate::error::{WebError, WebResult};

/// How many login attempts may fail before the next must wait.
#[derive(Debug, Clone)]
pub struct LoginLimits {
    /// Failed attempts per user name and client address within `window`, from browsers that
    /// have not signed in as that user before.
    pub per_user: u32,
    /// Failed attempts per client address within `window` (over all names), from such
    /// browsers.
    pub per_address: u32,
    /// Failed attempts within `window` from a browser holding a device cookie of that user:
    /// its own budget, which strangers' failures do not use up.
    pub per_device: u32,
    /// The window the failures are counted over.
    pub window: Duration,
    /// Password checks run at once; the rest wait their turn. Each argon2 check takes
    /// about 19 MiB and tens of milliseconds of a core.
    pub concurrent_checks: usize,
}

impl Default for LoginLimits {
    fn default() -> Self {
        LoginLimits {
            per_user: 5,
            per_address: 20,
            per_device: 5,
            window: Duration::from_secs(15 * 60),
            concurrent_checks: 4,
        }
    }
}

/// Login attempts counted per budget, in memory: an attacker cannot grow it past `MAX_KEYS`
/// (old entries go first), and a restart forgives, which a lock-out in the database would
/// not (a locked admin could not log in to undo it).
///
/// An attempt is counted before its password is checked ([`LoginLimiter::reserve`]) and
/// forgiven when it succeeds, so of any number of simultaneous guesses no more than the
/// limit are checked. Which budget an attempt draws on follows OWASP's device cookies
/// ("Slow Down Online Guessing Attacks with Device Cookies"): a browser that signed in as a
/// user holds a cookie, signed by this server, naming that user, and its attempts for that
/// user draw on a budget of that cookie's own; everyone else's draw on the user name's at
/// their address and on the address's. So a stranger who uses up a name's budget locks out
/// that stranger's address, neither the user's own browser nor other browsers.
#[derive(Debug)]
pub(crate) struct LoginLimiter {
    limits: LoginLimits,
    attempts: Mutex<HashMap<String, (u32, Instant)>>,
    checks: tokio::sync::Semaphore,
    /// Signs device cookies and login-form tokens; new on each start, like the counts.
    key: [u8; 32],
}

const MAX_KEYS: usize = 100_000;

/// An attempt counted against its budgets; forgiven by [`Reserved::succeeded`], kept as a
/// failure otherwise.
#[must_use]
pub(crate) struct Reserved<'a> {
    limiter: &'a LoginLimiter,
    keys: Vec<String>,
}

impl Reserved<'_> {
    /// The password was right: the attempt does not count.
    pub(crate) fn succeeded(self) {
        let mut attempts = self.limiter.lock();
        for key in &self.keys {
            if let Some((count, _)) = attempts.get_mut(key) {
                *count = count.saturating_sub(1);
            }
        }
    }
}

impl LoginLimiter {
    pub(crate) fn new(limits: LoginLimits) -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system's random number generator failed");
        LoginLimiter {
            checks: tokio::sync::Semaphore::new(limits.concurrent_checks.max(1)),
            limits,
            attempts: Mutex::new(HashMap::new()),
            key,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u32, Instant)>> {
        self.attempts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The budgets an attempt at `username` draws on: its device cookie's when the browser
    /// holds a good one for that name, else the name's at that address and the address's.
    /// A name's budget is per address so that a stranger's failures cost the stranger: five
    /// wrong passwords from one address must not lock the name for every other browser.
    fn budgets(
        &self,
        username: &str,
        address: Option<IpAddr>,
        device: Option<&str>,
    ) -> Vec<(String, u32)> {
        let address = address.map_or("-".into(), |a| a.to_string());
        match device.and_then(|d| self.verify_device(username, d)) {
            Some(nonce) => vec![(format!("device:{nonce}"), self.limits.per_device)],
            None => vec![
                (
                    format!("user:{}@{address}", username.to_lowercase()),
                    self.limits.per_user,
                ),
                (format!("addr:{address}"), self.limits.per_address),
            ],
        }
    }

    /// Counts an attempt at `username` before its password is checked; `Err` with the
    /// seconds to wait when a budget it draws on is used up (pending attempts included).
    pub(crate) fn reserve(
        &self,
        username: &str,
        address: Option<IpAddr>,
        device: Option<&str>,
    ) -> WebResult<Reserved<'_>> {
        let budgets = self.budgets(username, address, device);
        let window = self.limits.window;
        let mut attempts = self.lock();
        if attempts.len() >= MAX_KEYS {
            attempts.retain(|_, (_, since)| since.elapsed() < window);
            if attempts.len() >= MAX_KEYS {
                attempts.clear();
            }
        }
        for (key, limit) in &budgets {
            if let Some((count, since)) = attempts.get(key) {
                let elapsed = since.elapsed();
                if *count >= *limit && elapsed < window {
                    return Err(WebError::TooManyRequests(
                        (window - elapsed).as_secs().max(1),
                    ));
                }
            }
        }
        for (key, _) in &budgets {
            let entry = attempts.entry(key.clone()).or_insert((0, Instant::now()));
            if entry.1.elapsed() >= window {
                *entry = (0, Instant::now());
            }
            entry.0 += 1;
        }
        Ok(Reserved {
            limiter: self,
            keys: budgets.into_iter().map(|(k, _)| k).collect(),
        })
    }

    /// A turn to check a password: waits while `concurrent_checks` are running.
    pub(crate) async fn check_turn(&self) -> tokio::sync::SemaphorePermit<'_> {
        self.checks
            .acquire()
            .await
            .expect("the semaphore is never closed")
    }

    fn mac(&self, parts: &[&[u8]]) -> Hmac<sha2::Sha256> {
        let mut mac =
            Hmac::<sha2::Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any size");
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac
    }

    fn signed(&self, purpose: &str, subject: &str) -> String {
        let nonce = accounts::random_token(16);
        let tag = self
            .mac(&[purpose.as_bytes(), subject.as_bytes(), nonce.as_bytes()])
            .finalize()
            .into_bytes();
        format!("{nonce}.{}", hex(&tag))
    }

    /// The nonce of `token` when this server signed it for `purpose` and `subject`.
    fn verify<'t>(&self, purpose: &str, subject: &str, token: &'t str) -> Option<&'t str> {
        let (nonce, tag) = token.split_once('.')?;
        let tag = unhex(tag)?;
        self.mac(&[purpose.as_bytes(), subject.as_bytes(), nonce.as_bytes()])
            .verify_slice(&tag)
            .ok()
            .map(|()| nonce)
    }

    /// A device cookie's value for `username`: a random nonce and its signature.
    pub(crate) fn device_token(&self, username: &str) -> String {
        self.signed("device", &username.to_lowercase())
    }

    fn verify_device<'t>(&self, username: &str, token: &'t str) -> Option<&'t str> {
        self.verify("device", &username.to_lowercase(), token)
    }

    /// A login form's token: a random nonce and its signature.
    pub(crate) fn login_token(&self) -> String {
        self.signed("login", "")
    }

    pub(crate) fn verify_login_token(&self, token: &str) -> bool {
        self.verify("login", "", token).is_some()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(per_user: u32, per_address: u32) -> LoginLimiter {
        LoginLimiter::new(LoginLimits {
            per_user,
            per_address,
            per_device: 2,
            window: Duration::from_secs(60),
            concurrent_checks: 1,
        })
    }

    #[test]
    fn attempts_are_counted_before_the_check_and_forgiven_when_right() {
        let limiter = limiter(2, 3);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        // Two pending attempts from one address use the name's budget there up: a third is
        // refused before either is checked.
        let first = limiter.reserve("Admin", Some(a), None).unwrap();
        let second = limiter.reserve("admin", Some(a), None).unwrap();
        assert!(matches!(
            limiter.reserve("admin", Some(a), None),
            Err(WebError::TooManyRequests(s)) if s > 0
        ));
        assert!(
            limiter.reserve("admin", Some(b), None).is_ok(),
            "the name from another address: a stranger's failures cost the stranger"
        );
        // The right password gives its attempt back; a wrong one keeps it.
        first.succeeded();
        drop(second);
        let third = limiter.reserve("ADMIN", Some(a), None).unwrap();
        assert!(limiter.reserve("admin", Some(a), None).is_err());
        drop(third);
        // Per address, over all names.
        let limiter = self::limiter(100, 2);
        drop(limiter.reserve("x", Some(a), None).unwrap());
        drop(limiter.reserve("y", Some(a), None).unwrap());
        assert!(limiter.reserve("z", Some(a), None).is_err(), "per address");
        assert!(limiter.reserve("z", Some(b), None).is_ok());
    }

    #[test]
    fn a_device_cookie_has_a_budget_of_its_own_for_its_user_only() {
        let limiter = limiter(1, 100);
        let device = limiter.device_token("Alice");
        let _stranger = limiter.reserve("alice", None, None).unwrap();
        assert!(
            limiter.reserve("alice", None, None).is_err(),
            "locked for strangers"
        );
        let owner = limiter.reserve("alice", None, Some(&device)).unwrap();
        drop(limiter.reserve("ALICE", None, Some(&device)).unwrap());
        assert!(
            limiter.reserve("alice", None, Some(&device)).is_err(),
            "its own budget runs out too"
        );
        owner.succeeded();
        // Another user's name, a forged or altered cookie: a stranger's budget.
        assert!(limiter.reserve("alice", None, Some("00.00")).is_err());
        let (nonce, tag) = device.split_once('.').unwrap();
        let altered = format!("{nonce}0.{tag}");
        assert!(limiter.reserve("alice", None, Some(&altered)).is_err());
        assert!(limiter.verify_device("bob", &device).is_none());
        // A cookie signed by another server (after a restart) is a stranger's too.
        assert!(
            super::LoginLimiter::new(LoginLimits::default())
                .verify_device("alice", &device)
                .is_none()
        );
    }

    #[test]
    fn login_tokens_are_this_servers() {
        let limiter = limiter(1, 1);
        let token = limiter.login_token();
        assert!(limiter.verify_login_token(&token));
        assert_ne!(token, limiter.login_token());
        assert!(!limiter.verify_login_token("x.y"));
        assert!(!limiter.verify_login_token(&token.replace('.', "")));
        assert!(!limiter.verify_login_token(&limiter.device_token("")));
    }
}
