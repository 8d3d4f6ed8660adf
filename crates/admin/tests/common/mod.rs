//! What the admin tests share: a protected work with a hostile title, a pirate page with
//! hostile text that opens a case against it, and users of every role.

#![allow(dead_code)] // each test file uses part of it

pub mod ui;
pub mod wire;

use std::sync::Arc;

use detection::Analyser;
use import::{ImportOptions, ImportSettings, Importer};
use matcher::MatcherSettings;
use sha2::Digest;
use store::{CaseId, EvidenceWrites, NewPageText, NewSnapshot, Role, Store};

/// 封神演义 1–3 (traditional; public domain): the protected work.
pub const WORK: &str = include_str!("../../../import/tests/data/fengshenyanyi_hant_1-3.txt");
pub const HOSTILE: &str = "<script>alert('pwned')</script>";

pub fn pirate_page() -> String {
    let start = WORK.find("第一回").unwrap();
    let end = WORK.find("第二回").unwrap();
    let chapter = zhconv::zhconv(&WORK[start..end], zhconv::Variant::ZhHans);
    format!("{HOSTILE}最新章节请访问！\n{chapter}\n{HOSTILE}")
}

pub async fn stored_page(store: &Store, url: &str, text: &str) -> store::SnapshotId {
    let body = text.as_bytes();
    let new = NewSnapshot {
        content_type: Some("text/plain; charset=utf-8".into()),
        sha256: sha2::Sha256::digest(body).into(),
        body_len: body.len() as u64,
        elapsed_ms: 1,
        ..store::testing::sample_snapshot(url, 0, chrono::Utc::now())
    };
    let (id, _) = store
        .insert_snapshot(&new, Some(&zstd::encode_all(body, 1).unwrap()))
        .await
        .unwrap();
    store
        .insert_page_text(&NewPageText {
            snapshot: id,
            url: url.to_owned(),
            depth: 0,
            chain: None,
            kind: "content".into(),
            title: Some(HOSTILE.into()),
            chapter_title: None,
            body: text.to_owned(),
            encoding: "UTF-8".into(),
            decode_errors: false,
            not_modified: false,
            fetched_at: chrono::Utc::now(),
            text_source: "markup".into(),
            text_snapshot: None,
            declared_encoding: None,
        })
        .await
        .unwrap();
    id
}

/// A work with a hostile title and a case against it from a pirate page with hostile text.
pub async fn with_case(store: &Store) -> CaseId {
    Importer::new(ImportSettings::default())
        .unwrap()
        .import_bytes(
            store,
            "fengshen.txt",
            WORK.as_bytes().to_vec(),
            &ImportOptions {
                title: Some(format!("封神演义{HOSTILE}")),
                author: Some(HOSTILE.into()),
            },
            &(),
        )
        .await
        .unwrap();
    let analyser = Arc::new(Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    ));
    let snapshot = stored_page(store, "http://pirate.example/book/1.html", &pirate_page()).await;
    let cases = analyser.analyse(snapshot).await.unwrap().cases;
    assert_eq!(cases.len(), 1, "the pirate page opens one case");
    cases[0]
}

pub async fn users(store: &Store) {
    for (name, role) in [
        ("alice", Role::Admin),
        ("rita", Role::Reviewer),
        ("vic", Role::Viewer),
    ] {
        accounts::add_user(store, name, None, role, "correct horse battery", "test")
            .await
            .unwrap();
    }
}
