//! The pinyin-initial letter-frequency "DNA" code: the seed design of a content fingerprint,
//! kept and measured against the others.
//!
//! The text's pinyin initials (one letter `a`–`z` per Han character; ASCII letters count as
//! themselves) are cut into windows of `window` letters that overlap by `overlap` (a fraction).
//! In each window the frequency of each of the 26 letters is compared with a reference
//! distribution (by default the initials' distribution over the public-domain Chinese corpus):
//! the deviation, in binomial standard deviations `σ = sqrt(p(1-p)/n)` and clamped to ±3σ, is
//! quantised into one digit of the configured radix (2, 4, 8 or 10). A window is 26 digits; the
//! code is the windows' digits in order.
//!
//! Two codes are compared with [`DnaCode::distance`], in `[0, 1]`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Result;

/// Default window size, in letters.
pub const DEFAULT_DNA_WINDOW: usize = 1000;
/// Default overlap between consecutive windows (fraction of the window). A quarter keeps a
/// change near a window edge visible in two windows while an 8 KB English chapter's summary
/// stays within 640 bytes (at 0.5 it takes 670).
pub const DEFAULT_DNA_OVERLAP: f64 = 0.25;
/// Default radix of the digits.
pub const DEFAULT_DNA_RADIX: u8 = 4;
/// How many standard deviations the digit range spans on each side.
const CLAMP_SIGMA: f64 = 3.0;

/// Frequency of each initial `a`..`z` over the Chinese novels of the project corpus
/// (all ten files of `../shared/corpus/zh`, 17.5 MB, traditional ones after conversion),
/// measured by `cargo test -p fingerprint --release --test reference_distribution --
/// --ignored --nocapture`. `i`, `u` and `v` never start a pinyin syllable.
pub const REFERENCE_DISTRIBUTION: [f64; 26] = [
    // a       b         c         d         e         f
    0.004023, 0.053051, 0.041057, 0.072917, 0.010825, 0.024796, 0.037895, 0.039914, 0.000000,
    0.071698, 0.015849, 0.067322, 0.032888, 0.029731, 0.000256, 0.009727, 0.039319, 0.029212,
    0.095652, 0.034178, 0.000000, 0.000000, 0.039556, 0.050391, 0.097598, 0.102144,
];

/// Settings of the DNA code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DnaSettings {
    /// Window size in letters (≥ 26).
    pub window: usize,
    /// Overlap of consecutive windows, `0.0 ..= 0.9`.
    pub overlap: f64,
    /// Digit radix: 2, 4, 8 or 10.
    pub radix: u8,
    /// Expected frequency of each initial; must sum to about 1.
    pub reference: [f64; 26],
}

impl Default for DnaSettings {
    fn default() -> Self {
        DnaSettings {
            window: DEFAULT_DNA_WINDOW,
            overlap: DEFAULT_DNA_OVERLAP,
            radix: DEFAULT_DNA_RADIX,
            reference: REFERENCE_DISTRIBUTION,
        }
    }
}

impl DnaSettings {
    /// Checks the settings; keys are relative to `[fingerprint.dna]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the bad value.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        if !matches!(self.radix, 2 | 4 | 8 | 10) {
            return Err(bounds::OutOfRange::new(
                "radix",
                self.radix.to_string(),
                "must be 2, 4, 8 or 10",
            ));
        }
        bounds::at_least("window", self.window, 26)?;
        bounds::between("overlap", self.overlap, 0.0, 0.9)?;
        let sum: f64 = self.reference.iter().sum();
        if self.reference.iter().any(|p| !(0.0..=1.0).contains(p)) || (sum - 1.0).abs() > 0.01 {
            return Err(bounds::OutOfRange::new(
                "reference",
                format!("{:?}", self.reference),
                format!("must be 26 probabilities summing to 1 (these sum to {sum})"),
            ));
        }
        Ok(())
    }

    fn step(&self) -> usize {
        ((self.window as f64 * (1.0 - self.overlap)).round() as usize).max(1)
    }
}

/// A DNA code: `windows × 26` digits of radix `radix`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DnaCode {
    radix: u8,
    digits: Vec<u8>,
}

fn bits_per_digit(radix: u8) -> u32 {
    match radix {
        2 => 1,
        4 => 2,
        8 => 3,
        _ => 4,
    }
}

impl DnaCode {
    /// Computes the code of a sequence of initials (`b'a'..=b'z'`), e.g. from
    /// [`crate::pinyin::initial`] over normalised text.
    pub fn from_initials(initials: &[u8], settings: &DnaSettings) -> DnaCode {
        let mut digits = Vec::new();
        let n = initials.len();
        if n > 0 {
            let window = settings.window.min(n);
            let step = settings.step();
            let mut start = 0;
            loop {
                let mut counts = [0u32; 26];
                for &l in &initials[start..start + window] {
                    if l.is_ascii_lowercase() {
                        counts[(l - b'a') as usize] += 1;
                    }
                }
                push_window_digits(&counts, window, settings, &mut digits);
                if start + window >= n {
                    break;
                }
                start = (start + step).min(n - window);
            }
        }
        DnaCode {
            radix: settings.radix,
            digits,
        }
    }

    /// The radix of the digits.
    pub fn radix(&self) -> u8 {
        self.radix
    }

    /// Number of windows.
    pub fn windows(&self) -> usize {
        self.digits.len() / 26
    }

    /// The digits, 26 per window.
    pub fn digits(&self) -> &[u8] {
        &self.digits
    }

    /// Distance in `[0, 1]`: the mean absolute digit difference over aligned windows, scaled
    /// by `radix - 1`, with every window that only one code has counting as fully different.
    /// 0 for identical codes; 1 when one is empty and the other is not; codes of different
    /// radixes are 1 apart.
    pub fn distance(&self, other: &DnaCode) -> f64 {
        if self.digits.is_empty() && other.digits.is_empty() {
            return 0.0;
        }
        if self.radix != other.radix {
            return 1.0;
        }
        let max_digit = (self.radix.max(2) - 1) as f64;
        let common = self.digits.len().min(other.digits.len());
        let longer = self.digits.len().max(other.digits.len());
        let diff: f64 = self.digits[..common]
            .iter()
            .zip(&other.digits[..common])
            .map(|(&a, &b)| (a as f64 - b as f64).abs() / max_digit)
            .sum();
        (diff + (longer - common) as f64) / longer as f64
    }
}

fn push_window_digits(counts: &[u32; 26], n: usize, settings: &DnaSettings, out: &mut Vec<u8>) {
    let radix = settings.radix as f64;
    for (letter, &count) in counts.iter().enumerate() {
        let p = settings.reference[letter];
        let freq = count as f64 / n as f64;
        // A letter the reference never sees still gets a finite scale: one occurrence is 1σ.
        let sigma = (p * (1.0 - p) / n as f64).sqrt().max(1.0 / n as f64);
        let z = ((freq - p) / sigma).clamp(-CLAMP_SIGMA, CLAMP_SIGMA);
        let digit = ((z + CLAMP_SIGMA) / (2.0 * CLAMP_SIGMA) * radix).floor();
        out.push(digit.min(radix - 1.0) as u8);
    }
}

impl std::fmt::Display for DnaCode {
    /// The digits as text, windows separated by `-`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, window) in self.digits.chunks(26).enumerate() {
            if i > 0 {
                f.write_str("-")?;
            }
            for d in window {
                write!(f, "{d}")?;
            }
        }
        Ok(())
    }
}

impl Serialize for DnaCode {
    /// Packed: one radix byte, then the digits at 1, 2, 3 or 4 bits each.
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let bits = bits_per_digit(self.radix);
        let mut packed = Vec::with_capacity(1 + (self.digits.len() * bits as usize).div_ceil(8));
        packed.push(self.radix);
        let (mut acc, mut filled) = (0u32, 0u32);
        for &d in &self.digits {
            acc |= (d as u32) << filled;
            filled += bits;
            while filled >= 8 {
                packed.push(acc as u8);
                acc >>= 8;
                filled -= 8;
            }
        }
        if filled > 0 {
            packed.push(acc as u8);
        }
        s.serialize_bytes(&packed)
    }
}

impl<'de> Deserialize<'de> for DnaCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let packed = d.deserialize_byte_buf(crate::serde_util::BytesVisitor)?;
        let Some((&radix, rest)) = packed.split_first() else {
            return Ok(DnaCode::default());
        };
        if !matches!(radix, 0 | 2 | 4 | 8 | 10) {
            return Err(serde::de::Error::custom(format!(
                "dna radix {radix} is not 2, 4, 8 or 10"
            )));
        }
        let bits = bits_per_digit(radix);
        let total_bits = rest.len() as u32 * 8;
        // Whole windows only: padding bits at the end never make up a window.
        let count = (total_bits / bits) as usize / 26 * 26;
        let mask = (1u32 << bits) - 1;
        let mut digits = Vec::with_capacity(count);
        let (mut acc, mut filled, mut bytes) = (0u32, 0u32, rest.iter());
        while digits.len() < count {
            while filled < bits {
                let Some(&b) = bytes.next() else { break };
                acc |= (b as u32) << filled;
                filled += 8;
            }
            digits.push((acc & mask) as u8);
            acc >>= bits;
            filled -= bits;
        }
        if radix != 0 && digits.iter().any(|&d| d >= radix) {
            return Err(serde::de::Error::custom(
                "dna digit out of range for its radix",
            ));
        }
        Ok(DnaCode { radix, digits })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(seed: u64, n: usize) -> Vec<u8> {
        (0..n as u64)
            .map(|i| b'a' + (crate::hash::fmix64(seed ^ i) % 26) as u8)
            .collect()
    }

    #[test]
    fn windows_and_digits() {
        let s = DnaSettings::default();
        let code = DnaCode::from_initials(&letters(1, 2500), &s);
        // 2500 letters, window 1000, step 750: starts 0, 750, 1500 (last clamped).
        assert_eq!(code.windows(), 3);
        assert!(code.digits().iter().all(|&d| d < 4));
        assert_eq!(code.to_string().len(), 3 * 26 + 2);
    }

    #[test]
    fn distance_properties() {
        let s = DnaSettings::default();
        let a = DnaCode::from_initials(&letters(1, 3000), &s);
        let b = DnaCode::from_initials(&letters(2, 3000), &s);
        assert_eq!(a.distance(&a), 0.0);
        assert_eq!(a.distance(&b), b.distance(&a));
        assert!(a.distance(&b) <= 1.0);
        assert_eq!(a.distance(&DnaCode::default()), 1.0);
        let mut edited = letters(1, 3000);
        edited[10] = b'z';
        let c = DnaCode::from_initials(&edited, &s);
        assert!(a.distance(&c) < 0.05);
    }

    #[test]
    fn radixes_pack_and_round_trip() {
        for radix in [2u8, 4, 8, 10] {
            let s = DnaSettings {
                radix,
                ..DnaSettings::default()
            };
            s.validate().unwrap();
            let code = DnaCode::from_initials(&letters(3, 1800), &s);
            let bytes = postcard::to_allocvec(&code).unwrap();
            let expected = 1 + (code.digits().len() * bits_per_digit(radix) as usize).div_ceil(8);
            assert_eq!(bytes.len(), 1 + expected, "radix {radix}");
            assert_eq!(postcard::from_bytes::<DnaCode>(&bytes).unwrap(), code);
        }
    }

    #[test]
    fn bad_settings_are_refused() {
        for bad in [
            DnaSettings {
                radix: 3,
                ..DnaSettings::default()
            },
            DnaSettings {
                window: 10,
                ..DnaSettings::default()
            },
            DnaSettings {
                overlap: 0.95,
                ..DnaSettings::default()
            },
            DnaSettings {
                reference: [0.5; 26],
                ..DnaSettings::default()
            },
        ] {
            let err = bad.validate().unwrap_err();
            assert!(
                err.to_string().contains(" is out of range: must be"),
                "{err}"
            );
        }
    }

    #[test]
    fn reference_is_a_distribution() {
        DnaSettings::default().validate().unwrap();
        let err = DnaSettings {
            overlap: f64::NAN,
            ..DnaSettings::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "overlap = NaN is out of range: must be between 0 and 0.9"
        );
    }
}
