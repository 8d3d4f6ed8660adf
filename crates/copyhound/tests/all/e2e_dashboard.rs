//! The dashboard in a real headless Chromium on a phone's screen (390×844): the set-up
//! checklist and the charts fit the width (nothing scrolls sideways), in English and in
//! Chinese, with no console error (the charts need no inline style under the CSP).

use crate::browser;
use crate::common;

use browser::{Browser, Server};

/// Whether the page is wider than the window, and by how much, as `(scrollWidth,
/// innerWidth)`.
async fn widths(b: &Browser<'_>) -> (u64, u64) {
    let ret = b
        .driver
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth];",
            Vec::new(),
        )
        .await
        .unwrap();
    let pair: Vec<u64> = serde_json::from_value(ret.json().clone()).unwrap();
    (pair[0], pair[1])
}

async fn fits(b: &Browser<'_>, what: &str) {
    let (scroll, inner) = widths(b).await;
    if scroll > inner {
        b.fail(&format!(
            "{what} scrolls sideways at 390 px: {scroll} px wide in a {inner} px window"
        ))
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_fits_a_phone() {
    if !browser::available() {
        return;
    }
    let env = common::Env::new();
    // No rights holder, no works, no sites: the checklist shows.
    let server = Server::start(&env, &[]);
    let (b, _chromedriver) = browser::open(&env, &server, (390, 844), "en-US").await;
    b.goto("/").await;
    b.type_into("#username", "admin").await;
    b.type_into("#password", &server.password).await;
    b.click("#login").await;
    b.wait_el("the checklist", false, "#checklist").await;
    b.el("#todo-work a[href='/works']").await;
    b.el("#todo-rights_holder a[href='/settings']").await;
    // Nothing found yet: the chart and the funnel say what will appear there.
    b.el("#copies-chart-empty").await;
    b.el("#funnel-empty").await;
    for lang in ["en", "zh"] {
        if lang == "zh" {
            // The switch in the header keeps the language for the user.
            b.click("form[action='/account/language'] button").await;
            b.wait_for("the dashboard in Chinese", false, |t| {
                t.contains("设置 copyhound")
            })
            .await;
        }
        fits(&b, &format!("the dashboard ({lang})")).await;
        b.shot(&format!("dashboard-390-{lang}")).await;
        b.goto("/analytics").await;
        b.el("#copies-chart-empty").await;
        fits(&b, &format!("the analytics page ({lang})")).await;
        b.clean_console(&format!("the dashboard and analytics ({lang})"))
            .await;
        b.goto("/").await;
        b.el("#checklist").await;
    }
    b.driver.clone().quit().await.unwrap();
    server.stop();
}
