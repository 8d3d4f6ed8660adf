//! The protocol against a local TSA made with the `openssl` CLI (testkit's `LocalTsa`):
//! stamping round trips, tokens that must be refused, and hostile answers.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use sha2::{Digest, Sha256};
use testkit::tsa::{LocalTsa, Reply};
use timestamp::{Error, Trust, Tsa, verify};

fn sha(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

fn trust(path: &Path) -> Trust {
    Trust::load(path).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn invalid(r: timestamp::Result<timestamp::Verified>) -> String {
    match r {
        Err(Error::Invalid(reason)) => reason,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[tokio::test]
async fn a_local_tsa_stamps_and_the_token_verifies_here_and_in_openssl() {
    let Some(local) = LocalTsa::start().await else {
        return;
    };
    let hash = sha("第一回 甄士隐梦幻识通灵");
    let tsa = Tsa::new(
        local.url.clone(),
        Duration::from_secs(20),
        Some(trust(&local.ca_pem)),
    )
    .unwrap();
    let before = chrono::Utc::now() - chrono::Duration::seconds(2);
    let stamp = tsa.stamp(&hash).await.unwrap();
    let after = chrono::Utc::now() + chrono::Duration::seconds(2);
    let v = &stamp.verified;
    assert!(v.chained);
    assert!(
        before <= v.gen_time && v.gen_time <= after,
        "{}",
        v.gen_time
    );
    assert_eq!(v.policy, "1.2.3.4.1");
    assert!(v.signer.contains("copyhound test TSA"), "{}", v.signer);

    // A stored token verifies again without the nonce, with or without the CA.
    assert_eq!(tsa.verify(&stamp.token, &hash).unwrap(), *v);
    let unchained = verify(&stamp.token, &hash, None, None).unwrap();
    assert!(!unchained.chained);

    // The bytes we keep are a token openssl itself accepts for this hash.
    let token = local.dir().join("kept.tst");
    std::fs::write(&token, &stamp.token).unwrap();
    let out = Command::new("openssl")
        .args(["ts", "-verify", "-token_in", "-in"])
        .arg(&token)
        .args(["-digest", &hex(&hash), "-CAfile"])
        .arg(&local.ca_pem)
        .arg("-untrusted")
        .arg(&local.tsa_pem)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl ts -verify: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Two stamps of one hash are two tokens (serial and nonce differ).
    let again = tsa.stamp(&hash).await.unwrap();
    assert_ne!(again.token, stamp.token);
    assert_ne!(again.verified.serial, v.serial);
}

#[tokio::test]
async fn altered_foreign_and_untrusted_tokens_are_refused() {
    let Some(local) = LocalTsa::start().await else {
        return;
    };
    let hash = sha("snapshot body");
    let client = reqwest::Client::new();
    let stamp = timestamp::stamp(&client, &local.url, &hash, None)
        .await
        .unwrap();
    let token = &stamp.token;
    let ca = trust(&local.ca_pem);
    verify(token, &hash, None, Some(&ca)).unwrap();

    // A token for another hash.
    let reason = invalid(verify(token, &sha("another body"), None, Some(&ca)));
    assert!(reason.contains("stamps"), "{reason}");

    // The TSTInfo altered: its genTime's year, then its imprint (bytes of the hash).
    let year = token
        .windows(4)
        .position(|w| w == b"2026" || w == b"2027" || w == b"2028")
        .expect("a genTime in the token");
    let mut later = token.clone();
    later[year + 3] ^= 0x01;
    let reason = invalid(verify(&later, &hash, None, Some(&ca)));
    assert!(reason.contains("message-digest"), "{reason}");
    let at = token
        .windows(32)
        .position(|w| w == hash)
        .expect("the imprint in the token");
    let mut other = token.clone();
    other[at + 31] ^= 0x01;
    let mut other_hash = hash;
    other_hash[31] ^= 0x01;
    let reason = invalid(verify(&other, &other_hash, None, Some(&ca)));
    assert!(reason.contains("message-digest"), "{reason}");

    // The signature altered (its last byte ends the token: openssl adds no unsigned
    // attributes).
    let mut forged = token.clone();
    *forged.last_mut().unwrap() ^= 0x01;
    let reason = invalid(verify(&forged, &hash, None, Some(&ca)));
    assert!(reason.contains("signature"), "{reason}");

    // A signer that does not chain to the configured CA, and a nonce not sent.
    let reason = invalid(verify(
        token,
        &hash,
        None,
        Some(&trust(&local.other_ca_pem)),
    ));
    assert!(reason.contains("does not chain"), "{reason}");
    let reason = invalid(verify(token, &hash, Some(42), None));
    assert!(reason.contains("nonce"), "{reason}");

    // Truncated at every length: refused, never a panic.
    for len in (0..token.len()).step_by(7) {
        assert!(verify(&token[..len], &hash, None, None).is_err());
    }
}

#[tokio::test]
async fn refusals_and_hostile_answers_are_clear_errors() {
    let Some(local) = LocalTsa::start().await else {
        return;
    };
    let hash = sha("body");
    let tsa = Tsa::new(local.url.clone(), Duration::from_secs(5), None).unwrap();

    local.reply(Reply::OpensslRejecting);
    let err = tsa.stamp(&hash).await.unwrap_err();
    assert!(matches!(err, Error::Rejected { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("the time-stamping authority refused the request: rejection"),
        "{err}"
    );
    assert!(err.to_string().contains("badAlg"), "{err}");
    assert!(!err.is_transient());

    local.reply(Reply::Bytes(
        b"<html><body>free novels</body></html>".to_vec(),
    ));
    let err = tsa.stamp(&hash).await.unwrap_err();
    assert!(matches!(err, Error::Malformed(_)), "{err:?}");

    // A well-formed reply whose token was made for another query (its nonce).
    local.reply(Reply::Openssl);
    let query = timestamp::Request::with_nonce(&hash, 7).unwrap();
    let replayed = reqwest::Client::new()
        .post(&local.url)
        .body(query.der().to_vec())
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .to_vec();
    local.reply(Reply::Bytes(replayed));
    let err = tsa.stamp(&hash).await.unwrap_err();
    assert!(err.to_string().contains("nonce"), "{err}");

    local.reply(Reply::Status(503));
    let err = tsa.stamp(&hash).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("time-stamping authority {} answered http 503", local.url)
    );
    assert!(err.is_transient());

    // An endless body is cut at the cap, quickly.
    local.reply(Reply::Endless);
    let started = std::time::Instant::now();
    let err = tsa.stamp(&hash).await.unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));

    local.reply(Reply::Stall(Duration::from_secs(30)));
    let quick = Tsa::new(local.url.clone(), Duration::from_millis(300), None).unwrap();
    let err = quick.stamp(&hash).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(err.is_transient());

    // Nothing listening.
    let gone = Tsa::new(
        "http://127.0.0.1:9/tsr".into(),
        Duration::from_secs(2),
        None,
    )
    .unwrap();
    let err = gone.stamp(&hash).await.unwrap_err();
    assert!(err.is_transient(), "{err:?}");
}

#[test]
fn a_bad_ca_file_names_the_file_and_the_setting() {
    let dir = std::env::temp_dir().join(format!("no-such-ca-{}", std::process::id()));
    let err = Trust::load(&dir).unwrap_err();
    assert!(
        err.to_string()
            .contains("evidence.timestamp.ca_certificates"),
        "{err}"
    );
    let err = Trust::from_pem(b"not a pem", Path::new("ca.pem")).unwrap_err();
    assert!(err.to_string().contains("ca.pem"), "{err}");
}
