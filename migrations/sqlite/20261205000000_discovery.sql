-- Discovery (issue #28): the queries sent to search providers (a cache of their answers for
-- 72 hours, and the count each day's budget and the error figures read), the URLs providers
-- and scans found per domain, and the candidate sites a person approves or ignores. A
-- candidate's pages, works and chapters are counted from the matches on its host's pages.
CREATE TABLE discovery_queries (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    provider  TEXT NOT NULL,           -- the configured provider's name
    query     TEXT NOT NULL,           -- the phrase sent (in double quotes on the wire)
    work_id   BIGINT REFERENCES works (id) ON DELETE SET NULL,
    outcome   TEXT NOT NULL,           -- ok, quota, error
    message   TEXT,                    -- what the provider said when not ok
    hits      TEXT NOT NULL DEFAULT '[]', -- JSON array of the URLs returned
    asked_at  TEXT NOT NULL
);
CREATE INDEX discovery_queries_cache ON discovery_queries (provider, query, asked_at);
CREATE INDEX discovery_queries_day ON discovery_queries (asked_at);

CREATE TABLE discovery_candidates (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    domain        TEXT NOT NULL UNIQUE, -- host[:port], lower-case, as sites.host
    status        TEXT NOT NULL,        -- new, approved, ignored
    found_by      TEXT NOT NULL,        -- how it was first found: search:NAME, commoncrawl, import
    site_id       BIGINT REFERENCES sites (id) ON DELETE SET NULL,
    first_seen_at TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE TABLE discovery_urls (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    domain    TEXT NOT NULL,
    url       TEXT NOT NULL,
    found_by  TEXT NOT NULL,
    work_id   BIGINT REFERENCES works (id) ON DELETE SET NULL,
    found_at  TEXT NOT NULL,
    UNIQUE (domain, url)
);
