//! What the pipeline's tests share.

#![allow(dead_code)] // each test file uses part of it

pub mod smtp;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::StatusCode;
use chrono::Utc;
use import::{ImportOptions, ImportSettings, Importer};
use sha2::Digest;
use store::{
    CaseId, CaseReads, CaseStatus, CaseWrites, EvidenceWrites, NewSnapshot, SnapshotId, Store,
    WorkId,
};
use takedown::{NoticeSettings, RightsHolder};

/// 封神演义 1–3 (traditional): the protected work.
pub const WORK: &str = include_str!("../../../import/tests/data/fengshenyanyi_hant_1-3.txt");

/// Chapter `n` (1–3) in simplified script with an ad in front: a pirate page.
pub fn pirate_chapter(n: usize) -> String {
    let marks = ["第一回", "第二回", "第三回"];
    let start = WORK.find(marks[n - 1]).expect("chapter start");
    let end = marks
        .get(n)
        .and_then(|m| WORK.find(m))
        .unwrap_or(WORK.len());
    let chapter = zhconv::zhconv(&WORK[start..end], zhconv::Variant::ZhHans);
    format!("【本站首发】最新章节请访问 www.example.com！\n{chapter}")
}

/// A complete rights holder's profile.
pub fn profile() -> NoticeSettings {
    NoticeSettings {
        rights_holder: RightsHolder {
            name: "Fengshen Press 封神出版社".into(),
            address: "1 Example Road, Beijing".into(),
            email: "legal@press.example".into(),
            phone: "+86 10 1234 5678".into(),
            signatory: "Li Lei 李雷".into(),
        },
        ..NoticeSettings::default()
    }
}

/// [`WORK`] registered, chapter 2 stored as the page at `url` and matched, and the case it
/// opened confirmed by a reviewer.
pub async fn confirmed_case(store: &Store, url: &str) -> CaseId {
    Importer::new(ImportSettings::default())
        .unwrap()
        .import_bytes(
            store,
            "fengshen.txt",
            WORK.as_bytes().to_vec(),
            &ImportOptions::default(),
            &(),
        )
        .await
        .unwrap();
    let analyser = detection::Analyser::new(
        store.clone(),
        Default::default(),
        matcher::MatcherSettings::default(),
    );
    let id = stored_page(store, url, &pirate_chapter(2)).await;
    let case = analyser.analyse(id).await.unwrap().cases[0];
    store
        .set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    case
}

/// A page as a crawl would have stored it: a plain-text response from `url` (its body
/// `text`) and its page text, not matched yet.
pub async fn stored_page(store: &Store, url: &str, text: &str) -> SnapshotId {
    stored_page_at(store, url, text, Utc::now()).await
}

/// [`stored_page`] as fetched at `at`.
pub async fn stored_page_at(
    store: &Store,
    url: &str,
    text: &str,
    at: chrono::DateTime<Utc>,
) -> SnapshotId {
    let body = text.as_bytes();
    let new = NewSnapshot {
        content_type: Some("text/plain; charset=utf-8".into()),
        sha256: sha2::Sha256::digest(body).into(),
        body_len: body.len() as u64,
        elapsed_ms: 1,
        ..store::testing::sample_snapshot(url, 0, at)
    };
    let (id, _) = store
        .insert_snapshot(&new, Some(&zstd::encode_all(body, 1).unwrap()))
        .await
        .unwrap();
    store
        .insert_page_text(&store::testing::sample_page_text(id, url, text))
        .await
        .unwrap();
    id
}

/// Imports `text` as the work `name` (a file name: its extension says the format).
pub async fn import(store: &Store, name: &str, text: &str) -> WorkId {
    Importer::new(ImportSettings::default())
        .unwrap()
        .import_bytes(
            store,
            name,
            text.as_bytes().to_vec(),
            &ImportOptions::default(),
            &(),
        )
        .await
        .unwrap()
        .work
}

/// A site serving `pages` (path → HTML; `""` is the home page) on 127.0.0.1, robots.txt
/// absent; it stops with the runtime.
pub async fn site(pages: BTreeMap<String, String>) -> std::net::SocketAddr {
    let pages = Arc::new(pages);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let pages = Arc::clone(&pages);
        async move {
            match pages.get(uri.path().trim_start_matches('/')) {
                Some(body) => (
                    StatusCode::OK,
                    [("content-type", "text/html; charset=utf-8")],
                    body.clone(),
                ),
                None => (
                    StatusCode::NOT_FOUND,
                    [("content-type", "text/plain")],
                    String::new(),
                ),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// The job handler of `store` with default settings: imports, crawls and matches.
pub fn handler(store: &Store) -> pipeline::Handler {
    pipeline::Handler::new(
        store.clone(),
        Importer::new(ImportSettings::default()).unwrap(),
        Arc::new(detection::Analyser::new(
            store.clone(),
            Default::default(),
            matcher::MatcherSettings::default(),
        )),
    )
}

/// (case, work, status, pages, chapters matched) of every case.
pub async fn cases(store: &Store) -> Vec<(i64, i64, String, u32, u32)> {
    store
        .cases(&store::CaseFilter::default(), None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|c| {
            (
                c.id.0,
                c.work_id.0,
                c.status.as_str().to_owned(),
                c.pages,
                c.chapters_matched,
            )
        })
        .collect()
}

/// [`handler`] whose analyser holds `shard` of the index.
pub fn shard_handler(store: &Store, shard: bounds::Shard) -> pipeline::Handler {
    pipeline::Handler::new(
        store.clone(),
        Importer::new(ImportSettings::default()).unwrap(),
        Arc::new(
            detection::Analyser::new(
                store.clone(),
                Default::default(),
                matcher::MatcherSettings::default(),
            )
            .with_shard(shard),
        ),
    )
}
