-- Analytics (issue #12): figures over 10^6 matches read in milliseconds from counters kept
-- by the transaction that records a snapshot's matches (`record_matches`), not counted from
-- `matches` on every read. The Postgres twin has the same name in migrations/postgres/.

-- Matches by the UTC day their snapshot was fetched, per work, licensed ones apart: the
-- detections chart and the licensed totals. A row with no matches left is deleted.
CREATE TABLE detections_daily (
    day       TEXT NOT NULL,   -- YYYY-MM-DD, the first ten characters of matches.fetched_at
    work_id   BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    licensed  BOOLEAN NOT NULL,
    matches   BIGINT NOT NULL,
    PRIMARY KEY (day, work_id, licensed)
);
CREATE INDEX detections_daily_work ON detections_daily (work_id, licensed, matches);

-- Chapters copied anywhere (matches not on a licensed domain), with how many matches: a
-- work's share of chapters copied is its row count here.
CREATE TABLE chapter_copies (
    chapter_id  BIGINT PRIMARY KEY REFERENCES chapters (id) ON DELETE CASCADE,
    work_id     BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    matches     BIGINT NOT NULL
);
CREATE INDEX chapter_copies_work ON chapter_copies (work_id);

INSERT INTO detections_daily (day, work_id, licensed, matches)
SELECT substr(fetched_at, 1, 10), work_id, licensed, COUNT(*) FROM matches
GROUP BY substr(fetched_at, 1, 10), work_id, licensed;

INSERT INTO chapter_copies (chapter_id, work_id, matches)
SELECT chapter_id, MIN(work_id), COUNT(*) FROM matches WHERE NOT licensed GROUP BY chapter_id;

-- Exposure and top sites sum case counters by work and by site (index-only).
CREATE INDEX cases_work_counts ON cases (work_id, pages);
CREATE INDEX cases_site_counts ON cases (site_id, status, last_seen_at, chapters_matched, pages);
-- The funnel: when a case first reached each review status (NULL: never), kept by the
-- status change itself, so counting cases that were ever confirmed reads the case rows, not
-- the audit log. Back-filled from the audit log.
ALTER TABLE cases ADD COLUMN confirmed_at TEXT;
ALTER TABLE cases ADD COLUMN notice_sent_at TEXT;
ALTER TABLE cases ADD COLUMN removed_at TEXT;
ALTER TABLE cases ADD COLUMN dismissed_at TEXT;
UPDATE cases SET confirmed_at = a.at FROM (SELECT target_id, MIN(at) AS at FROM audit_log
    WHERE target_type = 'case' AND action = 'case.confirmed' GROUP BY target_id) a
WHERE a.target_id = cases.id;
UPDATE cases SET notice_sent_at = a.at FROM (SELECT target_id, MIN(at) AS at FROM audit_log
    WHERE target_type = 'case' AND action = 'case.notice_sent' GROUP BY target_id) a
WHERE a.target_id = cases.id;
UPDATE cases SET removed_at = a.at FROM (SELECT target_id, MIN(at) AS at FROM audit_log
    WHERE target_type = 'case' AND action = 'case.removed' GROUP BY target_id) a
WHERE a.target_id = cases.id;
UPDATE cases SET dismissed_at = a.at FROM (SELECT target_id, MIN(at) AS at FROM audit_log
    WHERE target_type = 'case' AND action = 'case.dismissed' GROUP BY target_id) a
WHERE a.target_id = cases.id;
CREATE INDEX cases_funnel ON cases (first_seen_at, status, confirmed_at, notice_sent_at,
    removed_at, dismissed_at);
-- Crawls created in a window, and their failures by kind.
CREATE INDEX crawls_created ON crawls (created_at);
CREATE INDEX frontier_failures ON frontier (crawl_id)
    WHERE (state = 'failed' OR (state = 'done' AND status >= 400));
