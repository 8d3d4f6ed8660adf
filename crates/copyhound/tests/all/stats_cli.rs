//! `copyhound stats` as a user runs it, on both backends: a store holding one copy and one
//! licensed copy, read back as JSON and as text, and bad `--since` values refused.

use crate::common;

use chrono::{TimeDelta, Utc};
use common::{json, ok, run_async as run};
use store::testing::{sample_snapshot, sample_work};
use store::{
    EvidenceWrites, LicensedDomains, MatchWrites, NewMatch, Store, WorkInsert, WorkReads,
    WorkWrites,
};

/// A work of two chapters whose first is copied on pirate.example and on the licensed
/// partner.example, both fetched an hour ago.
async fn fill(s: &Store) {
    let work = sample_work("三国演义", 2);
    let WorkInsert::Created(work) = s.insert_work(&work).await.unwrap() else {
        panic!("a new work")
    };
    let chapter = s.chapters(work).await.unwrap()[0].id;
    s.add_licensed("partner.example", Some(work), None)
        .await
        .unwrap();
    for (sha, url) in [
        (1, "https://pirate.example/1"),
        (2, "https://partner.example/1"),
    ] {
        let snapshot = sample_snapshot(url, sha, Utc::now() - TimeDelta::hours(1));
        let (id, _) = s
            .insert_snapshot(&snapshot, Some(&b"<html>"[..]))
            .await
            .unwrap();
        let found = NewMatch {
            chapter_id: chapter,
            work_id: work,
            method: "align".into(),
            score: 0.9,
            coverage: 0.9,
            matched_chars: 90,
            chapter_chars: 100,
            page_chars: 100,
            page_share: 0.9,
            passages: "[]".into(),
        };
        s.record_matches(id, &[found], "worker").await.unwrap();
    }
}

async fn stats(db: &str) {
    let figures = json(db, &["stats", "--json"]).await;
    assert_eq!(figures["detections"]["total"], 1, "{figures}");
    assert_eq!(figures["detections"]["licensed_total"], 1, "{figures}");
    assert_eq!(
        figures["top_sites"][0]["site"], "pirate.example",
        "{figures}"
    );
    assert_eq!(figures["exposure"][0]["chapters_copied"], 1, "{figures}");
    assert_eq!(figures["exposure"][0]["share_copied"], 0.5, "{figures}");
    assert_eq!(figures["licensed"]["by_work"][0]["matches"], 1, "{figures}");
    assert_eq!(figures["funnel"]["found"], 1, "{figures}");
    assert_eq!(figures["funnel"]["by_status"]["new"], 1, "{figures}");

    // The day of the copies, fetched an hour ago: an hour after midnight it is yesterday.
    let fetched = (Utc::now() - TimeDelta::hours(2)).date_naive().to_string();
    let text = ok(db, &["stats", "--since", &fetched]).await;
    for expected in [
        format!("since {fetched}"),
        "pirate.example\t1\t1\t1".to_owned(),
        "(50.0%)".to_owned(),
        "found 1 → confirmed 0".to_owned(),
        "no removals".to_owned(),
        "licensed (not infringement): 1 matches".to_owned(),
    ] {
        assert!(text.contains(&expected), "{expected:?} in:\n{text}");
    }

    let tomorrow = (Utc::now().date_naive() + TimeDelta::days(1)).to_string();
    for (since, says) in [
        (tomorrow.as_str(), "in the future"),
        ("last week", "not a date"),
    ] {
        let out = run(db, &["stats", "--since", since]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(says),
            "{since}: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_print_the_figures_on_sqlite() {
    let db = store::testing::sqlite("stats_cli").await.unwrap();
    fill(&db.store).await;
    stats(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_print_the_figures_on_postgres() {
    let Some(db) = store::testing::postgres("stats_cli").await else {
        return;
    };
    fill(&db.store).await;
    stats(&db.url).await;
}
