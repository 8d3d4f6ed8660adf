//! Page fonts read back against the system's reference font: remapped fonts built from it
//! map back in every container, and hostile fonts are refused quickly with their reason.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use fontmap::{Error, FontSettings, Reference, decode, sfnt};
use testkit::fonts::{reference_font, remapped_font, woff2};

/// The reference font's bytes and its index, built once for the file's tests.
fn reference() -> Option<&'static (Vec<u8>, Reference)> {
    static REFERENCE: OnceLock<Option<(Vec<u8>, Reference)>> = OnceLock::new();
    REFERENCE
        .get_or_init(|| {
            let path = reference_font()?;
            let bytes = std::fs::read(&path).expect("the reference font reads");
            let started = Instant::now();
            let index = Reference::from_bytes(bytes.clone()).expect("the reference indexes");
            eprintln!(
                "indexed {} glyphs in {:?}, about {} MiB",
                index.glyphs(),
                started.elapsed(),
                index.heap_bytes() >> 20
            );
            Some((bytes, index))
        })
        .as_ref()
}

/// PUA code points from U+E000 for `text`'s characters, in order of first use.
fn pairs(text: &str) -> Vec<(char, char)> {
    let mut out: Vec<(char, char)> = Vec::new();
    for c in text.chars() {
        if !out.iter().any(|&(_, o)| o == c) {
            let pua = char::from_u32(0xE000 + out.len() as u32).unwrap();
            out.push((pua, c));
        }
    }
    out
}

const TEXT: &str = "话说天下大势分久必合合久必分周末七国分争并入于秦Theyjumpquickly";

#[test]
fn a_remapped_font_maps_back_as_ttf_woff2_and_cached() {
    let Some((bytes, reference)) = reference() else {
        return;
    };
    let pairs = pairs(TEXT);
    let ttf = remapped_font(bytes, &pairs).unwrap();
    let settings = FontSettings::default();
    for (name, font) in [("ttf", ttf.clone()), ("woff2", woff2(&ttf).unwrap())] {
        let map = decode(&font, reference, &settings).unwrap();
        assert_eq!(map.unresolved, 0, "{name}");
        assert_eq!(
            map.by_shape, 0,
            "{name}: the glyphs are the reference's own"
        );
        for &(pua, original) in &pairs {
            assert_eq!(map.chars.get(&pua), Some(&original), "{name}: {pua:?}");
        }
        let disguised: String = TEXT
            .chars()
            .map(|c| pairs.iter().find(|p| p.1 == c).unwrap().0)
            .collect();
        assert_eq!(
            map.apply(&disguised),
            (TEXT.to_owned(), TEXT.chars().count())
        );
    }
}

#[test]
fn a_font_scaled_to_another_em_maps_by_shape() {
    let Some((bytes, reference)) = reference() else {
        return;
    };
    // The same glyphs at 1000 units per em: every point moves by its rounding, so no
    // outline is exact and each is found by its shape.
    let pairs = pairs("天下大势");
    let ttf = remapped_font(bytes, &pairs).unwrap();
    let scaled = testkit::fonts::rescaled(&ttf, 1000).unwrap();
    let map = decode(&scaled, reference, &FontSettings::default()).unwrap();
    for &(pua, original) in &pairs {
        assert_eq!(map.chars.get(&pua), Some(&original), "{pua:?}");
    }
    assert!(map.by_shape > 0, "{map:?}");
}

#[test]
fn bytes_that_are_no_font_are_refused_and_damaged_fonts_never_panic() {
    let Some((bytes, reference)) = reference() else {
        return;
    };
    let settings = FontSettings::default();
    for junk in [
        &b""[..],
        b"wOF2",
        b"wOFF\0\0\0\0",
        b"OTTO\0\0\0\0\0\0\0\0",
        b"\0\x01\0\0\0\x01\0\0\0\0\0\0",
        b"<html>not a font</html>",
    ] {
        let err = decode(junk, reference, &settings).unwrap_err();
        assert!(matches!(err, Error::Malformed(_)), "{junk:?}: {err}");
    }
    // Cut short and with bytes flipped, in every container: an error or a map, never a
    // panic, and never slow.
    let ttf = remapped_font(bytes, &pairs(TEXT)).unwrap();
    let woff2 = woff2(&ttf).unwrap();
    let started = Instant::now();
    for font in [&ttf, &woff2] {
        for cut in (0..font.len()).step_by(font.len() / 97 + 1) {
            let _ = decode(&font[..cut], reference, &settings);
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..300 {
            let mut damaged = font.clone();
            for _ in 0..8 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = (state % damaged.len() as u64) as usize;
                damaged[at] ^= (state >> 32) as u8 | 1;
            }
            let _ = decode(&damaged, reference, &settings);
        }
    }
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_font_over_the_size_cap_is_refused_before_it_is_read() {
    let settings = FontSettings {
        max_font_bytes: 4096,
        ..FontSettings::default()
    };
    let big = vec![0u8; 4097];
    assert_eq!(
        sfnt::unwrap(&big, &settings).unwrap_err(),
        Error::TooLarge {
            bytes: 4097,
            max: 4096
        }
    );
}

#[test]
fn a_woff2_bomb_is_refused_quickly() {
    // A WOFF2 whose one table declares 1 GiB: refused by the budget before any allocation.
    let bomb = testkit::fonts::woff2_bomb(1 << 30, 64);
    let settings = FontSettings::default();
    let started = Instant::now();
    let err = sfnt::unwrap(&bomb, &settings).unwrap_err();
    assert!(
        matches!(err, Error::Bomb { .. } | Error::Malformed(_)),
        "{err}"
    );
    // 64 MiB declared in 1 MiB: a ratio the container allows, over the budget.
    let bomb = testkit::fonts::woff2_bomb(64 << 20, 1 << 20);
    assert_eq!(
        sfnt::unwrap(&bomb, &settings).unwrap_err(),
        Error::Bomb {
            max: settings.max_decoded_bytes
        }
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    // A real font with a small budget: refused as a bomb, not decoded.
    if let Some((bytes, _)) = reference() {
        let font = woff2(&remapped_font(bytes, &pairs(TEXT)).unwrap()).unwrap();
        let tight = FontSettings {
            max_decoded_bytes: 1024,
            ..FontSettings::default()
        };
        assert_eq!(
            sfnt::unwrap(&font, &tight).unwrap_err(),
            Error::Bomb { max: 1024 }
        );
    }
}

#[test]
fn a_font_of_too_many_glyphs_or_code_points_is_refused_quickly() {
    let Some((bytes, reference)) = reference() else {
        return;
    };
    // Three thousand Han characters under PUA code points.
    let many: Vec<(char, char)> = (0..3000u32)
        .map(|i| {
            (
                char::from_u32(0xE000 + i).unwrap(),
                char::from_u32(0x4E00 + i).unwrap(),
            )
        })
        .collect();
    let font = remapped_font(bytes, &many).unwrap();
    let few_glyphs = FontSettings {
        max_glyphs: 100,
        ..FontSettings::default()
    };
    let started = Instant::now();
    let err = decode(&font, reference, &few_glyphs).unwrap_err();
    assert!(
        matches!(err, Error::TooMany { what: "glyphs", .. }),
        "{err}"
    );
    let few_points = FontSettings {
        max_code_points: 100,
        ..FontSettings::default()
    };
    let err = decode(&font, reference, &few_points).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooMany {
                what: "PUA code points",
                ..
            }
        ),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    // Within the caps, all of them map back within the time budget.
    let map = decode(&font, reference, &FontSettings::default()).unwrap();
    assert_eq!(map.chars.len() + map.unresolved, 3000);
    assert!(map.chars.len() > 2900, "{}", map.chars.len());
}

#[test]
fn a_missing_reference_says_how_to_fix_it() {
    let err = Reference::load(&["/nonexistent/font.ttf".into()]).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("/nonexistent/font.ttf"), "{message}");
    assert!(message.contains("fonts-wqy-microhei"), "{message}");
}
