-- The dashboard (issue #26). The SQLite twin has the same name in migrations/sqlite/.

-- New copies per day: a copy is a (page, chapter) pair, counted once on the UTC day of the
-- first snapshot of the page that matched the chapter, so a re-crawl of the same pages adds
-- none (detections_daily counts every snapshot's matches, so it grows with each re-fetch).
-- Kept by `record_matches` like detections_daily; a row with no copies left is deleted.
CREATE TABLE copies_daily (
    day       DATE NOT NULL,
    work_id   BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    licensed  BOOLEAN NOT NULL, -- the pair's first match was on a licensed domain
    copies    BIGINT NOT NULL,
    PRIMARY KEY (day, work_id, licensed)
);

-- Each pair's first match (by fetched_at, then snapshot id, as `latest` orders them), over
-- the matches_seen index.
INSERT INTO copies_daily (day, work_id, licensed, copies)
SELECT (m.fetched_at AT TIME ZONE 'UTC')::date, m.work_id, m.licensed, COUNT(*) FROM matches m
WHERE NOT EXISTS (
    SELECT 1 FROM matches o
    WHERE o.page_id = m.page_id AND o.chapter_id = m.chapter_id
      AND (o.fetched_at < m.fetched_at
           OR (o.fetched_at = m.fetched_at AND o.snapshot_id < m.snapshot_id)))
GROUP BY 1, 2, 3;

-- Worker processes say they are alive: each worker loop renews its row while it runs and
-- deletes it when it stops, so the dashboard can tell that nothing serves the queues (a row
-- not renewed for a minute is a worker that died). Times are Unix milliseconds, as in jobs.
CREATE TABLE workers (
    name        TEXT PRIMARY KEY,  -- jobs.locked_by of its claims
    queue       TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    seen_at     BIGINT NOT NULL
);
CREATE INDEX workers_seen ON workers (seen_at);
