-- A crawl's frontier and the per-host politeness state in the database, so a crawl resumes
-- after a restart and many worker processes (on many machines) share one crawl and one
-- politeness budget per host. Times are Unix milliseconds (BIGINT), as in `jobs`, so the
-- claim compares integers on both backends.

-- What a crawl was started with, so any worker can run or resume it: the seeds (JSON array
-- of URLs), the crawler's settings (JSON, the crawler's format), the page budget and how
-- much of it is spent (distinct frontier entries claimed).
ALTER TABLE crawls ADD COLUMN seeds TEXT NOT NULL DEFAULT '[]';
ALTER TABLE crawls ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE crawls ADD COLUMN max_pages BIGINT;
ALTER TABLE crawls ADD COLUMN pages_claimed BIGINT NOT NULL DEFAULT 0;

CREATE TABLE frontier (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    crawl_id       BIGINT NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url            TEXT NOT NULL,
    -- SHA-256 of the normalised URL: the de-duplication key (a URL may be longer than an
    -- index entry may be).
    url_hash       BYTEA NOT NULL,
    depth          INTEGER NOT NULL,
    discovery      TEXT NOT NULL,
    -- Claim order within a depth (pagination first, then sitemaps, then the rest).
    claim_rank     SMALLINT NOT NULL,
    parent         TEXT,
    chain_head     TEXT,
    chain_index    INTEGER,
    state          TEXT NOT NULL DEFAULT 'queued'
                   CHECK (state IN ('queued', 'claimed', 'done', 'failed', 'skipped')),
    -- Claims so far; also the fence of the current claim (a claim that expired and was taken
    -- over can no longer complete the entry).
    claims         INTEGER NOT NULL DEFAULT 0,
    -- Failed attempts that count against the retry limit.
    attempts       INTEGER NOT NULL DEFAULT 0,
    not_before     BIGINT NOT NULL DEFAULT 0,
    claimed_until  BIGINT,
    status         INTEGER,
    last_error     TEXT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    UNIQUE (crawl_id, url_hash)
);
-- First claims read this index in order: never-claimed entries by depth, rank, age.
CREATE INDEX frontier_fresh ON frontier (crawl_id, depth, claim_rank, id)
    WHERE state = 'queued' AND claims = 0;
-- Retries (and entries whose lease expired) by due time.
CREATE INDEX frontier_retry ON frontier (crawl_id, not_before, id)
    WHERE state = 'queued' AND claims > 0;
-- Expired leases and the in-flight count.
CREATE INDEX frontier_claimed ON frontier (crawl_id, claimed_until) WHERE state = 'claimed';
CREATE INDEX frontier_state ON frontier (crawl_id, state);

-- One row per host, shared by every crawl and worker; changed under a row lock.
CREATE TABLE host_states (
    host                  TEXT PRIMARY KEY,
    next_allowed_at       BIGINT,
    backoff_until         BIGINT,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    -- Fetch slots in use: JSON array of {"id": u64, "expires_at": ms}.
    leases                TEXT NOT NULL DEFAULT '[]',
    in_flight             INTEGER NOT NULL DEFAULT 0,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX host_states_updated ON host_states (updated_at);
