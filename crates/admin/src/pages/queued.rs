//! A job a button queued ("Re-check now", "Take a screenshot now", "Search for copies
//! now"), as it stands: the page it leads to says so above its content until the job has
//! run, reloading itself meanwhile, then says how it ended.

use store::{JobId, JobQueue, JobRecord, JobStatus};

use crate::error::WebResult;
use crate::state::AdminState;

/// What a button queues, as the `queued` query parameter names it.
const KINDS: [&str; 3] = ["recheck", "capture", "discover"];

/// The job and what it does.
pub(crate) struct Queued {
    /// One of [`KINDS`].
    what: &'static str,
    job: JobRecord,
}

impl Queued {
    /// The job `job` queued as `what`, as it stands; `None` when the query names none, or
    /// the job is gone (a clean-up).
    pub(crate) async fn read(
        state: &AdminState,
        what: Option<&str>,
        job: Option<i64>,
    ) -> WebResult<Option<Queued>> {
        let (Some(what), Some(job)) = (KINDS.iter().find(|k| Some(**k) == what), job) else {
            return Ok(None);
        };
        match state.store().job(JobId(job)).await {
            Ok(job) => Ok(Some(Queued { what, job })),
            Err(store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Not run yet (queued, running, or waiting to try again).
    pub(crate) fn pending(&self) -> bool {
        matches!(self.job.status, JobStatus::Queued | JobStatus::Running)
    }

    /// The label of what the page says about it.
    pub(crate) fn label(&self) -> &'static str {
        use JobStatus::{Dead, Done, Queued, Running};
        match (self.what, self.job.status) {
            ("capture", Queued | Running) => "queued.capture.pending",
            ("capture", Done) => "queued.capture.done",
            ("capture", Dead) => "queued.capture.failed",
            ("discover", Queued | Running) => "queued.discover.pending",
            ("discover", Done) => "queued.discover.done",
            ("discover", Dead) => "queued.discover.failed",
            (_, Queued | Running) => "queued.recheck.pending",
            (_, Done) => "queued.recheck.done",
            (_, Dead) => "queued.recheck.failed",
        }
    }

    /// Why it failed, when it did.
    pub(crate) fn error(&self) -> Option<&str> {
        (self.job.status == JobStatus::Dead)
            .then_some(self.job.last_error.as_deref())
            .flatten()
    }
}
