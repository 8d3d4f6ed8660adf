//! Snapshots of the matcher index (issue #31): `copyhound index snapshot` builds the index
//! from the store at a position of the work change log and writes it as one file
//! ([`matcher::snapshot`]: versioned, SHA-256 checked) to the object store of `[storage]`
//! (under `snapshots/`) or to a local path; a worker whose `[index] snapshot` names such a
//! place loads the newest one and replays the change log from its position
//! ([`crate::LiveIndex::load_from`]) instead of reading every stored fingerprint. A snapshot
//! that is damaged, truncated, of another format or normaliser version or built with other
//! index settings is refused with the reason, and the worker loads from the store.
//!
//! A snapshot is named `index-<position, 20 digits>-<written at, ms since the epoch, 13
//! digits>.snap`, so the newest (the latest position, then the latest written) sorts last.
//! It appears whole or not at all: a local file is written under a temporary name in its
//! folder and renamed, an object is put in one request (or a multipart upload, which the
//! store shows only once complete).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use fingerprint::Fingerprinter;
use jobs::{Error, Result, store_err};
use matcher::{Index, IndexSettings, MatcherSettings, SnapshotHeader};
use serde::{Deserialize, Serialize};
use store::{BodyStore, IndexLoads, StorageSettings, WorkChanges};

use crate::index::load_matcher;

/// The folder of snapshots on an object store.
pub const SNAPSHOT_DIR: &str = "snapshots";

/// How workers load the matcher index (`[index]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveIndexSettings {
    /// Where to look for a snapshot of the index to start from: `auto` (the default: the
    /// newest under `snapshots/` of the object store `[storage] bodies` names; none when
    /// bodies stay in the database), `off` (always load from the database), a URL
    /// (`file:///path` or `s3://bucket/prefix`, with the `[storage]` endpoint and keys: the
    /// newest under its `snapshots/`), or a local path (a snapshot file, or a folder: the
    /// newest snapshot in it).
    pub snapshot: String,
    /// Shards the index is split into (default 1: one index holds every work). Above 1, each
    /// stored page's match job queues one job per shard, on queue `match-K-of-N`, served by
    /// `copyhound worker --shard K/N`, which holds only the works that hash to shard K
    /// ([`bounds::Shard`]).
    pub shards: u32,
}

impl Default for LiveIndexSettings {
    fn default() -> Self {
        LiveIndexSettings {
            snapshot: "auto".to_owned(),
            shards: 1,
        }
    }
}

impl LiveIndexSettings {
    /// Checks that `snapshot` names something and `shards` is 1 to 4096.
    ///
    /// # Errors
    /// An empty `snapshot`, a `shards` out of range.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        bounds::between("shards", self.shards, 1, 4096)?;
        if self.snapshot.trim().is_empty() {
            return Err(bounds::OutOfRange::new(
                "snapshot",
                "\"\"",
                "use \"auto\", \"off\", file:///PATH, s3://BUCKET/PREFIX or a local path",
            ));
        }
        Ok(())
    }
}

/// Where snapshots are written and looked for.
#[derive(Debug, Clone)]
pub enum SnapshotPlace {
    /// Under `snapshots/` of an object store.
    Objects(Arc<BodyStore>),
    /// A local file, or a folder of snapshots.
    Path(PathBuf),
}

impl SnapshotPlace {
    /// The place a value of `[index] snapshot` (or `index snapshot --to`) names, with the
    /// object store's endpoint and keys from `storage`: `None` for `off`, and for `auto` when
    /// `storage` keeps bodies in the database.
    ///
    /// # Errors
    /// [`Error::Refused`] for a URL the object store refuses (said with the fix).
    pub fn parse(value: &str, storage: &StorageSettings) -> Result<Option<SnapshotPlace>> {
        let value = value.trim();
        let open = |storage: &StorageSettings| {
            BodyStore::open(storage)
                .map(|found| found.map(|objects| SnapshotPlace::Objects(Arc::new(objects))))
                .map_err(|e| Error::Refused(format!("index snapshots: {e}")))
        };
        match value {
            "off" => Ok(None),
            "auto" => open(storage),
            url if url.starts_with("file://") || url.starts_with("s3://") => {
                open(&StorageSettings {
                    bodies: url.to_owned(),
                    ..storage.clone()
                })
            }
            path => Ok(Some(SnapshotPlace::Path(PathBuf::from(path)))),
        }
    }

    /// The place for people: `file:///…/snapshots/`, `s3://…/snapshots/` or the path.
    pub fn describe(&self) -> String {
        match self {
            SnapshotPlace::Objects(objects) => {
                format!(
                    "{}/{SNAPSHOT_DIR}/",
                    objects.describe().trim_end_matches('/')
                )
            }
            SnapshotPlace::Path(path) => path.display().to_string(),
        }
    }
}

/// The file name of a snapshot at `position` written at `written_ms`.
fn snapshot_name(position: i64, written_ms: i64) -> String {
    format!("index-{position:020}-{written_ms:013}.snap")
}

/// Whether `name` is a snapshot's file name.
fn is_snapshot_name(name: &str) -> bool {
    name.starts_with("index-") && name.ends_with(".snap")
}

/// What [`write_snapshot`] wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WrittenSnapshot {
    /// Where: the file, or the object's URL.
    pub location: String,
    /// The change log position it is current to.
    pub position: i64,
    /// Chapters in it.
    pub chapters: usize,
    /// Chapters left out (an unreadable fingerprint, another normaliser version).
    pub skipped: usize,
    /// Its size.
    pub bytes: u64,
    /// Seconds building the index from the store took.
    pub build_s: f64,
    /// Seconds encoding and writing it took.
    pub write_s: f64,
}

/// Builds the index from the store and writes it as a snapshot to `place` (a folder or an
/// object store: a new file there; a file path: that file, replaced whole). The change
/// log's position is read before the load, so a work written during it is in the snapshot
/// or replayed after it (applying a change twice is harmless).
///
/// # Errors
/// Invalid settings, a database failure, a file or object that cannot be written.
pub async fn write_snapshot(
    store: &(impl IndexLoads + WorkChanges),
    settings: MatcherSettings,
    fingerprinter: Arc<Fingerprinter>,
    place: &SnapshotPlace,
) -> Result<WrittenSnapshot> {
    let position = store
        .last_change()
        .await
        .map_err(store_err("reading the work change log"))?;
    let started = Instant::now();
    let (mut matcher, report) = load_matcher(store, settings, fingerprinter).await?;
    let build_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let bytes = tokio::task::spawn_blocking(move || matcher.index_mut().to_snapshot(position))
        .await
        .map_err(|e| Error::task("encoding the index snapshot", e))?;
    let name = snapshot_name(position, chrono::Utc::now().timestamp_millis());
    let size = bytes.len() as u64;
    let location = match place {
        SnapshotPlace::Path(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || write_file(&path, &name, &bytes))
                .await
                .map_err(|e| Error::task("writing the index snapshot", e))??
                .display()
                .to_string()
        }
        SnapshotPlace::Objects(objects) => {
            let mut file = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
                let mut file = tempfile::tempfile()?;
                file.write_all(&bytes)?;
                Ok(file)
            })
            .await
            .map_err(|e| Error::task("spooling the index snapshot", e))?
            .map_err(|source| Error::WriteFile {
                path: std::env::temp_dir(),
                source,
            })?;
            let key = format!("{SNAPSHOT_DIR}/{name}");
            objects
                .put_file(&key, &mut file, size)
                .await
                .map_err(store_err("uploading the index snapshot"))?;
            format!("{}{name}", place.describe())
        }
    };
    Ok(WrittenSnapshot {
        location,
        position,
        chapters: report.chapters,
        skipped: report.skipped,
        bytes: size,
        build_s,
        write_s: started.elapsed().as_secs_f64(),
    })
}

/// Writes `bytes` to `path` (a folder, existing or named with a trailing `/`: `name` in it)
/// under a temporary name in the same folder, synced, then renamed; returns the final path.
fn write_file(path: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let folder_named = path.as_os_str().to_string_lossy().ends_with('/');
    let target = if path.is_dir() || folder_named {
        std::fs::create_dir_all(path).map_err(|source| Error::WriteFile {
            path: path.to_owned(),
            source,
        })?;
        path.join(name)
    } else {
        path.to_owned()
    };
    let folder = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let failed = |source| Error::WriteFile {
        path: target.clone(),
        source,
    };
    let mut file = tempfile::Builder::new()
        .prefix(".index-")
        .suffix(".snap.part")
        .tempfile_in(&folder)
        .map_err(failed)?;
    file.write_all(bytes).map_err(failed)?;
    file.as_file().sync_all().map_err(failed)?;
    file.persist(&target).map_err(|e| failed(e.error))?;
    Ok(target)
}

/// A snapshot read and checked.
#[derive(Debug)]
pub struct LoadedSnapshot {
    /// Where it was read from.
    pub location: String,
    /// The index it holds.
    pub index: Index,
    /// Its header (the position to replay the change log from).
    pub header: SnapshotHeader,
}

/// The newest snapshot at `place`, read whole and decoded for an index with `settings`;
/// `None` when there is none.
///
/// # Errors
/// [`Error::Snapshot`] when the newest is refused (damaged, truncated, foreign: the
/// message says why), a file or object that cannot be read.
pub async fn read_newest(
    place: &SnapshotPlace,
    settings: &IndexSettings,
) -> Result<Option<LoadedSnapshot>> {
    let found = match place {
        SnapshotPlace::Path(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || newest_file(&path))
                .await
                .map_err(|e| Error::task("reading the index snapshot", e))??
        }
        SnapshotPlace::Objects(objects) => {
            let newest = objects
                .list_names(SNAPSHOT_DIR)
                .await
                .map_err(store_err("listing the index snapshots"))?
                .into_iter()
                .filter(|key| key.rsplit('/').next().is_some_and(is_snapshot_name))
                .max();
            match newest {
                None => None,
                Some(key) => {
                    let bytes = objects
                        .get_whole(&key)
                        .await
                        .map_err(store_err("reading the index snapshot"))?;
                    let name = key.rsplit('/').next().unwrap_or(&key).to_owned();
                    Some((format!("{}{name}", place.describe()), bytes))
                }
            }
        }
    };
    let Some((location, bytes)) = found else {
        return Ok(None);
    };
    let settings = settings.clone();
    tokio::task::spawn_blocking(move || match Index::from_snapshot(&bytes, &settings) {
        Ok((index, header)) => Ok(Some(LoadedSnapshot {
            location,
            index,
            header,
        })),
        Err(reason) => Err(Error::Snapshot { location, reason }),
    })
    .await
    .map_err(|e| Error::task("decoding the index snapshot", e))?
}

/// The newest snapshot file at `path` (a folder: by name; a file: itself), with its bytes;
/// `None` when the folder holds none or the file does not exist.
fn newest_file(path: &Path) -> Result<Option<(String, Vec<u8>)>> {
    let unreadable = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let file = if path.is_dir() {
        let mut newest: Option<String> = None;
        for entry in std::fs::read_dir(path).map_err(unreadable)? {
            let name = entry.map_err(unreadable)?.file_name();
            let Some(name) = name.to_str() else { continue };
            if is_snapshot_name(name) && newest.as_deref().is_none_or(|n| name > n) {
                newest = Some(name.to_owned());
            }
        }
        match newest {
            Some(name) => path.join(name),
            None => return Ok(None),
        }
    } else if path.exists() {
        path.to_owned()
    } else {
        return Ok(None);
    };
    let bytes = std::fs::read(&file).map_err(|source| Error::Read {
        path: file.clone(),
        source,
    })?;
    Ok(Some((file.display().to_string(), bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_position_then_time() {
        let mut names = [
            snapshot_name(10, 1_700_000_000_000),
            snapshot_name(9, 1_800_000_000_000),
            snapshot_name(10, 1_700_000_000_001),
        ];
        names.sort();
        assert_eq!(names[2], snapshot_name(10, 1_700_000_000_001));
        assert_eq!(names[0], snapshot_name(9, 1_800_000_000_000));
        assert!(names.iter().all(|n| is_snapshot_name(n)));
        assert!(!is_snapshot_name(".index-x.snap.part"));
    }

    #[test]
    fn places_from_the_setting() {
        let db = StorageSettings::default();
        assert!(SnapshotPlace::parse("off", &db).unwrap().is_none());
        assert!(SnapshotPlace::parse("auto", &db).unwrap().is_none());
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", dir.path().display());
        let objects = SnapshotPlace::parse(&url, &db).unwrap().unwrap();
        assert_eq!(objects.describe(), format!("{url}/snapshots/"));
        let auto = SnapshotPlace::parse(
            " auto ",
            &StorageSettings {
                bodies: url.clone(),
                ..StorageSettings::default()
            },
        )
        .unwrap()
        .unwrap();
        assert!(matches!(auto, SnapshotPlace::Objects(_)));
        let path = SnapshotPlace::parse("/srv/index/", &db).unwrap().unwrap();
        assert_eq!(path.describe(), "/srv/index/");
        let err = SnapshotPlace::parse("s3://", &db).unwrap_err();
        assert!(err.to_string().contains("needs a bucket"), "{err}");
        assert!(
            LiveIndexSettings {
                snapshot: " ".into(),
                ..LiveIndexSettings::default()
            }
            .validate()
            .is_err()
        );
        let shards = |shards| LiveIndexSettings {
            shards,
            ..LiveIndexSettings::default()
        };
        assert!(shards(0).validate().is_err());
        shards(1).validate().unwrap();
        shards(4096).validate().unwrap();
        assert!(shards(4097).validate().is_err());
    }
}
