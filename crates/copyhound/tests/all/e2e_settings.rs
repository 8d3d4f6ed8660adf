//! Issue #26 in a real headless Chromium: `copyhound serve` as a process, the first admin
//! changing the one-time password on the account page and logging in with the new one, a
//! settings form refused on the form with what was typed kept, the rights holder and time
//! zone saved on the settings page and used by the notice drafted next, and the app's own
//! 404 page.

use crate::browser;
use crate::common;

use axum::Router;
use axum::response::Html;
use browser::{Browser, Server};

/// 老残游记: its contents and first two chapters (public domain, see the import crate's
/// `tests/data/README.md`); the work a local pirate page copies.
const LAOCAN: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");

const NEW_PASSWORD: &str = "a fresh passphrase for 老残 42";

/// A confirmed case against the work, made with the command line before the UI starts: the
/// work imported, a pirate page on 127.0.0.1 crawled and matched, the case confirmed.
async fn confirmed_case(env: &common::Env) {
    let work = env.file("老残游记.txt", LAOCAN.as_bytes());
    let out = env.run(&["works", "import", work.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    // The chapter itself, not its line in the contents.
    let start = LAOCAN.rfind("第一回").unwrap();
    let end = LAOCAN.rfind("第二回").unwrap();
    let page = format!(
        "<html><body><h1>最新章节</h1><div id=\"content\">{}</div></body></html>",
        LAOCAN[start..end].replace('\n', "<br>\n")
    );
    let app = Router::new().route(
        "/book/1.html",
        axum::routing::get(move || async { Html(page) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let site = tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}/book/1.html");
    let out = tokio::task::spawn_blocking({
        let db = env.db.clone();
        move || {
            common::copyhound(&db)
                .args(["crawl", &url, "--allow-private", "--max-pages", "5"])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    site.abort();
    let out = env.run(&["cases", "set", "1", "confirmed"]);
    assert!(out.status.success(), "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_account_form_errors_and_404_in_a_browser() {
    if !browser::available() {
        return;
    }
    let env = common::Env::new();
    confirmed_case(&env).await;
    let server = Server::start(&env, &[]);
    let (b, _chromedriver) = browser::open(&env, &server, (1280, 900), "en-US").await;
    run(&b).await;
    drop(b);
    server.stop();
}

async fn log_in(b: &Browser<'_>, password: &str) {
    b.goto("/login").await;
    b.el("#username").await.clear().await.unwrap();
    b.type_into("#username", "admin").await;
    b.type_into("#password", password).await;
    b.click("#login").await;
}

/// The value an input holds now.
async fn value(b: &Browser<'_>, css: &str) -> String {
    b.el(css)
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

async fn run(b: &Browser<'_>) {
    // The one-time password works; the account page changes it.
    log_in(b, &b.server.password).await;
    b.wait_for("the dashboard", false, |t| t.contains("Dashboard"))
        .await;
    b.click("#nav-account").await;
    b.type_into("#current_password", "not the password").await;
    b.type_into("#new_password", NEW_PASSWORD).await;
    b.type_into("#confirm_password", NEW_PASSWORD).await;
    b.click("#change-password").await;
    let error = b.el("#current_password-error").await;
    assert!(
        error
            .text()
            .await
            .unwrap()
            .contains("current password is wrong"),
        "{}",
        b.text().await
    );
    assert_eq!(
        b.el("#current_password")
            .await
            .attr("aria-invalid")
            .await
            .unwrap()
            .as_deref(),
        Some("true")
    );
    b.type_into("#current_password", &b.server.password).await;
    b.type_into("#new_password", NEW_PASSWORD).await;
    b.type_into("#confirm_password", NEW_PASSWORD).await;
    b.click("#change-password").await;
    b.el("#password-changed").await;
    b.shot("settings-01-account").await;
    b.click("#logout").await;
    log_in(b, &b.server.password).await;
    b.el("#login-error").await;
    // The refused login kept the name.
    assert_eq!(value(b, "#username").await, "admin");
    log_in(b, NEW_PASSWORD).await;
    b.wait_for("the dashboard", false, |t| t.contains("Dashboard"))
        .await;

    // A refused settings form: the message beside the field, everything typed kept.
    b.click("#nav-settings").await;
    b.el("#setting-name").await.clear().await.unwrap();
    b.type_into("#setting-name", "示例出版社").await;
    b.type_into("#setting-address", "济南府明湖路 1 号").await;
    b.type_into("#setting-email", "legal@laocan.example").await;
    b.type_into("#setting-signatory", "黄人瑞").await;
    b.el("#setting-time_zone").await.clear().await.unwrap();
    b.type_into("#setting-time_zone", "Asia/Shang-hai").await;
    b.click("#save-settings").await;
    let error = b.el("#time_zone-error").await;
    assert!(
        error.text().await.unwrap().contains("Unknown time zone"),
        "{}",
        b.text().await
    );
    assert_eq!(value(b, "#setting-time_zone").await, "Asia/Shang-hai");
    assert_eq!(value(b, "#setting-name").await, "示例出版社");
    assert_eq!(value(b, "#setting-signatory").await, "黄人瑞");
    b.shot("settings-02-refused").await;
    b.el("#setting-time_zone").await.clear().await.unwrap();
    b.type_into("#setting-time_zone", "Asia/Shanghai").await;
    b.click("#save-settings").await;
    b.el("#settings-saved").await;
    assert!(b.text().await.contains("Saved here by admin"));
    b.shot("settings-03-saved").await;

    // The notice drafted next speaks for the saved rights holder, dated in the saved zone.
    b.goto("/cases/1").await;
    b.click("#draft-notice").await;
    let text = b.el("#notice-body").await.text().await.unwrap();
    assert!(text.contains("示例出版社"), "{text}");
    assert!(text.contains("黄人瑞"), "{text}");
    assert!(text.contains("+08:00"), "{text}");
    // The notice page's own times are in that zone too.
    assert!(b.text().await.contains("+08:00"));
    b.shot("settings-04-notice").await;

    // An address no page has: the app's 404 page with its navigation.
    b.goto("/no/such/page").await;
    let text = b.text().await;
    assert!(
        text.contains("404") && text.contains("Page not found"),
        "{text}"
    );
    b.el("#nav-settings").await;
    b.shot("settings-05-404").await;
}
