-- Cases of issue #11: a case (one site copying one work) goes new → confirmed → notice_sent
-- → removed, or is dismissed; matches on licensed domains never join one; reports export one
-- row per (page, chapter). The SQLite twin has the same name in migrations/sqlite/ (it
-- rebuilds both tables; here they are altered in place).

-- cases ----------------------------------------------------------------------------------

ALTER TABLE cases DROP CONSTRAINT cases_status_check;
UPDATE cases SET status = CASE status WHEN 'open' THEN 'new' WHEN 'resolved' THEN 'removed'
                                      ELSE status END;
ALTER TABLE cases
    ALTER COLUMN status SET DEFAULT 'new',
    ADD CONSTRAINT cases_status_check
        CHECK (status IN ('new', 'confirmed', 'notice_sent', 'removed', 'dismissed')),
    -- When status last changed (opened, reviewed, reopened): a removed case reopens only
    -- for a copy fetched after it.
    ADD COLUMN status_changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- JSON array of the chapter ids matched when the case was dismissed: it reopens only
    -- when another chapter is copied.
    ADD COLUMN dismissed_chapters TEXT NOT NULL DEFAULT '[]',
    -- Distinct pages and chapters of the case's matches, kept current by every match write
    -- so listing cases needs no aggregation.
    ADD COLUMN pages INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN chapters_matched INTEGER NOT NULL DEFAULT 0;
UPDATE cases SET status_changed_at = COALESCE(reviewed_at, updated_at);

DROP INDEX cases_status;
-- The listing's keyset order (newest last_seen_at first, then id), unfiltered and per filter.
CREATE INDEX cases_recent ON cases (last_seen_at, id);
CREATE INDEX cases_status_recent ON cases (status, last_seen_at, id);
CREATE INDEX cases_work_recent ON cases (work_id, last_seen_at, id);
CREATE INDEX cases_site_recent ON cases (site_id, last_seen_at, id);

-- matches --------------------------------------------------------------------------------

ALTER TABLE matches
    -- The snapshot's page and fetch time, copied so reports and "latest" need no join.
    ADD COLUMN page_id BIGINT REFERENCES pages (id) ON DELETE CASCADE,
    ADD COLUMN fetched_at TIMESTAMPTZ,
    -- The page's host is a licensed domain for this work (or all works): never a case.
    ADD COLUMN licensed BOOLEAN NOT NULL DEFAULT FALSE,
    -- This is the newest snapshot of its page that matches its chapter (by fetched_at,
    -- then snapshot id): the row a report shows for that (page, chapter).
    ADD COLUMN latest BOOLEAN NOT NULL DEFAULT FALSE,
    -- characters of the chapter and of the page's main text; matched_chars / page_chars
    ADD COLUMN page_share DOUBLE PRECISION NOT NULL DEFAULT 0,
    ADD COLUMN chapter_chars INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN page_chars INTEGER NOT NULL DEFAULT 0;

UPDATE matches m SET page_id = s.page_id, fetched_at = s.fetched_at, chapter_chars = c.chars
FROM snapshots s, chapters c
WHERE s.id = m.snapshot_id AND c.id = m.chapter_id;
UPDATE matches SET latest = NOT EXISTS (
    SELECT 1 FROM matches n
    WHERE n.page_id = matches.page_id AND n.chapter_id = matches.chapter_id
      AND (n.fetched_at > matches.fetched_at
           OR (n.fetched_at = matches.fetched_at AND n.snapshot_id > matches.snapshot_id)));
ALTER TABLE matches
    ALTER COLUMN page_id SET NOT NULL,
    ALTER COLUMN fetched_at SET NOT NULL;

DROP INDEX matches_case;
-- A case's matches, and its counters (index-only).
CREATE INDEX matches_case ON matches (case_id, page_id, chapter_id);
-- Deleting a chapter cascades here; without it each chapter deleted scanned all matches.
CREATE INDEX matches_chapter ON matches (chapter_id);
-- A (page, chapter)'s snapshots in time order: its first seen time and its latest row.
CREATE INDEX matches_seen ON matches (page_id, chapter_id, fetched_at);
-- The report's keyset order, one row per (page, chapter), unfiltered and by work.
CREATE INDEX matches_report ON matches (page_id, chapter_id) WHERE latest;
CREATE INDEX matches_report_work ON matches (work_id, page_id, chapter_id) WHERE latest;
CREATE INDEX matches_licensed ON matches (work_id) WHERE licensed;

UPDATE cases SET
    pages = (SELECT COUNT(DISTINCT page_id) FROM matches WHERE case_id = cases.id),
    chapters_matched = (SELECT COUNT(DISTINCT chapter_id) FROM matches WHERE case_id = cases.id);

-- audit log ------------------------------------------------------------------------------

-- A case's (or any target's) history in order.
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);
