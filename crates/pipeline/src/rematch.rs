//! A re-match (`copyhound rematch`): stored pages matched again, so pages fetched before a
//! work was registered are checked against it. Page-at-a-time (each page's match job, run by
//! the workers or here) or in batch mode (the stored fingerprints streamed past the pages,
//! [`matcher::batch`]), chosen by the sizes ([`matcher::CostModel`]).

use std::time::Duration;

use detection::DEFAULT_BATCH_PAGES;
use jobs::{Error, Result, match_job, store_err};
use matcher::{CostModel, Mode, ModeChoice};
use store::{EvidenceReads, IndexLoads, SnapshotId, Store};

use crate::handler::Handler;
use crate::serve::MatchWorkers;

/// What [`queue_rematch`] queued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Requeued {
    /// Pages whose match job was queued now.
    pub queued: u64,
    /// Pages whose match job was already waiting.
    pub waiting: u64,
}

/// Stored page texts listed per query while selecting a re-match's pages.
const REMATCH_PAGE: u32 = 1000;

/// How [`rematch`] matches the pages it selects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RematchOptions {
    /// Page-at-a-time, batch mode, or chosen by the sizes.
    pub mode: ModeChoice,
    /// What `auto` weighs the modes by.
    pub model: CostModel,
    /// Pages a batch holds at most (batch mode).
    pub batch_pages: usize,
    /// Queue the pages' match jobs for the workers instead of matching here (page mode).
    pub enqueue: bool,
    /// How long the matching here may go without progress before the rest is left to the
    /// workers (page mode).
    pub idle: Duration,
}

impl Default for RematchOptions {
    fn default() -> Self {
        RematchOptions {
            mode: ModeChoice::Auto,
            model: CostModel::default(),
            batch_pages: DEFAULT_BATCH_PAGES,
            enqueue: false,
            idle: Duration::from_secs(30),
        }
    }
}

/// The stored pages with a text that `filter` selects, by ascending id.
async fn selected_pages(store: &Store, filter: &store::TextFilter) -> Result<Vec<SnapshotId>> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let ids = store
            .snapshots_with_text(
                filter,
                store::Page {
                    after,
                    limit: Some(REMATCH_PAGE),
                },
            )
            .await
            .map_err(store_err("listing the stored pages"))?;
        after = ids.last().copied();
        let short = ids.len() < REMATCH_PAGE as usize;
        out.extend(ids);
        if short {
            return Ok(out);
        }
    }
}

/// Queues the match job of each of `pages`.
///
/// # Errors
/// A database failure; the jobs queued before it stay queued.
async fn queue_pages(store: &Store, pages: &[SnapshotId]) -> Result<Requeued> {
    use store::JobQueue;
    let mut out = Requeued::default();
    for id in pages {
        let job = match_job(*id).map_err(store_err("making a match job"))?;
        match store
            .enqueue(&job)
            .await
            .map_err(store_err("queueing a match job"))?
        {
            store::Enqueued::New(_) => out.queued += 1,
            store::Enqueued::Duplicate(_) => out.waiting += 1,
        }
    }
    Ok(out)
}

/// Queues the match job of every stored page text `filter` selects: pages fetched before a
/// work was registered are matched against it (and a licensed domain added since is applied).
///
/// # Errors
/// A database failure; the jobs queued before it stay queued.
pub async fn queue_rematch(store: &Store, filter: &store::TextFilter) -> Result<Requeued> {
    queue_pages(store, &selected_pages(store, filter).await?).await
}

/// Matches again every stored page text `filter` selects, with `handler`'s analyser (its
/// shard's works only, when it has one). The mode is `options.mode`, or, for `auto`, the
/// cheaper by [`CostModel`] for the number of pages against the chapters registered, with
/// the analyser's index loaded or not and batches of `options.batch_pages`:
///
/// * page mode queues each page's match job, as a crawl does, and (unless
///   `options.enqueue`) serves the match queue here until it is empty or idle;
/// * batch mode matches the pages here, a batch at a time, streaming the stored
///   fingerprints past each batch ([`detection::Analyser::analyse_batch`]); nothing is queued,
///   and the matches and cases come out as page mode's.
///
/// # Errors
/// [`Error::Refused`] for batch mode with `options.enqueue` (batches run here); a database
/// failure (what was matched before it stays recorded, and the jobs queued stay queued).
pub async fn rematch(
    store: &Store,
    handler: Handler,
    filter: &store::TextFilter,
    options: &RematchOptions,
) -> Result<Rematched> {
    if options.enqueue && options.mode == ModeChoice::Batch {
        return Err(Error::Refused(
            "batch mode matches the pages here: leave out --enqueue, or queue them in page mode"
                .to_owned(),
        ));
    }
    let pages = selected_pages(store, filter).await?;
    let chapters = store
        .index_size()
        .await
        .map_err(store_err("counting the registered chapters"))?;
    let batch_pages = options.batch_pages.max(1);
    let mode = if options.enqueue {
        Mode::Page
    } else {
        let loaded = handler.analyser().loaded().is_some();
        options.mode.resolve(
            &options.model,
            pages.len(),
            usize::try_from(chapters).unwrap_or(usize::MAX),
            loaded,
            batch_pages,
        )
    };
    if mode == Mode::Batch {
        let mut summary = Rematched {
            mode: Some(Mode::Batch),
            chapters,
            ..Rematched::default()
        };
        for batch in pages.chunks(batch_pages) {
            let (analysed, _) = handler.analyser().analyse_batch(batch).await?;
            summary.matched += analysed.len() as u64;
            summary.batches += 1;
        }
        return Ok(summary);
    }
    let requeued = queue_pages(store, &pages).await?;
    let mut summary = Rematched::queued(&requeued);
    summary.chapters = chapters;
    if !options.enqueue {
        summary.mode = Some(Mode::Page);
        if summary.left > 0 {
            let drain = MatchWorkers::start(store, handler, MatchWorkers::default_concurrency())
                .finish(options.idle)
                .await?;
            summary.matched = drain.matched;
            summary.left = drain.left;
        }
    }
    Ok(summary)
}

/// A re-match (`rematch`): the match jobs queued, and what was matched here before the
/// command ended; serialised as `rematch --json` prints it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Rematched {
    /// How the pages were matched here (`page` or `batch`); none when they were only queued.
    pub mode: Option<Mode>,
    /// Match jobs queued now (page mode).
    pub queued: u64,
    /// Match jobs that were already waiting (page mode).
    pub waiting: u64,
    /// Pages matched here.
    pub matched: u64,
    /// Match jobs left queued (for `copyhound worker`).
    pub left: u64,
    /// Batches matched (batch mode): the stored chapters were streamed past each.
    pub batches: u64,
    /// Chapters registered when the re-match started.
    pub chapters: u64,
}

impl Rematched {
    /// Nothing matched yet: every job queued or waiting is left.
    pub fn queued(requeued: &Requeued) -> Self {
        Rematched {
            queued: requeued.queued,
            waiting: requeued.waiting,
            left: requeued.queued + requeued.waiting,
            ..Rematched::default()
        }
    }

    /// What `rematch` prints: the pages queued (of `scope`, e.g. ` on HOST`), then either
    /// that a worker will match them or how many were matched here; in batch mode, the
    /// pages matched and the batches.
    pub fn text(&self, scope: &str) -> String {
        if self.mode == Some(Mode::Batch) {
            if self.matched == 0 {
                return format!("no stored pages to match{scope}\n");
            }
            return format!(
                "{} pages matched{scope} in batch mode: {} batches, the {} registered chapters \
                 streamed past each\n",
                self.matched, self.batches, self.chapters
            );
        }
        let all = self.queued + self.waiting;
        if all == 0 {
            return format!("no stored pages to match{scope}\n");
        }
        let mut text = format!(
            "{all} pages queued for matching ({} were already waiting){scope}\n",
            self.waiting
        );
        if self.mode.is_none() {
            text.push_str("run `copyhound worker` to match them\n");
        } else {
            text.push_str(&format!("{} pages matched one at a time\n", self.matched));
            if self.left > 0 {
                text.push_str(&format!(
                    "{} match jobs left queued for `copyhound worker`\n",
                    self.left
                ));
            }
        }
        text
    }
}
