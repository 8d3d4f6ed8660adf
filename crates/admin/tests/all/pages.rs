//! The UI's routes through the router, on SQLite and Postgres: logging in, every page for
//! every role, CSRF and cross-site refusals, a viewer refused a write and a reviewer refused
//! user management, the login limit, the security headers, and hostile text from a pirate
//! page and a work title shown escaped everywhere.

use crate::common;

use admin::LoginLimits;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use store::testing::TestDb;

use common::ui::Ui;
use common::{users, with_case};

const PASSWORD: &str = "correct+horse+battery";

async fn pages_for_every_role(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    let ui = Ui::with(store, |s| {
        s.login = LoginLimits {
            per_user: 3,
            ..LoginLimits::default()
        }
    });

    // Not logged in: every page sends the browser to the login form.
    let a = ui.get("/cases", None).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert_eq!(a.headers[header::LOCATION], "/login?next=%2Fcases");
    let login = ui.get("/login", None).await;
    assert_eq!(login.status, StatusCode::OK);
    for h in [
        "content-security-policy",
        "x-content-type-options",
        "x-frame-options",
    ] {
        assert!(login.headers.contains_key(h), "{h}");
    }
    assert!(
        login.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );
    // Every page names its icon, which is served: otherwise a browser asks for
    // /favicon.ico on each page and logs the 404.
    assert!(
        login
            .body
            .contains("<link rel=\"icon\" href=\"/static/favicon.svg\"")
    );
    let icon = ui.get("/static/favicon.svg", None).await;
    assert_eq!(icon.status, StatusCode::OK);
    assert_eq!(icon.headers[header::CONTENT_TYPE], "image/svg+xml");
    assert!(icon.body.starts_with("<svg"), "{}", icon.body);

    let (admin, admin_csrf) = ui.login("alice", PASSWORD).await;
    let (reviewer, reviewer_csrf) = ui.login("rita", PASSWORD).await;
    let (viewer, viewer_csrf) = ui.login("vic", PASSWORD).await;

    let read_pages = [
        "/".to_owned(),
        "/cases".to_owned(),
        "/cases?status=all&min_exposure=10".to_owned(),
        format!("/cases/{case}"),
        "/works".to_owned(),
        "/works/1".to_owned(),
        "/sites".to_owned(),
        "/notices".to_owned(),
        "/analytics".to_owned(),
        "/account".to_owned(),
    ];
    for cookie in [&admin, &reviewer, &viewer] {
        for path in &read_pages {
            let a = ui.get(path, Some(cookie)).await;
            assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.body);
            assert!(a.body.len() <= 100_000, "{path} is {} bytes", a.body.len());
            // The title is text: no markup, and never a form's CSRF token.
            let title = a
                .body
                .split_once("<title>")
                .and_then(|(_, rest)| rest.split_once("</title>"))
                .map(|(title, _)| title)
                .unwrap_or_else(|| panic!("{path} has no title"));
            assert!(
                !title.contains('<') && !title.contains("csrf") && title.len() < 200,
                "{path}: <title>{title}</title>"
            );
            // Hostile text never reaches a page as markup.
            assert!(!a.body.contains("<script>alert"), "{path} shows raw script");
            assert!(
                !a.body.contains("http://") || !a.body.contains("src=\"http"),
                "{path}"
            );
        }
    }
    // The queue's work filter takes a title, or a part of one that only one work has.
    let by_title = ui
        .get("/cases?status=all&work=%E5%B0%81%E7%A5%9E", Some(&viewer))
        .await;
    assert_eq!(by_title.status, StatusCode::OK, "{}", by_title.body);
    assert!(by_title.body.contains(&format!("href=\"/cases/{case}\"")));
    assert!(by_title.body.contains("<datalist id=\"work-titles\">"));
    let unknown = ui
        .get("/cases?status=all&work=%E7%BA%A2%E6%A5%BC", Some(&viewer))
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(unknown.body.contains("红楼"), "{}", unknown.body);
    // A malformed id or query is refused on a page of the app, in its frame.
    for bad in [
        "/cases/abc".to_owned(),
        format!("/cases/{case}/compare"),
        "/works/1x".to_owned(),
    ] {
        let a = ui.get(&bad, Some(&viewer)).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{bad}: {}", a.body);
        assert_eq!(
            a.headers[header::CONTENT_TYPE],
            "text/html; charset=utf-8",
            "{bad}"
        );
        assert!(a.body.contains("id=\"error-message\""), "{bad}: {}", a.body);
        assert!(a.body.contains("href=\"/cases\""), "{bad}: no frame");
    }
    let detail = ui.get(&format!("/cases/{case}"), Some(&viewer)).await;
    assert!(
        detail.body.contains("&#60;script&#62;"),
        "escaped text shown"
    );
    assert!(
        detail.body.contains("<span class=\"m-copied\">"),
        "passages highlighted"
    );
    for admin_only in ["/users", "/jobs", "/audit"] {
        assert_eq!(
            ui.get(admin_only, Some(&admin)).await.status,
            StatusCode::OK,
            "{admin_only}"
        );
        assert_eq!(
            ui.get(admin_only, Some(&reviewer)).await.status,
            StatusCode::FORBIDDEN,
            "{admin_only}"
        );
        assert_eq!(
            ui.get(admin_only, Some(&viewer)).await.status,
            StatusCode::FORBIDDEN,
            "{admin_only}"
        );
    }

    // Bulk dismissal without a reason: answered on the queue it came from, the reason
    // marked, the cases ticked still ticked, the note kept.
    let a = ui
        .post(
            "/cases/bulk",
            Some(&reviewer),
            &format!(
                "csrf={reviewer_csrf}&back=%2Fcases%3Fstatus%3Dall&ids={case}&note=mirror&action=dismiss"
            ),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    assert!(
        a.body.contains(&format!("value=\"{case}\" checked")),
        "{}",
        a.body
    );
    assert!(a.body.contains("id=\"reason-error\""), "{}", a.body);
    assert!(a.body.contains("value=\"mirror\""), "{}", a.body);
    assert!(
        a.body.contains("name=\"back\" value=\"/cases?status=all\""),
        "{}",
        a.body
    );
    let a = ui
        .post(
            "/cases/bulk",
            Some(&reviewer),
            &format!("csrf={reviewer_csrf}&action=confirm"),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    assert!(a.body.contains("id=\"form-error\""), "{}", a.body);

    // Writes: a missing or wrong CSRF token is refused, then a viewer is refused, then a
    // reviewer may.
    let status = format!("/cases/{case}/status");
    let a = ui.post(&status, Some(&reviewer), "status=confirmed").await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "no token");
    let a = ui
        .post(
            &status,
            Some(&reviewer),
            &format!("status=confirmed&csrf={viewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "another session's token");
    let a = ui
        .post(
            &status,
            Some(&viewer),
            &format!("status=confirmed&csrf={viewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "a viewer");
    let cross = Request::post(&status)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::HOST, "localhost")
        .header(header::ORIGIN, "https://evil.example")
        .header(header::COOKIE, &reviewer)
        .body(Body::from(format!("status=confirmed&csrf={reviewer_csrf}")))
        .unwrap();
    assert_eq!(
        ui.send(cross).await.status,
        StatusCode::FORBIDDEN,
        "cross-site"
    );
    let a = ui
        .post(
            &status,
            Some(&reviewer),
            &format!("status=confirmed&note=%3Cb%3Eok&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let detail = ui.get(&format!("/cases/{case}"), Some(&viewer)).await;
    assert!(detail.body.contains("&#60;b&#62;ok"), "the note is escaped");
    assert!(detail.body.contains("id=\"case-status\">Confirmed") || detail.body.contains("已确认"));

    // "Crawl now" shows the queued crawl before any worker starts it, and the page reloads
    // itself until the crawl shows up and ends.
    let a = ui
        .post(
            "/sites",
            Some(&reviewer),
            &format!("start_url=http%3A%2F%2Fpirate.example%2F&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let site = a.headers[header::LOCATION].to_str().unwrap().to_owned();
    let quiet = ui.get(&site, Some(&viewer)).await;
    assert!(!quiet.body.contains("crawl-waiting") && !quiet.body.contains("data-refresh"));
    // Its crawls' error column counts errors (it was headed "Last error").
    assert!(
        quiet.body.contains("<th class=\"num\">Errors</th>"),
        "{}",
        quiet.body
    );
    assert!(!quiet.body.contains("Last error"), "{}", quiet.body);
    let a = ui
        .post(
            &format!("{site}/crawl"),
            Some(&reviewer),
            &format!("csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let queued = a.headers[header::LOCATION].to_str().unwrap().to_owned();
    assert!(queued.starts_with(&format!("{site}?job=")), "{queued}");
    let waiting = ui.get(&queued, Some(&reviewer)).await;
    assert_eq!(waiting.status, StatusCode::OK, "{}", waiting.body);
    assert!(
        waiting.body.contains("id=\"crawl-waiting\""),
        "{}",
        waiting.body
    );
    assert!(waiting.body.contains("data-refresh="), "{}", waiting.body);
    // A job that does not exist shows nothing queued.
    let a = ui.get(&format!("{site}?job=99999"), Some(&reviewer)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(!a.body.contains("crawl-waiting"), "{}", a.body);

    // "Take a screenshot now" says it is queued, updates itself until the job has run,
    // then says it is done.
    let a = ui
        .post(
            &format!("/cases/{case}/capture"),
            Some(&reviewer),
            &format!("csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let queued = a.headers[header::LOCATION].to_str().unwrap().to_owned();
    let job: i64 = queued
        .strip_prefix(&format!("/cases/{case}?queued=capture&job="))
        .unwrap_or_else(|| panic!("{queued}"))
        .parse()
        .unwrap();
    let waiting = ui.get(&queued, Some(&reviewer)).await;
    assert!(
        waiting
            .body
            .contains("data-job=\"queued.capture.pending\" data-refresh="),
        "{}",
        waiting.body
    );
    {
        use store::JobQueue;
        let record = store.job(store::JobId(job)).await.unwrap();
        let claimed = store
            .claim(
                &record.queue,
                "test",
                100,
                std::time::Duration::from_secs(60),
            )
            .await
            .unwrap();
        let ours = claimed.iter().find(|c| c.lease.job.0 == job).unwrap();
        store.complete(ours.lease).await.unwrap();
    }
    let done = ui.get(&queued, Some(&reviewer)).await;
    assert!(
        done.body.contains("data-job=\"queued.capture.done\">"),
        "{}",
        done.body
    );

    // A reviewer may not manage users; an admin may.
    let add = "username=nina&role=viewer&password=long+enough+pw";
    let a = ui
        .post(
            "/users",
            Some(&reviewer),
            &format!("{add}&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    let a = ui
        .post("/users", Some(&admin), &format!("{add}&csrf={admin_csrf}"))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .post(
            "/users",
            Some(&admin),
            &format!("username=weak&role=viewer&password=short&csrf={admin_csrf}"),
        )
        .await;
    // Refused on the form: 422, the message beside the password.
    assert_eq!(
        a.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "a weak password is refused"
    );
    assert!(a.body.contains("id=\"password-error\""), "{}", a.body);

    // Language: the setting wins over the browser's.
    let a = ui
        .post(
            "/account/language",
            Some(&viewer),
            &format!("lang=zh&csrf={viewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert!(
        ui.get("/cases", Some(&viewer))
            .await
            .body
            .contains("审核队列")
    );

    // Logging out ends the session on the server.
    let a = ui
        .post("/logout", Some(&viewer), &format!("csrf={viewer_csrf}"))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert_eq!(
        ui.get("/cases", Some(&viewer)).await.status,
        StatusCode::SEE_OTHER
    );

    // Failed logins past the limit wait, even with the right password next.
    for _ in 0..3 {
        let a = ui.post_login("username=rita&password=wrong").await;
        // Answered on the form: the name kept, the message beside the password.
        assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(a.body.contains("id=\"login-error\""), "{}", a.body);
        assert!(a.body.contains("value=\"rita\""), "{}", a.body);
    }
    let a = ui
        .post_login(&format!("username=rita&password={PASSWORD}"))
        .await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
    drop(ui.dir);
}

#[tokio::test]
async fn pages_for_every_role_on_sqlite() {
    let db = store::testing::sqlite("admin_pages").await.unwrap();
    pages_for_every_role(&db).await;
}

#[tokio::test]
async fn pages_for_every_role_on_postgres() {
    let Some(db) = store::testing::postgres("admin_pages").await else {
        return;
    };
    pages_for_every_role(&db).await;
}

/// The dashboard's checklist names what is missing, each with where to fix it, and is gone
/// once all is done; its charts are SVG with axes and values, their numbers also in a table.
async fn the_dashboard_guides_until_all_is_set_up(db: &TestDb) {
    use store::WorkerPresence;
    let store = &db.store;
    users(store).await;
    let fresh = |change: fn(&mut admin::AdminSettings)| {
        Ui::with(store, move |s| {
            s.figures_ttl = std::time::Duration::ZERO;
            change(s);
        })
    };
    let ui = fresh(|_| {});
    let (admin, _) = ui.login("alice", PASSWORD).await;
    let (viewer, _) = ui.login("vic", PASSWORD).await;

    // Nothing set up: every step, each a link to where it is done.
    let a = ui.get("/", Some(&admin)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(a.body.contains("id=\"checklist\""), "{}", a.body);
    for (step, href) in [
        ("work", "/works"),
        ("site", "/sites"),
        ("rights_holder", "/settings"),
        ("worker", "/jobs"),
    ] {
        let item = a.body.split(&format!("id=\"todo-{step}\"")).nth(1);
        let item = item.unwrap_or_else(|| panic!("no {step} step: {}", a.body));
        let item = item.split("</li>").next().unwrap();
        assert!(item.contains(&format!("href=\"{href}\"")), "{step}: {item}");
    }
    assert!(a.body.contains("<code>notices.rights_holder.name</code>"));
    assert!(a.body.contains("<code>copyhound worker</code>"));
    assert!(a.body.contains("No worker has been seen."));
    assert!(!a.body.contains("id=\"todo-private\""));
    // A viewer cannot open the queue: the worker step is not a link for them.
    let v = ui.get("/", Some(&viewer)).await;
    assert!(v.body.contains("id=\"todo-worker\""));
    assert!(!v.body.contains("href=\"/jobs\""), "{}", v.body);
    // In Chinese.
    let zh = ui
        .send(
            Request::get("/")
                .header(header::COOKIE, &admin)
                .header(header::ACCEPT_LANGUAGE, "zh-CN,zh;q=0.9")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert!(zh.body.contains("设置 copyhound"), "{}", zh.body);

    // A work with a copy found today, sites watched (one on a loopback address, with a
    // schedule), a worker alive, the rights holder set.
    with_case(store).await;
    let base = {
        let mut c = crawler::CrawlSettings::default();
        c.fetch.safety.allow_private = true;
        c
    };
    let local = crawling::sites::watch_site(
        store,
        &base,
        &store::NewSite {
            start_url: "http://127.0.0.1:9/book/".into(),
            name: Some("local copy".into()),
            settings: crawling::sites::default_site_settings(&base),
            schedule: Some(crawling::sites::site_schedule("0 3 * * *")),
        },
    )
    .await
    .unwrap();
    let now = chrono::Utc::now();
    store.worker_alive("w1", "default", now, now).await.unwrap();
    fn holder(s: &mut admin::AdminSettings) {
        s.notices.rights_holder = takedown::RightsHolder {
            name: "Qidian Rights Ltd".into(),
            address: "1 Example Road".into(),
            email: "legal@example.com".into(),
            phone: String::new(),
            signatory: "Li Lei".into(),
        };
    }
    let ui = fresh(holder);
    let a = ui.get("/", Some(&admin)).await;
    assert_eq!(a.status, StatusCode::OK);
    // Only the loopback site is left, named with a link to it.
    assert!(a.body.contains("id=\"todo-private\""), "{}", a.body);
    for step in ["work", "site", "rights_holder", "worker"] {
        assert!(!a.body.contains(&format!("id=\"todo-{step}\"")), "{step}");
    }
    assert!(a.body.contains(&format!("href=\"/sites/{}\"", local.id)));
    assert!(a.body.contains("crawler.fetch.safety.allow_private = true"));

    // The chart: an SVG as wide as its box with text at the page's size (positions are
    // shares of the width, no viewBox to scale the text), named for screen readers, with
    // both axes, tick labels, today's column labelled and its one new copy written over it,
    // and the same numbers in a table.
    let svg = a
        .body
        .split("<svg class=\"chart\"")
        .nth(1)
        .expect("the chart");
    let svg = svg.split("</svg>").next().unwrap();
    assert!(!svg.contains("viewBox"), "{svg}");
    assert!(svg.contains("width=\"100%\" height=\"190\""), "{svg}");
    assert!(svg.contains("<rect class=\"bar today\""), "{svg}");
    assert!(svg.contains("class=\"tick today\""), "{svg}");
    assert!(svg.contains(">today</text>"), "{svg}");
    assert!(svg.contains("role=\"img\"") && svg.contains("<title id=\"copies-chart-title\">"));
    assert_eq!(svg.matches("class=\"axis-line\"").count(), 2, "{svg}");
    assert!(svg.matches("class=\"tick\"").count() >= 4, "{svg}");
    assert_eq!(
        svg.matches("<rect class=\"bar").count(),
        30,
        "a month of days"
    );
    assert!(svg.contains("text-anchor=\"middle\">1</text>"), "{svg}");
    assert!(!svg.contains("style="), "no inline style (CSP)");
    let today = now.date_naive().to_string();
    assert!(
        a.body.contains(&format!(
            ">{today}</td><td data-label=\"New copies\" class=\"num\">1</td>"
        )),
        "{}",
        a.body
    );
    // The funnel with its shares, top sites as bars.
    let funnel = a.body.split("id=\"funnel\"").nth(1).unwrap();
    let funnel = funnel.split("</ol>").next().unwrap();
    assert!(funnel.contains("100%") && funnel.contains("0%"), "{funnel}");
    let top = a.body.split("id=\"top-sites\"").nth(1).expect("top sites");
    assert!(top.contains("pirate.example") && top.contains("<rect class=\"bar\" width=\"100%\""));

    // The schedule in words on the sites list and the site's page.
    let sites = ui.get("/sites", Some(&admin)).await;
    assert!(
        sites.body.contains("every day at 03:00 UTC"),
        "{}",
        sites.body
    );
    let site = ui.get(&format!("/sites/{}", local.id), Some(&admin)).await;
    assert!(
        site.body.contains("every day at 03:00 UTC"),
        "{}",
        site.body
    );

    // Private addresses allowed: nothing is left, and the checklist is gone.
    let ui = fresh(|s| {
        holder(s);
        s.crawler.fetch.safety.allow_private = true;
    });
    let a = ui.get("/", Some(&admin)).await;
    assert!(!a.body.contains("id=\"checklist\""), "{}", a.body);
    // A worker silent for two minutes is missed again.
    let before = now - chrono::TimeDelta::minutes(2);
    store
        .worker_alive("w1", "default", before, before)
        .await
        .unwrap();
    let a = ui.get("/", Some(&admin)).await;
    assert!(a.body.contains("id=\"todo-worker\""));
    assert!(a.body.contains("A worker was last seen"));
}

#[tokio::test]
async fn the_dashboard_guides_until_all_is_set_up_on_sqlite() {
    let db = store::testing::sqlite("admin_dashboard").await.unwrap();
    the_dashboard_guides_until_all_is_set_up(&db).await;
}

#[tokio::test]
async fn the_dashboard_guides_until_all_is_set_up_on_postgres() {
    let Some(db) = store::testing::postgres("admin_dashboard").await else {
        return;
    };
    the_dashboard_guides_until_all_is_set_up(&db).await;
}
