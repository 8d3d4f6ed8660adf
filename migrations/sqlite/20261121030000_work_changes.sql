-- The change log of registered works, written in the same transaction as the work itself:
-- a running matcher index reads the rows after the last sequence number it applied and
-- brings itself up to date without reloading everything. No foreign key: a removed work's
-- row outlives it.
CREATE TABLE work_changes (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    work_id  BIGINT NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('added', 'removed')),
    at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
