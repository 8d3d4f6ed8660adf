//! Database URLs: which backend a URL names, and a form that is safe to log.

use std::fmt;

use crate::{Error, Result};

/// The two backends the store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// PostgreSQL: production, many worker processes.
    Postgres,
    /// SQLite: the embedded default, one writer.
    Sqlite,
}

impl BackendKind {
    /// "postgres" or "sqlite".
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Postgres => "postgres",
            BackendKind::Sqlite => "sqlite",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A database URL whose `Display` and `Debug` mask the password.
///
/// `sqlite://data/copyhound.db`, `sqlite:///abs/path.db` and `sqlite::memory:` name SQLite;
/// `postgres://` and `postgresql://` name Postgres.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    raw: String,
    kind: BackendKind,
}

impl DatabaseUrl {
    /// Parses the scheme.
    ///
    /// # Errors
    /// [`Error::UnsupportedUrl`] for any scheme but `sqlite:`, `postgres:` and `postgresql:`.
    pub fn parse(raw: &str) -> Result<Self> {
        let raw = raw.trim();
        let kind = if raw.starts_with("postgres://") || raw.starts_with("postgresql://") {
            BackendKind::Postgres
        } else if raw.starts_with("sqlite:") {
            BackendKind::Sqlite
        } else {
            return Err(Error::UnsupportedUrl {
                url: mask_password(raw),
            });
        };
        Ok(DatabaseUrl {
            raw: raw.to_owned(),
            kind,
        })
    }

    /// Which backend the URL names.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// The URL as given, password included: pass it to a driver, never to a log.
    pub fn expose(&self) -> &str {
        &self.raw
    }
}

impl std::str::FromStr for DatabaseUrl {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        DatabaseUrl::parse(s)
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&mask_password(&self.raw))
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({self})")
    }
}

/// Replaces the password in `scheme://user:password@host/...` and in a `password=` query
/// parameter with `***` ([`bounds::mask_url_password`]): for logs and messages about a
/// database URL.
pub fn mask_password(url: &str) -> String {
    bounds::mask_url_password(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_backend_by_scheme() {
        let kind = |u: &str| DatabaseUrl::parse(u).map(|u| u.kind());
        assert_eq!(kind("sqlite://data/x.db").unwrap(), BackendKind::Sqlite);
        assert_eq!(kind("sqlite::memory:").unwrap(), BackendKind::Sqlite);
        assert_eq!(kind("postgres://u@h/db").unwrap(), BackendKind::Postgres);
        assert_eq!(kind("postgresql://u@h/db").unwrap(), BackendKind::Postgres);
        assert_eq!(
            mask_password("mysql://root:hunter2@h/db"),
            "mysql://root:***@h/db"
        );
        let err = kind("mysql://root:hunter2@h/db").unwrap_err().to_string();
        assert!(err.contains("mysql://root:***@h/db"), "{err}");
        assert!(
            err.contains("sqlite://") && err.contains("postgres://"),
            "{err}"
        );
    }

    #[test]
    fn masks_passwords_in_display_and_debug() {
        let url =
            DatabaseUrl::parse("postgres://bob:s3cr%40t@db:5432/x?password=p&sslmode=require")
                .unwrap();
        for shown in [url.to_string(), format!("{url:?}")] {
            assert!(!shown.contains("s3cr"), "{shown}");
            assert!(!shown.contains("password=p&"), "{shown}");
            assert!(
                shown.contains("bob:***@db:5432/x?password=***&sslmode=require"),
                "{shown}"
            );
        }
        assert_eq!(
            DatabaseUrl::parse("postgres://bob@db/x")
                .unwrap()
                .to_string(),
            "postgres://bob@db/x"
        );
        assert!(url.expose().contains("s3cr%40t"));
    }
}
