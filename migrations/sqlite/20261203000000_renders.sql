-- Rendered fetches (issue #25): what a headless browser showed for a snapshot's page (the
-- DOM as rendered, its displayed text) and full-page screenshots, deduplicated by SHA-256.
-- The PNG bytes live here for now; issue #30 moves bodies and screenshots to object storage.
CREATE TABLE screenshots (
    sha256      BLOB PRIMARY KEY,
    png         BLOB NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    bytes       BIGINT NOT NULL,
    -- The RFC 3161 token over the PNG's SHA-256 from the configured TSA, when stamped (the
    -- first TSA's is kept).
    tsa_url     TEXT,
    tsa_token   BLOB,
    tsa_gen_time TEXT,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE renders (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    snapshot_id        BIGINT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    final_url          TEXT NOT NULL,
    html_zstd          BLOB NOT NULL,
    html_len           BIGINT NOT NULL,
    text               TEXT NOT NULL,
    screenshot_sha256  BLOB REFERENCES screenshots (sha256),
    rendered_at        TEXT NOT NULL,
    timed_out          BOOLEAN NOT NULL DEFAULT FALSE,
    requests           INTEGER NOT NULL,
    refused            INTEGER NOT NULL
);
CREATE INDEX renders_snapshot ON renders (snapshot_id, id);

-- A watched site whose every page is rendered (`sites add/set --render`).
ALTER TABLE sites ADD COLUMN render BOOLEAN NOT NULL DEFAULT FALSE;
