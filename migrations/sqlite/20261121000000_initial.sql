-- The whole copyhound schema, SQLite flavour. The Postgres twin of this file has the same
-- name in migrations/postgres/; keep the two in step (same tables, columns and meanings).
--
-- Conventions:
--   * ids are INTEGER PRIMARY KEY AUTOINCREMENT (never reused, like Postgres identities);
--   * timestamps are TEXT in RFC 3339 UTC (what sqlx writes for chrono::DateTime<Utc>);
--   * the job queue keeps its times as BIGINT milliseconds since the Unix epoch, so that the
--     claim statement compares integers identically on both backends;
--   * 64-bit hashes (SimHash, winnowing) are unsigned in Rust and stored bit-cast to BIGINT.

-- Registered works and their chapters -------------------------------------------------------

CREATE TABLE works (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    title            TEXT NOT NULL,
    author           TEXT,
    -- SHA-256 of the work's text with all whitespace removed: re-importing the same text
    -- (another encoding, other line breaks) finds the existing work.
    content_hash     BLOB NOT NULL UNIQUE,
    source_name      TEXT,
    source_format    TEXT NOT NULL,
    source_encoding  TEXT,
    -- Text before the first chapter (title page, preface, table of contents), kept apart.
    front_matter     TEXT NOT NULL DEFAULT '',
    chapter_count    INTEGER NOT NULL DEFAULT 0,
    chars            BIGINT NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX works_title ON works (title);

CREATE TABLE chapters (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    work_id   BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    -- 1-based position in the work.
    ordinal   INTEGER NOT NULL,
    title     TEXT NOT NULL,
    body      TEXT NOT NULL,
    chars     INTEGER NOT NULL,
    UNIQUE (work_id, ordinal)
);

-- One fingerprint per chapter and normaliser version; the summary is
-- fingerprint::FingerprintSummary::to_bytes.
CREATE TABLE fingerprints (
    chapter_id          BIGINT NOT NULL PRIMARY KEY REFERENCES chapters (id) ON DELETE CASCADE,
    normalizer_version  INTEGER NOT NULL,
    chars               INTEGER NOT NULL,
    simhash             BIGINT NOT NULL,
    summary             BLOB NOT NULL,
    created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX fingerprints_version ON fingerprints (normalizer_version);

-- Winnowing postings: kind 0 = normalised text, 1 = pinyin stream; pos is a char offset
-- into the normalised text (or the pinyin stream) of the chapter.
CREATE TABLE winnow_postings (
    chapter_id  BIGINT NOT NULL REFERENCES chapters (id) ON DELETE CASCADE,
    kind        SMALLINT NOT NULL CHECK (kind IN (0, 1)),
    hash        BIGINT NOT NULL,
    pos         INTEGER NOT NULL
);
CREATE INDEX winnow_postings_hash ON winnow_postings (hash);
-- Cascading deletes and per-chapter reads would scan the whole table without this.
CREATE INDEX winnow_postings_chapter ON winnow_postings (chapter_id);

-- Domains licensed to publish a work (or every work when work_id is NULL): never a case.
CREATE TABLE licensed_domains (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    domain      TEXT NOT NULL,
    work_id     BIGINT REFERENCES works (id) ON DELETE CASCADE,
    note        TEXT,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE UNIQUE INDEX licensed_domains_domain_work ON licensed_domains (domain, COALESCE(work_id, 0));

-- Sites, crawls, pages and evidence ----------------------------------------------------------

CREATE TABLE sites (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT NOT NULL,
    base_url         TEXT NOT NULL UNIQUE,
    host             TEXT NOT NULL,
    enabled          BOOLEAN NOT NULL DEFAULT TRUE,
    -- crawl settings
    max_pages        INTEGER NOT NULL DEFAULT 1000,
    max_depth        INTEGER NOT NULL DEFAULT 5,
    delay_ms         INTEGER NOT NULL DEFAULT 1000,
    concurrency      INTEGER NOT NULL DEFAULT 1,
    respect_robots   BOOLEAN NOT NULL DEFAULT TRUE,
    user_agent       TEXT,
    include_patterns TEXT NOT NULL DEFAULT '[]', -- JSON array of regexes
    exclude_patterns TEXT NOT NULL DEFAULT '[]', -- JSON array of regexes
    -- schedule (cron expression, UTC) and the next time it fires
    schedule_cron    TEXT,
    next_crawl_at    TEXT,
    created_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX sites_host ON sites (host);

CREATE TABLE crawls (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id        BIGINT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    trigger        TEXT NOT NULL DEFAULT 'manual' CHECK (trigger IN ('manual', 'schedule', 'recheck')),
    status         TEXT NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    pages_fetched  INTEGER NOT NULL DEFAULT 0,
    pages_failed   INTEGER NOT NULL DEFAULT 0,
    bytes          BIGINT NOT NULL DEFAULT 0,
    error          TEXT,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    started_at     TEXT,
    finished_at    TEXT
);
CREATE INDEX crawls_site ON crawls (site_id, created_at);

CREATE TABLE pages (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id          BIGINT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    first_seen_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_fetched_at  TEXT,
    last_status      INTEGER,
    UNIQUE (site_id, url)
);

-- Evidence, kept verbatim: the raw response body zstd-compressed, its SHA-256 (of the
-- uncompressed bytes), the URL asked for and the final URL after redirects.
CREATE TABLE snapshots (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id        BIGINT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    crawl_id       BIGINT REFERENCES crawls (id) ON DELETE SET NULL,
    url            TEXT NOT NULL,
    final_url      TEXT NOT NULL,
    status         INTEGER NOT NULL,
    headers        TEXT NOT NULL DEFAULT '[]', -- JSON array of [name, value] pairs, in order
    content_type   TEXT,
    body_zstd      BLOB NOT NULL,
    body_len       BIGINT NOT NULL,
    sha256         BLOB NOT NULL,
    fetched_at     TEXT NOT NULL,
    text_chars     INTEGER,
    error          TEXT
);
CREATE INDEX snapshots_page ON snapshots (page_id, fetched_at);
CREATE INDEX snapshots_sha256 ON snapshots (sha256);

-- Users (before cases and notices, which name a reviewer) ----------------------------------

CREATE TABLE users (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    username       TEXT NOT NULL UNIQUE,
    display_name   TEXT,
    password_hash  TEXT NOT NULL,
    role           TEXT NOT NULL DEFAULT 'reviewer' CHECK (role IN ('admin', 'reviewer', 'viewer')),
    disabled       BOOLEAN NOT NULL DEFAULT FALSE,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_login_at  TEXT
);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    user_id     BIGINT REFERENCES users (id) ON DELETE CASCADE,
    data        BLOB NOT NULL,
    expires_at  TEXT NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE api_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    -- Only a hash of the token is kept; prefix is its first characters, shown in the UI.
    token_hash    BLOB NOT NULL UNIQUE,
    prefix        TEXT NOT NULL,
    scopes        TEXT NOT NULL DEFAULT '[]',
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_used_at  TEXT,
    expires_at    TEXT,
    revoked_at    TEXT
);

-- Matches, cases, notices ---------------------------------------------------------------------

-- A case is one site copying one work; a reviewer confirms or dismisses it.
CREATE TABLE cases (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id        BIGINT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    work_id        BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    status         TEXT NOT NULL DEFAULT 'open'
                   CHECK (status IN ('open', 'confirmed', 'dismissed', 'notice_sent', 'resolved')),
    reviewer_id    BIGINT REFERENCES users (id) ON DELETE SET NULL,
    review_note    TEXT,
    reviewed_at    TEXT,
    first_seen_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_seen_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (site_id, work_id)
);
CREATE INDEX cases_status ON cases (status);

CREATE TABLE matches (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    snapshot_id    BIGINT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    chapter_id     BIGINT NOT NULL REFERENCES chapters (id) ON DELETE CASCADE,
    work_id        BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    case_id        BIGINT REFERENCES cases (id) ON DELETE SET NULL,
    method         TEXT NOT NULL,
    score          REAL NOT NULL,
    -- share of the chapter found in the page, 0..1
    coverage       REAL NOT NULL,
    matched_chars  INTEGER NOT NULL,
    passages       TEXT NOT NULL DEFAULT '[]', -- JSON: aligned spans in both texts
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (snapshot_id, chapter_id)
);
CREATE INDEX matches_case ON matches (case_id);
CREATE INDEX matches_work ON matches (work_id);

CREATE TABLE notices (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    case_id         BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    template        TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    subject         TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'sent', 'failed')),
    created_by      BIGINT REFERENCES users (id) ON DELETE SET NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    sent_at         TEXT,
    -- the re-check crawl that looked whether the copy is gone
    recheck_at      TEXT,
    recheck_result  TEXT CHECK (recheck_result IN ('gone', 'still_present', 'error'))
);
CREATE INDEX notices_case ON notices (case_id);

CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    at             TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    actor_user_id  BIGINT REFERENCES users (id) ON DELETE SET NULL,
    actor          TEXT NOT NULL,   -- username, 'cli', 'worker', 'api-token:<prefix>'
    action         TEXT NOT NULL,   -- e.g. 'work.import', 'case.confirm'
    target_type    TEXT,
    target_id      BIGINT,
    details        TEXT NOT NULL DEFAULT '{}' -- JSON
);
CREATE INDEX audit_log_at ON audit_log (at);

-- The job queue ----------------------------------------------------------------------------

CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    queue         TEXT NOT NULL,
    kind          TEXT NOT NULL,
    payload       TEXT NOT NULL, -- JSON of the job enum
    status        TEXT NOT NULL DEFAULT 'queued'
                  CHECK (status IN ('queued', 'running', 'done', 'dead')),
    priority      INTEGER NOT NULL DEFAULT 0,
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    run_at        BIGINT NOT NULL,
    locked_by     TEXT,
    locked_until  BIGINT,
    last_error    TEXT,
    dedupe_key    TEXT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    finished_at   BIGINT
);
-- The claim statement reads this index in order: queued jobs of a queue by priority, then age.
CREATE INDEX jobs_claim ON jobs (queue, priority DESC, run_at, id) WHERE status = 'queued';
CREATE INDEX jobs_running ON jobs (locked_until) WHERE status = 'running';
CREATE INDEX jobs_status ON jobs (status, updated_at);
-- At most one live (queued or running) job per de-duplication key.
CREATE UNIQUE INDEX jobs_dedupe ON jobs (dedupe_key)
    WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running');

-- Recurring jobs: the scheduler moves next_run_at forward with a compare-and-set, so with
-- many worker processes each fire time is enqueued once.
CREATE TABLE job_schedules (
    name          TEXT PRIMARY KEY,
    cron          TEXT NOT NULL,
    queue         TEXT NOT NULL,
    kind          TEXT NOT NULL,
    payload       TEXT NOT NULL,
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    next_run_at   BIGINT NOT NULL,
    last_run_at   BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
