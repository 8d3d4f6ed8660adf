-- Screenshots on the object store (issue #30: "screenshots are stored the same way as
-- bodies"). A screenshot is written to the database first, as before, and the segment
-- writer moves it into the same WARC segments as the bodies (a `resource` record,
-- `Content-Type: image/png`): its row keeps its place, with `png` emptied and the segment,
-- offset and length of its record set, in the transaction that seals the segment. A row
-- so never points at an object that is not whole. gc removes a screenshot with the bodies
-- of the snapshots whose renders name it, once none of them keeps its bodies.
ALTER TABLE screenshots ADD COLUMN segment_id BIGINT REFERENCES body_segments (id);
ALTER TABLE screenshots ADD COLUMN segment_offset BIGINT;
ALTER TABLE screenshots ADD COLUMN segment_length BIGINT;
-- The screenshots still in the database, which the next segment takes.
CREATE INDEX screenshots_in_db ON screenshots (sha256) WHERE segment_id IS NULL;
CREATE INDEX screenshots_segment ON screenshots (segment_id) WHERE segment_id IS NOT NULL;
-- gc looks up the renders that name a screenshot.
CREATE INDEX renders_screenshot ON renders (screenshot_sha256)
    WHERE screenshot_sha256 IS NOT NULL;
