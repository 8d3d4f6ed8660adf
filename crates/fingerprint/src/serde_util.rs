//! Serde helpers for the compact binary forms.

use serde::de::{self, SeqAccess, Visitor};

/// Accepts a byte string from any serde format: native bytes (postcard, bincode-like formats)
/// or a sequence of integers (JSON).
pub(crate) struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a byte string")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(out)
    }
}

/// Fixed-width little-endian serialisation of hashes (a varint spends 10 bytes on a random
/// `u64`; these are random by construction).
pub(crate) mod fixed {
    use serde::{Deserializer, Serializer, de::Error as _};

    use super::BytesVisitor;

    pub fn serialize_u64<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&v.to_le_bytes())
    }

    pub fn deserialize_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let b = d.deserialize_byte_buf(BytesVisitor)?;
        let arr: [u8; 8] = b
            .try_into()
            .map_err(|_| D::Error::custom("a u64 hash must be 8 bytes"))?;
        Ok(u64::from_le_bytes(arr))
    }

    pub fn serialize_u128<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&v.to_le_bytes())
    }

    pub fn deserialize_u128<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let b = d.deserialize_byte_buf(BytesVisitor)?;
        let arr: [u8; 16] = b
            .try_into()
            .map_err(|_| D::Error::custom("a u128 hash must be 16 bytes"))?;
        Ok(u128::from_le_bytes(arr))
    }

    pub fn serialize_u64s<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = v.iter().flat_map(|h| h.to_le_bytes()).collect();
        s.serialize_bytes(&bytes)
    }

    pub fn deserialize_u64s<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let b = d.deserialize_byte_buf(BytesVisitor)?;
        if b.len() % 8 != 0 {
            return Err(D::Error::custom("hash list length is not a multiple of 8"));
        }
        Ok(b.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect())
    }
}
