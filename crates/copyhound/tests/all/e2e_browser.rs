//! The admin UI end to end in a real headless Chromium (through chromedriver): `copyhound
//! serve` as a process with its workers, a local pirate site, and a rights team's whole
//! workflow driven as a person would, with a screenshot of each main page saved under
//! `target/screenshots/`.

use crate::browser;
use crate::common;

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
const LAOCAN: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");
/// 红楼梦 in traditional script, chapters 1–2 (public domain, same README); a second work,
/// so the review queue has two cases to move between.
const HONGLOU: &str = include_str!("../../../import/tests/data/hongloumeng_hant_1-2.txt");

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
                // One word edited inside the copy, which the case page marks as an edit.
                chapter_page(
                    "老残游记 第一回",
                    "/book/2.html",
                    &laocan_1.replacen("蓬莱阁", "蓬莱高阁", 1),
                ),
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

    // Dismissing without a reason: answered on the queue, the reason marked, the case
    // still ticked.
    b.goto("/cases").await;
    b.el("tr[data-case] input[name=ids]")
        .await
        .click()
        .await
        .unwrap();
    b.click("#bulk-dismiss").await;
    b.wait_el("the reason asked for", false, "#reason-error")
        .await;
    let ticked = b
        .driver
        .find(By::Css("tr[data-case] input[name=ids]"))
        .await
        .unwrap();
    assert!(ticked.is_selected().await.unwrap(), "the tick was lost");
    b.el("#bulk-reason[aria-invalid='true']").await;

    // The 老残游记 case: both chapters copied, their passages marked on both sides.
    b.goto("/cases").await;
    b.click("tr[data-case] a").await;
    b.wait_for("the case page", false, |t| t.contains("老残游记"))
        .await;
    let case_url = b.driver.current_url().await.unwrap().path().to_owned();
    // Every page of the case is a row with a real link, and has its passages beside the
    // chapter's, copied text marked on both sides.
    let rows = b
        .driver
        .find_all(By::Css("#case-pages tbody tr"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2, "{}", b.text().await);
    for page in ["book/1.html", "book/2.html"] {
        let link = b
            .el(&format!("#case-pages a.url[href='http://{pirate}/{page}']"))
            .await;
        assert_eq!(
            link.attr("rel").await.unwrap().as_deref(),
            Some("noopener noreferrer nofollow")
        );
    }
    let sections = b
        .driver
        .find_all(By::Css("section[data-page]"))
        .await
        .unwrap();
    assert_eq!(sections.len(), 2);
    for section in &sections {
        let page_side = section
            .find_all(By::Css(".passages [data-side=page] .m-copied"))
            .await
            .unwrap();
        let chapter_side = section
            .find_all(By::Css(".passages [data-side=chapter] .m-copied"))
            .await
            .unwrap();
        assert!(
            !page_side.is_empty() && !chapter_side.is_empty(),
            "{}",
            section.text().await.unwrap()
        );
    }
    let passage = b
        .el(".passages [data-side=page]")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        passage.chars().count() >= 300,
        "a whole chapter copied: {passage}"
    );
    let colour = b
        .el(".passages .m-copied")
        .await
        .css_value("background-color")
        .await
        .unwrap();
    assert_ne!(
        colour, "rgba(0, 0, 0, 0)",
        "the stylesheet marks the passage"
    );
    // The disguises: one page is in traditional script, the other has a word edited, which
    // is marked inside the passage rather than shown as copied.
    let table = b.el("#case-pages").await.text().await.unwrap();
    assert!(table.contains("converted script"), "{table}");
    assert!(table.contains("edited"), "{table}");
    assert!(
        !b.driver
            .find_all(By::Css("[data-side=chapter] .m-variant"))
            .await
            .unwrap()
            .is_empty()
    );
    let edits: Vec<String> = {
        let mut out = Vec::new();
        for e in b
            .driver
            .find_all(By::Css(
                "[data-side=page] .m-extra, [data-side=page] .m-changed",
            ))
            .await
            .unwrap()
        {
            out.push(e.text().await.unwrap());
        }
        out
    };
    assert!(edits.iter().any(|e| e.contains('高')), "{edits:?}");
    // j and k move between the case's pages.
    b.press("j").await;
    assert!(b.classes(&sections[0]).await.contains("current"));
    b.press("j").await;
    assert!(b.classes(&sections[1]).await.contains("current"));
    b.press("k").await;
    assert!(b.classes(&sections[0]).await.contains("current"));
    // The whole chapter beside the whole page.
    let whole = b
        .el("section[data-page] a.whole")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    b.goto(&whole).await;
    let chapter_side = b
        .el("#whole [data-side=chapter]")
        .await
        .text()
        .await
        .unwrap();
    assert!(chapter_side.chars().count() >= 2000, "{chapter_side}");
    b.shot("08-compare").await;
    b.goto(&case_url).await;

    // Dismissed by mistake, with its reason, then undone. d asks for the reason.
    b.press("d").await;
    let focused = b
        .driver
        .execute("return document.activeElement.id", Vec::new())
        .await
        .unwrap();
    assert_eq!(focused.json(), "dismiss-reason");
    b.el("#dismiss-reason option[value='not_ours']")
        .await
        .click()
        .await
        .unwrap();
    b.click("#to-dismissed").await;
    b.wait_el("the case dismissed", false, "#case-status.dismissed")
        .await;
    let history = b.text().await;
    assert!(history.contains("Not our text"), "{history}");
    b.el("#undo-message").await;
    b.shot("08-undo").await;
    b.click("#undo").await;
    b.wait_el("the dismissal undone", false, "#case-status.new")
        .await;
    b.shot("08-case").await;

    // Confirm it, draft a notice, mark it sent.
    b.type_into("#review input[name=note]", "整回复制，广告夹杂")
        .await;
    b.click("#to-confirmed").await;
    b.wait_el("the case confirmed", false, "#case-status.confirmed")
        .await;
    // The first thing offered after confirming is drafting the notice.
    let first = b
        .driver
        .execute(
            "return (document.getElementById('create-notice').compareDocumentPosition(\
             document.getElementById('case-pages')) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0",
            Vec::new(),
        )
        .await
        .unwrap();
    assert_eq!(first.json(), &serde_json::json!(true));
    b.el("#undo-message").await;
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
    // The page says the re-check is queued, then updates itself when it is done: no reload.
    b.wait_el("the re-check's word", false, "#queued").await;
    b.wait_el(
        "the page to say the re-check is done",
        false,
        "#queued[data-job='queued.recheck.done']",
    )
    .await;
    b.wait_for("the re-check to find the copies removed", false, |t| {
        t.contains("HTTP 404")
    })
    .await;
    b.wait_el("the case to be removed", false, "#case-status.removed")
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
    for action in [
        "work.upload",
        "site.watch",
        "site.crawl_now",
        "case.confirmed",
    ] {
        b.el(&format!("#audit [title='{action}']")).await;
    }
    b.shot("12-audit").await;

    phone_in_chinese(b, &case_url, &whole).await;
}

/// Every page a team uses, as a phone (390×844) shows it and in Chinese: none scrolls
/// sideways, and none shows a label left in English. Text that is data rather than a label
/// (URLs, hashes, page and chapter text, a notice in its own language) is left out of the
/// language check.
async fn phone_in_chinese(b: &Browser<'_>, case_url: &str, compare_url: &str) {
    b.driver.set_window_rect(0, 0, 390, 844).await.unwrap();
    b.goto("/").await;
    b.click("header.top form.inline button.link").await;
    b.wait_for("the UI in Chinese", false, |t| t.contains("案件"))
        .await;
    b.goto(case_url).await;
    let snapshot = b
        .el("#case-pages a[href^='/snapshots/']")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(snapshot.starts_with("/snapshots/"), "{snapshot:?}");
    // English labels that are also names here: the product's and the admin's user name.
    let data = ["copyhound", "admin"];
    let english: Vec<&str> = admin::LABELS
        .iter()
        .filter(|(_, en, zh)| {
            en != zh && en.len() >= 4 && en.chars().any(|c| c.is_ascii_alphabetic())
        })
        .map(|(_, en, _)| *en)
        .filter(|en| !data.contains(en))
        .collect();
    let pages = [
        "/",
        "/cases",
        "/cases?status=all",
        case_url,
        compare_url,
        snapshot.as_str(),
        "/works",
        "/works/1",
        "/sites",
        "/sites/1",
        "/notices",
        "/notices/1",
        "/analytics",
        "/jobs",
        "/users",
        "/candidates",
        "/webhooks",
        "/audit",
        "/settings",
        "/account",
        "/no-such-page",
    ];
    for path in pages {
        b.goto(path).await;
        let widths = b
            .driver
            .execute(
                "return [document.documentElement.scrollWidth, window.innerWidth]",
                Vec::new(),
            )
            .await
            .unwrap();
        let widths: Vec<i64> = serde_json::from_value(widths.json().clone()).unwrap();
        if widths[0] > widths[1] {
            b.shot("failure-wide").await;
            b.fail(&format!("{path} scrolls sideways at 390 px: {widths:?}"))
                .await;
        }
        // No table hides columns in a scroller of its own: wide tables are cards on a phone.
        let hidden = b
            .driver
            .execute(
                "return Array.from(document.querySelectorAll('table')) \
                   .filter(function (t) { return t.scrollWidth > t.clientWidth + 1; }) \
                   .map(function (t) { return t.id || t.className || t.outerHTML.slice(0, 80); });",
                Vec::new(),
            )
            .await
            .unwrap();
        let hidden: Vec<String> = serde_json::from_value(hidden.json().clone()).unwrap();
        if !hidden.is_empty() {
            b.shot("failure-table").await;
            b.fail(&format!(
                "{path} hides table columns in a scroller: {hidden:?}"
            ))
            .await;
        }
        let labels = b
            .driver
            .execute(
                "var c = document.body.cloneNode(true); \
                 c.querySelectorAll('.mono, pre, .url, .text, [data-raw], #notice-body') \
                  .forEach(function (e) { e.remove(); }); \
                 return c.textContent;",
                Vec::new(),
            )
            .await
            .unwrap();
        let labels = labels.json().as_str().unwrap_or_default().to_owned();
        let left: Vec<&str> = english
            .iter()
            .copied()
            .filter(|en| contains_word(&labels, en))
            .collect();
        if !left.is_empty() {
            b.fail(&format!("{path} shows English labels in Chinese: {left:?}"))
                .await;
        }
        server_said_in_chinese(b, path).await;
        if path == case_url {
            b.shot("13-phone-case").await;
        }
        if path == "/analytics" {
            // The chart's labels keep their size on a phone (they used to shrink with it).
            let height = b
                .driver
                .execute(
                    "var t = document.querySelector('svg.chart text.tick'); \
                     return t ? t.getBoundingClientRect().height : -1;",
                    Vec::new(),
                )
                .await
                .unwrap();
            let height = height.json().as_f64().unwrap_or(-1.0);
            assert!(height >= 11.0, "a chart label {height} px high on a phone");
        }
    }

    // A form refused in Chinese: the reasons beside its fields, not a word of English.
    b.goto("/sites").await;
    b.type_into("#site-url", "ftp://pirate.example/").await;
    b.type_into("#add-site input[name=schedule]", "every day")
        .await;
    b.navigating(
        "the refused site form",
        b.el("#add-site-button").await.click(),
    )
    .await;
    let refused = b.el(".field-error").await.text().await.unwrap();
    assert!(refused.contains("未被接受"), "{refused}");
    server_said_in_chinese(b, "/sites (refused)").await;
}

/// What the server said on the page at `path` (history notes, audit details, an error's
/// message, a field's refusal) holds no English word outside its data.
async fn server_said_in_chinese(b: &Browser<'_>, path: &str) {
    let said = b
        .driver
        .execute(
            "var out = []; \
             document.querySelectorAll('#error-message, #history, #audit td.details, \
               .field-error').forEach(function (e) { \
               var c = e.cloneNode(true); \
               c.querySelectorAll('.mono').forEach(function (m) { m.remove(); }); \
               var w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT); \
               while (w.nextNode()) { out.push(w.currentNode.nodeValue); } }); \
             return out.join(' ');",
            Vec::new(),
        )
        .await
        .unwrap();
    let said = said.json().as_str().unwrap_or_default().to_owned();
    let words = testkit::english::english_words(&said);
    if !words.is_empty() {
        b.fail(&format!(
            "{path}: the server's words left in English: {words:?} in {said:?}"
        ))
        .await;
    }
}

/// Whether `text` holds `phrase` as whole words (not inside a longer word).
fn contains_word(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}
