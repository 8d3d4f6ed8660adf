-- A crawl's failures by kind, as a JSON object ({"timeout": 2, "http_404": 1}), written when
-- the crawl ends beside its other totals, so crawl health over a year of crawls reads one row
-- a crawl instead of every failed frontier entry. NULL while the crawl runs.
ALTER TABLE crawls ADD COLUMN errors_by_kind TEXT;
UPDATE crawls SET errors_by_kind = COALESCE((
    SELECT CAST(json_object_agg(kind, n) AS TEXT) FROM (
        SELECT CASE WHEN state = 'failed' THEN COALESCE(last_error, 'unknown')
                    ELSE 'http_' || CAST(status AS TEXT) END AS kind, COUNT(*) AS n
        FROM frontier WHERE frontier.crawl_id = crawls.id
          AND (state = 'failed' OR (state = 'done' AND status >= 400))
        GROUP BY 1) e), '{}')
WHERE finished_at IS NOT NULL;
