//! A WET file's records matched against the registered works, in the scan's mode
//! ([`super::WetOptions::mode`]):
//!
//! * `page`: each record takes the first look ([`matcher::FirstLook`]) against the loaded
//!   index, and the few that pass are matched one at a time;
//! * `batch`: the records are read without an index; they are held, [`super::WetOptions::batch_records`]
//!   at a time, and the stored fingerprints streamed past each batch
//!   ([`detection::texts::find_batch`]) — what a worker does when the catalogue is larger than
//!   its memory;
//! * `auto`: the first look as in page mode, then the records that pass are held and each
//!   batch of them matched the way [`CostModel`] finds cheaper against the index's size
//!   (batch mode once they are many against a small catalogue).
//!
//! Every mode finds the same copies: batch mode's candidates equal the index's.

use std::collections::BTreeSet;
use std::sync::Arc;

use detection::LiveIndex;
use detection::texts::{TextCache, find, find_batch};
use jobs::{Result, matcher_err};
use matcher::{CostModel, FirstLook, Matcher, Mode, ModeChoice};
use store::Store;

use super::WetHit;
use super::wet::WetRecord;

/// Matches a scan's records and keeps the hits; see the [module docs](self).
pub(super) struct RecordMatcher {
    mode: ModeChoice,
    /// The loaded index (page and auto modes).
    live: Option<Arc<LiveIndex>>,
    /// A matcher over no chapters, for batches.
    pages: Arc<Matcher>,
    look: Option<FirstLook>,
    held: Vec<WetRecord>,
    batch_records: usize,
    store: Store,
    shard: bounds::Shard,
    runtime: tokio::runtime::Handle,
    texts: Arc<TextCache>,
    /// Records whose text copies a work.
    pub hits: Vec<WetHit>,
    /// Batches matched in batch mode.
    pub batches: usize,
}

impl RecordMatcher {
    /// A matcher in `mode`: `live` is the loaded index (`None` only in batch mode), `pages`
    /// a matcher over no chapters with the same settings.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        mode: ModeChoice,
        live: Option<Arc<LiveIndex>>,
        pages: Arc<Matcher>,
        batch_records: usize,
        store: Store,
        shard: bounds::Shard,
        runtime: tokio::runtime::Handle,
        texts: Arc<TextCache>,
    ) -> Self {
        RecordMatcher {
            mode,
            live,
            pages,
            look: None,
            held: Vec::new(),
            batch_records: batch_records.max(1),
            store,
            shard,
            runtime,
            texts,
            hits: Vec::new(),
            batches: 0,
        }
    }

    /// Takes one record: matched now, or held for its batch.
    ///
    /// # Errors
    /// A database failure.
    pub(super) fn take(&mut self, record: WetRecord) -> Result<()> {
        if let Some(live) = self.live.clone().filter(|_| self.mode != ModeChoice::Batch) {
            let matcher = live.matcher();
            // Nearly every record is innocent: a first look without word segmentation
            // turns most away before the full fingerprint is taken.
            let may = self
                .look
                .get_or_insert_with(|| FirstLook::new(&matcher))
                .may_match(&matcher, &record.text)
                .map_err(matcher_err("looking a WET record up"))?;
            if !may {
                return Ok(());
            }
            if self.mode == ModeChoice::Page {
                let (matches, _) = find(
                    &matcher,
                    &self.store,
                    &record.text,
                    &self.runtime,
                    &self.texts,
                )?;
                hit(&mut self.hits, record, &matches);
                return Ok(());
            }
        }
        self.held.push(record);
        if self.held.len() >= self.batch_records {
            self.flush()?;
        }
        Ok(())
    }

    /// Matches the records held, as one batch or one at a time, whichever mode applies.
    ///
    /// # Errors
    /// A database failure.
    pub(super) fn flush(&mut self) -> Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        let live = self.live.clone();
        let mode = match (&live, self.mode) {
            (Some(live), ModeChoice::Auto) => CostModel::default().choose_batched(
                held.len(),
                live.matcher().index().len(),
                true,
                self.batch_records,
            ),
            (Some(_), ModeChoice::Page) => Mode::Page,
            _ => Mode::Batch,
        };
        match (mode, &live) {
            (Mode::Page, Some(live)) => {
                for record in held {
                    let matches = {
                        let matcher = live.matcher();
                        find(
                            &matcher,
                            &self.store,
                            &record.text,
                            &self.runtime,
                            &self.texts,
                        )?
                        .0
                    };
                    hit(&mut self.hits, record, &matches);
                }
            }
            _ => {
                let texts: Vec<&str> = held.iter().map(|r| r.text.as_str()).collect();
                let (found, _) = find_batch(
                    &self.pages,
                    &self.store,
                    self.shard,
                    &texts,
                    &self.runtime,
                    &self.texts,
                )?;
                self.batches += 1;
                for (record, matches) in held.into_iter().zip(found) {
                    hit(&mut self.hits, record, &matches);
                }
            }
        }
        Ok(())
    }
}

/// Adds `record` to `hits` when it copies a work.
fn hit(hits: &mut Vec<WetHit>, record: WetRecord, matches: &[matcher::Match]) {
    if matches.is_empty() {
        return;
    }
    let works: BTreeSet<i64> = matches.iter().map(|m| m.work.0).collect();
    hits.push(WetHit {
        url: record.uri,
        date: record.date,
        works: works.into_iter().collect(),
    });
}
