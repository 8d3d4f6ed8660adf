-- The change log of registered works, written in the same transaction as the work itself:
-- a running matcher index reads the rows after the last sequence number it applied and
-- brings itself up to date without reloading everything. No foreign key: a removed work's
-- row outlives it. Writers lock the table until they commit (see the store's `changes`
-- module), so sequence numbers become visible in order and a reader never skips one.
CREATE TABLE work_changes (
    seq      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    work_id  BIGINT NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('added', 'removed')),
    at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
