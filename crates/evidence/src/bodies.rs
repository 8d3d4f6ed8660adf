//! Page bodies moved to the object store in the background: the `body-segments` schedule
//! queues [`Job::WriteSegments`] every minute, whose handler writes segments while one is
//! due ([`store::Store::write_due_segments`]). A store that is down fails the job, which the
//! queue retries; the bodies wait in the database meanwhile, readable. The `retention-gc`
//! schedule queues [`Job::Gc`] once a day, which removes the bodies past `[retention]`
//! ([`store::Store::gc`]).

use jobs::{Job, Result, store_err};
use store::{NewJob, Schedules, Store};

/// The name of the schedule that queues [`Job::WriteSegments`].
pub const SCHEDULE: &str = "body-segments";

/// How often the schedule looks whether a segment is due (cron, UTC).
pub const CRON: &str = "* * * * *";

/// Creates (or updates) the schedule that writes segments, when `store` has an object store
/// for bodies (`[storage] bodies`); nothing otherwise.
///
/// # Errors
/// A database failure.
pub async fn ensure_segment_schedule(store: &Store) -> Result<()> {
    if store.body_store().is_none() {
        return Ok(());
    }
    let job = NewJob::new(&Job::WriteSegments)
        .map_err(store_err("encoding the segment job"))?
        .dedupe_key(SCHEDULE);
    store
        .set_schedule(SCHEDULE, CRON, &job)
        .await
        .map_err(store_err("writing the body-segments schedule"))?;
    Ok(())
}

/// The name of the schedule that queues [`Job::Gc`].
pub const GC_SCHEDULE: &str = "retention-gc";

/// When gc runs (cron, UTC): daily, at an hour when a crawl schedule set on the hour is
/// not starting.
pub const GC_CRON: &str = "17 3 * * *";

/// Creates (or updates) the daily schedule that removes the bodies past their retention,
/// with bodies in the database or on an object store alike.
///
/// # Errors
/// A database failure.
pub async fn ensure_gc_schedule(store: &Store) -> Result<()> {
    let job = NewJob::new(&Job::Gc)
        .map_err(store_err("encoding the gc job"))?
        .dedupe_key(GC_SCHEDULE);
    store
        .set_schedule(GC_SCHEDULE, GC_CRON, &job)
        .await
        .map_err(store_err("writing the retention-gc schedule"))?;
    Ok(())
}
