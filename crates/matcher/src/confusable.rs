//! Characters an OCR engine confuses, counted as equal in verification.
//!
//! A chapter served as images reaches the matcher through OCR, which misreads a few percent
//! of characters. Most misreadings are scattered edits that alignment already bridges (a gap
//! of one character between two exact runs); some are systematic, the same pair misread all
//! through a chapter (己 for 已 in every 已经), and those cut every run they fall in. The pairs
//! here, Tesseract's commonest on our generated pages and the classic look-alikes of printed
//! Chinese, are mapped to one character before the pinyin symbol is taken
//! ([`alignment_symbol`]), in the page and the chapter alike. Only verification uses it: the
//! fingerprints (and so the index and its snapshots) are unchanged.
//!
//! Characters are normalised first (NFKC, simplified script, Latin lower-cased), so `O` is
//! already `o` and `I` is `i`.

use fingerprint::pinyin::symbol;

/// The character `c` stands for in verification: the first of its group of look-alikes.
pub fn canonical(c: char) -> char {
    match c {
        // 己 jǐ / 已 yǐ / 巳 sì
        '已' | '巳' => '己',
        // 未 wèi / 末 mò
        '末' => '未',
        // 土 tǔ / 士 shì
        '士' => '土',
        // 日 rì / 曰 yuē
        '曰' => '日',
        // 人 rén / 入 rù
        '入' => '人',
        // 戊 wù / 戌 xū / 戍 shù
        '戌' | '戍' => '戊',
        // 干 gān / 千 qiān
        '千' => '干',
        // Digits read as letters and back, after lower-casing.
        '0' => 'o',
        '1' => 'l',
        _ => c,
    }
}

/// The alignment symbol of a normalised character: the pinyin symbol of its [`canonical`]
/// look-alike.
#[inline]
pub fn alignment_symbol(c: char) -> u32 {
    symbol(canonical(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_share_a_symbol_and_other_characters_keep_theirs() {
        for group in [
            "己已巳",
            "未末",
            "土士",
            "日曰",
            "人入",
            "戊戌戍",
            "干千",
            "0o",
            "1l",
        ] {
            let symbols: Vec<u32> = group.chars().map(alignment_symbol).collect();
            assert!(symbols.windows(2).all(|w| w[0] == w[1]), "{group}");
        }
        for (a, b) in [('天', '夫'), ('a', 'o'), ('2', 'z'), ('大', '太')] {
            assert_ne!(alignment_symbol(a), alignment_symbol(b), "{a}{b}");
        }
        // Homophones still align as before.
        assert_eq!(alignment_symbol('他'), alignment_symbol('她'));
    }

    /// What OCR does to a chapter: one look-alike misread all through it (已 → 己, 末 → 未 ...)
    /// and about 2% of the other characters misread at random.
    fn ocr_errors(text: &str) -> String {
        let mut state = 0x9E37_79B9_u64;
        text.chars()
            .map(|c| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                match c {
                    '已' => '己',
                    '末' => '未',
                    '士' => '土',
                    '入' => '人',
                    '日' => '曰',
                    _ if (state >> 33).is_multiple_of(50) => '鬯',
                    _ => c,
                }
            })
            .collect()
    }

    #[test]
    fn a_chapter_read_by_ocr_aligns_as_an_edited_one_does() {
        use crate::align::align;
        use crate::settings::AlignSettings;
        let chapter: String =
            fingerprint::normalize(include_str!("../tests/data/sanguoyanyi_1-10.txt"))
                .text()
                .chars()
                .take(6000)
                .collect();
        let read = ocr_errors(&chapter);
        let systematic = chapter
            .chars()
            .filter(|c| "已末士入日".contains(*c))
            .count();
        assert!(systematic > 40, "{systematic} look-alikes in the sample");
        let settings = AlignSettings::default();
        let coverage = |sym: fn(char) -> u32| {
            let page: Vec<u32> = read.chars().map(sym).collect();
            let chap: Vec<u32> = chapter.chars().map(sym).collect();
            align(&page, &chap, &settings).matched() as f64 / chap.len() as f64
        };
        let with = coverage(alignment_symbol);
        let without = coverage(symbol);
        // The random misreadings cost what an edit costs (the character itself); the
        // look-alikes cost nothing.
        assert!(with > 0.96, "coverage {with:.3} with look-alikes equal");
        assert!(with > without, "{with:.3} vs {without:.3}");
    }
}
