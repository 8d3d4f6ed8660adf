-- RFC 3161 trusted timestamps of evidence (issue #12): the token a time-stamping authority
-- returned for a snapshot's SHA-256, kept byte for byte as the TSA sent it so it can be
-- verified again and exported. One token per snapshot and TSA: stamping is idempotent. The
-- SQLite twin has the same name in migrations/sqlite/.

CREATE TABLE snapshot_timestamps (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    snapshot_id     BIGINT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    tsa_url         TEXT NOT NULL,
    -- The DER ContentInfo (CMS SignedData over a TSTInfo).
    token           BYTEA NOT NULL,
    -- The TSTInfo's genTime, read when the token was verified on receipt.
    gen_time        TIMESTAMPTZ NOT NULL,
    -- The message imprint's hash: the snapshot's body digest it covers.
    hash_algorithm  TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (snapshot_id, tsa_url)
);
