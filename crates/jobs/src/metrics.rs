//! What only this process knows, for `/metrics`: how long each kind of job took here and how
//! it ended. Counts that every process shares (pages, matches, cases, the queue) are read
//! from the store at scrape time instead, so that any one process's `/metrics` tells the
//! whole system's state and a restart loses nothing.
//!
//! The figures are process-wide (one [`JobMetrics`] per process, [`job_metrics`]), because a
//! process may run several worker loops (one per queue) that all report into it.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Labels of a job's duration: its kind and how it ended.
pub type JobLabels = [(&'static str, String); 2];

/// Upper bounds of the job duration buckets, seconds: a match job takes milliseconds, a
/// crawl job hours.
const JOB_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0, 300.0, 1800.0, 7200.0,
];

fn job_histogram() -> Histogram {
    Histogram::new(JOB_BUCKETS)
}

/// How a job run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    /// Done.
    Done,
    /// Failed (to be retried, or dead).
    Failed,
    /// Handed back unfinished because the worker was stopping.
    Interrupted,
}

impl JobOutcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            JobOutcome::Done => "done",
            JobOutcome::Failed => "failed",
            JobOutcome::Interrupted => "interrupted",
        }
    }
}

/// Job durations by kind and outcome, in this process.
#[derive(Debug)]
pub struct JobMetrics {
    seconds: Family<JobLabels, Histogram, fn() -> Histogram>,
}

impl JobMetrics {
    /// A fresh set (tests; the process uses [`job_metrics`]).
    pub fn new() -> Self {
        JobMetrics {
            seconds: Family::new_with_constructor(job_histogram as fn() -> Histogram),
        }
    }

    /// Records one run of a job of `kind`.
    pub fn observe(&self, kind: &str, outcome: JobOutcome, took: Duration) {
        self.seconds
            .get_or_create(&[
                ("kind", kind.to_owned()),
                ("outcome", outcome.as_str().to_owned()),
            ])
            .observe(took.as_secs_f64());
    }

    /// Adds the figures to `registry` (they keep counting: the registry holds a handle).
    pub fn register(&self, registry: &mut Registry) {
        registry.register_with_unit(
            "copyhound_job_duration",
            "How long jobs ran in this process, by kind and outcome",
            Unit::Seconds,
            self.seconds.clone(),
        );
    }
}

impl Default for JobMetrics {
    fn default() -> Self {
        JobMetrics::new()
    }
}

/// This process's job figures.
pub fn job_metrics() -> &'static JobMetrics {
    static METRICS: OnceLock<JobMetrics> = OnceLock::new();
    METRICS.get_or_init(JobMetrics::new)
}
