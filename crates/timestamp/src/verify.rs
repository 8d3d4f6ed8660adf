//! Token verification: what the crate docs list as checked, and nothing more.

use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};
use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier, SignerInfo};
use der::asn1::{Any, ObjectIdentifier, OctetString};
use der::{Decode, Encode, Tag, Tagged};
use rsa::pkcs8::DecodePublicKey;
use rsa::sha2::{Digest, Sha256, Sha384, Sha512};
use rsa::{Pkcs1v15Sign, RsaPublicKey};
use x509_cert::Certificate;
use x509_cert::ext::pkix::{ExtendedKeyUsage, SubjectKeyIdentifier};
use x509_cert::spki::SubjectPublicKeyInfoOwned;

use crate::asn1::{TstInfo, oid};
use crate::{Error, MAX_RESPONSE_BYTES, Result, nonce_int};

/// Most certificates followed from the signer to a trusted CA (the signer included).
pub const MAX_CHAIN: usize = 5;

/// What a verified token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// When the TSA stamped the hash (`genTime`).
    pub gen_time: DateTime<Utc>,
    /// The token's serial number, lower-case hex.
    pub serial: String,
    /// The TSA's policy OID.
    pub policy: String,
    /// The signer certificate's subject.
    pub signer: String,
    /// Whether the signer chains to a configured trusted CA (`false` when none was given).
    pub chained: bool,
}

/// CA certificates a TSA's signer must chain to (`evidence.timestamp.ca_certificates`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    anchors: Vec<Certificate>,
}

impl Trust {
    /// The certificates in PEM `pem`.
    ///
    /// # Errors
    /// [`Error::Trust`] (naming `path`) when the text holds no certificate or a bad one.
    pub fn from_pem(pem: &[u8], path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::Trust {
            path: path.to_owned(),
            reason,
        };
        let anchors = Certificate::load_pem_chain(pem).map_err(|e| bad(e.to_string()))?;
        if anchors.is_empty() {
            return Err(bad("no certificate in the file".into()));
        }
        Ok(Trust { anchors })
    }

    /// The certificates in the PEM file at `path`.
    ///
    /// # Errors
    /// [`Error::Trust`] when it cannot be read or holds no certificate.
    pub fn load(path: &Path) -> Result<Self> {
        let pem = std::fs::read(path).map_err(|e| Error::Trust {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        Self::from_pem(&pem, path)
    }
}

/// Checks that `token` (a DER `ContentInfo`, as [`crate::parse_response`] returns and the
/// store keeps it) is a TSA's valid signature over `sha256`, carrying `nonce` when given, and
/// when `trust` is given that its signer chains to it. See the crate docs for what is and is
/// not checked.
///
/// # Errors
/// [`Error::Invalid`] with the first reason the token does not prove it (unparsable bytes
/// included).
pub fn verify(
    token: &[u8],
    sha256: &[u8; 32],
    nonce: Option<u64>,
    trust: Option<&Trust>,
) -> Result<Verified> {
    if token.len() > MAX_RESPONSE_BYTES {
        return Err(invalid(format!("{} bytes is too large", token.len())));
    }
    let ci = ContentInfo::from_der(token).map_err(|e| invalid(format!("not a token: {e}")))?;
    if ci.content_type != oid::SIGNED_DATA {
        return Err(invalid(format!(
            "content type {} is not signed data",
            ci.content_type
        )));
    }
    let sd: SignedData = ci
        .content
        .decode_as()
        .map_err(|e| invalid(format!("signed data: {e}")))?;
    if sd.encap_content_info.econtent_type != oid::TST_INFO {
        return Err(invalid(format!(
            "signed content {} is not a tstinfo",
            sd.encap_content_info.econtent_type
        )));
    }
    let econtent: OctetString = sd
        .encap_content_info
        .econtent
        .as_ref()
        .ok_or_else(|| invalid("no tstinfo in the token".into()))?
        .decode_as()
        .map_err(|e| invalid(format!("tstinfo wrapper: {e}")))?;
    let tst_bytes = econtent.as_bytes();
    let tst = TstInfo::from_der(tst_bytes).map_err(|e| invalid(format!("tstinfo: {e}")))?;

    // What the TSA says it stamped.
    if tst.message_imprint.hash_algorithm.oid != oid::SHA256 {
        return Err(invalid(format!(
            "imprint hash {} is not sha-256",
            tst.message_imprint.hash_algorithm.oid
        )));
    }
    if tst.message_imprint.hashed_message.as_bytes() != sha256.as_slice() {
        return Err(invalid(format!(
            "it stamps {}, not {}",
            hex(tst.message_imprint.hashed_message.as_bytes()),
            hex(sha256)
        )));
    }
    if let Some(nonce) = nonce {
        let sent = nonce_int(nonce)?;
        if tst.nonce.as_ref() != Some(&sent) {
            return Err(invalid(format!(
                "nonce {} is not the {} sent",
                tst.nonce
                    .as_ref()
                    .map_or("none".into(), |n| hex(n.as_bytes())),
                hex(sent.as_bytes())
            )));
        }
    }
    let gen_time = gen_time(&tst.gen_time)?;

    // Who signed it, and that they did.
    let [signer_info] = sd.signer_infos.0.as_slice() else {
        return Err(invalid(format!(
            "{} signers, not one",
            sd.signer_infos.0.len()
        )));
    };
    let certs: Vec<&Certificate> = sd
        .certificates
        .iter()
        .flat_map(|set| set.0.iter())
        .filter_map(|c| match c {
            CertificateChoices::Certificate(c) => Some(c),
            CertificateChoices::Other(_) => None,
        })
        .collect();
    let signer = certs
        .iter()
        .copied()
        .find(|c| is_signer(c, &signer_info.sid))
        .ok_or_else(|| invalid("the signer certificate is not in the token".into()))?;
    check_signed_attrs(signer_info, tst_bytes)?;
    let attrs = signer_info
        .signed_attrs
        .as_ref()
        .ok_or_else(|| invalid("no signed attributes".into()))?
        .to_der()
        .map_err(|e| invalid(format!("signed attributes: {e}")))?;
    let hash = signature_hash(
        &signer_info.signature_algorithm.oid,
        &signer_info.digest_alg.oid,
    )?;
    rsa_verify(
        &signer.tbs_certificate.subject_public_key_info,
        hash,
        &attrs,
        signer_info.signature.as_bytes(),
    )
    .map_err(|e| invalid(format!("signature: {e}")))?;

    // That the signer may stamp, then and there.
    let eku = signer
        .tbs_certificate
        .get::<ExtendedKeyUsage>()
        .map_err(|e| invalid(format!("signer extended key usage: {e}")))?;
    if !eku.is_some_and(|(_, eku)| eku.0.contains(&oid::KP_TIME_STAMPING)) {
        return Err(invalid(
            "the signer certificate lacks the timeStamping key usage".into(),
        ));
    }
    valid_at(signer, gen_time)?;
    let chained = match trust {
        Some(trust) => {
            chain(signer, &certs, trust, gen_time)?;
            true
        }
        None => false,
    };
    Ok(Verified {
        gen_time,
        serial: hex(tst.serial_number.as_bytes()),
        policy: tst.policy.to_string(),
        signer: signer.tbs_certificate.subject.to_string(),
        chained,
    })
}

fn invalid(reason: String) -> Error {
    Error::Invalid(reason)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `genTime` (`YYYYMMDDHHMMSS[.fff]Z`; RFC 3161 allows the fraction der 0.7 refuses).
pub(crate) fn gen_time(any: &Any) -> Result<DateTime<Utc>> {
    if any.tag() != Tag::GeneralizedTime {
        return Err(invalid(format!("gentime has tag {}", any.tag())));
    }
    // Exactly 14 digits, then an optional fraction: chrono alone would take one digit for
    // a two-digit field.
    let text = std::str::from_utf8(any.value())
        .ok()
        .filter(|t| t.len() <= 32)
        .and_then(|t| t.strip_suffix('Z'))
        .filter(|t| {
            let (whole, fraction) = t.split_at(t.len().min(14));
            whole.len() == 14
                && whole.bytes().all(|b| b.is_ascii_digit())
                && (fraction.is_empty()
                    || fraction
                        .strip_prefix('.')
                        .is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())))
        })
        .ok_or_else(|| invalid("gentime is not yyyymmddhhmmss[.f]z".into()))?;
    NaiveDateTime::parse_from_str(text, "%Y%m%d%H%M%S%.f")
        .map(|t| t.and_utc())
        .map_err(|e| invalid(format!("gentime {text:?}: {e}")))
}

fn is_signer(cert: &Certificate, sid: &SignerIdentifier) -> bool {
    match sid {
        SignerIdentifier::IssuerAndSerialNumber(isn) => {
            cert.tbs_certificate.issuer == isn.issuer
                && cert.tbs_certificate.serial_number == isn.serial_number
        }
        SignerIdentifier::SubjectKeyIdentifier(ski) => cert
            .tbs_certificate
            .get::<SubjectKeyIdentifier>()
            .ok()
            .flatten()
            .is_some_and(|(_, own)| own == *ski),
    }
}

/// The content-type attribute names a `TSTInfo` and the message-digest attribute is the
/// digest of its bytes.
fn check_signed_attrs(signer: &SignerInfo, tst_bytes: &[u8]) -> Result<()> {
    let attrs = signer
        .signed_attrs
        .as_ref()
        .ok_or_else(|| invalid("no signed attributes".into()))?;
    let single = |oid: ObjectIdentifier, name: &str| -> Result<&Any> {
        let attr = attrs
            .iter()
            .find(|a| a.oid == oid)
            .ok_or_else(|| invalid(format!("no {name} attribute")))?;
        match attr.values.as_slice() {
            [value] => Ok(value),
            _ => Err(invalid(format!("{name} attribute has not one value"))),
        }
    };
    let content_type: ObjectIdentifier = single(oid::CONTENT_TYPE, "content-type")?
        .decode_as()
        .map_err(|e| invalid(format!("content-type attribute: {e}")))?;
    if content_type != oid::TST_INFO {
        return Err(invalid(format!(
            "content-type attribute {content_type} is not a tstinfo"
        )));
    }
    let digest: OctetString = single(oid::MESSAGE_DIGEST, "message-digest")?
        .decode_as()
        .map_err(|e| invalid(format!("message-digest attribute: {e}")))?;
    let hash = Hash::of_digest(&signer.digest_alg.oid)?;
    if digest.as_bytes() != hash.digest(tst_bytes).as_slice() {
        return Err(invalid(
            "message-digest attribute does not match the tstinfo".into(),
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Hash {
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    fn of_digest(oid: &ObjectIdentifier) -> Result<Self> {
        match *oid {
            oid::SHA256 => Ok(Hash::Sha256),
            oid::SHA384 => Ok(Hash::Sha384),
            oid::SHA512 => Ok(Hash::Sha512),
            other => Err(invalid(format!("unsupported digest algorithm {other}"))),
        }
    }

    fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha256 => Sha256::digest(data).to_vec(),
            Hash::Sha384 => Sha384::digest(data).to_vec(),
            Hash::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    fn pkcs1(self) -> Pkcs1v15Sign {
        match self {
            Hash::Sha256 => Pkcs1v15Sign::new::<Sha256>(),
            Hash::Sha384 => Pkcs1v15Sign::new::<Sha384>(),
            Hash::Sha512 => Pkcs1v15Sign::new::<Sha512>(),
        }
    }
}

/// The hash an RSA signature algorithm signs with: its own for `shaNNNWithRSAEncryption`,
/// `digest` for plain `rsaEncryption` (CMS names the digest apart).
fn signature_hash(signature: &ObjectIdentifier, digest: &ObjectIdentifier) -> Result<Hash> {
    match *signature {
        oid::RSA => Hash::of_digest(digest),
        oid::SHA256_RSA => Ok(Hash::Sha256),
        oid::SHA384_RSA => Ok(Hash::Sha384),
        oid::SHA512_RSA => Ok(Hash::Sha512),
        other => Err(invalid(format!(
            "unsupported signature algorithm {other} (only rsa pkcs#1 v1.5 is verified)"
        ))),
    }
}

/// RSA PKCS#1 v1.5 over `data`. rsa refuses moduli over 4096 bits, which bounds the work a
/// hostile certificate can ask for.
fn rsa_verify(
    spki: &SubjectPublicKeyInfoOwned,
    hash: Hash,
    data: &[u8],
    signature: &[u8],
) -> std::result::Result<(), String> {
    if spki.algorithm.oid != oid::RSA {
        return Err(format!(
            "unsupported key algorithm {} (only rsa is verified)",
            spki.algorithm.oid
        ));
    }
    let der = spki.to_der().map_err(|e| e.to_string())?;
    let key = RsaPublicKey::from_public_key_der(&der).map_err(|e| format!("rsa key: {e}"))?;
    key.verify(hash.pkcs1(), &hash.digest(data), signature)
        .map_err(|_| "does not verify".to_owned())
}

/// `cert` was valid at `at`.
fn valid_at(cert: &Certificate, at: DateTime<Utc>) -> Result<()> {
    let validity = &cert.tbs_certificate.validity;
    let secs = |d: Duration| d.as_secs() as i64;
    let (from, to) = (
        secs(validity.not_before.to_unix_duration()),
        secs(validity.not_after.to_unix_duration()),
    );
    if at.timestamp() < from || at.timestamp() > to {
        return Err(invalid(format!(
            "certificate {} was not valid at {at}",
            cert.tbs_certificate.subject
        )));
    }
    Ok(())
}

/// `issuer` signed `cert`.
fn signed_by(cert: &Certificate, issuer: &Certificate) -> bool {
    if cert.tbs_certificate.issuer != issuer.tbs_certificate.subject {
        return false;
    }
    let Ok(hash) = signature_hash(&cert.signature_algorithm.oid, &oid::SHA256) else {
        return false;
    };
    let Ok(tbs) = cert.tbs_certificate.to_der() else {
        return false;
    };
    let Some(signature) = cert.signature.as_bytes() else {
        return false;
    };
    rsa_verify(
        &issuer.tbs_certificate.subject_public_key_info,
        hash,
        &tbs,
        signature,
    )
    .is_ok()
}

/// Follows `signer` up through `pool` (the token's certificates) to one of `trust`'s
/// anchors, each link's signature checked and each certificate valid at `at`.
fn chain(
    signer: &Certificate,
    pool: &[&Certificate],
    trust: &Trust,
    at: DateTime<Utc>,
) -> Result<()> {
    let mut current = signer;
    for _ in 0..MAX_CHAIN {
        if trust.anchors.iter().any(|a| a == current) {
            return Ok(());
        }
        if let Some(anchor) = trust.anchors.iter().find(|a| signed_by(current, a)) {
            return valid_at(anchor, at);
        }
        let Some(next) = pool
            .iter()
            .copied()
            .find(|c| *c != current && signed_by(current, c) && valid_at(c, at).is_ok())
        else {
            break;
        };
        current = next;
    }
    Err(invalid(format!(
        "the signer {} does not chain to the trusted ca",
        signer.tbs_certificate.subject
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen_time_reads_whole_and_fractional_seconds() {
        let t = |s: &str| gen_time(&Any::new(Tag::GeneralizedTime, s.as_bytes()).unwrap());
        assert_eq!(
            t("20261125013000Z").unwrap().to_rfc3339(),
            "2026-11-25T01:30:00+00:00"
        );
        assert_eq!(
            t("20261125013000.25Z").unwrap().timestamp_millis() % 1000,
            250
        );
        assert!(t("20261125013000").is_err());
        assert!(t("2026112501300Z").is_err());
        assert!(t("20261325013000Z").is_err());
        assert!(t("20261125013000.Z").is_err());
        assert!(gen_time(&Any::new(Tag::UtcTime, b"261125013000Z".as_slice()).unwrap()).is_err());
    }

    #[test]
    fn garbage_tokens_are_invalid_not_panics() {
        for bytes in [
            &b""[..],
            b"\x30\x00",
            b"\x30\x03\x06\x01\x00",
            b"not der at all",
        ] {
            assert!(matches!(
                verify(bytes, &[0; 32], None, None),
                Err(Error::Invalid(_))
            ));
        }
    }
}
