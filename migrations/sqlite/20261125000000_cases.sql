-- no-transaction
-- Cases of issue #11: a case (one site copying one work) goes new → confirmed → notice_sent
-- → removed, or is dismissed; matches on licensed domains never join one; reports export one
-- row per (page, chapter). The Postgres twin has the same name in migrations/postgres/.
--
-- The status CHECK constraint changes, which SQLite can only do by rebuilding the table
-- (https://sqlite.org/lang_altertable.html#otheralter). `matches` is rebuilt too, to get
-- its new NOT NULL columns. Dropping a parent table while foreign keys are enforced runs
-- its ON DELETE actions (matches.case_id would become NULL, notices would be deleted), so
-- this file runs outside sqlx's transaction ("-- no-transaction" above), turns enforcement
-- off (a no-op inside a transaction), and opens its own. `Store::migrate` rolls back and
-- turns enforcement on again if a statement here fails.
--
-- Order matters: create cases_new, copy, drop cases, rename cases_new to cases. References
-- in other tables name `cases` and resolve to the new table once it carries that name
-- (renaming the old table away instead would rewrite them to follow it).
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

-- cases ----------------------------------------------------------------------------------

CREATE TABLE cases_new (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id             BIGINT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    work_id             BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    status              TEXT NOT NULL DEFAULT 'new'
                        CHECK (status IN ('new', 'confirmed', 'notice_sent', 'removed', 'dismissed')),
    -- When status last changed (opened, reviewed, reopened): a removed case reopens only
    -- for a copy fetched after it.
    status_changed_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')),
    -- JSON array of the chapter ids matched when the case was dismissed: it reopens only
    -- when another chapter is copied.
    dismissed_chapters  TEXT NOT NULL DEFAULT '[]',
    -- Distinct pages and chapters of the case's matches, kept current by every match write
    -- so listing cases needs no aggregation.
    pages               INTEGER NOT NULL DEFAULT 0,
    chapters_matched    INTEGER NOT NULL DEFAULT 0,
    reviewer_id         BIGINT REFERENCES users (id) ON DELETE SET NULL,
    review_note         TEXT,
    reviewed_at         TEXT,
    first_seen_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')),
    last_seen_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')),
    created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')),
    updated_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')),
    UNIQUE (site_id, work_id)
);

-- Times the listing orders and compares are rewritten in the form sqlx writes for a
-- DateTime<Utc> ("...+00:00"), so text order stays time order.
INSERT INTO cases_new (id, site_id, work_id, status, status_changed_at, reviewer_id,
                       review_note, reviewed_at, first_seen_at, last_seen_at, created_at,
                       updated_at)
SELECT id, site_id, work_id,
       CASE status WHEN 'open' THEN 'new' WHEN 'resolved' THEN 'removed' ELSE status END,
       strftime('%Y-%m-%dT%H:%M:%f+00:00', COALESCE(reviewed_at, updated_at)),
       reviewer_id, review_note, reviewed_at,
       strftime('%Y-%m-%dT%H:%M:%f+00:00', first_seen_at),
       strftime('%Y-%m-%dT%H:%M:%f+00:00', last_seen_at),
       created_at, updated_at
FROM cases;

-- Ids are never reused: the new table continues the old one's sequence.
DELETE FROM sqlite_sequence WHERE name = 'cases_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'cases_new', seq FROM sqlite_sequence WHERE name = 'cases';

DROP TABLE cases;
ALTER TABLE cases_new RENAME TO cases;

-- The listing's keyset order (newest last_seen_at first, then id), unfiltered and per filter.
CREATE INDEX cases_recent ON cases (last_seen_at, id);
CREATE INDEX cases_status_recent ON cases (status, last_seen_at, id);
CREATE INDEX cases_work_recent ON cases (work_id, last_seen_at, id);
CREATE INDEX cases_site_recent ON cases (site_id, last_seen_at, id);

-- matches --------------------------------------------------------------------------------

CREATE TABLE matches_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    snapshot_id    BIGINT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    chapter_id     BIGINT NOT NULL REFERENCES chapters (id) ON DELETE CASCADE,
    work_id        BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    case_id        BIGINT REFERENCES cases (id) ON DELETE SET NULL,
    -- The snapshot's page and fetch time, copied so reports and "latest" need no join.
    page_id        BIGINT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    fetched_at     TEXT NOT NULL,
    -- The page's host is a licensed domain for this work (or all works): never a case.
    licensed       BOOLEAN NOT NULL DEFAULT FALSE,
    -- This is the newest snapshot of its page that matches its chapter (by fetched_at,
    -- then snapshot id): the row a report shows for that (page, chapter).
    latest         BOOLEAN NOT NULL DEFAULT FALSE,
    method         TEXT NOT NULL,
    score          REAL NOT NULL,
    -- share of the chapter found in the page, 0..1
    coverage       REAL NOT NULL,
    matched_chars  INTEGER NOT NULL,
    -- characters of the chapter and of the page's main text; matched_chars / page_chars
    page_share     REAL NOT NULL DEFAULT 0,
    chapter_chars  INTEGER NOT NULL DEFAULT 0,
    page_chars     INTEGER NOT NULL DEFAULT 0,
    passages       TEXT NOT NULL DEFAULT '[]', -- JSON: aligned spans in both texts
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (snapshot_id, chapter_id)
);

INSERT INTO matches_new (id, snapshot_id, chapter_id, work_id, case_id, page_id, fetched_at,
                         method, score, coverage, matched_chars, chapter_chars, passages,
                         created_at)
SELECT m.id, m.snapshot_id, m.chapter_id, m.work_id, m.case_id, s.page_id, s.fetched_at,
       m.method, m.score, m.coverage, m.matched_chars, c.chars, m.passages, m.created_at
FROM matches m
JOIN snapshots s ON s.id = m.snapshot_id
JOIN chapters c ON c.id = m.chapter_id;

DELETE FROM sqlite_sequence WHERE name = 'matches_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'matches_new', seq FROM sqlite_sequence WHERE name = 'matches';

DROP TABLE matches;
ALTER TABLE matches_new RENAME TO matches;

UPDATE matches SET latest = NOT EXISTS (
    SELECT 1 FROM matches n
    WHERE n.page_id = matches.page_id AND n.chapter_id = matches.chapter_id
      AND (n.fetched_at > matches.fetched_at
           OR (n.fetched_at = matches.fetched_at AND n.snapshot_id > matches.snapshot_id)));

-- A case's matches, and its counters (index-only).
CREATE INDEX matches_case ON matches (case_id, page_id, chapter_id);
-- Deleting a work (cascades) and licensed counts.
CREATE INDEX matches_work ON matches (work_id);
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

-- Abort (and roll back) rather than commit a reference that points nowhere.
CREATE TEMP TABLE cases_migration_check (x INTEGER);
CREATE TEMP TRIGGER cases_migration_check_fails BEFORE INSERT ON cases_migration_check
BEGIN
    SELECT RAISE(ABORT, 'cases migration: a foreign key points nowhere (see PRAGMA foreign_key_check)');
END;
INSERT INTO cases_migration_check SELECT 1 FROM pragma_foreign_key_check LIMIT 1;
DROP TABLE cases_migration_check;

COMMIT;
PRAGMA foreign_keys = ON;
