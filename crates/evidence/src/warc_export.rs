//! The stored crawl evidence, all of it or one crawl's, written as one WARC file
//! (`snapshots export`), reading a batch of rows at a time so memory stays flat. Snapshots
//! whose bodies gc removed are left out, and counted. A revisit (the server said `304 Not
//! Modified`) is a `revisit` record naming its capture's `response` (`write_stored`).

use std::path::Path;

use jobs::{Error, Result, store_err};
use store::{
    CrawlId, Crawls, EvidenceReads, Page, SnapshotCursor, SnapshotId, SnapshotRecord, Store,
};

/// Rows read per query.
const BATCH: u32 = 200;

/// What [`export_warc`] wrote.
#[derive(Debug, Clone, Copy)]
pub struct WarcExport {
    /// Snapshots written.
    pub snapshots: u64,
    /// Bytes written (compressed, for a `.gz` file).
    pub bytes: u64,
    /// Snapshots left out because gc removed their bodies (`[retention]`).
    pub removed: u64,
}

/// Which snapshots an export reads next.
enum Position {
    /// All of them, by id.
    All(Option<SnapshotId>),
    /// One crawl's, by URL.
    Crawl(CrawlId, Option<SnapshotCursor>),
}

impl Position {
    async fn next_batch(&mut self, store: &Store) -> store::Result<Vec<SnapshotRecord>> {
        let rows = match self {
            Position::All(after) => {
                let page = Page {
                    after: *after,
                    limit: Some(BATCH),
                };
                store.snapshots(page).await?
            }
            Position::Crawl(crawl, after) => {
                store.crawl_snapshots(*crawl, after.as_ref(), BATCH).await?
            }
        };
        if let Some(last) = rows.last() {
            match self {
                Position::All(after) => *after = Some(last.id),
                Position::Crawl(_, after) => *after = Some(SnapshotCursor::after(last)),
            }
        }
        Ok(rows)
    }
}

/// Writes every stored snapshot, or crawl `crawl`'s in URL order, to the WARC file `path`
/// (gzip members when it ends in `.gz`). An unknown crawl is refused
/// ([`Error::Refused`]) before the file is created, so a mistyped id leaves no empty
/// file behind.
pub async fn export_warc(store: &Store, crawl: Option<CrawlId>, path: &Path) -> Result<WarcExport> {
    if let Some(id) = crawl {
        match store.crawl(id).await {
            Err(store::Error::NotFound { .. }) => {
                return Err(Error::Refused(format!(
                    "there is no crawl {id}: see `copyhound crawls list` for the ids"
                )));
            }
            other => other.map_err(store_err("looking up the crawl"))?,
        };
    }
    let file = std::fs::File::create(path).map_err(|source| Error::WriteFile {
        path: path.to_owned(),
        source,
    })?;
    let out = std::io::BufWriter::new(file);
    let mut warc = if path.extension().is_some_and(|e| e == "gz") {
        crawler::WarcWriter::new_gzip(out)
    } else {
        crawler::WarcWriter::new(out)
    };
    let mut position = match crawl {
        Some(id) => Position::Crawl(id, None),
        None => Position::All(None),
    };
    let mut snapshots = 0u64;
    let mut removed = 0u64;
    loop {
        let rows = position
            .next_batch(store)
            .await
            .map_err(store_err("reading snapshots"))?;
        if rows.is_empty() {
            break;
        }
        for row in &rows {
            if row.body_removed_at.is_some() {
                removed += 1;
                continue;
            }
            write_stored(store, &mut warc, row).await?;
            snapshots += 1;
        }
    }
    let bytes = warc.bytes_written();
    warc.finish()?;
    Ok(WarcExport {
        snapshots,
        bytes,
        removed,
    })
}

/// Writes the stored snapshot `row` to `warc`: its records as the crawler wrote them, or for
/// a revisit a `revisit` record naming the `response` of the capture it confirms (with that
/// capture's payload digest while its bodies are kept).
///
/// # Errors
/// Store failures; a body missing or not hashing to its row.
pub(crate) async fn write_stored<W: std::io::Write>(
    store: &Store,
    warc: &mut crawler::WarcWriter<W>,
    row: &SnapshotRecord,
) -> Result<crawler::warc::WrittenSnapshot> {
    let snapshot = crawler::stored_snapshot(store, row).await?;
    let Some(of) = row.revisit_of else {
        return Ok(warc.write_snapshot(&snapshot)?);
    };
    let capture = store
        .snapshot(of)
        .await
        .map_err(store_err("reading the capture a revisit confirms"))?;
    let revisited = if capture.body_removed_at.is_some() {
        crawler::warc::Revisited::without_payload(
            &capture.final_url,
            capture.fetched_at,
            crawler::Sha256(capture.sha256),
        )
    } else {
        crawler::warc::Revisited::of(&crawler::stored_snapshot(store, &capture).await?)
    };
    Ok(warc.write_revisit(&snapshot, &revisited)?)
}
