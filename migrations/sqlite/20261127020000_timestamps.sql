-- RFC 3161 trusted timestamps of evidence (issue #12): the token a time-stamping authority
-- returned for a snapshot's SHA-256, kept byte for byte as the TSA sent it so it can be
-- verified again and exported. One token per snapshot and TSA: stamping is idempotent. The
-- Postgres twin has the same name in migrations/postgres/.

CREATE TABLE snapshot_timestamps (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    snapshot_id     BIGINT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    tsa_url         TEXT NOT NULL,
    -- The DER ContentInfo (CMS SignedData over a TSTInfo).
    token           BLOB NOT NULL,
    -- The TSTInfo's genTime, read when the token was verified on receipt.
    gen_time        TEXT NOT NULL,
    -- The message imprint's hash: the snapshot's body digest it covers.
    hash_algorithm  TEXT NOT NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')),
    UNIQUE (snapshot_id, tsa_url)
);
