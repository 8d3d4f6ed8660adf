//! The admin UI end to end in a real headless Chromium (through chromedriver): `copyhound
//! serve` as a process with its workers, a local pirate site, and a rights team's whole
//! workflow driven as a person would, with a screenshot of each main page saved under
//! `target/screenshots/`.

mod browser;
mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use browser::{Browser, Server};
use thirtyfour::prelude::*;

/// 老残游记: its contents and first two chapters (public domain, see the import crate's
/// `tests/data/README.md`); the work registered by upload.
const LAOCAN: &str = include_str!("../../import/tests/data/laocanyouji_toc_1-2.txt");
/// 红楼梦 in traditional script, chapters 1–2 (public domain, same README); a second work,
/// so the review queue has two cases to move between.
const HONGLOU: &str = include_str!("../../import/tests/data/hongloumeng_hant_1-2.txt");

/// The rights holder the notices speak for, as a deployment sets it.
const PROFILE: &[(&str, &str)] = &[
    ("COPYHOUND_NOTICES__RIGHTS_HOLDER__NAME", "老残出版社"),
    (
        "COPYHOUND_NOTICES__RIGHTS_HOLDER__ADDRESS",
        "济南府明湖路 1 号",
    ),
    (
        "COPYHOUND_NOTICES__RIGHTS_HOLDER__EMAIL",
        "legal@laocan.example",
    ),
    ("COPYHOUND_NOTICES__RIGHTS_HOLDER__SIGNATORY", "黄人瑞"),
];

/// `text` between its first `start` and the `end` after it (or its end).
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start} not in the text"));
    let rest = &text[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The pirate site: an index linking to three copied chapters and one page of its own. The
/// copies come with ads around and inside the text; one is in traditional characters, one
/// turned from traditional to simplified. `down` makes the copies answer 404 (taken down).
#[derive(Clone)]
struct Pirate {
    pages: Arc<Vec<(&'static str, String)>>,
    down: Arc<AtomicBool>,
}

fn chapter_page(title: &str, next: &str, text: &str) -> String {
    let mut body = String::new();
    for (i, para) in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        body.push_str(&format!("<p>{para}</p>\n"));
        if i % 6 == 5 {
            body.push_str(
                "<p class=\"ad\">（本章未完，记住本站网址 www.pirate.example 免费阅读）</p>\n",
            );
        }
    }
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title} - 免费小说网</title></head>\
         <body><div class=\"nav\"><a href=\"/\">首页</a> · <a href=\"{next}\">下一章</a></div>\
         <div class=\"ad\">【广告】注册即送 888 元，点击领取！</div>\
         <h1>{title}</h1><div id=\"content\">{body}</div>\
         <div class=\"ad\">【广告】澳门首家线上娱乐城</div></body></html>"
    )
}

impl Pirate {
    fn new() -> Self {
        let laocan_1 = between(LAOCAN, "第一回 土不制水", "第二回 历山山下");
        let laocan_2 = between(LAOCAN, "第二回 历山山下", "\u{0}");
        let honglou_1 = between(HONGLOU, "第一回", "第二回　");
        let index =
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>免费小说网</title></head>\
             <body><h1>免费小说网</h1><ul>\
             <li><a href=\"/book/1.html\">老残游记 第一回</a></li>\
             <li><a href=\"/book/2.html\">老殘遊記 第二回</a></li>\
             <li><a href=\"/hlm/1.html\">红楼梦 第一回</a></li>\
             <li><a href=\"/about.html\">关于本站</a></li></ul></body></html>"
                .to_owned();
        let about = "<!doctype html><html><head><meta charset=\"utf-8\"><title>关于本站</title></head>\
             <body><h1>关于本站</h1><div id=\"content\"><p>本站是一个由爱好者维护的阅读站点，\
             每天更新热门小说的推荐书单和读者评论。如果您喜欢本站，请把网址分享给朋友。\
             我们欢迎读者来信提出意见和建议，也欢迎作者与我们联系合作事宜。</p>\
             <p>联系邮箱：admin@pirate.example。本站所有推荐内容均来自读者投稿。</p></div></body></html>"
            .to_owned();
        let pages = vec![
            ("/", index),
            ("/about.html", about),
            (
                "/book/1.html",
                chapter_page("老残游记 第一回", "/book/2.html", laocan_1),
            ),
            (
                "/book/2.html",
                chapter_page(
                    "老殘遊記 第二回",
                    "/hlm/1.html",
                    &zhconv::zhconv(laocan_2, zhconv::Variant::ZhHant),
                ),
            ),
            (
                "/hlm/1.html",
                chapter_page(
                    "红楼梦 第一回",
                    "/",
                    &zhconv::zhconv(honglou_1, zhconv::Variant::ZhHans),
                ),
            ),
        ];
        Pirate {
            pages: Arc::new(pages),
            down: Arc::new(AtomicBool::new(false)),
        }
    }
}

async fn pirate_page(State(site): State<Pirate>, uri: axum::http::Uri) -> Response {
    let copy = uri.path() != "/" && uri.path() != "/about.html";
    if copy && site.down.load(Ordering::SeqCst) {
        return StatusCode::NOT_FOUND.into_response();
    }
    match site.pages.iter().find(|(path, _)| *path == uri.path()) {
        Some((_, html)) => Html(html.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Serves the pirate site on 127.0.0.1 until the sender is dropped, or ten minutes pass.
async fn serve_pirate(site: Pirate) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = Router::new().fallback(pirate_page).with_state(site);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = tokio::time::timeout(Duration::from_secs(600), rx).await;
            })
            .await;
    });
    (addr, tx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rights_team_works_a_case_from_upload_to_recheck_in_a_real_browser() {
    if !browser::available() {
        return;
    }
    let env = common::Env::new();
    let site = Pirate::new();
    let (pirate, _stop_pirate) = serve_pirate(site.clone()).await;
    let server = Server::start(&env, PROFILE);
    let (b, _chromedriver) = browser::open(&env, &server, (1280, 900), "en-US").await;

    workflow(&b, &env, pirate, &site).await;

    b.driver.clone().quit().await.unwrap();
    server.stop();
}

async fn workflow(b: &Browser<'_>, env: &common::Env, pirate: SocketAddr, site: &Pirate) {
    // Log in: a wrong password is refused, the one-time password printed at start works.
    b.goto("/").await;
    assert!(
        b.driver.current_url().await.unwrap().path() == "/login",
        "not sent to the login page"
    );
    b.shot("01-login").await;
    b.type_into("#username", "admin").await;
    b.type_into("#password", "not the password").await;
    b.click("#login").await;
    b.el("#login-error").await;
    // The refused form keeps the name typed.
    b.el("#username").await.clear().await.unwrap();
    b.type_into("#username", "admin").await;
    b.type_into("#password", &b.server.password).await;
    b.click("#login").await;
    b.wait_for("the dashboard", false, |t| t.contains("Dashboard"))
        .await;
    b.shot("02-dashboard").await;

    // Register both works by uploading their files, and wait for their imports.
    for (name, text) in [("老残游记.txt", LAOCAN), ("红楼梦.txt", HONGLOU)] {
        let file = env.file(name, text.as_bytes());
        b.click("nav a[href='/works']").await;
        b.type_into("#work-file", file.to_str().unwrap()).await;
        b.click("#upload").await;
    }
    b.wait_for("both imports to finish", true, |t| {
        t.contains("老残游记")
            && t.contains("红楼梦")
            && !t.contains("queued")
            && !t.contains("running")
    })
    .await;
    assert!(
        b.driver.find(By::Id("imports")).await.is_err(),
        "an import failed: {}",
        b.text().await
    );
    b.shot("03-works").await;
    b.click("#works a").await;
    let work = b
        .wait_for("the work's page", false, |t| t.contains("第二回"))
        .await;
    assert!(work.contains("第一回"), "{work}");
    b.shot("04-work").await;

    // Add the pirate site, crawl it now, and wait on its page (which reloads itself) for
    // the crawl to end.
    b.click("nav a[href='/sites']").await;
    b.type_into("#site-url", &format!("http://{pirate}/")).await;
    b.type_into("#add-site input[name=name]", "免费小说网")
        .await;
    b.type_into("#add-site input[name=max_pages]", "20").await;
    b.type_into("#add-site input[name=delay_ms]", "10").await;
    b.click("#add-site-button").await;
    b.wait_for("the site's page", false, |t| t.contains("免费小说网"))
        .await;
    let site_page = b.driver.current_url().await.unwrap().path().to_owned();
    b.click("#crawl-now").await;
    b.wait_for(
        "the crawl to finish (the page reloads itself)",
        false,
        |t| t.split_whitespace().any(|w| w == "done"),
    )
    .await;
    // Its pages' match jobs may still be running: the cases come in on a reload.
    b.wait_for("a case per work on the crawl's row", true, |t| {
        t.split_whitespace().filter(|w| w.starts_with('#')).count() == 2
    })
    .await;
    b.shot("06-site").await;
    b.goto("/sites").await;
    b.el(&format!("#sites a[href='{site_page}']")).await;
    b.shot("05-sites").await;

    // The review queue: both new cases; j/k move the current row, c confirms it.
    b.click("nav a[href='/cases']").await;
    let rows = b.driver.find_all(By::Css("tr[data-case]")).await.unwrap();
    assert_eq!(rows.len(), 2, "{}", b.text().await);
    b.shot("07-review").await;
    assert!(
        b.classes(&rows[0]).await.contains("current"),
        "the first row starts current"
    );
    b.press("j").await;
    assert!(
        b.classes(&rows[1]).await.contains("current"),
        "j moves down"
    );
    assert!(!b.classes(&rows[0]).await.contains("current"));
    b.press("k").await;
    assert!(b.classes(&rows[0]).await.contains("current"), "k moves up");
    let honglou = if rows[0].text().await.unwrap().contains("红楼梦") {
        0
    } else {
        1
    };
    let honglou_id = rows[honglou].attr("data-case").await.unwrap().unwrap();
    if honglou == 1 {
        b.press("j").await;
    }
    // A held key's repeats do nothing but move: holding c must not confirm case after
    // case as each page loads. (The form's submit event fires within the key's dispatch.)
    let submitted = b
        .driver
        .execute(
            "var sent = false, form = document.getElementById('bulk'); \
             function stop(e) { sent = true; e.preventDefault(); } \
             form.addEventListener('submit', stop); \
             document.dispatchEvent(new KeyboardEvent('keydown', { key: 'c', repeat: true })); \
             form.removeEventListener('submit', stop); \
             return sent;",
            Vec::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        submitted.json(),
        &serde_json::json!(false),
        "a repeated c acted"
    );
    b.key("c").await;
    b.wait_for("c to confirm the 红楼梦 case", false, |t| {
        !t.contains("红楼梦")
    })
    .await;
    if !b.text().await.contains("老残游记") {
        b.goto("/audit").await;
        b.fail("c confirmed more than the current case").await;
    }
    b.goto("/cases?status=confirmed").await;
    b.el(&format!("tr[data-case='{honglou_id}']")).await;

    // The 老残游记 case: both chapters copied, their passages marked on both sides.
    b.goto("/cases").await;
    b.click("tr[data-case] a").await;
    b.wait_for("the case page", false, |t| t.contains("老残游记"))
        .await;
    let case_url = b.driver.current_url().await.unwrap().path().to_owned();
    let page_marks = b
        .driver
        .find_all(By::Css(".passages mark.page"))
        .await
        .unwrap();
    let chapter_marks = b
        .driver
        .find_all(By::Css(".passages mark.chapter"))
        .await
        .unwrap();
    assert!(page_marks.len() >= 2, "{}", b.text().await);
    assert_eq!(page_marks.len(), chapter_marks.len());
    let marked = page_marks[0].text().await.unwrap();
    assert!(
        marked.chars().count() >= 300,
        "a whole chapter copied: {marked}"
    );
    let colour = page_marks[0].css_value("background-color").await.unwrap();
    assert_ne!(
        colour, "rgba(0, 0, 0, 0)",
        "the stylesheet marks the passage"
    );
    let sections = b.text().await;
    assert!(
        sections.contains(&format!("http://{pirate}/book/1.html")),
        "{sections}"
    );
    assert!(
        sections.contains(&format!("http://{pirate}/book/2.html")),
        "{sections}"
    );
    b.shot("08-case").await;

    // Confirm it, draft a notice, mark it sent.
    b.type_into("#review input[name=note]", "整回复制，广告夹杂")
        .await;
    b.click("#to-confirmed").await;
    b.wait_el("the case confirmed", false, "#case-status.confirmed")
        .await;
    b.el("#notice-template option[value='cn']")
        .await
        .click()
        .await
        .unwrap();
    b.type_into("#create-notice input[name=to]", "abuse@pirate.example")
        .await;
    b.click("#draft-notice").await;
    let notice = b
        .wait_for("the drafted notice", false, |t| {
            t.contains("abuse@pirate.example")
        })
        .await;
    let body = b.el("#notice-body").await.text().await.unwrap();
    for part in [
        "老残出版社",
        "黄人瑞",
        "第十四条",
        &format!("http://{pirate}/book/1.html"),
    ] {
        assert!(
            body.contains(part),
            "{part} missing from the notice:\n{body}"
        );
    }
    assert!(notice.contains("Draft"), "{notice}");
    b.shot("09-notice").await;
    b.click("#mark-sent").await;

    // Back on the case: the re-checks are scheduled. The site takes the copies down; a
    // re-check now finds them gone and the case removed.
    let recheck = b.wait_el("the re-check block", false, "#recheck").await;
    let scheduled = recheck.text().await.unwrap();
    assert!(scheduled.contains("Next re-check"), "{scheduled}");
    assert_eq!(b.driver.current_url().await.unwrap().path(), case_url);
    b.el("#case-status.notice_sent").await;
    site.down.store(true, Ordering::SeqCst);
    b.click("#recheck-now").await;
    b.wait_for("the re-check to find the copies removed", true, |t| {
        t.contains("HTTP 404")
    })
    .await;
    b.wait_el("the case to be removed", true, "#case-status.removed")
        .await;
    b.el("#recheck").await.scroll_into_view().await.unwrap();
    b.shot("08-case-rechecked").await;

    // The other pages the team reads.
    b.goto("/analytics").await;
    b.shot("10-analytics").await;
    b.goto("/jobs").await;
    assert!(
        b.driver
            .find_all(By::Css("#dead-jobs tbody tr"))
            .await
            .unwrap()
            .is_empty(),
        "{}",
        b.text().await
    );
    b.shot("11-jobs").await;
    b.goto("/audit").await;
    let audit = b.text().await;
    for action in [
        "work.upload",
        "site.watch",
        "site.crawl_now",
        "case.confirmed",
    ] {
        assert!(
            audit.contains(action),
            "{action} not in the audit log:\n{audit}"
        );
    }
    b.shot("12-audit").await;
}
