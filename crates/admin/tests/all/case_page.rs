//! The case page as a decision screen, on SQLite and Postgres: every page of the case a
//! row with its passages, an edit inside a copy marked as an edit, the whole-chapter view,
//! dismissing only with a reason, undo, and the wrapped text view.

use crate::common;

use std::sync::Arc;

use axum::http::StatusCode;
use detection::Analyser;
use matcher::MatcherSettings;
use store::testing::TestDb;
use store::{CaseReads, CaseStatus, Notices};

use common::ui::Ui;
use common::{WORK, stored_page, users, with_case};

const PASSWORD: &str = "correct+horse+battery";

async fn a_case_is_decided_on_its_page(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    // A second page of the same site copies the chapter with one name edited.
    let start = WORK.find("第一回").unwrap();
    let end = WORK.find("第二回").unwrap();
    let chapter = &WORK[start..end];
    let name = "聲怨";
    assert!(chapter.contains(name));
    let edited = chapter.replacen(name, "女娲伏羲", 1);
    let second = stored_page(store, "http://pirate.example/book/1-edited.html", &edited).await;
    let analyser = Arc::new(Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    ));
    assert_eq!(analyser.analyse(second).await.unwrap().cases, vec![case]);

    let ui = Ui::with(store, |_| {});
    let (reviewer, csrf) = ui.login("rita", PASSWORD).await;
    let detail = ui.get(&format!("/cases/{case}"), Some(&reviewer)).await;
    assert_eq!(detail.status, StatusCode::OK);
    let body = &detail.body;
    assert!(body.len() <= 100_000, "{} bytes", body.len());
    // Both pages are rows with real links, and both have their passages.
    for url in [
        "http://pirate.example/book/1.html",
        "http://pirate.example/book/1-edited.html",
    ] {
        assert!(
            body.contains(&format!(
                "<a class=\"url\" href=\"{url}\" rel=\"noopener noreferrer nofollow\""
            )),
            "{url} is no link"
        );
    }
    assert_eq!(body.matches("data-page-row").count(), 2);
    assert_eq!(body.matches("<section class=\"card case-page\"").count(), 2);
    assert!(body.matches("data-side=\"page\"").count() >= 2);
    // The work is in traditional script, the copies simplified; the edit is marked as one.
    assert!(body.contains("converted script"), "no script disguise");
    assert!(
        body.contains("class=\"m-changed\">女娲伏羲<") || body.contains("class=\"m-extra\">女娲<"),
        "edit not marked: {}",
        body.find("女娲")
            .map_or("no 女娲 on the page".to_owned(), |at| body[at..]
                .chars()
                .take(200)
                .collect())
    );
    assert!(
        body.contains("class=\"m-changed\">聲怨<"),
        "edit not marked in the chapter"
    );
    assert!(body.contains("edited"));
    // Hostile page text stays text.
    assert!(!body.contains("<script>alert"));

    // The whole chapter beside the whole page.
    let view = casework::case_view(store, case).await.unwrap();
    let m = view
        .matches
        .iter()
        .find(|m| m.snapshot_id == second)
        .unwrap();
    let whole = ui
        .get(
            &format!(
                "/cases/{case}/compare?snapshot={}&chapter={}",
                second.0, m.chapter_id.0
            ),
            Some(&reviewer),
        )
        .await;
    assert_eq!(whole.status, StatusCode::OK, "{}", whole.body);
    assert!(whole.body.contains("class=\"m-copied\""));
    assert!(whole.body.contains("女娲伏羲"));
    let missing = ui
        .get(
            &format!("/cases/{case}/compare?snapshot={}&chapter=999999", second.0),
            Some(&reviewer),
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    // Dismissing needs a reason; with one, the page after offers undo.
    let status = format!("/cases/{case}/status");
    // Refused on the case page itself, the reason's field marked and the note kept.
    let refused = ui
        .post(
            &status,
            Some(&reviewer),
            &format!("status=dismissed&note=kept+%3Cb%3E&csrf={csrf}"),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refused.body.contains("id=\"reason-error\""),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("aria-describedby=\"reason-error\""));
    assert!(refused.body.contains("value=\"kept &#60;b&#62;\""));
    assert!(
        refused.body.contains("id=\"case-pages\""),
        "the whole case page"
    );
    assert_eq!(store.case(case).await.unwrap().status, CaseStatus::New);
    let bad_reason = ui
        .post(
            &status,
            Some(&reviewer),
            &format!("status=dismissed&reason=bored&csrf={csrf}"),
        )
        .await;
    assert_eq!(bad_reason.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad_reason.body.contains("id=\"reason-error\""));
    let done = ui
        .post(
            &status,
            Some(&reviewer),
            &format!("status=dismissed&reason=quotation&note=a+review&csrf={csrf}"),
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert_eq!(
        done.location(),
        format!("/cases/{case}?case={case}&to=dismissed&from=new")
    );
    let after = ui.get(done.location(), Some(&reviewer)).await;
    assert!(after.body.contains("id=\"undo-message\""));
    assert!(
        after
            .body
            .contains("Quotation: <span class=\"mono value\">a review</span>"),
        "the reason in the history"
    );
    let undo = format!("/cases/{case}/undo");
    let a = ui
        .post(
            &undo,
            Some(&reviewer),
            &format!("to=dismissed&from=new&csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(store.case(case).await.unwrap().status, CaseStatus::New);
    // Undone once: a second undo finds nothing to undo.
    let again = ui
        .post(
            &undo,
            Some(&reviewer),
            &format!("to=dismissed&from=new&csrf={csrf}"),
        )
        .await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST, "{}", again.body);
    let history = store.case_history(case).await.unwrap();
    assert_eq!(history.last().unwrap().note(), Some("undo"));

    // Confirm and next: no other new case, so it stays, and the notice is offered first.
    let a = ui
        .post(
            &format!("{status}?then=next"),
            Some(&reviewer),
            &format!("status=confirmed&csrf={csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert!(a.location().starts_with(&format!("/cases/{case}?")));
    let confirmed = ui.get(a.location(), Some(&reviewer)).await.body;
    let notice = confirmed.find("id=\"create-notice\"").expect("notice form");
    assert!(notice < confirmed.find("id=\"case-pages\"").unwrap());
    assert!(confirmed.contains("<option value=\"dmca\" selected>"));

    // A recipient that is no address: the case page again, the field marked, what was typed
    // kept, no notice drafted.
    let drafted = ui
        .post(
            &format!("/cases/{case}/notices"),
            Some(&reviewer),
            &format!("template=cn&to=nobody%40&csrf={csrf}"),
        )
        .await;
    assert_eq!(
        drafted.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        drafted.body
    );
    assert!(drafted.body.contains("id=\"to-error\""), "{}", drafted.body);
    assert!(drafted.body.contains("value=\"nobody@\""));
    assert!(drafted.body.contains("<option value=\"cn\" selected>"));
    assert!(store.notices(Some(case)).await.unwrap().is_empty());
    // Without the rights holder's profile the page says so, with where to fill it in (for
    // an admin), and a draft is refused with the same words, the recipient not blamed.
    assert!(confirmed.contains("id=\"holder-missing\""), "{confirmed}");
    assert!(
        !confirmed.contains("id=\"holder-settings\""),
        "a reviewer cannot edit settings"
    );
    let drafted = ui
        .post(
            &format!("/cases/{case}/notices"),
            Some(&reviewer),
            &format!("template=cn&to=abuse%40pirate.example&csrf={csrf}"),
        )
        .await;
    assert_eq!(
        drafted.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        drafted.body
    );
    assert!(
        drafted.body.contains("id=\"holder-error\""),
        "{}",
        drafted.body
    );
    assert!(
        !drafted.body.contains("id=\"to-error\""),
        "{}",
        drafted.body
    );
    assert!(store.notices(Some(case)).await.unwrap().is_empty());
    // The template saved in the settings is the one the form starts on.
    let file = takedown::NoticeSettings::default();
    let saved = [("notices.template".to_owned(), "cn".to_owned())];
    takedown::overrides::save(store, &file, &saved, "alice")
        .await
        .unwrap();
    let fresh = Ui::with(store, |_| {});
    let page = fresh.get(&format!("/cases/{case}"), Some(&reviewer)).await;
    assert!(
        page.body.contains("<option value=\"cn\" selected>"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<option value=\"dmca\" selected>"));

    // The text view wraps long lines.
    let text = ui
        .get(&format!("/snapshots/{}", second.0), Some(&reviewer))
        .await;
    assert_eq!(text.status, StatusCode::OK);
    assert!(
        text.body
            .contains("<pre class=\"doc\" id=\"snapshot-text\">")
    );
}

#[tokio::test]
async fn a_case_is_decided_on_its_page_on_sqlite() {
    let db = store::testing::sqlite("case_page").await.unwrap();
    a_case_is_decided_on_its_page(&db).await;
}

#[tokio::test]
async fn a_case_is_decided_on_its_page_on_postgres() {
    let Some(db) = store::testing::postgres("case_page").await else {
        return;
    };
    a_case_is_decided_on_its_page(&db).await;
}
