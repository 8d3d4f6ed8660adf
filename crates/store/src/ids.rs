//! Row ids as newtypes, so a `WorkId` is never passed where a `ChapterId` belongs.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize, serde::Deserialize, sqlx::Type,
        )]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(pub i64);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.trim().parse().map($name)
            }
        }
    };
}

id_type!(
    /// A registered work (`works.id`).
    WorkId
);
id_type!(
    /// A chapter of a work (`chapters.id`).
    ChapterId
);
id_type!(
    /// A job in the queue (`jobs.id`).
    JobId
);
id_type!(
    /// One stored HTTP response (`snapshots.id`).
    SnapshotId
);
id_type!(
    /// A crawl (`crawls.id`).
    CrawlId
);
id_type!(
    /// One URL of a crawl's frontier (`frontier.id`).
    FrontierId
);
id_type!(
    /// One runner's run of a crawl (`crawl_runs.id`).
    CrawlRunId
);
id_type!(
    /// A site: one origin (`scheme://host[:port]/`) pages are stored under (`sites.id`).
    SiteId
);
id_type!(
    /// A page: one URL of a site, fetched into snapshots over time (`pages.id`).
    PageId
);
id_type!(
    /// An infringement case: one site copying one work (`cases.id`).
    CaseId
);
id_type!(
    /// One row of the audit log (`audit_log.id`).
    AuditId
);
id_type!(
    /// A takedown notice drafted from a case (`notices.id`).
    NoticeId
);
id_type!(
    /// A person who signs in to the admin UI (`users.id`).
    UserId
);
id_type!(
    /// An event users were alerted of (`alert_events.id`).
    AlertEventId
);
id_type!(
    /// One alert mail to one user, immediate or a digest (`alert_mails.id`).
    AlertMailId
);
id_type!(
    /// A webhook an admin added in the UI (`webhooks.id`).
    WebhookId
);
id_type!(
    /// A bearer token for the API, issued to a user (`api_tokens.id`).
    ApiTokenId
);
