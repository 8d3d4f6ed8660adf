-- Page bodies on an object store (issue #30): a segment is one WARC file (a gzip member per
-- record) uploaded as one object under `key`. A body moved into one keeps its
-- snapshot_bodies row, with body_zstd emptied (no zstd frame is empty) and the segment,
-- offset and length of its record's gzip member set, in the one transaction that follows
-- the upload: a row never points at an object that is not there. A segment row is written
-- `uploading` before its upload and `sealed` in that transaction, so one left `uploading`
-- (its process died between the two) names an object nothing points to.
CREATE TABLE body_segments (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    key         TEXT NOT NULL UNIQUE,
    state       TEXT NOT NULL CHECK (state IN ('uploading', 'sealed')),
    bytes       BIGINT NOT NULL,
    records     BIGINT NOT NULL,
    -- milliseconds since the epoch
    created_at  BIGINT NOT NULL
);
CREATE INDEX body_segments_created ON body_segments (created_at);

ALTER TABLE snapshot_bodies ADD COLUMN segment_id BIGINT REFERENCES body_segments (id);
ALTER TABLE snapshot_bodies ADD COLUMN segment_offset BIGINT;
ALTER TABLE snapshot_bodies ADD COLUMN segment_length BIGINT;
-- The bodies still in the database, which the next segment takes (and gc's per segment).
CREATE INDEX snapshot_bodies_in_db ON snapshot_bodies (sha256) WHERE segment_id IS NULL;
CREATE INDEX snapshot_bodies_segment ON snapshot_bodies (segment_id) WHERE segment_id IS NOT NULL;
-- A body's record names the response it came with: found by the wire body's hash too.
CREATE INDEX snapshots_wire_sha256 ON snapshots (wire_sha256);
