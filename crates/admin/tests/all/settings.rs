//! Issue #26 through the router, on SQLite and Postgres: the settings page (saved, in
//! effect for a drafted notice, cleared back to the file's, audited, admins only), the
//! account page's password change, the edit forms of sites, works and notice drafts, every
//! form's refusal answered on the form with the input kept, and the app's own 404 page.

use crate::common;

use axum::http::{StatusCode, header};
use store::testing::TestDb;
use store::{
    AlertDelivery, Alerts, ApiTokens, AuditLog, CaseReads, CaseStatus, CaseWrites, JobFilter,
    JobQueue, NoticeId, Page, SettingOverrides, SuspectSites, Users, WorkId, WorkReads,
};

use common::ui::{Answer, Ui};
use common::{users, with_case};

const PASSWORD: &str = "correct+horse+battery";

/// The field `name` was refused: marked invalid, its message beside it.
fn refused_beside(a: &Answer, name: &str) {
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    // A refusal of the whole form has no field to mark.
    assert!(
        name == "form"
            || a.body.contains(&format!(
                "aria-invalid=\"true\" aria-describedby=\"{name}-error\""
            )),
        "{name} is not marked invalid: {}",
        a.body
    );
    assert!(
        a.body
            .contains(&format!("id=\"{name}-error\" role=\"alert\"")),
        "no message beside {name}: {}",
        a.body
    );
    // The page's frame: the navigation is there.
    assert!(a.body.contains("href=\"/cases\""), "{}", a.body);
}

async fn the_settings_page_overrides_the_file_and_notices_follow(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    store
        .set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let ui = Ui::with(store, |s| {
        s.notices.rights_holder.name = "File Press".into();
        s.notices.rights_holder.address = "1 File Road".into();
    });
    let (admin, csrf) = ui.login("alice", PASSWORD).await;

    let page = ui.get("/settings", Some(&admin)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("value=\"File Press\""), "{}", page.body);
    assert!(page.body.contains("From the settings file"));

    // A notice cannot be drafted yet: no email, no signatory.
    let a = ui
        .post(
            &format!("/cases/{case}/notices"),
            Some(&admin),
            &format!("csrf={csrf}&template=cn"),
        )
        .await;
    // Refused on the case page, beside the form.
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    assert!(a.body.contains("/settings"), "{}", a.body);
    assert!(a.body.contains("id=\"create-notice\""), "{}", a.body);

    // Saved in the UI: over the file's values, the file's address kept.
    let form = format!(
        "csrf={csrf}&name=%E7%A4%BA%E4%BE%8B%E5%87%BA%E7%89%88%E7%A4%BE&address=1+File+Road\
         &email=legal%40press.example&phone=&signatory=Zhang+San&template=cn\
         &abuse_contacts=pirate.example+%3D+abuse%40hoster.example&time_zone=asia%2Fshanghai"
    );
    let a = ui.post("/settings", Some(&admin), &form).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(a.location(), "/settings?saved=1");
    let page = ui.get("/settings?saved=1", Some(&admin)).await;
    assert!(page.body.contains("value=\"示例出版社\""), "{}", page.body);
    assert!(
        page.body.contains("value=\"Asia/Shanghai\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("Saved here by alice"), "{}", page.body);
    // Times on the pages are shown in the zone saved.
    assert!(page.body.contains("+08:00"), "{}", page.body);
    let saved: Vec<String> = store
        .setting_overrides()
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.key)
        .collect();
    // The address equals the file's: no override.
    assert!(!saved.contains(&"notices.rights_holder.address".to_owned()));
    assert!(saved.contains(&"notices.time_zone".to_owned()), "{saved:?}");

    // A drafted notice speaks for the saved rights holder, to the saved contact, in the
    // saved template and time zone.
    let a = ui
        .post(
            &format!("/cases/{case}/notices"),
            Some(&admin),
            &format!("csrf={csrf}&template=cn"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let notice = ui.get(a.location(), Some(&admin)).await;
    assert!(notice.body.contains("示例出版社"), "{}", notice.body);
    assert!(notice.body.contains("Zhang San"));
    assert!(notice.body.contains("abuse@hoster.example"));
    assert!(notice.body.contains("+08:00"), "{}", notice.body);

    // Audited: who, and each key before and after.
    let audit = store.recent_audit(None, 50).await.unwrap();
    let change = audit
        .iter()
        .find(|a| a.action == "settings.change")
        .expect("a settings.change row");
    assert_eq!(change.actor, "alice");
    assert_eq!(
        change.details["notices.rights_holder.name"]["after"],
        "示例出版社"
    );
    assert!(change.details["notices.rights_holder.name"]["before"].is_null());

    // Cleared: back to the file's value.
    let form = format!(
        "csrf={csrf}&name=&address=1+File+Road&email=&phone=&signatory=&template=dmca\
         &abuse_contacts=&time_zone=UTC"
    );
    let a = ui.post("/settings", Some(&admin), &form).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert!(store.setting_overrides().await.unwrap().is_empty());
    let page = ui.get("/settings", Some(&admin)).await;
    assert!(page.body.contains("value=\"File Press\""), "{}", page.body);
    assert!(!page.body.contains("Saved here by"));
    drop(ui.dir);
}

async fn refused_settings_keep_their_input_and_save_nothing(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});
    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    let form =
        format!("csrf={csrf}&name=Typed+Press&email=nobody&time_zone=Mars%2FOlympus&template=dmca");
    let a = ui.post("/settings", Some(&admin), &form).await;
    refused_beside(&a, "time_zone");
    refused_beside(&a, "email");
    assert!(a.body.contains("value=\"Mars/Olympus\""), "{}", a.body);
    assert!(a.body.contains("value=\"Typed Press\""), "{}", a.body);
    assert!(a.body.contains("Unknown time zone"), "{}", a.body);
    assert!(store.setting_overrides().await.unwrap().is_empty());

    // In the user's language.
    ui.speak_chinese(&admin, &csrf).await;
    let a = ui.post("/settings", Some(&admin), &form).await;
    assert!(a.body.contains("未知时区"), "{}", a.body);

    // Others than admins: the app's 403 page, nothing saved.
    let (rita, rita_csrf) = ui.login("rita", PASSWORD).await;
    let a = ui.get("/settings", Some(&rita)).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert!(a.body.contains("href=\"/cases\""), "{}", a.body);
    let a = ui
        .post(
            "/settings",
            Some(&rita),
            &format!("csrf={rita_csrf}&name=Rita+Press"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    // No CSRF token: refused before anything is read.
    let a = ui.post("/settings", Some(&admin), "name=Forged").await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert!(store.setting_overrides().await.unwrap().is_empty());
    drop(ui.dir);
}

/// The account page's password form, posted with `csrf` (empty: none).
async fn change_password(
    ui: &Ui,
    cookie: &str,
    csrf: &str,
    current: &str,
    new: &str,
    again: &str,
) -> Answer {
    let token = if csrf.is_empty() {
        String::new()
    } else {
        format!("csrf={csrf}&")
    };
    ui.post(
        "/account/password",
        Some(cookie),
        &format!("{token}current_password={current}&new_password={new}&confirm_password={again}"),
    )
    .await
}

async fn a_password_change_needs_the_current_one_and_ends_other_sessions(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});
    let (laptop, csrf) = ui.login("rita", PASSWORD).await;
    let (phone, _) = ui.login("rita", PASSWORD).await;
    let page = ui.get("/account", Some(&laptop)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("id=\"password-form\""));

    let new = "a+fresh+long+passphrase+42";
    let wrong = change_password(&ui, &laptop, &csrf, "wrong+one", new, new).await;
    refused_beside(&wrong, "current_password");
    // A password typed is never sent back.
    assert!(!wrong.body.contains("fresh"), "{}", wrong.body);
    let mismatch = change_password(&ui, &laptop, &csrf, PASSWORD, new, "other").await;
    refused_beside(&mismatch, "confirm_password");
    let weak = change_password(&ui, &laptop, &csrf, PASSWORD, "short", "short").await;
    refused_beside(&weak, "new_password");
    let forged = change_password(&ui, &laptop, "", PASSWORD, new, new).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    let done = change_password(&ui, &laptop, &csrf, PASSWORD, new, new).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert_eq!(done.location(), "/account?changed=1");
    let fresh = done.cookie("copyhound_session").expect("a new session");
    // This browser goes on with its new session; the other one (and the old cookie) ended.
    assert_eq!(ui.get("/cases", Some(&fresh)).await.status, StatusCode::OK);
    for ended in [&phone, &laptop] {
        assert_eq!(
            ui.get("/cases", Some(ended)).await.status,
            StatusCode::SEE_OTHER
        );
    }
    let old = ui
        .post_login(&format!("username=rita&password={PASSWORD}"))
        .await;
    assert_eq!(old.status, StatusCode::UNPROCESSABLE_ENTITY);
    ui.login("rita", new).await;
    let rita = store.user_by_name("rita").await.unwrap().unwrap();
    let audit = store.audit_of("user", rita.id.0).await.unwrap();
    assert!(
        audit.iter().any(|a| a.actor == "rita"),
        "the change is audited as rita's: {audit:?}"
    );
    drop(ui.dir);
}

async fn alert_choices_are_saved_on_the_account_page(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});
    let (rita, csrf) = ui.login("rita", PASSWORD).await;
    let rita_id = store.user_by_name("rita").await.unwrap().unwrap().id;
    let page = ui.get("/account", Some(&rita)).await;
    assert!(page.body.contains("id=\"alerts-form\""), "{}", page.body);
    // No SMTP server in these settings: the page says alerts wait for one.
    assert!(page.body.contains("id=\"alerts-no-mail\""), "{}", page.body);

    let bad = ui
        .post(
            "/account/alerts",
            Some(&rita),
            &format!("csrf={csrf}&email=rita%40&case.opened=immediate"),
        )
        .await;
    refused_beside(&bad, "email");
    assert!(bad.body.contains("value=\"rita@\""), "kept: {}", bad.body);
    let odd = ui
        .post(
            "/account/alerts",
            Some(&rita),
            &format!("csrf={csrf}&email=&case.opened=hourly"),
        )
        .await;
    refused_beside(&odd, "form");
    let forged = ui
        .post("/account/alerts", Some(&rita), "email=x%40evil.example")
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(store.user(rita_id).await.unwrap().email, None);

    let done = ui
        .post(
            "/account/alerts",
            Some(&rita),
            &format!(
                "csrf={csrf}&email=rita%40press.example&case.opened=immediate\
                 &case.reopened=off&copy.back_up=digest&crawl.failed=off"
            ),
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert_eq!(done.location(), "/account?alerts=1");
    assert_eq!(
        store.user(rita_id).await.unwrap().email.as_deref(),
        Some("rita@press.example")
    );
    assert_eq!(
        store.alert_preferences(rita_id).await.unwrap(),
        vec![
            ("case.opened".to_owned(), AlertDelivery::Immediate),
            ("copy.back_up".to_owned(), AlertDelivery::Digest),
        ]
    );
    let page = ui.get("/account?alerts=1", Some(&rita)).await;
    assert!(page.body.contains("id=\"alerts-saved\""), "{}", page.body);
    assert!(
        page.body.contains("value=\"rita@press.example\""),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("<option value=\"digest\" selected>Daily digest</option>"),
        "{}",
        page.body
    );
    let audit = store.audit_of("user", rita_id.0).await.unwrap();
    assert!(audit.iter().any(|a| a.action == "user.alerts"), "{audit:?}");

    // An admin sets someone's address on /users; a reviewer cannot.
    let (alice, admin_csrf) = ui.login("alice", PASSWORD).await;
    let set = ui
        .post(
            &format!("/users/{rita_id}"),
            Some(&alice),
            &format!("csrf={admin_csrf}&email=rita.lee%40press.example"),
        )
        .await;
    assert_eq!(set.status, StatusCode::SEE_OTHER, "{}", set.body);
    assert_eq!(
        store.user(rita_id).await.unwrap().email.as_deref(),
        Some("rita.lee@press.example")
    );
    let denied = ui
        .post(
            &format!("/users/{rita_id}"),
            Some(&rita),
            &format!("csrf={csrf}&email=x%40evil.example"),
        )
        .await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);

    // A row's form refused on /users itself, beside that user's row, what was typed kept:
    // an address that is none, a token without a name. Nothing changed.
    let bad = ui
        .post(
            &format!("/users/{rita_id}"),
            Some(&alice),
            &format!("csrf={admin_csrf}&role=viewer&email=not-an-address"),
        )
        .await;
    refused_beside(&bad, "email");
    assert!(
        bad.body.contains("value=\"not-an-address\""),
        "{}",
        bad.body
    );
    assert!(bad.body.contains("is not an email address"), "{}", bad.body);
    let rita_now = store.user(rita_id).await.unwrap();
    assert_eq!(rita_now.email.as_deref(), Some("rita.lee@press.example"));
    assert_ne!(
        rita_now.role,
        store::Role::Viewer,
        "the role waits for a valid form"
    );
    let nameless = ui
        .post(
            &format!("/users/{rita_id}/tokens"),
            Some(&alice),
            &format!("csrf={admin_csrf}&name=%20"),
        )
        .await;
    refused_beside(&nameless, "name");
    assert!(store.api_tokens(None).await.unwrap().is_empty());
    drop(ui.dir);
}

/// A rights holder's profile complete enough to draft notices.
fn press(s: &mut admin::AdminSettings) {
    s.notices.rights_holder = takedown::RightsHolder {
        name: "Press".into(),
        address: "Road".into(),
        email: "legal@press.example".into(),
        phone: String::new(),
        signatory: "Signer".into(),
    };
}

async fn edit_forms_change_sites_works_and_drafts(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    store
        .set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let ui = Ui::with(store, |s| {
        s.crawler.fetch.safety.allow_private = true;
        press(s);
    });
    let (rita, csrf) = ui.login("rita", PASSWORD).await;

    // A site: added, then its name, schedule and limits changed.
    let a = ui
        .post(
            "/sites",
            Some(&rita),
            &format!("csrf={csrf}&start_url=http%3A%2F%2Fpirate.example%2Fbook%2F"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let site_path = a.location().to_owned();
    let id: i64 = site_path.rsplit('/').next().unwrap().parse().unwrap();
    let a = ui
        .post(
            &site_path,
            Some(&rita),
            &format!(
                "csrf={csrf}&name=Pirate+%E7%9B%97%E7%89%88&schedule=0+4+*+*+*&max_pages=77\
                 &max_depth=3&delay_ms=900&concurrency=2&include=%2Fbook%2F&exclude="
            ),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let site = store.site(id).await.unwrap();
    assert_eq!(site.name, "Pirate 盗版");
    assert_eq!(site.schedule.as_deref(), Some("0 4 * * *"));
    assert_eq!((site.settings.max_pages, site.settings.delay_ms), (77, 900));
    assert_eq!(site.settings.include, ["/book/"]);
    let audit = store.audit_of("site", id).await.unwrap();
    assert!(
        audit
            .iter()
            .any(|a| a.action == "site.edit" && a.actor == "rita")
    );
    // A refused edit keeps what was typed, beside the field.
    let a = ui
        .post(
            &site_path,
            Some(&rita),
            &format!("csrf={csrf}&name=Renamed&max_pages=lots&schedule=0+4+*+*+*"),
        )
        .await;
    refused_beside(&a, "max_pages");
    assert!(a.body.contains("value=\"lots\"") && a.body.contains("value=\"Renamed\""));
    assert_eq!(store.site(id).await.unwrap().name, "Pirate 盗版");
    let a = ui
        .post(
            &site_path,
            Some(&rita),
            &format!("csrf={csrf}&schedule=every+day"),
        )
        .await;
    refused_beside(&a, "schedule");
    // Every wrong field of an edit at once.
    let a = ui
        .post(
            &site_path,
            Some(&rita),
            &format!(
                "csrf={csrf}&max_pages=lots&schedule=every+day\
                 &start_url=ftp%3A%2F%2Fpirate.example%2F"
            ),
        )
        .await;
    for field in ["max_pages", "schedule", "start_url"] {
        refused_beside(&a, field);
    }

    // A work's title and author.
    let work = store.case(case).await.unwrap().work_id;
    let a = ui
        .post(
            &format!("/works/{work}"),
            Some(&rita),
            &format!("csrf={csrf}&title=%E5%B0%81%E7%A5%9E%E6%BC%94%E4%B9%89&author=%E8%AE%B8%E4%BB%B2%E7%90%B3"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let stored = store.work(work).await.unwrap();
    assert_eq!(
        (stored.title.as_str(), stored.author.as_deref()),
        ("封神演义", Some("许仲琳"))
    );
    let a = ui
        .post(
            &format!("/works/{work}"),
            Some(&rita),
            &format!("csrf={csrf}&title=+&author=Someone"),
        )
        .await;
    refused_beside(&a, "title");
    assert!(a.body.contains("value=\"Someone\""), "{}", a.body);
    assert_eq!(store.work(work).await.unwrap().title, "封神演义");
    let missing = ui
        .post(
            &format!("/works/{}", WorkId(9_999_999)),
            Some(&rita),
            &format!("csrf={csrf}&title=x"),
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    // A notice draft's recipient and text, until it is marked sent.
    let a = ui
        .post(
            &format!("/cases/{case}/notices"),
            Some(&rita),
            &format!("csrf={csrf}&template=dmca"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let notice_path = a.location().to_owned();
    let notice: i64 = notice_path.rsplit('/').next().unwrap().parse().unwrap();
    let a = ui
        .post(
            &notice_path,
            Some(&rita),
            &format!(
                "csrf={csrf}&recipient=abuse%40host.example&body_text=Edited+%3Cb%3Etext%3C%2Fb%3E"
            ),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let stored = takedown::notices::recipient_label(
        &store::Notices::notice(store, NoticeId(notice))
            .await
            .unwrap(),
    )
    .to_owned();
    assert_eq!(stored, "abuse@host.example");
    let page = ui.get(&notice_path, Some(&rita)).await;
    assert!(
        page.body.contains("Edited &#60;b&#62;text"),
        "{}",
        page.body
    );
    let a = ui
        .post(
            &notice_path,
            Some(&rita),
            &format!("csrf={csrf}&recipient=not+an+address&body_text=Kept+text"),
        )
        .await;
    refused_beside(&a, "recipient");
    assert!(a.body.contains("Kept text"), "{}", a.body);
    let a = ui
        .post(
            &format!("{notice_path}/sent"),
            Some(&rita),
            &format!("csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .post(
            &notice_path,
            Some(&rita),
            &format!("csrf={csrf}&recipient=&body_text=Too+late"),
        )
        .await;
    refused_beside(&a, "form");
    assert!(a.body.contains("marked sent"), "{}", a.body);
    let kept = store::Notices::notice(store, NoticeId(notice))
        .await
        .unwrap();
    assert!(kept.body_text.starts_with("Edited"), "{}", kept.body_text);
    // A viewer edits nothing.
    let (vic, vic_csrf) = ui.login("vic", PASSWORD).await;
    let a = ui
        .post(
            &format!("/works/{work}"),
            Some(&vic),
            &format!("csrf={vic_csrf}&title=Vic"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    drop(ui.dir);
}

/// Issue #29: the Send button queues the job that mails the notice (the workers send it);
/// a web form's notice offers its text to paste and no Send button; with no SMTP server the
/// page says how to turn mail on.
async fn the_send_button_queues_the_mail(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    store
        .set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let off = Ui::with(store, press);
    let (rita, csrf) = off.login("rita", PASSWORD).await;
    let a = off
        .post(
            &format!("/cases/{case}/notices"),
            Some(&rita),
            &format!("csrf={csrf}&template=cn&to=abuse%40host.example"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let notice_path = a.location().to_owned();
    let page = off.get(&notice_path, Some(&rita)).await;
    assert!(
        page.body.contains("id=\"notice-mail-off\""),
        "{}",
        page.body
    );
    assert!(!page.body.contains("id=\"send-notice\""));
    let a = off
        .post(
            &format!("{notice_path}/send"),
            Some(&rita),
            &format!("csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::CONFLICT, "{}", a.body);
    drop(off.dir);

    let ui = Ui::with(store, |s| {
        press(s);
        s.mail_configured = true;
    });
    let (rita, csrf) = ui.login("rita", PASSWORD).await;
    let page = ui.get(&notice_path, Some(&rita)).await;
    assert!(page.body.contains("id=\"send-notice\""), "{}", page.body);
    // Without the form's token nothing is queued.
    let a = ui
        .post(&format!("{notice_path}/send"), Some(&rita), "csrf=forged")
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
    let a = ui
        .post(
            &format!("{notice_path}/send"),
            Some(&rita),
            &format!("csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(a.location(), format!("{notice_path}?queued=1"));
    let jobs = store
        .jobs(&JobFilter::Kind("SendNotice".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    let notice: i64 = notice_path.rsplit('/').next().unwrap().parse().unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&jobs[0].payload).unwrap(),
        serde_json::json!({"SendNotice": {"notice": notice, "again": false}})
    );
    // A second press while it waits queues nothing more.
    ui.post(
        &format!("{notice_path}/send"),
        Some(&rita),
        &format!("csrf={csrf}"),
    )
    .await;
    let jobs = store
        .jobs(&JobFilter::Kind("SendNotice".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    let page = ui
        .get(&format!("{notice_path}?queued=1"), Some(&rita))
        .await;
    assert!(page.body.contains("id=\"notice-queued\""), "{}", page.body);

    // A web form: the text to paste, no Send button, and the send refused.
    let a = ui
        .post(
            &format!("/cases/{case}/notices"),
            Some(&rita),
            &format!("csrf={csrf}&template=dmca&to=https%3A%2F%2Fhost.example%2Fdmca"),
        )
        .await;
    let form_path = a.location().to_owned();
    let page = ui.get(&form_path, Some(&rita)).await;
    assert!(
        page.body.contains("id=\"notice-web-form\""),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("<textarea id=\"notice-copy\""),
        "{}",
        page.body
    );
    assert!(!page.body.contains("id=\"send-notice\""));
    let a = ui
        .post(
            &format!("{form_path}/send"),
            Some(&rita),
            &format!("csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    assert!(a.body.contains("web form"), "{}", a.body);
    // A viewer sends nothing.
    let (vic, vic_csrf) = ui.login("vic", PASSWORD).await;
    let a = ui
        .post(
            &format!("{notice_path}/send"),
            Some(&vic),
            &format!("csrf={vic_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    drop(ui.dir);
}

async fn every_form_answers_on_the_form(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});

    // Login: the name kept, the message beside the password, 422.
    let a = ui
        .post_login("username=alice%3Cscript%3E&password=wrong")
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(a.body.contains("id=\"login-error\""), "{}", a.body);
    assert!(
        a.body.contains("value=\"alice&#60;script&#62;\""),
        "{}",
        a.body
    );
    assert!(!a.body.contains("wrong"), "{}", a.body);

    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    // Add a site: a URL the crawler refuses (loopback), kept with the other fields.
    let a = ui
        .post(
            "/sites",
            Some(&admin),
            &format!("csrf={csrf}&start_url=http%3A%2F%2F127.0.0.1%2F&name=Local&max_pages=5"),
        )
        .await;
    refused_beside(&a, "start_url");
    assert!(a.body.contains("value=\"http://127.0.0.1/\""), "{}", a.body);
    assert!(a.body.contains("value=\"Local\"") && a.body.contains("value=\"5\""));
    assert!(a.body.contains("allow_private"), "{}", a.body);
    let a = ui
        .post(
            "/sites",
            Some(&admin),
            &format!("csrf={csrf}&start_url=https%3A%2F%2Fpirate.example%2F&max_depth=-1"),
        )
        .await;
    refused_beside(&a, "max_depth");
    assert!(store.watched_sites().await.unwrap().is_empty());
    // Every field wrong at once: every one marked in one answer.
    let a = ui
        .post(
            "/sites",
            Some(&admin),
            &format!(
                "csrf={csrf}&start_url=ftp%3A%2F%2Fpirate.example%2F&schedule=every+day\
                 &max_pages=lots&concurrency=1000"
            ),
        )
        .await;
    for field in ["start_url", "schedule", "max_pages", "concurrency"] {
        refused_beside(&a, field);
    }
    assert!(store.watched_sites().await.unwrap().is_empty());

    // Licensed domains: an unknown work.
    let a = ui
        .post(
            "/licensed",
            Some(&admin),
            &format!("csrf={csrf}&domain=mirror.example&work=424242"),
        )
        .await;
    refused_beside(&a, "work");
    assert!(a.body.contains("value=\"mirror.example\""), "{}", a.body);
    let a = ui
        .post(
            "/licensed",
            Some(&admin),
            &format!("csrf={csrf}&domain=mirror.example&work=no+such+title"),
        )
        .await;
    refused_beside(&a, "work");
    assert!(a.body.contains("no such title"), "{}", a.body);

    // Add a user: a weak password; the name and role kept, the password not.
    let a = ui
        .post(
            "/users",
            Some(&admin),
            &format!(
                "csrf={csrf}&username=newbie&display_name=New&role=reviewer&password=password"
            ),
        )
        .await;
    refused_beside(&a, "password");
    assert!(a.body.contains("value=\"newbie\""), "{}", a.body);
    assert!(
        a.body.contains("<option value=\"reviewer\" selected>"),
        "{}",
        a.body
    );
    assert!(!a.body.contains("value=\"password\""), "{}", a.body);

    // Register a work: pasted text without a title.
    let boundary = "XyZ";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"author\"\r\n\r\n某人\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\n第一回 正文\r\n\
         --{boundary}--\r\n"
    );
    let request = axum::http::Request::post("/works")
        .header(header::COOKIE, &admin)
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(axum::body::Body::from(body))
        .unwrap();
    let a = ui.send(request).await;
    refused_beside(&a, "title");
    assert!(
        a.body.contains("value=\"某人\"") && a.body.contains("第一回 正文"),
        "{}",
        a.body
    );
    drop(ui.dir);
}

async fn unknown_addresses_get_the_apps_404_page(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let ui = Ui::with(store, |_| {});
    let guest = ui.get("/no/such/page", None).await;
    assert_eq!(guest.status, StatusCode::NOT_FOUND);
    assert!(guest.body.contains("Page not found"), "{}", guest.body);
    assert!(!guest.body.contains("href=\"/cases\""), "{}", guest.body);

    let (admin, csrf) = ui.login("alice", PASSWORD).await;
    for path in [
        "/no/such/page",
        "/cases/99999999",
        "/works/99999999",
        "/sites/99999999",
    ] {
        let a = ui.get(path, Some(&admin)).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{path}");
        assert!(a.body.contains("Page not found"), "{path}: {}", a.body);
        assert!(a.body.contains("href=\"/cases\""), "{path}: {}", a.body);
        assert!(a.body.contains("href=\"/settings\""), "{path}: {}", a.body);
        assert_eq!(
            a.headers[header::CONTENT_TYPE],
            "text/html; charset=utf-8",
            "{path}"
        );
        assert!(a.headers.contains_key(header::CONTENT_SECURITY_POLICY));
    }
    // In the user's language.
    ui.speak_chinese(&admin, &csrf).await;
    let a = ui.get("/no/such/page", Some(&admin)).await;
    assert!(a.body.contains("页面不存在"), "{}", a.body);
    // A hostile path is shown escaped.
    let a = ui
        .get("/%3Cscript%3Ealert(1)%3C/script%3E", Some(&admin))
        .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(!a.body.contains("<script>alert"), "{}", a.body);
    // The API keeps its JSON errors.
    let a = ui.get("/api/v1/no/such/route", None).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.body.starts_with("{\"error\""), "{}", a.body);
    drop(ui.dir);
}

store::on_both_backends!(
    the_settings_page_overrides_the_file_and_notices_follow,
    refused_settings_keep_their_input_and_save_nothing,
    a_password_change_needs_the_current_one_and_ends_other_sessions,
    alert_choices_are_saved_on_the_account_page,
    edit_forms_change_sites_works_and_drafts,
    the_send_button_queues_the_mail,
    every_form_answers_on_the_form,
    unknown_addresses_get_the_apps_404_page,
);
