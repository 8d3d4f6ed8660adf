-- Discovery on a schedule (issue #28): when each work was last queued for a search and last
-- searched, so the schedule takes works never searched first, then the longest unsearched,
-- within the day's budget; and when a candidate's domain was last probed (an imported
-- domain has no page until it is).
CREATE TABLE discovery_works (
    work_id     BIGINT PRIMARY KEY REFERENCES works (id) ON DELETE CASCADE,
    queued_at   TIMESTAMPTZ,
    searched_at TIMESTAMPTZ
);

ALTER TABLE discovery_candidates ADD COLUMN probed_at TIMESTAMPTZ;
