//! The conformance cases of watched (suspect) sites and their schedules (issue #12), run on
//! both backends through `conformance.rs`.

use chrono::{DateTime, Duration as TimeDelta, Timelike, Utc};
use store::testing::TestDb;
use store::{
    Enqueued, Error, EvidenceWrites, JobFilter, JobQueue, NewSite, Page, Schedules, SiteChanges,
    SiteSchedule, SiteSettings, SuspectSites, site_schedule_name,
};

use super::conformance::{TestJob, job, new_snapshot, two_pools};

fn settings() -> SiteSettings {
    SiteSettings {
        max_pages: 500,
        max_depth: 4,
        delay_ms: 250,
        concurrency: 2,
        include: vec!["/book/".into()],
        exclude: vec![r"\.jpg$".into()],
        render: false,
    }
}

fn ping(_site: i64) -> store::Result<store::NewJob> {
    Ok(job(&TestJob::Ping).queue("sites"))
}

fn schedule(cron: &str) -> SiteSchedule {
    SiteSchedule {
        cron: cron.to_owned(),
        job: ping,
    }
}

fn new_site(url: &str, cron: Option<&str>) -> NewSite {
    NewSite {
        start_url: url.to_owned(),
        name: None,
        settings: settings(),
        schedule: cron.map(schedule),
    }
}

pub async fn watched_sites_round_trip_with_their_schedules(db: &TestDb) {
    let s = &db.store;
    // A site a crawl reached before it was watched (its `sites` row exists) can be watched.
    let (reached, _) = s
        .insert_snapshot(
            &new_snapshot("https://pirate.example/old.html", 1, None),
            Some(&b"z"[..]),
        )
        .await
        .unwrap();
    assert!(reached.0 > 0);
    assert!(s.watched_sites().await.unwrap().is_empty());

    let site = s
        .watch_site(&NewSite {
            name: Some("Pirate Books".into()),
            ..new_site("https://pirate.example/book/1/", Some("0 3 * * *"))
        })
        .await
        .unwrap();
    assert_eq!(site.name, "Pirate Books");
    assert_eq!(
        (site.base_url.as_str(), site.host.as_str()),
        ("https://pirate.example/", "pirate.example")
    );
    assert_eq!(site.start_url, "https://pirate.example/book/1/");
    assert_eq!(site.settings, settings());
    assert!(site.enabled);
    assert_eq!(site.schedule.as_deref(), Some("0 3 * * *"));
    // Fires at 03:00 UTC plus the site's jitter (under five minutes for a daily schedule).
    let next = site.next_crawl_at.unwrap();
    assert!(next > Utc::now());
    assert_eq!(next.hour(), 3);
    assert!(next.minute() < 5, "{next}");
    let sched = &s.schedules().await.unwrap()[0];
    assert_eq!(sched.name, site_schedule_name(site.id));
    assert!(sched.jitter < std::time::Duration::from_secs(300));
    assert_eq!(sched.next_run_at, next);
    let sites = s.watched_sites().await.unwrap();
    assert_eq!(sites, vec![site.clone()]);
    assert_eq!(s.site(site.id).await.unwrap(), site);

    // Watched twice: refused, naming the site.
    let err = s
        .watch_site(&new_site("https://pirate.example/other/", None))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains(&site.id.to_string())),
        "{err}"
    );
    // Bad input changes nothing.
    for bad in [
        new_site("ftp://pirate2.example/", None),
        new_site("pirate2.example", None),
        new_site("https://pirate2.example/", Some("every day")),
        NewSite {
            settings: SiteSettings {
                max_pages: 0,
                ..settings()
            },
            ..new_site("https://pirate2.example/", None)
        },
    ] {
        assert!(
            matches!(s.watch_site(&bad).await, Err(Error::InvalidInput(_))),
            "{bad:?}"
        );
    }
    assert_eq!(s.watched_sites().await.unwrap().len(), 1);
    assert!(matches!(
        s.site(reached.0 + 999).await,
        Err(Error::NotFound { .. })
    ));

    // Changes: settings, start URL on the same origin, schedule removed and set again.
    let changed = s
        .update_site(
            site.id,
            &SiteChanges {
                start_url: Some("https://pirate.example/book/2/".into()),
                settings: Some(SiteSettings {
                    max_pages: 20,
                    render: true,
                    ..settings()
                }),
                schedule: Some(None),
                ..SiteChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(changed.settings.max_pages, 20);
    assert!(changed.settings.render);
    assert!(s.site(site.id).await.unwrap().settings.render);
    assert_eq!(changed.start_url, "https://pirate.example/book/2/");
    assert_eq!(changed.name, "Pirate Books");
    assert!(changed.schedule.is_none() && changed.next_crawl_at.is_none());
    assert!(s.schedules().await.unwrap().is_empty());
    let elsewhere = SiteChanges {
        start_url: Some("https://mirror.example/book/2/".into()),
        ..SiteChanges::default()
    };
    assert!(matches!(
        s.update_site(site.id, &elsewhere).await,
        Err(Error::InvalidInput(_))
    ));
    let every_minute = SiteChanges {
        schedule: Some(Some(schedule("* * * * *"))),
        ..SiteChanges::default()
    };
    let changed = s.update_site(site.id, &every_minute).await.unwrap();
    let next = changed.next_crawl_at.unwrap();
    // A minute's period: the jitter stays under six seconds.
    assert!(next.second() < 6, "{next}");

    // Paused: no next crawl, and the schedule does not fire.
    let paused = s.set_site_enabled(site.id, false).await.unwrap();
    assert!(!paused.enabled && paused.next_crawl_at.is_none());
    let later = Utc::now() + TimeDelta::minutes(5);
    assert!(s.enqueue_due_at(later).await.unwrap().is_empty());
    // A schedule set while paused stays paused.
    s.update_site(site.id, &every_minute).await.unwrap();
    assert!(s.enqueue_due_at(later).await.unwrap().is_empty());
    // Resumed: it fires at its next time from now, once.
    let resumed = s.set_site_enabled(site.id, true).await.unwrap();
    assert!(resumed.enabled && resumed.next_crawl_at.unwrap() > Utc::now());
    assert_eq!(s.enqueue_due_at(later).await.unwrap().len(), 1);
    let jobs = s
        .jobs(&JobFilter::Queue("sites".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        jobs[0].dedupe_key.as_deref(),
        Some(format!("schedule:site:{}", site.id).as_str())
    );
}

/// A thousand sites on one cron time, fired by two processes racing with a test clock: every
/// site's job is queued exactly once, spread by the sites' jitter.
pub async fn a_thousand_site_schedules_fire_once_across_two_processes(db: &TestDb) {
    let s = &db.store;
    const SITES: usize = 1000;
    for i in 0..SITES {
        s.watch_site(&new_site(
            &format!("https://pirate{i}.example/"),
            Some("*/5 * * * *"),
        ))
        .await
        .unwrap();
    }
    let sites = s.watched_sites().await.unwrap();
    let fire_times: Vec<DateTime<Utc>> = sites.iter().map(|s| s.next_crawl_at.unwrap()).collect();
    let last = *fire_times.iter().max().unwrap();
    // Each fires after its cron time (a multiple of five minutes) by a delay of its own, up
    // to 30 s for a five-minute period. Registering a thousand sites can cross a cron time,
    // so the fire times are compared by their delays, not with each other.
    let delays: Vec<i64> = fire_times
        .iter()
        .map(|t| t.timestamp_millis().rem_euclid(300_000))
        .collect();
    let (least, most) = (*delays.iter().min().unwrap(), *delays.iter().max().unwrap());
    assert!(most < 30_000, "a delay of {most} ms");
    assert!(most > least, "no spread: every delay {least} ms");

    // Both processes race over the minute after the last fire time.
    let clock = last + TimeDelta::seconds(1);
    let pools = two_pools(db).await;
    let started = std::time::Instant::now();
    let racers: Vec<_> = (0..4)
        .map(|i| {
            let s = pools[i % 2].clone();
            tokio::spawn(async move { s.enqueue_due_at(clock).await.unwrap() })
        })
        .collect();
    let mut fired = Vec::new();
    for r in racers {
        fired.extend(r.await.unwrap());
    }
    eprintln!(
        "{SITES} site schedules fired by 4 racers over 2 pools in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(fired.len(), SITES);
    assert!(fired.iter().all(|e| matches!(e, Enqueued::New(_))));
    let jobs = s
        .jobs(&JobFilter::Queue("sites".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(jobs.len(), SITES);
    let mut keys: Vec<_> = jobs.iter().filter_map(|j| j.dedupe_key.clone()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), SITES);
    // The same instant again fires nothing; the next fire times find each job still queued.
    assert!(s.enqueue_due_at(clock).await.unwrap().is_empty());
    let next_round = s
        .watched_sites()
        .await
        .unwrap()
        .iter()
        .map(|s| s.next_crawl_at.unwrap())
        .max()
        .unwrap();
    assert!(next_round > clock);
    let again = s
        .enqueue_due_at(next_round + TimeDelta::seconds(1))
        .await
        .unwrap();
    assert_eq!(again.len(), SITES);
    assert!(again.iter().all(|e| matches!(e, Enqueued::Duplicate(_))));
}

pub async fn a_site_has_one_unfinished_crawl_however_many_start_one(db: &TestDb) {
    use store::{CrawlStatus, Crawls, NewCrawl};
    let crawl = |seed: &str| NewCrawl {
        seeds: vec![seed.to_owned()],
        settings: "{}".into(),
        max_pages: Some(10),
    };
    // Eight starts at once from two processes: one crawl, which every start is given.
    let pools = two_pools(db).await;
    let starts: Vec<_> = (0..8)
        .map(|i| {
            let s = pools[i % 2].clone();
            let c = crawl(&format!("https://one.example/book/{i}"));
            tokio::spawn(async move { s.create_crawl_unless_unfinished(&c).await.unwrap() })
        })
        .collect();
    let mut results = Vec::new();
    for s in starts {
        results.push(s.await.unwrap());
    }
    assert_eq!(
        results.iter().filter(|(_, created)| *created).count(),
        1,
        "{results:?}"
    );
    let id = results[0].0;
    assert!(results.iter().all(|(c, _)| *c == id), "{results:?}");
    let s = &db.store;
    // Another site is another crawl.
    let (other, created) = s
        .create_crawl_unless_unfinished(&crawl("https://two.example/"))
        .await
        .unwrap();
    assert!(created && other != id);
    // Running still counts; once finished, the next start creates a crawl.
    s.set_crawl_status(id, CrawlStatus::Running, None)
        .await
        .unwrap();
    assert_eq!(
        s.create_crawl_unless_unfinished(&crawl("https://one.example/"))
            .await
            .unwrap(),
        (id, false)
    );
    s.set_crawl_status(id, CrawlStatus::Done, None)
        .await
        .unwrap();
    let (next, created) = s
        .create_crawl_unless_unfinished(&crawl("https://one.example/"))
        .await
        .unwrap();
    assert!(created && next != id);
    assert!(matches!(
        s.create_crawl_unless_unfinished(&NewCrawl {
            seeds: vec![],
            ..crawl("x")
        })
        .await,
        Err(Error::InvalidInput(_))
    ));
}
