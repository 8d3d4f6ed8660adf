//! What happened, as webhooks and alerts name it: the event a [`crate::Job::Event`] carries.

use serde::{Deserialize, Serialize};

/// What happened, as a webhook names it (`event` in the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// A new case: a site copies a work.
    #[serde(rename = "case.opened")]
    CaseOpened,
    /// A removed or dismissed case opened again.
    #[serde(rename = "case.reopened")]
    CaseReopened,
    /// A copy gone after a notice is back up.
    #[serde(rename = "copy.back_up")]
    CopyBackUp,
    /// Every copy of a case is gone.
    #[serde(rename = "case.removed")]
    CaseRemoved,
    /// A crawl failed.
    #[serde(rename = "crawl.failed")]
    CrawlFailed,
    /// A notice was sent (mailed, or marked sent by hand).
    #[serde(rename = "notice.sent")]
    NoticeSent,
    /// An admin's "send test" on the webhooks page (never queued, never chosen).
    #[serde(rename = "webhook.test")]
    Test,
}

impl Event {
    /// Every event.
    pub const ALL: [Event; 6] = [
        Event::CaseOpened,
        Event::CaseReopened,
        Event::CopyBackUp,
        Event::CaseRemoved,
        Event::CrawlFailed,
        Event::NoticeSent,
    ];

    /// Its name (`case.opened`).
    pub fn as_str(self) -> &'static str {
        match self {
            Event::CaseOpened => "case.opened",
            Event::CaseReopened => "case.reopened",
            Event::CopyBackUp => "copy.back_up",
            Event::CaseRemoved => "case.removed",
            Event::CrawlFailed => "crawl.failed",
            Event::NoticeSent => "notice.sent",
            Event::Test => "webhook.test",
        }
    }

    /// The event named `s` (among [`Event::ALL`]).
    pub fn parse(s: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.as_str() == s)
    }
}
