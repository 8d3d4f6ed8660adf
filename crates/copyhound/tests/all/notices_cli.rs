//! `copyhound notices` as a rights team runs it, on both backends: a case crawled from a
//! local pirate site is confirmed, a notice drafted with each template and the rights
//! holder's profile from the environment, shown, marked sent, and re-checked once the site
//! took the copy down; `cases show` tells the story.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use common::{json, json_with, ok_with, run_with};

/// 三国演义 1–10, registered.
const SANGUO: &str = include_str!("../../../matcher/tests/data/sanguoyanyi_1-10.txt");

const PROFILE: &[(&str, &str)] = &[
    ("COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE", "true"),
    ("COPYHOUND_NOTICES__RIGHTS_HOLDER__NAME", "三国出版社"),
    (
        "COPYHOUND_NOTICES__RIGHTS_HOLDER__ADDRESS",
        "北京市东城区某路 1 号",
    ),
    (
        "COPYHOUND_NOTICES__RIGHTS_HOLDER__EMAIL",
        "legal@sanguo.example",
    ),
    (
        "COPYHOUND_NOTICES__RIGHTS_HOLDER__PHONE",
        "+86 10 8888 0000",
    ),
    ("COPYHOUND_NOTICES__RIGHTS_HOLDER__SIGNATORY", "韩梅梅"),
];

async fn chapter(State(up): State<Arc<AtomicBool>>) -> Response {
    if !up.load(Ordering::SeqCst) {
        return StatusCode::GONE.into_response();
    }
    let start = SANGUO.find("第二回").unwrap();
    let end = SANGUO.find("第三回").unwrap();
    Html(format!(
        "<html><head><meta charset=\"utf-8\"><title>第二回</title></head><body>\
         <div id=\"content\">{}</div></body></html>",
        SANGUO[start..end].replace('\n', "<br>")
    ))
    .into_response()
}

async fn site(up: Arc<AtomicBool>) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = Router::new()
        .route("/book/2.html", axum::routing::get(chapter))
        .with_state(up);
    common::serve(app).await
}

async fn notices(db: &str, dir: &std::path::Path) {
    let up = Arc::new(AtomicBool::new(true));
    let (addr, _stop) = site(Arc::clone(&up)).await;
    let novel = dir.join("三国演义.txt");
    std::fs::write(&novel, SANGUO).unwrap();
    ok_with(db, PROFILE, &["works", "import", novel.to_str().unwrap()]).await;
    let url = format!("http://{addr}/book/2.html");
    let crawl = json(db, &["crawl", &url, "--allow-private", "--json"]).await;
    assert_eq!(crawl["status"], "done", "{crawl}");
    let cases = json(db, &["cases", "list", "--json"]).await;
    let case = cases[0]["id"].to_string();

    // Unconfirmed: refused, saying why.
    let out = run_with(db, PROFILE, &["notices", "create", &case]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("confirm"), "{stderr}");
    ok_with(db, PROFILE, &["cases", "set", &case, "confirmed"]).await;
    // Without a profile: the settings to fill in are named.
    let out = run_with(
        db,
        &[],
        &["notices", "create", &case, "--to", "a@b.example"],
    )
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("notices.rights_holder.name"), "{stderr}");

    let mut drafted = Vec::new();
    for template in ["cn", "dmca"] {
        let n = json_with(
            db,
            PROFILE,
            &[
                "notices",
                "create",
                &case,
                "--template",
                template,
                "--to",
                "abuse@hoster.example",
                "--json",
            ],
        )
        .await;
        assert_eq!(n["status"], "draft", "{n}");
        assert_eq!(n["recipient"], "abuse@hoster.example");
        drafted.push(n["id"].to_string());
    }
    let listed = json(db, &["notices", "list", "--case", &case, "--json"]).await;
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    let text = ok_with(db, &[], &["notices", "show", &drafted[0]]).await;
    for element in [
        "三国出版社",
        "韩梅梅",
        "legal@sanguo.example",
        "第十四条",
        &url,
        "SHA-256",
    ] {
        assert!(text.contains(element), "{element} missing:\n{text}");
    }
    let html = ok_with(
        db,
        &[],
        &["notices", "show", &drafted[1], "--format", "html"],
    )
    .await;
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("under penalty of perjury"), "{html}");
    let out = run_with(db, &[], &["notices", "show", "999"]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("notices list"));

    // Sent: the case moves on; once the page answers 410, a re-check removes the case.
    let sent = ok_with(db, PROFILE, &["notices", "mark-sent", &drafted[0]]).await;
    assert!(sent.contains("re-checked from"), "{sent}");
    let out = run_with(db, PROFILE, &["notices", "mark-sent", &drafted[0]]).await;
    assert!(!out.status.success(), "sent twice");
    let shown = json(db, &["cases", "show", &case, "--json"]).await;
    assert_eq!(shown["case"]["status"], "notice_sent");
    assert_eq!(shown["recheck"]["checks"], 0);
    let still = ok_with(db, PROFILE, &["notices", "recheck", &case]).await;
    assert!(
        still.contains("still up 0 days after the notice"),
        "{still}"
    );
    up.store(false, Ordering::SeqCst);
    let gone = json_with(db, PROFILE, &["notices", "recheck", &case, "--json"]).await;
    assert_eq!(gone["case_removed"], true, "{gone}");
    assert_eq!(gone["recheck"]["copies"][0]["reason"], "HTTP 410");
    let text = ok_with(db, &[], &["cases", "show", &case]).await;
    assert!(text.contains("— removed"), "{text}");
    assert!(text.contains("removed  http://"), "{text}");
    assert!(text.contains("HTTP 410 (snapshot"), "{text}");
    assert!(text.contains("every copy is gone"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_and_rechecks_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    notices(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_and_rechecks_on_postgres() {
    let Some(db) = store::testing::postgres("notices_cli").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    notices(&db.url, dir.path()).await;
}
