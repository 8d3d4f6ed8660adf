//! Issue #45 point 4 through the router, on SQLite and Postgres: a team working in Chinese
//! meets no English sentence of the server's. Every form is refused with the wrong input a
//! person types, every error page is met, and what the server said (the message beside a
//! field, the error page's message, the audit log's details) is checked for English words
//! outside its data (`testkit::english::english_words`).

use crate::common;

use axum::http::{StatusCode, header};
use store::testing::TestDb;
use store::{CaseReads, Users};

use common::ui::{Answer, Ui};
use common::{users, with_case};

const PASSWORD: &str = "correct+horse+battery";

/// The text of every message the server said on `html` (beside a field, on the error page),
/// without its values (`span.mono`, which are data).
fn messages(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for marker in ["class=\"field-error\"", "id=\"error-message\""] {
        let mut rest = html;
        while let Some(at) = rest.find(marker) {
            let after = &rest[at..];
            let Some(open_end) = after.find('>') else {
                break;
            };
            let (text, used) = element_text(&after[open_end + 1..]);
            found.push(text);
            rest = &after[open_end + 1 + used..];
        }
    }
    found
}

/// The text of an element whose start tag ends where `html` starts, up to its end tag, with
/// `mono` spans (values) left out; and how many bytes it took.
fn element_text(html: &str) -> (String, usize) {
    let mut text = String::new();
    // For each open element: whether it (or one around it) holds a value.
    let mut open: Vec<bool> = vec![false];
    let mut i = 0;
    while i < html.len() && !open.is_empty() {
        let rest = &html[i..];
        if let Some(tag) = rest.strip_prefix('<') {
            let end = tag.find('>').map_or(rest.len(), |e| e + 2);
            let inner = &rest[1..end - 1];
            if inner.starts_with('/') {
                open.pop();
            } else if !inner.ends_with('/') && !inner.starts_with("br") {
                let value = *open.last().unwrap_or(&false) || inner.contains("mono");
                open.push(value);
            }
            i += end;
        } else {
            let next = rest.find('<').unwrap_or(rest.len());
            if !open.last().copied().unwrap_or(true) {
                text.push_str(&rest[..next]);
            }
            i += next;
        }
    }
    (text.replace("&#34;", "\"").replace("&quot;", "\""), i)
}

/// Collects what each answer said in English, to fail once with all of them.
#[derive(Default)]
struct Walk {
    english: Vec<String>,
}

impl Walk {
    /// `a` answered `status` and said at least one message, none with English words.
    fn check(&mut self, what: &str, a: &Answer, status: StatusCode) {
        assert_eq!(a.status, status, "{what}: {}", a.body);
        let said = messages(&a.body);
        assert!(!said.is_empty(), "{what}: no message: {}", a.body);
        for message in said {
            let words = testkit::english::english_words(&message);
            if !words.is_empty() {
                self.english
                    .push(format!("{what}: {message:?} ({words:?})"));
            }
        }
    }
}

fn multipart(csrf: &str, fields: &[(&str, &str)]) -> (String, String) {
    let boundary = "XyZ";
    let mut body =
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n");
    for (name, value) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn the_server_says_nothing_in_english_to_a_chinese_team(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    let work = store.case(case).await.unwrap().work_id;
    let ui = Ui::with(store, |_| {});
    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    ui.speak_chinese(&admin, &csrf).await;
    let mut walk = Walk::default();
    let refused = StatusCode::UNPROCESSABLE_ENTITY;

    // Sites: every field wrong at once, a loopback address, a URL that is no URL, a site
    // watched already.
    let forms = [
        (
            "site: every field wrong",
            "/sites",
            "start_url=ftp%3A%2F%2Fpirate.example%2F&schedule=every+day&max_pages=lots\
             &concurrency=1000&max_depth=-1",
        ),
        (
            "site: loopback",
            "/sites",
            "start_url=http%3A%2F%2F127.0.0.1%2F&name=Local",
        ),
        ("site: no URL", "/sites", "start_url=not+a+url"),
        (
            "site: bad schedule",
            "/sites",
            "start_url=https%3A%2F%2Fok.example%2F&schedule=0+99+*+*+*",
        ),
    ];
    for (what, path, form) in forms {
        let a = ui
            .post(path, Some(&admin), &format!("csrf={csrf}&{form}"))
            .await;
        walk.check(what, &a, refused);
    }
    let a = ui
        .post(
            "/sites",
            Some(&admin),
            &format!("csrf={csrf}&start_url=https%3A%2F%2Fpirate.example%2Fbook%2F"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .post(
            "/sites",
            Some(&admin),
            &format!("csrf={csrf}&start_url=https%3A%2F%2Fpirate.example%2Fother%2F"),
        )
        .await;
    walk.check("site: watched already", &a, refused);
    let site = a
        .body
        .split("href=\"/sites/")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or("1")
        .to_owned();
    let a = ui
        .post(
            &format!("/sites/{site}"),
            Some(&admin),
            &format!("csrf={csrf}&name=Renamed&max_pages=lots&schedule=every+day"),
        )
        .await;
    walk.check("site edit", &a, refused);

    // Licensed domains.
    for (what, form) in [
        (
            "licensed: unknown work",
            "domain=mirror.example&work=424242",
        ),
        (
            "licensed: no title",
            "domain=mirror.example&work=no+such+title",
        ),
        ("licensed: a space", "domain=mirror+example&work=1"),
        ("licensed: empty", "domain=&work=1"),
    ] {
        let a = ui
            .post("/licensed", Some(&admin), &format!("csrf={csrf}&{form}"))
            .await;
        walk.check(what, &a, refused);
    }

    // Users and passwords.
    for (what, form) in [
        (
            "user: common password",
            "username=newbie&role=reviewer&password=password",
        ),
        (
            "user: short password",
            "username=newbie&role=reviewer&password=abc",
        ),
        (
            "user: repeated",
            "username=newbie&role=reviewer&password=aaaaaaaaaaaa",
        ),
        (
            "user: product name",
            "username=newbie&role=reviewer&password=copyhound2026%21",
        ),
        (
            "user: name is password",
            "username=newbie12345&role=reviewer&password=newbie12345",
        ),
        (
            "user: bad name",
            "username=bad+name%21&role=reviewer&password=quiet+river+lamp+7",
        ),
        (
            "user: taken",
            "username=rita&role=reviewer&password=quiet+river+lamp+7",
        ),
        (
            "user: look-alike",
            "username=rita.&role=reviewer&password=quiet+river+lamp+7",
        ),
    ] {
        let a = ui
            .post("/users", Some(&admin), &format!("csrf={csrf}&{form}"))
            .await;
        walk.check(what, &a, refused);
    }
    let rita = store.user_by_name("rita").await.unwrap().unwrap().id;
    let a = ui
        .post(
            &format!("/users/{rita}"),
            Some(&admin),
            &format!("csrf={csrf}&role=reviewer&email=not-an-address"),
        )
        .await;
    walk.check("user: email", &a, refused);

    // The account page.
    for (what, path, form) in [
        (
            "password: wrong current",
            "/account/password",
            "current_password=wrong&new_password=quiet+river+lamp+7&confirm_password=quiet+river+lamp+7",
        ),
        (
            "password: differ",
            "/account/password",
            "current_password=correct+horse+battery&new_password=quiet+river+lamp+7&confirm_password=quiet+river+lamp+8",
        ),
        (
            "alerts: email",
            "/account/alerts",
            "email=rita%40&case.opened=immediate",
        ),
        (
            "alerts: hourly",
            "/account/alerts",
            "email=&case.opened=hourly",
        ),
    ] {
        let a = ui
            .post(path, Some(&admin), &format!("csrf={csrf}&{form}"))
            .await;
        walk.check(what, &a, refused);
    }

    // Works: an upload without a title, an empty file, an edit with a blank title.
    for (what, fields) in [
        ("work: no title", vec![("text", "第一回 正文")]),
        ("work: nothing", vec![("title", "某书")]),
    ] {
        let (kind, body) = multipart(&csrf, &fields);
        let request = axum::http::Request::post("/works")
            .header(header::COOKIE, &admin)
            .header(header::CONTENT_TYPE, kind)
            .body(axum::body::Body::from(body))
            .unwrap();
        walk.check(what, &ui.send(request).await, refused);
    }
    let a = ui
        .post(
            &format!("/works/{}", work.0),
            Some(&admin),
            &format!("csrf={csrf}&title=+&author=Someone"),
        )
        .await;
    walk.check("work: blank title", &a, refused);

    // Cases: a dismissal without a reason, a note too long, a move the state refuses, the
    // bulk form with nothing ticked.
    let long = "长".repeat(2001);
    for (what, form) in [
        ("case: no reason", "status=dismissed".to_owned()),
        (
            "case: bad reason",
            "status=dismissed&reason=bored".to_owned(),
        ),
        ("case: long note", format!("status=confirmed&note={long}")),
    ] {
        let a = ui
            .post(
                &format!("/cases/{}/status", case.0),
                Some(&admin),
                &format!("csrf={csrf}&{form}"),
            )
            .await;
        walk.check(what, &a, refused);
    }
    let a = ui
        .post(
            "/cases/bulk",
            Some(&admin),
            &format!("csrf={csrf}&back=%2Fcases&action=confirm"),
        )
        .await;
    walk.check("bulk: nothing ticked", &a, refused);
    let a = ui
        .post(
            &format!("/cases/{}/status", case.0),
            Some(&admin),
            &format!("csrf={csrf}&status=confirmed&note=ok"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .post(
            &format!("/cases/{}/status", case.0),
            Some(&admin),
            &format!("csrf={csrf}&status=confirmed"),
        )
        .await;
    walk.check("case: confirmed twice", &a, refused);
    let a = ui
        .post(
            &format!("/cases/{}/notices", case.0),
            Some(&admin),
            &format!("csrf={csrf}&template=cn"),
        )
        .await;
    // No rights holder is configured: the draft is refused beside its field.
    walk.check("notice: no holder", &a, refused);

    // Webhooks.
    for (what, form) in [
        (
            "webhook: scheme",
            "url=ftp%3A%2F%2Fhooks.example%2F&secret=s3cret-s3cret-s3cret-s3cret",
        ),
        (
            "webhook: loopback",
            "url=http%3A%2F%2F127.0.0.1%3A9%2F&secret=s3cret-s3cret-s3cret-s3cret",
        ),
    ] {
        let a = ui
            .post("/webhooks", Some(&admin), &format!("csrf={csrf}&{form}"))
            .await;
        walk.check(what, &a, refused);
    }

    // The settings page.
    let a = ui
        .post(
            "/settings",
            Some(&admin),
            &format!("csrf={csrf}&name=Press&email=nobody&time_zone=Mars%2FOlympus&template=dmca"),
        )
        .await;
    walk.check("settings", &a, refused);

    // Error pages: rows that are not there, addresses that do not parse, a role that is
    // not enough, a stale form.
    for path in [
        "/no/such/page",
        "/cases/99999999",
        "/works/99999999",
        "/sites/99999999",
        "/notices/99999999",
        "/cases/abc",
        "/works/1x",
    ] {
        let a = ui.get(path, Some(&admin)).await;
        walk.check(path, &a, a.status);
        assert!(a.status.is_client_error(), "{path}: {}", a.status);
    }
    let a = ui
        .post(
            &format!("/cases/{}/status", case.0),
            Some(&admin),
            "csrf=forged&status=confirmed",
        )
        .await;
    walk.check("stale form", &a, StatusCode::FORBIDDEN);
    let (vic, vic_csrf) = ui.login("vic", PASSWORD).await;
    ui.speak_chinese(&vic, &vic_csrf).await;
    let a = ui.get("/settings", Some(&vic)).await;
    walk.check("a viewer on settings", &a, StatusCode::FORBIDDEN);

    // The audit log's details: labels, yes and no, statuses in Chinese; values as data.
    let a = ui
        .post(
            &format!("/works/{}", work.0),
            Some(&admin),
            &format!("csrf={csrf}&title=%E5%B0%81%E7%A5%9E&author=%E8%AE%B8"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let audit = ui.get("/audit", Some(&admin)).await;
    assert_eq!(audit.status, StatusCode::OK);
    assert!(!audit.body.contains("{&#34;"), "raw JSON: {}", audit.body);
    let details: Vec<String> = audit
        .body
        .split("class=\"details\"")
        .skip(1)
        .map(|cell| element_text(&cell[cell.find('>').unwrap() + 1..]).0)
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.contains("原状态") && d.contains("已确认")),
        "{details:?}"
    );
    assert!(
        details.iter().any(|d| d.contains("标题 › 旧值")),
        "{details:?}"
    );
    for d in &details {
        let words = testkit::english::english_words(d);
        if !words.is_empty() {
            walk.english.push(format!("audit: {d:?} ({words:?})"));
        }
    }
    assert!(
        walk.english.is_empty(),
        "English left in the Chinese UI:\n{}",
        walk.english.join("\n")
    );
    drop(ui.dir);
}

store::on_both_backends!(the_server_says_nothing_in_english_to_a_chinese_team);
