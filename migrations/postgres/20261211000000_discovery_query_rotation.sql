-- Discovery rotates a work's phrases (issue #28): each run sends the phrases never sent first,
-- then the longest unsent, so it reads the newest asking of every phrase of one work and
-- provider, and counts a work's queries of the day for its budget.
CREATE INDEX discovery_queries_work ON discovery_queries (work_id, provider, asked_at);
