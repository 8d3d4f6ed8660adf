-- Suspect sites: a site the rights team watches is crawled from its start URL with its own
-- settings (the columns the initial schema already holds) on its own schedule. Sites that
-- only appeared because a crawl reached them stay unwatched.
ALTER TABLE sites ADD COLUMN start_url TEXT;
ALTER TABLE sites ADD COLUMN watched BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX sites_watched ON sites (watched, id);

-- A schedule's fire times are its cron times plus this delay, so that a thousand sites on
-- "0 3 * * *" do not all start in the same second.
ALTER TABLE job_schedules ADD COLUMN jitter_ms BIGINT NOT NULL DEFAULT 0;
