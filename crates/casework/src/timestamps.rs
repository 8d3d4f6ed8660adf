//! Trusted timestamps of evidence (RFC 3161): a snapshot that becomes evidence of a case is
//! stamped by the configured time-stamping authority ([`jobs::Job::StampSnapshot`], queued by the
//! match stage), `cases stamp` stamps what a case still lacks, and [`case_timestamps`] reads
//! a case's tokens back *verified*, for `cases show` and the evidence package.
//!
//! The protocol and its checks live in the `timestamp` crate; this module only decides when
//! to stamp and keeps the tokens with the store.

use chrono::{DateTime, Utc};
use jobs::{Error, Result, store_err};
use serde::Serialize;
use store::{
    CaseId, NewTimestamp, Renders, ScreenshotToken, SnapshotId, Store, TimestampRecord, Timestamps,
};
use timestamp::{Trust, Tsa};

/// `[evidence]` settings: how evidence is kept beyond the snapshot itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct EvidenceSettings {
    /// Trusted timestamps (`[evidence.timestamp]`), off while no TSA URL is set.
    pub timestamp: timestamp::TimestampSettings,
}

impl EvidenceSettings {
    /// Checks each subsection; keys in the error are relative to `[evidence]`.
    ///
    /// # Errors
    /// The first out-of-range value.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        self.timestamp
            .validate()
            .map_err(|e| e.in_section("timestamp"))
    }
}

/// The message imprint's hash algorithm, as stored beside each token.
const HASH_ALGORITHM: &str = "sha-256";

/// What stamping one snapshot did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamped {
    /// A new token, stamped at this time.
    New(DateTime<Utc>),
    /// The snapshot already had a token from this TSA; nothing was asked.
    Already,
    /// What would be stamped is the SHA-256 of nothing (an empty body), which proves
    /// nothing of a page; nothing was asked.
    Empty,
}

/// SHA-256 of zero bytes: what a `304 Not Modified` or `204 No Content` carries, never a
/// page's evidence.
const EMPTY_SHA256: [u8; 32] = [
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
];

/// Stamps the SHA-256 of `snapshot`'s evidence at `tsa` and stores the token, unless the
/// snapshot already has one from that TSA (idempotent: a job that runs again asks nothing).
/// For a revisit (the server said `304 Not Modified`) that is the confirmed capture's
/// SHA-256, stamped at the revisit's time; an empty body is never stamped
/// ([`Stamped::Empty`]). The token is verified before it is stored (hash, nonce, signature,
/// and the CA when configured).
///
/// # Errors
/// [`Error::is_not_found`] for an unknown snapshot; [`Error::Timestamp`] when the TSA fails
/// or its token is refused; a database failure.
pub async fn stamp_snapshot(store: &Store, tsa: &Tsa, snapshot: SnapshotId) -> Result<Stamped> {
    let stored = store
        .snapshot_timestamps(snapshot)
        .await
        .map_err(store_err("reading the snapshot's timestamps"))?;
    if stored.iter().any(|t| t.tsa_url == tsa.url()) {
        return Ok(Stamped::Already);
    }
    let sha256 = store
        .snapshot_sha256(snapshot)
        .await
        .map_err(store_err("reading the snapshot"))?;
    stamp_hash(store, tsa, snapshot, &sha256).await
}

/// Stamps `sha256`, the hash of snapshot `snapshot`'s evidence, at `tsa` and stores the
/// token; an empty body's hash is not stamped.
///
/// # Errors
/// [`Error::Timestamp`] when the TSA failed or its token was refused; a database failure.
pub async fn stamp_hash(
    store: &Store,
    tsa: &Tsa,
    snapshot: SnapshotId,
    sha256: &[u8; 32],
) -> Result<Stamped> {
    if *sha256 == EMPTY_SHA256 {
        tracing::info!(snapshot = %snapshot, "empty evidence not stamped");
        return Ok(Stamped::Empty);
    }
    let stamp = tsa
        .stamp(sha256)
        .await
        .map_err(|source| Error::Timestamp { snapshot, source })?;
    let gen_time = stamp.verified.gen_time;
    let new = store
        .insert_timestamp(&NewTimestamp {
            snapshot,
            tsa_url: tsa.url().to_owned(),
            token: stamp.token,
            gen_time,
            hash_algorithm: HASH_ALGORITHM.to_owned(),
        })
        .await
        .map_err(store_err("storing the timestamp"))?;
    tracing::info!(snapshot = %snapshot, %gen_time, new, "snapshot stamped");
    // Another worker may have stored one meanwhile: theirs is kept, and as good.
    Ok(if new {
        Stamped::New(gen_time)
    } else {
        Stamped::Already
    })
}

/// Stamps the SHA-256 of `snapshot`'s newest screenshot at `tsa` and keeps the token with the
/// screenshot, unless it has one already; `None` when the snapshot has no screenshot.
///
/// # Errors
/// [`Error::Timestamp`] when the TSA fails or its token is refused; a database failure.
pub async fn stamp_screenshot(
    store: &Store,
    tsa: &Tsa,
    snapshot: SnapshotId,
) -> Result<Option<Stamped>> {
    let Some(info) = store
        .latest_screenshot(snapshot)
        .await
        .map_err(store_err("reading the snapshot's screenshot"))?
        .and_then(|r| r.screenshot)
    else {
        return Ok(None);
    };
    if store
        .screenshot_token(&info.sha256)
        .await
        .map_err(store_err("reading the screenshot's token"))?
        .is_some()
    {
        return Ok(Some(Stamped::Already));
    }
    let stamp = tsa
        .stamp(&info.sha256)
        .await
        .map_err(|source| Error::Timestamp { snapshot, source })?;
    let gen_time = stamp.verified.gen_time;
    let token = ScreenshotToken {
        tsa_url: tsa.url().to_owned(),
        token: stamp.token,
        gen_time,
    };
    let new = store
        .stamp_screenshot(&info.sha256, &token)
        .await
        .map_err(store_err("storing the screenshot's timestamp"))?;
    tracing::info!(snapshot = %snapshot, %gen_time, new, "screenshot stamped");
    Ok(Some(if new {
        Stamped::New(gen_time)
    } else {
        Stamped::Already
    }))
}

/// Whether a stored token proves what it should.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verification {
    /// The token covers the snapshot's SHA-256 and its signature holds.
    Valid {
        /// The signer certificate's subject.
        signer: String,
        /// Whether the signer chains to the configured trusted CA (`false` when none is
        /// configured: then only the signature is proven, not who made it).
        chained: bool,
    },
    /// It does not, and why.
    Invalid {
        /// The first reason.
        reason: String,
    },
}

impl Verification {
    /// Whether the token was found valid.
    pub fn is_valid(&self) -> bool {
        matches!(self, Verification::Valid { .. })
    }
}

/// One stored token of a case's snapshot, verified on read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotTimestamp {
    /// The snapshot.
    pub snapshot: SnapshotId,
    /// The time the TSA stamped, as stored.
    pub gen_time: DateTime<Utc>,
    /// The TSA's URL.
    pub tsa: String,
    /// The token, DER (an `application/timestamp-reply` token: CMS `ContentInfo`).
    #[serde(skip)]
    pub token_der: Vec<u8>,
    /// What verifying it now found.
    pub verification: Verification,
}

/// Every stored token of case `case`'s snapshots, each verified against the snapshot's
/// stored SHA-256 (and chained to `trust` when given), by snapshot then age. A snapshot
/// without a token has no entry.
///
/// # Errors
/// [`Error::is_not_found`] for an unknown case; a database failure. A token that fails
/// verification is not an error: its [`Verification::Invalid`] says why.
pub async fn case_timestamps(
    store: &Store,
    case: CaseId,
    trust: Option<&Trust>,
) -> Result<Vec<SnapshotTimestamp>> {
    let rows = store
        .case_timestamps(case)
        .await
        .map_err(store_err("reading the case's timestamps"))?;
    Ok(rows.into_iter().map(|r| verified(r, trust)).collect())
}

fn verified(row: TimestampRecord, trust: Option<&Trust>) -> SnapshotTimestamp {
    let verification = match timestamp::verify(&row.token, &row.sha256, None, trust) {
        Ok(v) if v.gen_time != row.gen_time => Verification::Invalid {
            reason: format!("the token says {}, the store {}", v.gen_time, row.gen_time),
        },
        Ok(v) => Verification::Valid {
            signer: v.signer,
            chained: v.chained,
        },
        Err(e) => Verification::Invalid {
            reason: e.to_string(),
        },
    };
    SnapshotTimestamp {
        snapshot: row.snapshot,
        gen_time: row.gen_time,
        tsa: row.tsa_url,
        token_der: row.token,
        verification,
    }
}
