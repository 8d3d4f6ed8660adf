-- A re-fetch answered `304 Not Modified` (issue #42) is a revisit: evidence that the copy
-- was still there at that time, of the body an earlier capture holds. Its row keeps what was
-- received (an empty body) and names that capture here, so nothing takes the empty body's
-- SHA-256 for the page's evidence: timestamps cover the confirmed capture's digest, WARC
-- files write a `revisit` record pointing at its response.
ALTER TABLE snapshots ADD COLUMN revisit_of BIGINT REFERENCES snapshots (id) ON DELETE SET NULL;

-- Rows stored before: each 304 confirmed the capture the crawl named in its conditional
-- request, the newest complete 2xx response of the URL with a validator before it.
UPDATE snapshots SET revisit_of = (
    SELECT p.id FROM snapshots p
    WHERE (p.url = snapshots.url OR p.final_url = snapshots.url)
      AND p.id < snapshots.id
      AND p.status BETWEEN 200 AND 299 AND p.body_status = 'complete'
      AND (p.etag IS NOT NULL OR p.last_modified IS NOT NULL)
    ORDER BY p.id DESC LIMIT 1
) WHERE status = 304;
