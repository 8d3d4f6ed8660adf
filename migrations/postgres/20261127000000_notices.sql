-- Takedown notices and re-checks (issue #12). A notice is a document rendered from a case
-- and kept as rendered (text and HTML): what was sent is what the store shows later. Once a
-- notice is marked sent, the case's copies are fetched again on a schedule until each one is
-- gone; `case_rechecks` holds the schedule of a case, `recheck_copies` what the last fetch of
-- each copy (a page of the case) showed.
ALTER TABLE notices ADD COLUMN body_html TEXT NOT NULL DEFAULT '';
ALTER TABLE notices ADD COLUMN created_by_name TEXT NOT NULL DEFAULT 'cli';

CREATE TABLE case_rechecks (
    case_id          BIGINT PRIMARY KEY REFERENCES cases (id) ON DELETE CASCADE,
    notice_id        BIGINT REFERENCES notices (id) ON DELETE SET NULL,
    -- When the notice went out: the re-check intervals and "days since the notice" count
    -- from here.
    sent_at          TIMESTAMPTZ NOT NULL,
    -- Unix milliseconds of the next re-check; NULL once the case is removed.
    next_at          BIGINT,
    checks           INTEGER NOT NULL DEFAULT 0,
    last_checked_at  TIMESTAMPTZ
);
CREATE INDEX case_rechecks_due ON case_rechecks (next_at) WHERE next_at IS NOT NULL;

CREATE TABLE recheck_copies (
    case_id             BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    page_id             BIGINT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    url                 TEXT NOT NULL,
    -- up: still serves the copy; removed: gone (reason says how); unknown: the last fetch
    -- could not tell (a timeout, a 5xx, a challenge page, one failed DNS lookup).
    state               TEXT NOT NULL CHECK (state IN ('up', 'removed', 'unknown')),
    reason              TEXT NOT NULL,
    -- The snapshot of the last fetch (NULL when nothing answered).
    snapshot_id         BIGINT REFERENCES snapshots (id) ON DELETE SET NULL,
    checked_at          TIMESTAMPTZ NOT NULL,
    -- Consecutive checks whose host did not resolve: a copy counts as gone for DNS only
    -- when it fails on two checks in a row, never on one resolver hiccup.
    dns_failures        INTEGER NOT NULL DEFAULT 0,
    removed_at          TIMESTAMPTZ,
    removed_snapshot_id BIGINT REFERENCES snapshots (id) ON DELETE SET NULL,
    PRIMARY KEY (case_id, page_id)
);
