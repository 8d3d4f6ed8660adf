//! The conformance cases of discovery (issue #28): the query log as a cache and a budget,
//! found URLs, candidates and their statuses, and which hosts are never probed; run on both
//! backends through `conformance.rs`.

use chrono::{Duration as TimeDelta, Utc};
use store::testing::TestDb;
use store::{CandidateStatus, Discovery, Error, FoundUrl, LicensedDomains, NewQuery, QueryCount};

pub async fn discovery_queries_cache_count_and_candidates_keep_their_status(db: &TestDb) {
    let store = &db.store;
    let start = Utc::now() - TimeDelta::seconds(1);
    let hits = vec![
        "https://a.example/1".to_owned(),
        "https://b.example/".to_owned(),
    ];
    for (outcome, message, hits) in [
        ("ok", None, &hits[..]),
        ("quota", Some("rate limit exceeded"), &[][..]),
        ("error", Some("first"), &[][..]),
        ("error", Some("second"), &[][..]),
    ] {
        store
            .record_query(&NewQuery {
                provider: "brave",
                query: "铜铃无风自动",
                work: None,
                outcome,
                message,
                hits,
            })
            .await
            .unwrap();
    }
    // The newest successful answer is the cache; an error after it does not hide it.
    assert_eq!(
        store
            .cached_hits("brave", "铜铃无风自动", start)
            .await
            .unwrap(),
        Some(hits.clone())
    );
    assert_eq!(
        store
            .cached_hits("searxng", "铜铃无风自动", start)
            .await
            .unwrap(),
        None
    );
    let later = Utc::now() + TimeDelta::seconds(5);
    assert_eq!(
        store
            .cached_hits("brave", "铜铃无风自动", later)
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.queries_sent(start, None, None).await.unwrap(), 4);
    assert_eq!(
        store
            .queries_sent(start, Some("brave"), None)
            .await
            .unwrap(),
        4
    );
    assert_eq!(
        store
            .queries_sent(start, Some("baidu"), None)
            .await
            .unwrap(),
        0
    );
    assert_eq!(store.queries_sent(later, None, None).await.unwrap(), 0);
    let counts = store.query_counts(start).await.unwrap();
    let count = |outcome: &str| counts.iter().find(|c| c.outcome == outcome).cloned();
    assert_eq!(
        count("error"),
        Some(QueryCount {
            provider: "brave".into(),
            outcome: "error".into(),
            count: 2,
            last_message: Some("second".into()),
        })
    );
    assert_eq!(count("quota").unwrap().count, 1);

    // Found URLs: a URL found again keeps its first finder.
    let found = |url: &str, by: &str| FoundUrl {
        domain: "pirate.example:8080".into(),
        url: url.into(),
        found_by: by.into(),
        work: None,
    };
    let added = store
        .add_found_urls(&[
            found("http://pirate.example:8080/1", "search:brave"),
            found("http://pirate.example:8080/2", "search:brave"),
        ])
        .await
        .unwrap();
    assert_eq!(added, 2);
    let again = store
        .add_found_urls(&[found("http://pirate.example:8080/1", "commoncrawl")])
        .await
        .unwrap();
    assert_eq!(again, 0);
    assert_eq!(
        store.found_urls("pirate.example:8080").await.unwrap(),
        [
            "http://pirate.example:8080/1",
            "http://pirate.example:8080/2"
        ]
    );

    // Candidates: added once, whatever finds them later; statuses move, counts come along.
    let c = store
        .add_candidate("Pirate.Example:8080", "search:brave")
        .await
        .unwrap();
    assert_eq!(
        (c.domain.as_str(), c.status, c.urls, c.pages),
        ("pirate.example:8080", CandidateStatus::New, 2, 0)
    );
    let same = store
        .add_candidate("pirate.example:8080", "commoncrawl")
        .await
        .unwrap();
    assert_eq!((same.id, same.found_by.as_str()), (c.id, "search:brave"));
    assert!(!store.host_excluded("pirate.example:8080").await.unwrap());
    assert_eq!(store.host_copies("pirate.example:8080").await.unwrap(), 0);
    let ignored = store
        .set_candidate_status(
            "pirate.example:8080",
            CandidateStatus::Ignored,
            None,
            "manual",
        )
        .await
        .unwrap();
    assert_eq!(ignored.status, CandidateStatus::Ignored);
    assert!(store.host_excluded("pirate.example:8080").await.unwrap());
    assert!(matches!(
        store
            .set_candidate_status("nobody.example", CandidateStatus::Approved, Some(1), "x")
            .await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        store.candidate("nobody.example").await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        store.add_candidate("not a host", "import").await,
        Err(Error::InvalidInput(_))
    ));
    for hostile in [
        "<script>alert(1)</script>",
        "a\"b.example",
        "x.example;rm",
        "a'b.example",
    ] {
        assert!(
            matches!(
                store.add_candidate(hostile, "import").await,
                Err(Error::InvalidInput(_))
            ),
            "{hostile}"
        );
    }
    assert_eq!(store.candidates(None).await.unwrap().len(), 1);
    assert!(
        store
            .candidates(Some(CandidateStatus::New))
            .await
            .unwrap()
            .is_empty()
    );

    // A licensed domain covers its subdomains, whatever the port.
    assert!(
        !store
            .host_excluded("www.licensed.example:8443")
            .await
            .unwrap()
    );
    store
        .add_licensed("licensed.example", None, None)
        .await
        .unwrap();
    assert!(
        store
            .host_excluded("www.licensed.example:8443")
            .await
            .unwrap()
    );
    assert!(!store.host_excluded("notlicensed.example").await.unwrap());
}

pub async fn searches_are_due_new_works_first_and_probes_are_recorded(db: &TestDb) {
    let store = &db.store;
    let now = Utc::now();
    let today = now - TimeDelta::hours(1);
    let mut works = Vec::new();
    for (i, title) in ["甲", "乙", "丙", "丁"].into_iter().enumerate() {
        works.push(super::cases::work(store, title, 40 + i as u8).await.0);
    }
    // Never searched: by id; then the longest unsearched. Searched today: not due.
    store
        .mark_work_searched(works[0], now - TimeDelta::days(1))
        .await
        .unwrap();
    store
        .mark_work_searched(works[2], now - TimeDelta::days(2))
        .await
        .unwrap();
    store.mark_work_searched(works[3], now).await.unwrap();
    assert_eq!(
        store.works_due_search(today, 10).await.unwrap(),
        [works[1], works[2], works[0]]
    );
    assert_eq!(
        store.works_due_search(today, 2).await.unwrap(),
        [works[1], works[2]]
    );
    assert_eq!(store.searches_pending(today).await.unwrap(), 0);
    // Queued today and not run: pending, and not due again; once run, neither.
    store.mark_work_queued(works[1], now).await.unwrap();
    store.mark_work_queued(works[2], now).await.unwrap();
    assert_eq!(store.searches_pending(today).await.unwrap(), 2);
    assert_eq!(store.works_due_search(today, 10).await.unwrap(), [works[0]]);
    store
        .mark_work_searched(works[1], now + TimeDelta::seconds(1))
        .await
        .unwrap();
    assert_eq!(store.searches_pending(today).await.unwrap(), 1);
    assert_eq!(store.works_due_search(today, 10).await.unwrap(), [works[0]]);
    // Queued yesterday and never run: due again today.
    store
        .mark_work_queued(works[0], now - TimeDelta::days(1))
        .await
        .unwrap();
    assert_eq!(store.works_due_search(today, 10).await.unwrap(), [works[0]]);
    assert_eq!(store.works_due_search(today, 0).await.unwrap(), []);

    // When each phrase of a work was last sent to a provider, whatever the answer: another
    // work's and another provider's queries aside.
    let ask = |query: &'static str, work, provider: &'static str, outcome: &'static str| async move {
        store
            .record_query(&NewQuery {
                provider,
                query,
                work: Some(work),
                outcome,
                message: None,
                hits: &[],
            })
            .await
    };
    ask("甲甲", works[0], "searxng", "ok").await.unwrap();
    ask("乙乙", works[0], "searxng", "ok").await.unwrap();
    ask("甲甲", works[0], "searxng", "error").await.unwrap();
    ask("丙丙", works[0], "brave", "ok").await.unwrap();
    ask("丁丁", works[1], "searxng", "ok").await.unwrap();
    let mut asked = store.last_asked("searxng", works[0]).await.unwrap();
    asked.sort_by_key(|(_, at)| *at);
    let order: Vec<&str> = asked.iter().map(|(q, _)| q.as_str()).collect();
    assert_eq!(order, ["乙乙", "甲甲"], "the newest asking of each");
    assert!(
        asked
            .iter()
            .all(|(_, at)| (*at - now).num_seconds().abs() < 60)
    );
    assert!(
        store
            .last_asked("searxng", works[2])
            .await
            .unwrap()
            .is_empty()
    );

    // A probe is recorded on the candidate; a domain that is none is not found.
    let candidate = store
        .add_candidate("Probe.example", "import")
        .await
        .unwrap();
    assert_eq!(candidate.probed_at, None);
    store.mark_probed("probe.example", now).await.unwrap();
    let probed = store.candidate("probe.example").await.unwrap().probed_at;
    assert!(
        probed.is_some_and(|t| (t - now).num_milliseconds().abs() < 1000),
        "{probed:?}"
    );
    assert!(matches!(
        store.mark_probed("unknown.example", now).await,
        Err(Error::NotFound { .. })
    ));
}
