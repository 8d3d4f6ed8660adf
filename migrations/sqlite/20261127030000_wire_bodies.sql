-- The body as served (content-coding still applied) beside the decoded body the system
-- reads: its SHA-256 names a row of snapshot_bodies like the decoded body's does, so a body
-- is stored once whichever role it plays. For an identity response wire_sha256 = sha256
-- (one stored body); NULL marks a row fetched before the bytes as served were kept.
ALTER TABLE snapshots ADD COLUMN wire_sha256 BLOB;
ALTER TABLE snapshots ADD COLUMN wire_len BIGINT;
