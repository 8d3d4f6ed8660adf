-- Retention of page bodies (issue #30 point 3, `copyhound gc`). A snapshot whose bodies gc
-- removed keeps its row (URL, status, headers, fetch time: the crawl's record) with the time
-- of the removal here; its body and wire body rows are gone unless another snapshot still
-- needs them (bodies are shared by SHA-256). Nothing reads a body of such a snapshot: the
-- crawl sends no validators from it, an export skips it.
ALTER TABLE snapshots ADD COLUMN body_removed_at TEXT;
-- gc walks the snapshots that still have their bodies, oldest first.
CREATE INDEX snapshots_retained ON snapshots (fetched_at, id) WHERE body_removed_at IS NULL;
-- What keeps a body as evidence, looked up per snapshot: an endpoint's response that gave a
-- page its text, and the fetches of a re-check.
CREATE INDEX page_texts_text_snapshot ON page_texts (text_snapshot_id)
    WHERE text_snapshot_id IS NOT NULL;
CREATE INDEX recheck_copies_snapshot ON recheck_copies (snapshot_id)
    WHERE snapshot_id IS NOT NULL;
CREATE INDEX recheck_copies_removed_snapshot ON recheck_copies (removed_snapshot_id)
    WHERE removed_snapshot_id IS NOT NULL;
