-- Where a page's text came from (issue #15): its markup, string literals an inline script
-- writes into it ('script'), or a same-site JSON or text endpoint its script fetches
-- ('endpoint'); for an endpoint, the snapshot of the endpoint's response, kept as evidence
-- beside the page's.
ALTER TABLE page_texts ADD COLUMN text_source TEXT NOT NULL DEFAULT 'markup';
ALTER TABLE page_texts ADD COLUMN text_snapshot_id BIGINT REFERENCES snapshots (id) ON DELETE SET NULL;
