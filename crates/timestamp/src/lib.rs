//! RFC 3161 trusted timestamps for copyhound's evidence: a time-stamping authority (TSA)
//! signs a snapshot body's SHA-256 with the time, and the token it returns proves later that
//! the snapshot existed then, unchanged.
//!
//! This leaf does only DER, crypto and one HTTP POST, so that `store` keeps opaque token bytes
//! and `pipeline` decides when to stamp, neither knowing about CMS: [`Request`] builds a query
//! (SHA-256 imprint, random nonce, `certReq`), [`parse_response`] reads the TSA's answer
//! (status and failure info, at most [`MAX_RESPONSE_BYTES`]), [`verify`] checks a token
//! against the hash it should cover, and [`stamp`] does all three over reqwest. [`Tsa`] holds
//! what [`TimestampSettings`] configure (`[evidence.timestamp]`). It may use `bounds` only;
//! the DER and crypto are RustCrypto's (der 0.7, cms 0.2, x509-cert 0.2, rsa 0.9).
//!
//! # What verification checks
//!
//! - the token is CMS `SignedData` over a `TSTInfo`, with one signer whose certificate is in
//!   the token (found by issuer and serial or subject key identifier);
//! - the signer's RSA PKCS#1 v1.5 signature (SHA-256/384/512) over the signed attributes, the
//!   content-type attribute, and the message-digest attribute against the `TSTInfo` bytes;
//! - the `TSTInfo`'s message imprint is SHA-256 of exactly the expected hash, and its nonce
//!   the one sent (when stamping; a stored token has no nonce to compare);
//! - the signer certificate has the `timeStamping` extended key usage and was valid at the
//!   stamped time;
//! - with a trusted CA configured, the signer certificate chains to it (through certificates
//!   in the token, at most [`MAX_CHAIN`] links, each signature checked, each certificate
//!   valid at the stamped time).
//!
//! Not checked: revocation (no CRL or OCSP is fetched), name constraints, certificate
//! policies, basic constraints and key usage of the issuers, the ESS signing-certificate
//! attribute, and any time source beyond the token's own. ECDSA and RSA-PSS signers are
//! refused as unsupported. Without a configured CA a token only proves that *some* key with
//! the time-stamping usage signed it: [`Verified::chained`] says which case applies.
//!
//! ```no_run
//! # async fn demo() -> timestamp::Result<()> {
//! let client = reqwest::Client::new();
//! let sha256 = [0u8; 32];
//! let stamp = timestamp::stamp(&client, "http://tsa.example/", &sha256, None).await?;
//! let again = timestamp::verify(&stamp.token, &sha256, None, None)?;
//! assert_eq!(again.gen_time, stamp.verified.gen_time);
//! # Ok(()) }
//! ```

mod asn1;
mod error;
mod settings;
mod verify;

use std::time::Duration;

use der::asn1::{OctetString, Uint};
use der::{Decode, Encode};
use x509_cert::spki::AlgorithmIdentifierOwned;

pub use error::{Error, Result};
pub use settings::TimestampSettings;
pub use verify::{MAX_CHAIN, Trust, Verified, verify};

use asn1::{MessageImprint, TimeStampReq, TimeStampResp, oid};

/// Largest TSA response read, in bytes. A token with its signer's chain is a few KiB; a
/// pirate-controlled or broken TSA cannot make us hold more than this.
pub const MAX_RESPONSE_BYTES: usize = 256 * 1024;

/// The MIME type of a time-stamp query (RFC 3161 §3.4).
const QUERY_TYPE: &str = "application/timestamp-query";

/// A time-stamp query for one SHA-256, with the nonce the answer must repeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    der: Vec<u8>,
    nonce: u64,
}

impl Request {
    /// A query for `sha256` with a random 64-bit nonce, asking for the signer certificate.
    ///
    /// # Errors
    /// [`Error::Random`] when the system has no randomness to give.
    pub fn new(sha256: &[u8; 32]) -> Result<Self> {
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce).map_err(|e| Error::Random(e.to_string()))?;
        Self::with_nonce(sha256, u64::from_be_bytes(nonce))
    }

    /// A query for `sha256` with the given nonce (tests repeat one).
    ///
    /// # Errors
    /// Never in practice (the structure always encodes).
    pub fn with_nonce(sha256: &[u8; 32], nonce: u64) -> Result<Self> {
        let req = TimeStampReq {
            version: 1,
            message_imprint: imprint(sha256)?,
            nonce: Some(nonce_int(nonce)?),
            cert_req: true,
        };
        let der = req
            .to_der()
            .map_err(|e| Error::Malformed(format!("query: {e}")))?;
        Ok(Request { der, nonce })
    }

    /// The DER bytes to POST.
    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// The nonce the token must carry.
    pub fn nonce(&self) -> u64 {
        self.nonce
    }
}

fn imprint(sha256: &[u8; 32]) -> Result<MessageImprint> {
    Ok(MessageImprint {
        hash_algorithm: AlgorithmIdentifierOwned {
            oid: oid::SHA256,
            parameters: None,
        },
        hashed_message: OctetString::new(sha256.as_slice())
            .map_err(|e| Error::Malformed(format!("imprint: {e}")))?,
    })
}

pub(crate) fn nonce_int(nonce: u64) -> Result<Uint> {
    Uint::new(&nonce.to_be_bytes()).map_err(|e| Error::Malformed(format!("nonce: {e}")))
}

/// Reads a TSA's `TimeStampResp` and returns its token (a DER `ContentInfo`, the bytes to
/// store) when the TSA granted the request. The token is not verified here: see [`verify`].
///
/// # Errors
/// [`Error::TooLarge`] over [`MAX_RESPONSE_BYTES`], [`Error::Malformed`] for bytes that are
/// not a response, [`Error::Rejected`] with the TSA's status, text and failure info.
pub fn parse_response(body: &[u8]) -> Result<Vec<u8>> {
    if body.len() > MAX_RESPONSE_BYTES {
        return Err(Error::TooLarge {
            limit: MAX_RESPONSE_BYTES,
        });
    }
    let resp = TimeStampResp::from_der(body)
        .map_err(|e| Error::Malformed(format!("time-stamp response: {e}")))?;
    let status = resp.status.status;
    // granted (0) and grantedWithMods (1) carry a token; everything else is a refusal.
    if status > 1 {
        return Err(Error::Rejected {
            status: status_name(status).to_owned(),
            text: resp.status.status_string.unwrap_or_default().join("; "),
            failure: resp
                .status
                .fail_info
                .map(|bits| failure_names(bits.raw_bytes()))
                .unwrap_or_default(),
        });
    }
    let token = resp.time_stamp_token.ok_or_else(|| {
        Error::Malformed(format!(
            "status {} but no time-stamp token",
            status_name(status)
        ))
    })?;
    token
        .to_der()
        .map_err(|e| Error::Malformed(format!("time-stamp token: {e}")))
}

fn status_name(status: u8) -> &'static str {
    match status {
        0 => "granted",
        1 => "grantedWithMods",
        2 => "rejection",
        3 => "waiting",
        4 => "revocationWarning",
        5 => "revocationNotification",
        _ => "unknown status",
    }
}

/// The RFC 3161 failure-info bits set in `bits` (bit 0 is the first byte's high bit).
fn failure_names(bits: &[u8]) -> Vec<String> {
    const NAMES: [(usize, &str); 8] = [
        (0, "badAlg"),
        (2, "badRequest"),
        (5, "badDataFormat"),
        (14, "timeNotAvailable"),
        (15, "unacceptedPolicy"),
        (16, "unacceptedExtension"),
        (17, "addInfoNotAvailable"),
        (25, "systemFailure"),
    ];
    let set = |i: usize| bits.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0);
    let mut names: Vec<String> = NAMES
        .iter()
        .filter(|(i, _)| set(*i))
        .map(|(_, n)| (*n).to_owned())
        .collect();
    // Bits RFC 3161 does not name (CMP's) are shown by number rather than dropped.
    names.extend(
        (0..bits.len() * 8)
            .filter(|i| set(*i) && !NAMES.iter().any(|(n, _)| n == i))
            .map(|i| format!("bit {i}")),
    );
    names
}

/// A token and what verifying it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The token as the TSA sent it (DER `ContentInfo`): what to store and export.
    pub token: Vec<u8>,
    /// What [`verify`] found in it.
    pub verified: Verified,
}

/// Asks the TSA at `url` to stamp `sha256`: POSTs a [`Request`], reads at most
/// [`MAX_RESPONSE_BYTES`], and [`verify`]s the token against the hash and the nonce sent
/// (and `trust` when given). The client's timeouts bound the exchange.
///
/// # Errors
/// [`Error::Timeout`], [`Error::Fetch`] and [`Error::Status`] for the exchange, the errors
/// of [`parse_response`], and [`Error::Invalid`] for a token that fails verification.
pub async fn stamp(
    client: &reqwest::Client,
    url: &str,
    sha256: &[u8; 32],
    trust: Option<&Trust>,
) -> Result<Stamp> {
    let request = Request::new(sha256)?;
    // Errors name the TSA without its password: they reach logs and the jobs page.
    let shown = bounds::mask_url_password(url);
    let fetch_err = |source: reqwest::Error| {
        if source.is_timeout() {
            Error::Timeout { url: shown.clone() }
        } else {
            Error::Fetch {
                url: shown.clone(),
                source: source.without_url(),
            }
        }
    };
    let mut response = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, QUERY_TYPE)
        .body(request.der().to_vec())
        .send()
        .await
        .map_err(fetch_err)?;
    if !response.status().is_success() {
        return Err(Error::Status {
            url: shown,
            status: response.status().as_u16(),
        });
    }
    let too_large = Error::TooLarge {
        limit: MAX_RESPONSE_BYTES,
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(fetch_err)? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    let token = parse_response(&body)?;
    let verified = verify(&token, sha256, Some(request.nonce()), trust)?;
    tracing::debug!(url, gen_time = %verified.gen_time, bytes = token.len(), "stamped");
    Ok(Stamp { token, verified })
}

/// A configured time-stamping authority: its URL, the client that reaches it (with the
/// configured timeout, no redirects) and the CA its signer must chain to, if any.
#[derive(Debug, Clone)]
pub struct Tsa {
    /// Where requests go, with any credentials.
    endpoint: String,
    /// `endpoint` with its password masked: what is stored, shown and logged.
    url: String,
    client: reqwest::Client,
    trust: Option<Trust>,
}

impl Tsa {
    /// The TSA `settings` configure, `None` when stamping is off (no URL).
    ///
    /// # Errors
    /// [`Error::Trust`] when the CA file cannot be read or holds no certificate;
    /// [`Error::Fetch`] when the HTTP client cannot be built.
    pub fn from_settings(settings: &TimestampSettings) -> Result<Option<Self>> {
        let Some(url) = settings.url.clone() else {
            return Ok(None);
        };
        let trust = settings
            .ca_certificates
            .as_deref()
            .map(Trust::load)
            .transpose()?;
        Ok(Some(Self::new(url, settings.timeout, trust)?))
    }

    /// A TSA at `url` reached within `timeout`, its signer chained to `trust` when given.
    ///
    /// # Errors
    /// [`Error::Fetch`] when the HTTP client cannot be built.
    pub fn new(url: String, timeout: Duration, trust: Option<Trust>) -> Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("copyhound/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|source| Error::Fetch {
                url: bounds::mask_url_password(&url),
                source,
            })?;
        Ok(Tsa {
            url: bounds::mask_url_password(&url),
            endpoint: url,
            client,
            trust,
        })
    }

    /// The TSA's URL as stored beside its tokens and shown on the case page and in the
    /// evidence package: a password in it (`https://user:password@tsa/`) is masked.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// [`stamp`] at this TSA.
    ///
    /// # Errors
    /// As [`stamp`].
    pub async fn stamp(&self, sha256: &[u8; 32]) -> Result<Stamp> {
        stamp(&self.client, &self.endpoint, sha256, self.trust.as_ref()).await
    }

    /// [`verify`] a stored token (no nonce to compare) against this TSA's trusted CA.
    ///
    /// # Errors
    /// As [`verify`].
    pub fn verify(&self, token: &[u8], sha256: &[u8; 32]) -> Result<Verified> {
        verify(token, sha256, None, self.trust.as_ref())
    }

    /// The CA its signer must chain to, if configured.
    pub fn trust(&self) -> Option<&Trust> {
        self.trust.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tsa_password_is_never_stored_nor_told() {
        let tsa = Tsa::new(
            "http://stamp:hunter2@127.0.0.1:9/tsr".to_owned(),
            Duration::from_secs(5),
            None,
        )
        .unwrap();
        assert_eq!(tsa.url(), "http://stamp:***@127.0.0.1:9/tsr");
        // Port 9 (discard) refuses: the error names the TSA, not the password.
        let refused = tsa.stamp(&[0; 32]).await.unwrap_err();
        let text = format!("{refused} {refused:?}");
        assert!(
            text.contains("stamp:***@127.0.0.1:9") && !text.contains("hunter2"),
            "{text}"
        );
    }

    #[test]
    fn a_request_carries_the_hash_the_nonce_and_cert_req() {
        let sha = [7u8; 32];
        let r = Request::with_nonce(&sha, 0x0102_0304_0506_0708).unwrap();
        let back = TimeStampReq::from_der(r.der()).unwrap();
        assert_eq!(back.version, 1);
        assert_eq!(back.message_imprint.hash_algorithm.oid, oid::SHA256);
        assert_eq!(back.message_imprint.hashed_message.as_bytes(), &sha);
        assert_eq!(
            back.nonce.unwrap().as_bytes(),
            &[1, 2, 3, 4, 5, 6, 7, 8][..]
        );
        assert!(back.cert_req);
        // A nonce with its high bit set stays a positive INTEGER.
        let high = Request::with_nonce(&sha, u64::MAX).unwrap();
        let back = TimeStampReq::from_der(high.der()).unwrap();
        assert_eq!(back.nonce.unwrap().as_bytes(), &[0xff; 8][..]);
        // Random nonces differ.
        assert_ne!(
            Request::new(&sha).unwrap().nonce(),
            Request::new(&sha).unwrap().nonce()
        );
    }

    #[test]
    fn a_rejection_names_its_status_text_and_failure_bits() {
        // TimeStampResp { status: { rejection, ["no"], failInfo: badAlg + systemFailure } }
        let status = asn1::PkiStatusInfo {
            status: 2,
            status_string: Some(vec!["no".to_owned()]),
            fail_info: Some(der::asn1::BitString::new(6, vec![0x80, 0, 0, 0x40]).unwrap()),
        };
        let der = TimeStampResp {
            status,
            time_stamp_token: None,
        }
        .to_der()
        .unwrap();
        let err = parse_response(&der).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the time-stamping authority refused the request: rejection (no) [badAlg, systemFailure]"
        );
    }

    #[test]
    fn garbage_and_oversized_responses_are_refused() {
        assert!(matches!(
            parse_response(b"<html>pirates</html>"),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(parse_response(&[]), Err(Error::Malformed(_))));
        // A length header promising 4 GiB over a few bytes.
        assert!(matches!(
            parse_response(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x02, 0x01, 0x00]),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            parse_response(&vec![0x30; MAX_RESPONSE_BYTES + 1]),
            Err(Error::TooLarge { .. })
        ));
        // Deep nesting: nested SEQUENCEs as deep as the input allows.
        let mut deep = Vec::new();
        for _ in 0..10_000 {
            deep.extend_from_slice(&[0x30, 0x80]);
        }
        assert!(parse_response(&deep).is_err());
        // Granted, but no token.
        let granted = TimeStampResp {
            status: asn1::PkiStatusInfo {
                status: 0,
                status_string: None,
                fail_info: None,
            },
            time_stamp_token: None,
        }
        .to_der()
        .unwrap();
        assert!(
            parse_response(&granted)
                .unwrap_err()
                .to_string()
                .contains("no time-stamp token")
        );
    }

    #[test]
    fn failure_bits_outside_rfc_3161_are_numbered() {
        assert_eq!(failure_names(&[0x20]), vec!["badRequest"]);
        assert_eq!(failure_names(&[0x40]), vec!["bit 1"]);
        assert!(failure_names(&[]).is_empty());
    }
}
