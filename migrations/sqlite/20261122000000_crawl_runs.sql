-- Runs of a crawl, so a crawl knows at once which of its frontier claims belong to a runner
-- that died (issue #10: a resumed crawl waited out the whole frontier lease). A runner
-- registers a row, renews heartbeat_at while it runs and sets ended_at when it stops; a
-- run whose heartbeat is older than its own dead_after_ms is dead, and its claims go back
-- to the queue on the next claim of any runner, whatever their lease says. Times are Unix
-- milliseconds, as in `frontier`.
CREATE TABLE crawl_runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    crawl_id       BIGINT NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    started_at     BIGINT NOT NULL,
    heartbeat_at   BIGINT NOT NULL,
    dead_after_ms  BIGINT NOT NULL,
    ended_at       BIGINT
);
CREATE INDEX crawl_runs_live ON crawl_runs (crawl_id) WHERE ended_at IS NULL;

-- The run holding a claimed entry (NULL for a claim made without a run).
ALTER TABLE frontier ADD COLUMN run_id BIGINT REFERENCES crawl_runs (id) ON DELETE SET NULL;

-- A crawl's totals are counted from its snapshots (and its frontier), not added up by its
-- runs, so they stay exact after kills and resumes.
CREATE INDEX snapshots_crawl ON snapshots (crawl_id, url);
