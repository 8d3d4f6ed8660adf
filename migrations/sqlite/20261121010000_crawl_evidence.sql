-- Crawl evidence as the crawler records it. Bodies move to their own table, keyed by the
-- SHA-256 of the uncompressed bytes, so a body served at many URLs (or unchanged between
-- crawls) is stored once; rows written from here on leave snapshots.body_zstd empty.
CREATE TABLE snapshot_bodies (
    sha256      BLOB PRIMARY KEY,
    body_zstd   BLOB NOT NULL,
    body_len    BIGINT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- What a WARC record and a conditional re-fetch need beyond the first schema: the raw
-- header blocks (values need not be UTF-8), the redirect chain, and the validators.
ALTER TABLE snapshots ADD COLUMN http_version TEXT;
ALTER TABLE snapshots ADD COLUMN header_block BLOB;
ALTER TABLE snapshots ADD COLUMN request_header_block BLOB;
ALTER TABLE snapshots ADD COLUMN redirects TEXT NOT NULL DEFAULT '[]';
ALTER TABLE snapshots ADD COLUMN body_status TEXT NOT NULL DEFAULT 'complete';
ALTER TABLE snapshots ADD COLUMN elapsed_ms BIGINT;
ALTER TABLE snapshots ADD COLUMN remote_addr TEXT;
ALTER TABLE snapshots ADD COLUMN etag TEXT;
ALTER TABLE snapshots ADD COLUMN last_modified TEXT;
CREATE INDEX snapshots_url ON snapshots (url, id);
CREATE INDEX snapshots_final_url ON snapshots (final_url, id);

-- What extraction found on a fetched page, one row per snapshot.
CREATE TABLE page_texts (
    snapshot_id    BIGINT PRIMARY KEY REFERENCES snapshots (id) ON DELETE CASCADE,
    url            TEXT NOT NULL,
    depth          INTEGER NOT NULL,
    chain_head     TEXT,
    chain_index    INTEGER,
    kind           TEXT NOT NULL,
    title          TEXT,
    chapter_title  TEXT,
    body           TEXT NOT NULL,
    encoding       TEXT NOT NULL,
    decode_errors  BOOLEAN NOT NULL,
    not_modified   BOOLEAN NOT NULL,
    fetched_at     TEXT NOT NULL
);
