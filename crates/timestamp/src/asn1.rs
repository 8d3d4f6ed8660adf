//! The RFC 3161 structures, as DER types. Our own rather than x509-tsp 0.1's: its status
//! type (from cmpv2 0.2) keeps the failure info in 16 bits, so a TSA's `systemFailure` (bit
//! 25) would make the whole response unreadable, and der 0.7's `GeneralizedTime` refuses the
//! fractional seconds RFC 3161 allows in `genTime`; here `genTime` is read by
//! [`crate::verify`].

use der::Sequence;
use der::asn1::{Any, BitString, ObjectIdentifier, OctetString, Uint};
use x509_cert::ext::Extensions;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::spki::AlgorithmIdentifierOwned;

/// `MessageImprint ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier, hashedMessage OCTET STRING }`
#[derive(Clone, Debug, Eq, PartialEq, Sequence)]
pub(crate) struct MessageImprint {
    pub hash_algorithm: AlgorithmIdentifierOwned,
    pub hashed_message: OctetString,
}

/// `TimeStampReq` (RFC 3161 §2.4.1), without policy and extensions, which we never send.
#[derive(Clone, Debug, Eq, PartialEq, Sequence)]
pub(crate) struct TimeStampReq {
    pub version: u8,
    pub message_imprint: MessageImprint,
    #[asn1(optional = "true")]
    pub nonce: Option<Uint>,
    #[asn1(default = "Default::default")]
    pub cert_req: bool,
}

/// `PKIStatusInfo` (RFC 3161 §2.4.2).
#[derive(Clone, Debug, Eq, PartialEq, Sequence)]
pub(crate) struct PkiStatusInfo {
    pub status: u8,
    #[asn1(optional = "true")]
    pub status_string: Option<Vec<String>>,
    #[asn1(optional = "true")]
    pub fail_info: Option<BitString>,
}

/// `TimeStampResp` (RFC 3161 §2.4.2); the token is kept as it came, to be stored verbatim.
#[derive(Clone, Debug, Eq, PartialEq, Sequence)]
pub(crate) struct TimeStampResp {
    pub status: PkiStatusInfo,
    #[asn1(optional = "true")]
    pub time_stamp_token: Option<Any>,
}

/// `Accuracy` (RFC 3161 §2.4.2).
#[derive(Clone, Debug, Eq, PartialEq, Sequence)]
pub(crate) struct Accuracy {
    #[asn1(optional = "true")]
    pub seconds: Option<u64>,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    pub millis: Option<u16>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    pub micros: Option<u16>,
}

/// `TSTInfo` (RFC 3161 §2.4.2); `genTime` as the raw element, read by
/// [`crate::verify::gen_time`].
#[derive(Clone, Debug, Eq, PartialEq, Sequence)]
pub(crate) struct TstInfo {
    pub version: u8,
    pub policy: ObjectIdentifier,
    pub message_imprint: MessageImprint,
    pub serial_number: der::asn1::Int,
    pub gen_time: Any,
    #[asn1(optional = "true")]
    pub accuracy: Option<Accuracy>,
    #[asn1(default = "Default::default")]
    pub ordering: bool,
    #[asn1(optional = "true")]
    pub nonce: Option<Uint>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    pub tsa: Option<GeneralName>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    pub extensions: Option<Extensions>,
}

/// OIDs we read or write.
pub(crate) mod oid {
    use der::asn1::ObjectIdentifier as Oid;

    pub const SHA256: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.1");
    pub const SHA384: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.2");
    pub const SHA512: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.3");
    pub const RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.1");
    pub const SHA256_RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.11");
    pub const SHA384_RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.12");
    pub const SHA512_RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.13");
    pub const SIGNED_DATA: Oid = Oid::new_unwrap("1.2.840.113549.1.7.2");
    pub const TST_INFO: Oid = Oid::new_unwrap("1.2.840.113549.1.9.16.1.4");
    pub const CONTENT_TYPE: Oid = Oid::new_unwrap("1.2.840.113549.1.9.3");
    pub const MESSAGE_DIGEST: Oid = Oid::new_unwrap("1.2.840.113549.1.9.4");
    pub const KP_TIME_STAMPING: Oid = Oid::new_unwrap("1.3.6.1.5.5.7.3.8");
}
