//! Page bodies on an object store (`[storage] bodies`): WARC segments on the local
//! filesystem or an S3-compatible store, read back by a ranged read of one record.
//!
//! The design, its crash argument and its measurements are in the crate docs ("Bodies on an
//! object store"); this module holds [`SegmentWriter`], [`UploadedSegment`], [`BodyStore`] and
//! the moves either way. A body is stored once: a body already in a segment is found by its
//! hash and not written again (no `revisit` record: the row is the reference).
//!
//! Each body's record is a `response` (the HTTP header as received and the bytes as served)
//! when a snapshot served these bytes, else a `resource` (the decoded body of a response with
//! content-coding, or of a snapshot stored before the bytes as served were kept) of that
//! snapshot's URL and media type. `copyhound storage migrate` moves bodies either way
//! ([`Store::move_bodies_to_store`], [`Store::move_bodies_to_db`]); the `body-segments`
//! schedule moves them in the background ([`Store::segment_due`]).
//!
//! Screenshots (`screenshots`, the PNGs of rendered fetches) go the same way, in the same
//! segments: the writer takes them after the waiting bodies, each a `resource` record
//! (`Content-Type: image/png`) of `urn:view:<page URL>`, and the same commit points their rows at their records.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{Read, Seek, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use tracing::{info, instrument, warn};

use crate::db::{id_list, read_pool, write_pool, write_tx};
use crate::queue::millis;
use crate::warc::{decode_member, encode_record, record_id, warc_date};
use crate::{Error, Result, Store};

/// Where page bodies are kept (`[storage]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StorageSettings {
    /// `db` (in the database, the default), `file:///path` (a folder) or
    /// `s3://bucket/prefix` (an S3-compatible store: `endpoint`, `region` and the keys).
    pub bodies: String,
    /// The S3 endpoint (`https://s3.eu-central-1.amazonaws.com`, `http://127.0.0.1:9000`
    /// for a local server); empty: AWS's for `region`.
    pub endpoint: String,
    /// The S3 region.
    pub region: String,
    /// The S3 access key id, a secret (`COPYHOUND_STORAGE__ACCESS_KEY_ID_FILE`).
    pub access_key_id: Option<bounds::Secret>,
    /// The S3 secret access key, a secret (`COPYHOUND_STORAGE__SECRET_ACCESS_KEY_FILE`).
    pub secret_access_key: Option<bounds::Secret>,
    /// Whether an `http://` endpoint is allowed (a store on this machine or network).
    pub allow_http: bool,
    /// A segment is closed and uploaded at this many bytes (gzip records).
    pub segment_bytes: u64,
    /// Bodies wait in the database at most about this long for a segment that is not full.
    #[serde(with = "bounds::duration_serde")]
    pub segment_age: Duration,
    /// Where segments are written before their upload (local disk).
    pub spool_dir: PathBuf,
}

impl Default for StorageSettings {
    fn default() -> Self {
        StorageSettings {
            bodies: "db".to_owned(),
            endpoint: String::new(),
            region: "us-east-1".to_owned(),
            access_key_id: None,
            secret_access_key: None,
            allow_http: false,
            segment_bytes: 256 << 20,
            segment_age: Duration::from_secs(3600),
            spool_dir: PathBuf::from("data/spool"),
        }
    }
}

/// Where `[storage] bodies` says bodies go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodiesLocation {
    /// In the database.
    Db,
    /// Under a folder of the local filesystem.
    File(PathBuf),
    /// In an S3 bucket, under a prefix (maybe empty).
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix, without slashes at either end.
        prefix: String,
    },
}

impl StorageSettings {
    /// Parses `bodies`.
    ///
    /// # Errors
    /// A value that is none of the three forms, said with an example of each.
    pub fn location(&self) -> std::result::Result<BodiesLocation, bounds::OutOfRange> {
        let bad = |why: &str| {
            bounds::OutOfRange::new(
                "bodies",
                format!("{:?}", self.bodies),
                format!(
                    "{why}: use \"db\", \"file:///srv/copyhound/bodies\" or \
                     \"s3://bucket/prefix\""
                ),
            )
        };
        let value = self.bodies.trim();
        if value == "db" {
            return Ok(BodiesLocation::Db);
        }
        if let Some(path) = value.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(bad("a file:// location needs an absolute path"));
            }
            return Ok(BodiesLocation::File(PathBuf::from(path)));
        }
        if let Some(rest) = value.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad("an s3:// location needs a bucket"));
            }
            return Ok(BodiesLocation::S3 {
                bucket: bucket.to_owned(),
                prefix: prefix.trim_matches('/').to_owned(),
            });
        }
        Err(bad("unknown location"))
    }

    /// Checks the location, the segment size and age, and the keys.
    ///
    /// # Errors
    /// The first value out of range, by its key.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        let location = self.location()?;
        if !(1 << 20..=5 << 30).contains(&self.segment_bytes) {
            return Err(bounds::OutOfRange::new(
                "segment_bytes",
                self.segment_bytes.to_string(),
                "must be 1 MiB to 5 GiB (1048576 to 5368709120)",
            ));
        }
        if self.segment_age < Duration::from_secs(1) {
            return Err(bounds::OutOfRange::new(
                "segment_age",
                format!("{:?}", self.segment_age),
                "must be at least 1s",
            ));
        }
        if let BodiesLocation::S3 { .. } = location {
            if self.endpoint.starts_with("http://") && !self.allow_http {
                return Err(bounds::OutOfRange::new(
                    "endpoint",
                    &self.endpoint,
                    "is plain HTTP: set allow_http = true for a store on this machine or \
                     network, else use https://",
                ));
            }
            if self.access_key_id.is_some() != self.secret_access_key.is_some() {
                return Err(bounds::OutOfRange::new(
                    "secret_access_key",
                    "(one of the two keys)",
                    "access_key_id and secret_access_key are set together, or neither \
                     (then the environment's AWS credentials are used)",
                ));
            }
        }
        Ok(())
    }
}

/// The object store bodies go to, with the segment settings.
#[derive(Debug)]
pub struct BodyStore {
    objects: Arc<dyn ObjectStore>,
    /// The keys it signs with: masked in its errors, which quote what the store answered
    /// (an S3 error names the access key it was sent).
    secrets: Vec<bounds::Secret>,
    /// A `file://` store's folder, resolved: object_store's local store follows symbolic
    /// links, and nothing of ours is reached through one ([`BodyStore::outside_root`]).
    local_root: Option<PathBuf>,
    /// The key prefix every object of ours is under (maybe empty).
    prefix: String,
    /// `file:///…` or `s3://…`, for messages.
    describe: String,
    segment_bytes: u64,
    segment_age: Duration,
    spool_dir: PathBuf,
}

/// Bytes of a body's record beyond the body: the WARC and HTTP headers (a record inflating
/// to more than the body and this is refused).
const RECORD_OVERHEAD: u64 = 1 << 20;

/// A body's bytes, compressed or not, from [`crate::EvidenceReads::body`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyBytes {
    /// zstd as stored in the database.
    Zstd(Vec<u8>),
    /// The bytes themselves, read from a segment and checked against their SHA-256.
    Plain(Vec<u8>),
}

impl BodyStore {
    /// The store `settings` name; `None` for `bodies = "db"`. Connects to nothing: the
    /// first read or write does.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for settings out of range or a store the driver refuses.
    pub fn open(settings: &StorageSettings) -> Result<Option<BodyStore>> {
        settings
            .validate()
            .map_err(|e| Error::InvalidInput(e.in_section("storage").to_string()))?;
        let secrets: Vec<bounds::Secret> = [&settings.access_key_id, &settings.secret_access_key]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        let refused = |e: object_store::Error| {
            Error::InvalidInput(bounds::mask_secrets(
                &format!("storage.bodies = {:?}: {e}", settings.bodies),
                &secrets,
            ))
        };
        let mut local_root = None;
        let (objects, prefix, describe): (Arc<dyn ObjectStore>, String, String) =
            match settings.location().expect("validated above") {
                BodiesLocation::Db => return Ok(None),
                BodiesLocation::File(root) => {
                    std::fs::create_dir_all(&root).map_err(|e| {
                        Error::InvalidInput(format!(
                            "storage.bodies: cannot create {}: {e}",
                            root.display()
                        ))
                    })?;
                    let local = object_store::local::LocalFileSystem::new_with_prefix(&root)
                        .map_err(refused)?;
                    local_root = Some(std::fs::canonicalize(&root).map_err(|e| {
                        Error::InvalidInput(format!(
                            "storage.bodies: cannot resolve {}: {e}",
                            root.display()
                        ))
                    })?);
                    (
                        Arc::new(local),
                        String::new(),
                        format!("file://{}", root.display()),
                    )
                }
                BodiesLocation::S3 { bucket, prefix } => {
                    // A store that is down fails a call within seconds (a few quick
                    // retries), not minutes: the job that called is retried by the queue.
                    let retry = object_store::RetryConfig {
                        max_retries: 3,
                        retry_timeout: Duration::from_secs(30),
                        ..object_store::RetryConfig::default()
                    };
                    let client = object_store::ClientOptions::new()
                        .with_allow_http(settings.allow_http)
                        .with_connect_timeout(Duration::from_secs(5));
                    let mut builder = object_store::aws::AmazonS3Builder::new()
                        .with_bucket_name(&bucket)
                        .with_region(&settings.region)
                        .with_retry(retry)
                        .with_client_options(client);
                    if !settings.endpoint.trim().is_empty() {
                        // Path-style requests (endpoint/bucket/key): what S3-compatible
                        // servers answer without a DNS name per bucket.
                        builder = builder
                            .with_endpoint(settings.endpoint.trim())
                            .with_virtual_hosted_style_request(false);
                    }
                    if let (Some(id), Some(secret)) =
                        (&settings.access_key_id, &settings.secret_access_key)
                    {
                        builder = builder
                            .with_access_key_id(id.expose())
                            .with_secret_access_key(secret.expose());
                    }
                    let describe = format!("s3://{bucket}/{prefix}");
                    (
                        Arc::new(builder.build().map_err(refused)?),
                        prefix,
                        describe,
                    )
                }
            };
        Ok(Some(BodyStore {
            objects,
            secrets,
            local_root,
            prefix,
            describe,
            segment_bytes: settings.segment_bytes,
            segment_age: settings.segment_age,
            spool_dir: settings.spool_dir.clone(),
        }))
    }

    /// `file:///…` or `s3://bucket/prefix`.
    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// Where segments are written before their upload.
    pub(crate) fn spool_dir(&self) -> &std::path::Path {
        &self.spool_dir
    }

    fn path(&self, key: &str) -> ObjectPath {
        ObjectPath::from(key)
    }

    fn key(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.prefix)
        }
    }

    fn failed(&self, doing: &str) -> impl FnOnce(object_store::Error) -> Error + '_ {
        let doing = doing.to_owned();
        move |e| {
            Error::ObjectStore(bounds::mask_secrets(
                &format!("{doing} on {}: {e}", self.describe),
                &self.secrets,
            ))
        }
    }

    /// Writes, reads back and deletes a small object: whether the store is reachable and
    /// lets us in (`doctor`).
    ///
    /// # Errors
    /// [`Error::ObjectStore`] naming the step that failed.
    pub async fn probe(&self) -> Result<()> {
        let key = self.key(&format!("probe/doctor-{:016x}", fastrand::u64(..)));
        let path = self.path(&key);
        let text = b"copyhound doctor probe";
        self.objects
            .put(&path, PutPayload::from_static(text))
            .await
            .map_err(self.failed("writing a probe object"))?;
        let back = self
            .objects
            .get(&path)
            .await
            .map_err(self.failed("reading the probe object"))?
            .bytes()
            .await
            .map_err(self.failed("reading the probe object"))?;
        self.objects
            .delete(&path)
            .await
            .map_err(self.failed("deleting the probe object"))?;
        if back.as_ref() != text {
            return Err(Error::ObjectStore(format!(
                "the probe object read back from {} differs from what was written",
                self.describe
            )));
        }
        Ok(())
    }

    /// The record at `offset`..`offset + length` of segment `key`, its payload checked
    /// against `sha256`.
    async fn read_record(
        &self,
        key: &str,
        offset: u64,
        length: u64,
        sha256: &[u8; 32],
        body_len: u64,
    ) -> Result<Vec<u8>> {
        let member = self
            .objects
            .get_range(&self.path(key), offset..offset + length)
            .await
            .map_err(self.failed(&format!("reading {key} at {offset}")))?;
        let corrupt = |why: String| {
            Error::CorruptBody(format!("body {} in {key} at {offset}: {why}", hex(sha256)))
        };
        let record = decode_member(&member, body_len + RECORD_OVERHEAD).map_err(corrupt)?;
        let payload = record.payload();
        if sha2::Sha256::digest(payload).as_slice() != sha256 {
            return Err(corrupt("its payload does not hash to it".to_owned()));
        }
        Ok(payload.to_vec())
    }

    /// Uploads the spool file `file` (`bytes` long) as `key`, in parts past 16 MiB, and
    /// checks the object's size.
    async fn upload(&self, key: &str, file: &mut std::fs::File, bytes: u64) -> Result<()> {
        const PART: u64 = 16 << 20;
        let path = self.path(key);
        file.rewind()
            .map_err(|e| Error::ObjectStore(format!("rewinding the spool file of {key}: {e}")))?;
        let mut read_part = |len: u64| -> Result<Vec<u8>> {
            let mut buf = vec![0; len as usize];
            file.read_exact(&mut buf)
                .map_err(|e| Error::ObjectStore(format!("reading the spool file of {key}: {e}")))?;
            Ok(buf)
        };
        if bytes <= PART {
            let all = read_part(bytes)?;
            self.objects
                .put(&path, PutPayload::from(all))
                .await
                .map_err(self.failed(&format!("uploading {key}")))?;
        } else {
            let mut upload = self
                .objects
                .put_multipart(&path)
                .await
                .map_err(self.failed(&format!("starting the upload of {key}")))?;
            let mut left = bytes;
            let sent: Result<()> = async {
                while left > 0 {
                    let len = left.min(PART);
                    let part = read_part(len)?;
                    upload
                        .put_part(PutPayload::from(part))
                        .await
                        .map_err(self.failed(&format!("uploading a part of {key}")))?;
                    left -= len;
                }
                upload
                    .complete()
                    .await
                    .map_err(self.failed(&format!("completing the upload of {key}")))?;
                Ok(())
            }
            .await;
            if let Err(e) = sent {
                let _ = upload.abort().await;
                return Err(e);
            }
        }
        let meta = self
            .objects
            .head(&path)
            .await
            .map_err(self.failed(&format!("checking the upload of {key}")))?;
        if meta.size != bytes {
            return Err(Error::ObjectStore(format!(
                "{key} on {} is {} bytes after its upload, not {bytes}",
                self.describe, meta.size
            )));
        }
        Ok(())
    }

    /// Whether `key` of a `file://` store is reached through a symbolic link: a link to a
    /// folder elsewhere (`segments/x -> /etc`) would have gc list and delete files that are
    /// not ours, and a linked file is not an object we wrote. A key whose folder does not
    /// exist names nothing and is not outside.
    fn outside_root(&self, key: &str) -> bool {
        let Some(root) = &self.local_root else {
            return false;
        };
        let path = root.join(key);
        let linked = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        let folder_outside = path
            .parent()
            .map(std::fs::canonicalize)
            .is_some_and(|dir| dir.is_ok_and(|dir| !dir.starts_with(root)));
        linked || folder_outside
    }

    /// Deletes object `key`; one already gone is no error.
    ///
    /// # Errors
    /// [`Error::ObjectStore`] when the delete fails or `key` is reached through a symbolic
    /// link out of a `file://` store.
    pub(crate) async fn delete(&self, key: &str) -> Result<()> {
        if self.outside_root(key) {
            return Err(Error::ObjectStore(format!(
                "deleting {key} on {}: refused, it is reached through a symbolic link; \
                 remove the link from the store's folder",
                self.describe
            )));
        }
        match self.objects.delete(&self.path(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failed(&format!("deleting {key}"))(e)),
        }
    }
}

/// A segment object as the store lists it.
#[derive(Debug, Clone)]
pub(crate) struct SegmentObject {
    /// Its key, with our prefix (as `body_segments.key` holds it).
    pub key: String,
    pub size: u64,
    /// When it was last written.
    pub modified: DateTime<Utc>,
}

impl BodyStore {
    /// Every object under our `segments/` folder, at any depth (a listing per folder:
    /// segments are filed by day).
    ///
    /// # Errors
    /// [`Error::ObjectStore`] when a listing fails.
    pub(crate) async fn list_segments(&self) -> Result<Vec<SegmentObject>> {
        let mut out = Vec::new();
        let mut folders = vec![self.path(&self.key("segments"))];
        while let Some(folder) = folders.pop() {
            let listed = match self.objects.list_with_delimiter(Some(&folder)).await {
                Ok(listed) => listed,
                Err(object_store::Error::NotFound { .. }) => continue,
                Err(e) => return Err(self.failed(&format!("listing {folder}/"))(e)),
            };
            // A linked folder or file is not ours: never listed, so never deleted as an
            // orphan.
            folders.extend(
                listed
                    .common_prefixes
                    .into_iter()
                    // A name in the folder: its parent is the folder, resolved.
                    .filter(|folder| !self.outside_root(&format!("{folder}/entry"))),
            );
            out.extend(
                listed
                    .objects
                    .into_iter()
                    .filter(|meta| {
                        let outside = self.outside_root(meta.location.as_ref());
                        if outside {
                            warn!(key = %meta.location, "skipped: reached through a symbolic link");
                        }
                        !outside
                    })
                    .map(|meta| SegmentObject {
                        key: meta.location.as_ref().to_owned(),
                        size: meta.size,
                        modified: meta.last_modified,
                    }),
            );
        }
        Ok(out)
    }
}

/// Other whole objects beside the body segments, under our prefix (the matcher index's
/// snapshots under `snapshots/`): named relative to the prefix, written whole, read whole.
impl BodyStore {
    /// Uploads the local file `file` (`bytes` long) as the object `name`: one put, or a
    /// multipart upload past 16 MiB, which the store shows only once complete, so a reader
    /// never sees part of it. Its size is checked after.
    ///
    /// # Errors
    /// [`Error::ObjectStore`] naming the step that failed.
    pub async fn put_file(&self, name: &str, file: &mut std::fs::File, bytes: u64) -> Result<()> {
        self.upload(&self.key(name), file, bytes).await
    }

    /// The names of the objects directly under the folder `dir` (`snapshots`), relative to
    /// our prefix (`snapshots/…`), in no particular order.
    ///
    /// # Errors
    /// [`Error::ObjectStore`] when the listing fails.
    pub async fn list_names(&self, dir: &str) -> Result<Vec<String>> {
        let under = self.key(dir.trim_end_matches('/'));
        let listed = self
            .objects
            .list_with_delimiter(Some(&self.path(&under)))
            .await
            .map_err(self.failed(&format!("listing {under}/")))?;
        let skip = if self.prefix.is_empty() {
            0
        } else {
            self.prefix.len() + 1
        };
        Ok(listed
            .objects
            .into_iter()
            .filter_map(|meta| meta.location.as_ref().get(skip..).map(str::to_owned))
            .collect())
    }

    /// The whole object `name`.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is none; [`Error::ObjectStore`] when the read fails.
    pub async fn get_whole(&self, name: &str) -> Result<Vec<u8>> {
        let key = self.key(name);
        let got = match self.objects.get(&self.path(&key)).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(Error::not_found(
                    "object",
                    format!("{key} on {}", self.describe),
                ));
            }
            Err(e) => return Err(self.failed(&format!("reading {key}"))(e)),
        };
        let bytes = got
            .bytes()
            .await
            .map_err(self.failed(&format!("reading {key}")))?;
        Ok(bytes.to_vec())
    }
}

/// Bodies and bytes by where they are (`doctor`, `/metrics`, `storage migrate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BodyTotals {
    /// Bodies in the database.
    pub db_bodies: u64,
    /// Their uncompressed bytes.
    pub db_bytes: u64,
    /// Bodies in segments on the object store.
    pub store_bodies: u64,
    /// Their uncompressed bytes.
    pub store_bytes: u64,
    /// Sealed segments.
    pub segments: u64,
    /// Their size on the object store.
    pub segment_bytes: u64,
    /// Of which the records of bodies still pointed to (the rest is dead: bodies removed by
    /// `gc`, until the segment is deleted or compacted).
    pub segment_live_bytes: u64,
    /// Screenshots (PNG, each once) in the database.
    pub screenshots: u64,
    /// Their bytes.
    pub screenshot_bytes: u64,
    /// Screenshots in segments on the object store.
    pub store_screenshots: u64,
    /// Their bytes.
    pub store_screenshot_bytes: u64,
}

/// What a move of bodies did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MoveReport {
    /// Bodies moved.
    pub bodies: u64,
    /// Their uncompressed bytes.
    pub bytes: u64,
    /// Screenshots moved (they go with the bodies, in the same segments).
    pub screenshots: u64,
    /// Their bytes (PNG).
    pub screenshot_bytes: u64,
    /// Segments written (to the store) or emptied and deleted (to the database).
    pub segments: u64,
    /// Bodies and screenshots left where they were because they did not check out against
    /// their SHA-256 (a damaged row): `hex sha256: why`.
    pub refused: Vec<String>,
}

impl MoveReport {
    fn add(&mut self, other: MoveReport) {
        self.bodies += other.bodies;
        self.bytes += other.bytes;
        self.screenshots += other.screenshots;
        self.screenshot_bytes += other.screenshot_bytes;
        self.segments += other.segments;
        self.refused.extend(other.refused);
    }

    /// Records moved or refused: what a `limit` counts.
    fn records(&self) -> u64 {
        self.bodies + self.screenshots + self.refused.len() as u64
    }
}

/// The lower-case hex of a hash.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A row still in the database: hash, bytes as stored, length; for a body, also the first
/// snapshot that served it as its bytes on the wire, and the first that decoded to it.
type PendingRow = (Vec<u8>, Vec<u8>, i64, Option<i64>, Option<i64>);

/// What a body's record says about it: the snapshot that served it (or decoded to it).
#[derive(Debug, Clone, sqlx::FromRow)]
struct SnapshotContext {
    id: i64,
    final_url: String,
    fetched_at: DateTime<Utc>,
    status: i32,
    http_version: Option<String>,
    header_block: Option<Vec<u8>>,
    content_type: Option<String>,
}

/// What a record names besides its bytes, read for a whole batch of rows before the
/// records are encoded off the async runtime.
enum RecordContext {
    /// A body as a snapshot served it: a `response` when the snapshot kept its head.
    Served(SnapshotContext),
    /// A body a snapshot decoded to: a `resource` of its media type.
    Decoded(SnapshotContext),
    /// A screenshot: the final URL and time of the first render that names it.
    Rendered(String, DateTime<Utc>),
    /// Nothing names the row any more: a `resource` of a `urn:copyhound:` URI.
    Unnamed,
}

/// One row of a batch, encoded (or why it was refused), with the bytes' length.
type Encoded = (Vec<u8>, std::result::Result<(Vec<u8>, u64), String>);

/// What a record in a segment holds: a page body (`snapshot_bodies`) or a screenshot
/// (`screenshots`, a PNG).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecordKind {
    Body,
    Screenshot,
}

impl RecordKind {
    /// The rows still in the database after a hash, in hash order: hash, bytes as stored
    /// (zstd for a body, the PNG for a screenshot), length, and for a body the snapshots
    /// that name it ([`PendingRow`]).
    fn pending_sql(self) -> &'static str {
        match self {
            RecordKind::Body => {
                "SELECT b.sha256, b.body_zstd, b.body_len, \
                 (SELECT MIN(s.id) FROM snapshots s WHERE s.wire_sha256 = b.sha256), \
                 (SELECT MIN(s.id) FROM snapshots s WHERE s.sha256 = b.sha256) \
                 FROM snapshot_bodies b \
                 WHERE b.segment_id IS NULL AND b.sha256 > $1 ORDER BY b.sha256 LIMIT $2"
            }
            RecordKind::Screenshot => {
                "SELECT sha256, png, bytes, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT) \
                 FROM screenshots \
                 WHERE segment_id IS NULL AND sha256 > $1 ORDER BY sha256 LIMIT $2"
            }
        }
    }

    /// Points `rows` rows at their records in segment `$2` and empties their database
    /// copies (`$1` empty bytes): one statement for them all, each row's hash, offset and
    /// record length bound after (`$3`, `$4`, `$5`, then `$6`...). A row another writer
    /// pointed at a segment meanwhile is left as it is.
    fn commit_sql(self, rows: usize) -> String {
        let (table, bytes) = match self {
            RecordKind::Body => ("snapshot_bodies", "body_zstd"),
            RecordKind::Screenshot => ("screenshots", "png"),
        };
        let values = (0..rows)
            .map(|i| format!("(${}, ${}, ${})", 3 * i + 3, 3 * i + 4, 3 * i + 5))
            .collect::<Vec<_>>()
            .join(", ");
        // A `VALUES` list's columns are `column1`... in both backends.
        format!(
            "UPDATE {table} SET {bytes} = $1, segment_id = $2, segment_offset = v.column2, \
             segment_length = v.column3 FROM (VALUES {values}) AS v \
             WHERE {table}.sha256 = v.column1 AND {table}.segment_id IS NULL"
        )
    }

    /// The rows in segment `$2` (any when NULL), `$1` of them, in the order of their
    /// records: hash, length, segment, its key, offset, record length.
    fn in_segments_sql(self) -> &'static str {
        match self {
            RecordKind::Body => {
                "SELECT b.sha256, b.body_len, b.segment_id, s.key, b.segment_offset, \
                 b.segment_length FROM snapshot_bodies b JOIN body_segments s \
                 ON s.id = b.segment_id WHERE ($2 IS NULL OR b.segment_id = $2) \
                 ORDER BY b.segment_id, b.segment_offset LIMIT $1"
            }
            RecordKind::Screenshot => {
                "SELECT c.sha256, c.bytes, c.segment_id, s.key, c.segment_offset, \
                 c.segment_length FROM screenshots c JOIN body_segments s \
                 ON s.id = c.segment_id WHERE ($2 IS NULL OR c.segment_id = $2) \
                 ORDER BY c.segment_id, c.segment_offset LIMIT $1"
            }
        }
    }

    /// Puts a row's bytes back into the database (`$1`), off segment `$3`.
    fn back_to_db_sql(self) -> &'static str {
        match self {
            RecordKind::Body => {
                "UPDATE snapshot_bodies SET body_zstd = $1, segment_id = NULL, \
                 segment_offset = NULL, segment_length = NULL \
                 WHERE sha256 = $2 AND segment_id = $3"
            }
            RecordKind::Screenshot => {
                "UPDATE screenshots SET png = $1, segment_id = NULL, \
                 segment_offset = NULL, segment_length = NULL \
                 WHERE sha256 = $2 AND segment_id = $3"
            }
        }
    }
}

/// The SQL condition that no row points into segment `$1`: neither a body nor a screenshot.
pub(crate) const SEGMENT_UNUSED: &str = "NOT EXISTS (SELECT 1 FROM snapshot_bodies \
     WHERE segment_id = $1) AND NOT EXISTS (SELECT 1 FROM screenshots WHERE segment_id = $1)";

/// One record appended to a spool file: the row's kind and hash, the record's offset and
/// length, and the bytes' length.
#[derive(Debug, Clone)]
struct Placed {
    kind: RecordKind,
    sha256: Vec<u8>,
    offset: u64,
    length: u64,
    body_len: u64,
}

/// Where a run of segment writers goes on reading the rows still in the database: bodies
/// in hash order, then screenshots.
#[derive(Debug, Clone, Default)]
struct Cursor {
    bodies: Vec<u8>,
    bodies_done: bool,
    screenshots: Vec<u8>,
}

/// A segment being written: a spool file in `spool_dir` (deleted when this is dropped)
/// and the records in it. See the module docs for the order of steps.
pub struct SegmentWriter {
    store: Store,
    file: tempfile::NamedTempFile,
    name: String,
    bytes: u64,
    placed: Vec<Placed>,
    /// Where the next read of the database goes on from.
    cursor: Cursor,
    refused: Vec<String>,
    done: bool,
}

/// A segment uploaded and not yet pointed at: [`UploadedSegment::commit`] does that.
pub struct UploadedSegment {
    store: Store,
    id: i64,
    key: String,
    placed: Vec<Placed>,
    refused: Vec<String>,
}

impl Store {
    /// The object store bodies go to, when `[storage] bodies` names one.
    pub fn body_store(&self) -> Option<&BodyStore> {
        self.bodies.as_deref()
    }

    pub(crate) fn require_body_store(&self) -> Result<&BodyStore> {
        self.body_store().ok_or_else(|| {
            Error::InvalidInput(
                "no object store for bodies: set [storage] bodies to file:///… or s3://…"
                    .to_owned(),
            )
        })
    }

    /// Reads a body from its segment (see [`crate::EvidenceReads::body`]).
    pub(crate) async fn segment_body(
        &self,
        sha256: &[u8; 32],
        body_len: u64,
        (key, offset, length): (String, i64, i64),
    ) -> Result<Vec<u8>> {
        let bodies = self.body_store().ok_or_else(|| {
            Error::InvalidInput(format!(
                "body {} is in segment {key} of an object store, but [storage] bodies \
                 names none: set it to the store the segments were written to",
                hex(sha256)
            ))
        })?;
        bodies
            .read_record(&key, offset as u64, length as u64, sha256, body_len)
            .await
    }

    /// Bodies and bytes in the database and in segments.
    ///
    /// # Errors
    /// A database failure.
    pub async fn body_totals(&self) -> Result<BodyTotals> {
        let (db_bodies, db_bytes, store_bodies, store_bytes, live): (i64, i64, i64, i64, i64) =
            read_pool!(self, |pool| {
                sqlx::query_as(
                    "SELECT \
                     COUNT(*) FILTER (WHERE segment_id IS NULL), \
                     CAST(COALESCE(SUM(body_len) FILTER (WHERE segment_id IS NULL), 0) AS BIGINT), \
                     COUNT(*) FILTER (WHERE segment_id IS NOT NULL), \
                     CAST(COALESCE(SUM(body_len) FILTER (WHERE segment_id IS NOT NULL), 0) \
                     AS BIGINT), \
                     CAST(COALESCE(SUM(segment_length) FILTER (WHERE segment_id IS NOT NULL), 0) \
                     AS BIGINT) FROM snapshot_bodies",
                )
                .fetch_one(pool)
                .await?
            });
        let (screenshots, screenshot_bytes, store_screenshots, store_screenshot_bytes, shot_live): (
            i64,
            i64,
            i64,
            i64,
            i64,
        ) = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT \
                 COUNT(*) FILTER (WHERE segment_id IS NULL), \
                 CAST(COALESCE(SUM(bytes) FILTER (WHERE segment_id IS NULL), 0) AS BIGINT), \
                 COUNT(*) FILTER (WHERE segment_id IS NOT NULL), \
                 CAST(COALESCE(SUM(bytes) FILTER (WHERE segment_id IS NOT NULL), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(segment_length) FILTER (WHERE segment_id IS NOT NULL), 0) \
                 AS BIGINT) FROM screenshots",
            )
            .fetch_one(pool)
            .await?
        });
        let (segments, segment_bytes): (i64, i64) = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT COUNT(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM body_segments \
                 WHERE state = 'sealed'",
            )
            .fetch_one(pool)
            .await?
        });
        let n = |v: i64| v.max(0) as u64;
        Ok(BodyTotals {
            db_bodies: n(db_bodies),
            db_bytes: n(db_bytes),
            store_bodies: n(store_bodies),
            store_bytes: n(store_bytes),
            segments: n(segments),
            segment_bytes: n(segment_bytes),
            segment_live_bytes: n(live) + n(shot_live),
            screenshots: n(screenshots),
            screenshot_bytes: n(screenshot_bytes),
            store_screenshots: n(store_screenshots),
            store_screenshot_bytes: n(store_screenshot_bytes),
        })
    }

    /// Whether a segment is due: an object store is set, and the bodies and screenshots
    /// waiting in the database fill a segment, or some wait and no segment was written for
    /// `segment_age`.
    ///
    /// # Errors
    /// A database failure.
    pub async fn segment_due(&self) -> Result<bool> {
        let Some(bodies) = self.body_store() else {
            return Ok(false);
        };
        let (waiting, bytes): (i64, i64) = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT CAST(SUM(n) AS BIGINT), CAST(COALESCE(SUM(b), 0) AS BIGINT) FROM \
                 (SELECT COUNT(*) AS n, SUM(body_len) AS b FROM snapshot_bodies \
                  WHERE segment_id IS NULL \
                  UNION ALL SELECT COUNT(*), SUM(bytes) FROM screenshots \
                  WHERE segment_id IS NULL) w",
            )
            .fetch_one(pool)
            .await?
        });
        if waiting == 0 {
            return Ok(false);
        }
        if bytes as u64 >= bodies.segment_bytes {
            return Ok(true);
        }
        let last: Option<i64> = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT MAX(created_at) FROM body_segments WHERE state = 'sealed'")
                .fetch_one(pool)
                .await?
        });
        let age_ms = bodies.segment_age.as_millis() as i64;
        Ok(last.is_none_or(|at| millis(Utc::now()) - at >= age_ms))
    }

    /// A writer of the next segment, over a new spool file.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] without an object store; [`Error::ObjectStore`] when the
    /// spool file cannot be created.
    pub fn segment_writer(&self) -> Result<SegmentWriter> {
        let bodies = self.require_body_store()?;
        std::fs::create_dir_all(&bodies.spool_dir).map_err(|e| {
            Error::ObjectStore(format!(
                "creating the spool folder {}: {e}",
                bodies.spool_dir.display()
            ))
        })?;
        let file = tempfile::Builder::new()
            .prefix("segment-")
            .suffix(".warc.gz.part")
            .tempfile_in(&bodies.spool_dir)
            .map_err(|e| {
                Error::ObjectStore(format!(
                    "creating a spool file in {}: {e}",
                    bodies.spool_dir.display()
                ))
            })?;
        let now = Utc::now();
        let name = format!(
            "segments/{}/{}-{:016x}.warc.gz",
            now.format("%Y/%m/%d"),
            now.format("%Y%m%dT%H%M%S%.3fZ"),
            fastrand::u64(..)
        );
        let mut writer = SegmentWriter {
            store: self.clone(),
            file,
            name,
            bytes: 0,
            placed: Vec::new(),
            cursor: Cursor::default(),
            refused: Vec::new(),
            done: false,
        };
        let filename = writer
            .name
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let info = format!(
            "software: copyhound-store/{}\r\nformat: WARC File Format 1.1\r\n\
             conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
             description: page bodies, each once, by SHA-256\r\n",
            env!("CARGO_PKG_VERSION")
        );
        let fields = [
            ("WARC-Type", "warcinfo".to_owned()),
            (
                "WARC-Record-ID",
                record_id(&[b"warcinfo", filename.as_bytes()]),
            ),
            ("WARC-Date", warc_date(now)),
            ("WARC-Filename", filename),
            ("Content-Type", "application/warc-fields".to_owned()),
        ];
        writer.write(&encode_member(&fields, info.as_bytes(), None)?)?;
        Ok(writer)
    }

    /// Moves up to `limit` bodies (all when `None`) from the database into segments on the
    /// object store, one segment after another, each committed before the next starts (so
    /// a move cut off goes on where it stopped when run again).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] without an object store; [`Error::ObjectStore`] when the
    /// store cannot be written (the bodies of the segment stay in the database); a database
    /// failure.
    #[instrument(skip(self))]
    pub async fn move_bodies_to_store(&self, limit: Option<u64>) -> Result<MoveReport> {
        let mut report = MoveReport::default();
        // Where the last segment stopped reading: a body refused there is not read again.
        let mut after = Cursor::default();
        loop {
            let left = limit.map(|l| l.saturating_sub(report.records()));
            if left == Some(0) {
                break;
            }
            if !self
                .write_one_segment(left, &mut after, &mut report)
                .await?
            {
                break;
            }
        }
        Ok(report)
    }

    /// Writes, uploads and commits one segment of at most `limit` bodies, reading after
    /// `after` (where the last one stopped; updated); adds what moved to `report`. Whether
    /// bodies may be left for another segment.
    async fn write_one_segment(
        &self,
        limit: Option<u64>,
        after: &mut Cursor,
        report: &mut MoveReport,
    ) -> Result<bool> {
        let mut writer = self.segment_writer()?;
        writer.cursor = std::mem::take(after);
        writer.fill(limit).await?;
        after.clone_from(&writer.cursor);
        let finished = writer.done;
        match writer.upload().await? {
            Some(uploaded) => report.add(uploaded.commit().await?),
            None => return Ok(false),
        }
        Ok(!finished)
    }

    /// Writes segments while one is due ([`Store::segment_due`]): every full segment the
    /// waiting bodies make, and the rest once no segment was written for `segment_age`.
    /// Nothing without an object store.
    ///
    /// # Errors
    /// [`Error::ObjectStore`] when the store cannot be written (the bodies of the segment
    /// stay in the database); a database failure.
    pub async fn write_due_segments(&self) -> Result<MoveReport> {
        let mut report = MoveReport::default();
        let mut after = Cursor::default();
        while self.segment_due().await? {
            if !self
                .write_one_segment(None, &mut after, &mut report)
                .await?
            {
                break;
            }
        }
        Ok(report)
    }

    /// Moves up to `limit` bodies (all when `None`) from segments back into the database,
    /// each read by its record and checked against its SHA-256, a transaction per batch; a
    /// segment left with no body is deleted (its row first, then the object).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when bodies are in segments but no object store is set;
    /// [`Error::ObjectStore`] or [`Error::CorruptBody`] for a record that cannot be read
    /// (what moved before stays moved: run it again); a database failure.
    #[instrument(skip(self))]
    pub async fn move_bodies_to_db(&self, limit: Option<u64>) -> Result<MoveReport> {
        self.move_segment_bodies_to_db(limit, None).await
    }

    /// Moves the bodies of segment `segment` into the database, as
    /// [`Store::move_bodies_to_db`] does, and so deletes it (gc's compaction).
    pub(crate) async fn move_segment_to_db(&self, segment: i64) -> Result<MoveReport> {
        self.move_segment_bodies_to_db(None, Some(segment)).await
    }

    async fn move_segment_bodies_to_db(
        &self,
        limit: Option<u64>,
        segment: Option<i64>,
    ) -> Result<MoveReport> {
        const BATCH: i64 = 64;
        let mut report = MoveReport::default();
        for kind in [RecordKind::Body, RecordKind::Screenshot] {
            loop {
                let left = limit.map_or(BATCH, |l| {
                    l.saturating_sub(report.bodies + report.screenshots)
                        .min(BATCH as u64) as i64
                });
                if left == 0 {
                    break;
                }
                if !self
                    .move_batch_to_db(kind, left, segment, &mut report)
                    .await?
                {
                    break;
                }
            }
        }
        Ok(report)
    }

    /// Moves up to `limit` rows of `kind` (of `segment`, or any) back into the database,
    /// deleting each segment it empties; whether there were any.
    async fn move_batch_to_db(
        &self,
        kind: RecordKind,
        limit: i64,
        segment: Option<i64>,
        report: &mut MoveReport,
    ) -> Result<bool> {
        let rows: Vec<(Vec<u8>, i64, i64, String, i64, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(kind.in_segments_sql())
                .bind(limit)
                .bind(segment)
                .fetch_all(pool)
                .await?
        });
        if rows.is_empty() {
            return Ok(false);
        }
        let mut moved = Vec::with_capacity(rows.len());
        for (sha, len, segment, key, offset, length) in rows {
            let digest: [u8; 32] = sha
                .as_slice()
                .try_into()
                .map_err(|_| Error::CorruptBody("a body hash is not 32 bytes".into()))?;
            let bytes = self
                .segment_body(&digest, len as u64, (key, offset, length))
                .await?;
            let stored = match kind {
                RecordKind::Body => zstd::bulk::compress(&bytes, 3).map_err(|e| {
                    Error::CorruptBody(format!("compressing body {}: {e}", hex(&sha)))
                })?,
                RecordKind::Screenshot => bytes,
            };
            moved.push((sha, len, segment, stored));
        }
        let segments: std::collections::BTreeSet<i64> = moved.iter().map(|m| m.2).collect();
        let delete_emptied =
            format!("DELETE FROM body_segments WHERE id = $1 AND {SEGMENT_UNUSED} RETURNING key");
        let emptied: Vec<(i64, String)> = write_tx!(self, |tx| {
            for (sha, _, segment, stored) in &moved {
                sqlx::query(kind.back_to_db_sql())
                    .bind(stored)
                    .bind(sha)
                    .bind(segment)
                    .execute(&mut *tx)
                    .await?;
            }
            let mut emptied = Vec::new();
            for segment in &segments {
                let key: Option<String> =
                    sqlx::query_scalar(sqlx::AssertSqlSafe(delete_emptied.clone()))
                        .bind(segment)
                        .fetch_optional(&mut *tx)
                        .await?;
                emptied.extend(key.map(|k| (*segment, k)));
            }
            emptied
        });
        let bytes = moved.iter().map(|m| m.1.max(0) as u64).sum::<u64>();
        match kind {
            RecordKind::Body => {
                report.bodies += moved.len() as u64;
                report.bytes += bytes;
            }
            RecordKind::Screenshot => {
                report.screenshots += moved.len() as u64;
                report.screenshot_bytes += bytes;
            }
        }
        for (_, key) in emptied {
            report.segments += 1;
            // The row is gone: nothing points at the object any more, so a failed
            // delete leaves only an object to collect later.
            if let Err(e) = self.require_body_store()?.delete(&key).await {
                warn!(error = %e, key = %key, "an emptied segment could not be deleted");
            }
        }
        Ok(true)
    }
}

impl SegmentWriter {
    fn write(&mut self, member: &[u8]) -> Result<u64> {
        let offset = self.bytes;
        self.file.as_file_mut().write_all(member).map_err(|e| {
            Error::ObjectStore(format!(
                "writing the spool file {}: {e}",
                self.file.path().display()
            ))
        })?;
        self.bytes += member.len() as u64;
        Ok(offset)
    }

    /// Records written so far (bodies and screenshots).
    pub fn records(&self) -> usize {
        self.placed.len()
    }

    /// Appends the bodies still in the database, then the screenshots, each checked against
    /// its SHA-256, until the segment is full, `limit` records are in it, or none is left;
    /// returns how many it added. A row that does not check out is left in the database
    /// and reported.
    ///
    /// Rows are read a batch at a time with what their records name (two queries a batch);
    /// the batch is decompressed, checked and encoded on blocking threads, one part per
    /// core, and written to the spool file in hash order.
    ///
    /// # Errors
    /// A database failure or a spool file that cannot be written.
    pub async fn fill(&mut self, limit: Option<u64>) -> Result<u64> {
        const BATCH: i64 = 64;
        let segment_bytes = self.store.require_body_store()?.segment_bytes;
        let mut added = 0;
        while self.bytes < segment_bytes && limit.is_none_or(|l| added < l) {
            let kind = if self.cursor.bodies_done {
                RecordKind::Screenshot
            } else {
                RecordKind::Body
            };
            let after = match kind {
                RecordKind::Body => self.cursor.bodies.clone(),
                RecordKind::Screenshot => self.cursor.screenshots.clone(),
            };
            let mut rows: Vec<PendingRow> = read_pool!(self.store, |pool| {
                sqlx::query_as(kind.pending_sql())
                    .bind(&after)
                    .bind(BATCH)
                    .fetch_all(pool)
                    .await?
            });
            if rows.is_empty() {
                match kind {
                    RecordKind::Body => self.cursor.bodies_done = true,
                    RecordKind::Screenshot => {
                        self.done = true;
                        break;
                    }
                }
                continue;
            }
            if let Some(l) = limit {
                rows.truncate(usize::try_from(l - added).unwrap_or(usize::MAX));
            }
            let contexts = self.contexts(kind, &rows).await?;
            for (sha, encoded) in encode_batch(&self.name, kind, rows, contexts).await? {
                if self.bytes >= segment_bytes {
                    return Ok(added);
                }
                match kind {
                    RecordKind::Body => self.cursor.bodies.clone_from(&sha),
                    RecordKind::Screenshot => self.cursor.screenshots.clone_from(&sha),
                }
                let (member, body_len) = match encoded {
                    Ok(encoded) => encoded,
                    Err(why) => {
                        self.refuse(&sha, &why);
                        continue;
                    }
                };
                let offset = self.write(&member)?;
                self.placed.push(Placed {
                    kind,
                    sha256: sha,
                    offset,
                    length: member.len() as u64,
                    body_len,
                });
                added += 1;
            }
        }
        Ok(added)
    }

    /// What the records of `rows` name, in their order: for a body the snapshot that
    /// served it (else one that decoded to it), read in one query; for a screenshot the
    /// first render naming it.
    async fn contexts(&self, kind: RecordKind, rows: &[PendingRow]) -> Result<Vec<RecordContext>> {
        match kind {
            RecordKind::Body => {
                let ids: Vec<i64> = rows
                    .iter()
                    .filter_map(|(_, _, _, served, decoded)| served.or(*decoded))
                    .collect();
                let mut named: HashMap<i64, SnapshotContext> = HashMap::new();
                if !ids.is_empty() {
                    let sql = format!(
                        "SELECT id, final_url, fetched_at, status, http_version, header_block, \
                         content_type FROM snapshots WHERE id IN ({})",
                        id_list(ids)
                    );
                    let found: Vec<SnapshotContext> = read_pool!(self.store, |pool| {
                        sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                            .persistent(false)
                            .fetch_all(pool)
                            .await?
                    });
                    named.extend(found.into_iter().map(|c| (c.id, c)));
                }
                Ok(rows
                    .iter()
                    .map(|(_, _, _, served, decoded)| {
                        match (served.and_then(|id| named.get(&id)), decoded) {
                            (Some(row), _) => RecordContext::Served(row.clone()),
                            (None, Some(id)) => {
                                named.get(id).map_or(RecordContext::Unnamed, |row| {
                                    RecordContext::Decoded(row.clone())
                                })
                            }
                            (None, None) => RecordContext::Unnamed,
                        }
                    })
                    .collect())
            }
            RecordKind::Screenshot => {
                let mut contexts = Vec::with_capacity(rows.len());
                for (sha, ..) in rows {
                    let render: Option<(String, DateTime<Utc>)> = read_pool!(self.store, |pool| {
                        sqlx::query_as(
                            "SELECT final_url, rendered_at FROM renders \
                                 WHERE screenshot_sha256 = $1 ORDER BY id LIMIT 1",
                        )
                        .bind(sha)
                        .fetch_optional(pool)
                        .await?
                    });
                    contexts.push(render.map_or(RecordContext::Unnamed, |(url, at)| {
                        RecordContext::Rendered(url, at)
                    }));
                }
                Ok(contexts)
            }
        }
    }

    fn refuse(&mut self, sha: &[u8], why: &str) {
        warn!(sha256 = %hex(sha), why, "a body left in the database");
        self.refused.push(format!("{}: {why}", hex(sha)));
    }

    /// Closes the spool file and uploads it as one object, after a `body_segments` row
    /// `uploading` names it; `None` (and nothing uploaded) when no body was added. The
    /// bodies stay in the database, and are read from there, until
    /// [`UploadedSegment::commit`].
    ///
    /// # Errors
    /// [`Error::ObjectStore`] when the upload fails (nothing points at the object); a
    /// database failure.
    pub async fn upload(mut self) -> Result<Option<UploadedSegment>> {
        if self.placed.is_empty() {
            if !self.refused.is_empty() {
                info!(
                    refused = self.refused.len(),
                    "no body for a segment; some left in the database"
                );
            }
            return Ok(None);
        }
        self.file
            .as_file_mut()
            .sync_all()
            .map_err(|e| Error::ObjectStore(format!("flushing the spool file: {e}")))?;
        let bodies = self.store.require_body_store()?;
        let key = bodies.key(&self.name);
        let now = millis(Utc::now());
        let id: i64 = write_pool!(self.store, |pool| {
            sqlx::query_scalar(
                "INSERT INTO body_segments (key, state, bytes, records, created_at) \
                 VALUES ($1, 'uploading', $2, $3, $4) RETURNING id",
            )
            .bind(&key)
            .bind(self.bytes as i64)
            .bind(self.placed.len() as i64)
            .bind(now)
            .fetch_one(pool)
            .await?
        });
        if let Err(e) = bodies
            .upload(&key, self.file.as_file_mut(), self.bytes)
            .await
        {
            // Nothing points at it; an upload that failed half-way was aborted. Should this
            // delete fail too, the row stays `uploading` for gc.
            let forget: Result<()> = async {
                write_pool!(self.store, |pool| {
                    sqlx::query("DELETE FROM body_segments WHERE id = $1 AND state = 'uploading'")
                        .bind(id)
                        .execute(pool)
                        .await?;
                });
                Ok(())
            }
            .await;
            if let Err(forgot) = forget {
                warn!(error = %forgot, key = %key, "a failed segment's row stays for gc");
            }
            return Err(e);
        }
        info!(key = %key, bytes = self.bytes, records = self.placed.len(), "segment uploaded");
        Ok(Some(UploadedSegment {
            store: self.store.clone(),
            id,
            key,
            placed: std::mem::take(&mut self.placed),
            refused: std::mem::take(&mut self.refused),
        }))
    }
}

impl UploadedSegment {
    /// The object's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Points each body's row at its record and empties its database copy, and seals the
    /// segment, in one transaction. A body another writer put in a segment meanwhile keeps
    /// that place (its record here is then never read).
    ///
    /// # Errors
    /// A database failure (the transaction is rolled back: the bodies stay in the
    /// database).
    pub async fn commit(self) -> Result<MoveReport> {
        let empty: &[u8] = &[];
        // Rows a statement: three parameters each, well under either backend's limit.
        const ROWS: usize = 500;
        let of_kind =
            |kind| -> Vec<&Placed> { self.placed.iter().filter(|p| p.kind == kind).collect() };
        let (bodies, screenshots) = (of_kind(RecordKind::Body), of_kind(RecordKind::Screenshot));
        let batches: Vec<(RecordKind, String, &[&Placed])> = [
            (RecordKind::Body, &bodies),
            (RecordKind::Screenshot, &screenshots),
        ]
        .into_iter()
        .flat_map(|(kind, rows)| {
            rows.chunks(ROWS)
                .map(move |chunk| (kind, kind.commit_sql(chunk.len()), chunk))
        })
        .collect();
        let moved: (u64, u64) = write_tx!(self.store, |tx| {
            let mut moved = (0, 0);
            for (kind, sql, chunk) in &batches {
                // Its text varies with the rows: not one for the statement cache.
                let mut update = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                    .persistent(false)
                    .bind(empty)
                    .bind(self.id);
                for p in *chunk {
                    update = update
                        .bind(&p.sha256)
                        .bind(p.offset as i64)
                        .bind(p.length as i64);
                }
                let n = update.execute(&mut *tx).await?.rows_affected();
                match kind {
                    RecordKind::Body => moved.0 += n,
                    RecordKind::Screenshot => moved.1 += n,
                }
            }
            sqlx::query("UPDATE body_segments SET state = 'sealed' WHERE id = $1")
                .bind(self.id)
                .execute(&mut *tx)
                .await?;
            moved
        });
        let bytes = |kind| {
            self.placed
                .iter()
                .filter(|p| p.kind == kind)
                .map(|p| p.body_len)
                .sum()
        };
        Ok(MoveReport {
            bodies: moved.0,
            bytes: bytes(RecordKind::Body),
            screenshots: moved.1,
            screenshot_bytes: bytes(RecordKind::Screenshot),
            segments: 1,
            refused: self.refused,
        })
    }
}

/// Decompresses, checks and encodes `rows` (with their `contexts`, in the same order) as
/// records of segment `name`, on blocking threads: the batch in one part per core, so a
/// segment is written at the speed of every core rather than of the runtime's one.
async fn encode_batch(
    name: &str,
    kind: RecordKind,
    rows: Vec<PendingRow>,
    contexts: Vec<RecordContext>,
) -> Result<Vec<Encoded>> {
    const LEAST_PER_PART: usize = 8;
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let parts = cores.min(rows.len().div_ceil(LEAST_PER_PART)).max(1);
    let per_part = rows.len().div_ceil(parts);
    let mut items: Vec<(PendingRow, RecordContext)> = rows.into_iter().zip(contexts).collect();
    let mut tasks = Vec::with_capacity(parts);
    while !items.is_empty() {
        let rest = items.split_off(per_part.min(items.len()));
        let part = std::mem::replace(&mut items, rest);
        let name = name.to_owned();
        tasks.push(tokio::task::spawn_blocking(move || {
            part.into_iter()
                .map(|(row, context)| encode_row(&name, kind, row, context))
                .collect::<Vec<_>>()
        }));
    }
    let mut encoded = Vec::new();
    for task in tasks {
        encoded.extend(
            task.await
                .map_err(|e| Error::ObjectStore(format!("encoding warc records: {e}")))?,
        );
    }
    Ok(encoded)
}

/// One row's record: its bytes out of the database form, checked against its hash, in a
/// gzip member; or why it stays in the database.
fn encode_row(name: &str, kind: RecordKind, row: PendingRow, context: RecordContext) -> Encoded {
    let (sha, stored, len, ..) = row;
    let bytes = match kind {
        RecordKind::Body => zstd::bulk::decompress(&stored, len.max(0) as usize),
        RecordKind::Screenshot => Ok(stored),
    };
    let bytes = match bytes {
        Ok(b) if sha2::Sha256::digest(&b).as_slice() == sha.as_slice() => b,
        Ok(_) => return (sha, Err("its bytes do not hash to it".to_owned())),
        Err(e) => return (sha, Err(format!("not zstd of its length: {e}"))),
    };
    let member = match kind {
        RecordKind::Body => body_member(name, &sha, &bytes, context),
        RecordKind::Screenshot => screenshot_member(name, &sha, &bytes, context),
    };
    match member {
        Ok(member) => (sha, Ok((member, bytes.len() as u64))),
        Err(e) => (sha, Err(e.to_string())),
    }
}

/// The gzip member of one screenshot's record: a `resource` of the page the first render
/// naming it showed (`urn:view:<page URL>`), `image/png`.
fn screenshot_member(
    name: &str,
    sha: &[u8],
    png: &[u8],
    context: RecordContext,
) -> Result<Vec<u8>> {
    let hex_sha = hex(sha);
    let (url, at) = match context {
        // Under the page's own URL a replay tool would show the newest screenshot as the page.
        RecordContext::Rendered(url, at) => (crate::warc::view_uri(&url), at),
        _ => (format!("urn:copyhound:screenshot:{hex_sha}"), Utc::now()),
    };
    let fields = [
        ("WARC-Type", "resource".to_owned()),
        (
            "WARC-Record-ID",
            record_id(&[name.as_bytes(), b"screenshot", sha]),
        ),
        ("WARC-Date", warc_date(at)),
        ("WARC-Target-URI", url),
        ("WARC-Copyhound-Screenshot-Sha256", hex_sha),
        ("Content-Type", "image/png".to_owned()),
    ];
    encode_member(&fields, png, Some(png))
}

/// The gzip member of one body's record (see the module docs for its type).
fn body_member(name: &str, sha: &[u8], body: &[u8], context: RecordContext) -> Result<Vec<u8>> {
    let hex_sha = hex(sha);
    let (warc_type, at, url, media, block) = match context {
        RecordContext::Served(SnapshotContext {
            final_url,
            fetched_at,
            status,
            http_version: Some(version),
            header_block: Some(head),
            ..
        }) => {
            let mut block = format!("{version} {status} \r\n").into_bytes();
            for line in head.split_inclusive(|&b| b == b'\n') {
                if !line.to_ascii_lowercase().starts_with(b"transfer-encoding:") {
                    block.extend_from_slice(line);
                }
            }
            block.extend_from_slice(b"\r\n");
            block.extend_from_slice(body);
            let media = "application/http;msgtype=response".to_owned();
            ("response", fetched_at, final_url, media, Cow::Owned(block))
        }
        RecordContext::Served(c) | RecordContext::Decoded(c) => {
            let media = c
                .content_type
                .unwrap_or_else(|| "application/octet-stream".to_owned());
            (
                "resource",
                c.fetched_at,
                c.final_url,
                media,
                Cow::Borrowed(body),
            )
        }
        RecordContext::Rendered(..) | RecordContext::Unnamed => (
            "resource",
            Utc::now(),
            format!("urn:copyhound:body:{hex_sha}"),
            "application/octet-stream".to_owned(),
            Cow::Borrowed(body),
        ),
    };
    let fields = [
        ("WARC-Type", warc_type.to_owned()),
        ("WARC-Record-ID", record_id(&[name.as_bytes(), sha])),
        ("WARC-Date", warc_date(at)),
        ("WARC-Target-URI", url),
        ("WARC-Copyhound-Body-Sha256", hex_sha),
        ("Content-Type", media),
    ];
    encode_member(&fields, &block, Some(body))
}

fn encode_member(
    fields: &[(&str, String)],
    block: &[u8],
    payload: Option<&[u8]>,
) -> Result<Vec<u8>> {
    encode_record(fields, block, payload, true)
        .map_err(|e| Error::ObjectStore(format!("compressing a warc record: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_bad_ones_say_what_works() {
        let with = |bodies: &str| StorageSettings {
            bodies: bodies.to_owned(),
            ..StorageSettings::default()
        };
        assert_eq!(with("db").location().unwrap(), BodiesLocation::Db);
        assert_eq!(
            with("file:///srv/bodies").location().unwrap(),
            BodiesLocation::File("/srv/bodies".into())
        );
        assert_eq!(
            with("s3://bucket/a/b/").location().unwrap(),
            BodiesLocation::S3 {
                bucket: "bucket".into(),
                prefix: "a/b".into()
            }
        );
        for bad in ["ftp://x", "file://relative", "s3:///x", ""] {
            let err = with(bad).location().unwrap_err().to_string();
            assert!(err.contains("s3://bucket/prefix"), "{bad}: {err}");
        }
        let http = StorageSettings {
            endpoint: "http://127.0.0.1:9000".into(),
            ..with("s3://b")
        };
        assert!(
            http.validate()
                .unwrap_err()
                .to_string()
                .contains("allow_http")
        );
        assert!(
            StorageSettings {
                allow_http: true,
                ..http
            }
            .validate()
            .is_ok()
        );
        assert!(
            StorageSettings {
                segment_bytes: 10,
                ..with("db")
            }
            .validate()
            .is_err()
        );
    }
}
