-- Per-user alerts and webhooks kept in the database (issue #29). The SQLite twin has the
-- same name in migrations/sqlite/.

-- Where a user's alerts are mailed; none: no alert reaches them.
ALTER TABLE users ADD COLUMN email TEXT;

-- What each user wants to hear of, and how. No row: off.
CREATE TABLE alert_preferences (
    user_id   BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event     TEXT NOT NULL,
    delivery  TEXT NOT NULL CHECK (delivery IN ('immediate', 'digest')),
    PRIMARY KEY (user_id, event)
);

-- Each event alerts were mailed for, once: `key` is a hash of the event, its time and its
-- data, so a Job::Event run again finds its row instead of adding another.
CREATE TABLE alert_events (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key          TEXT NOT NULL UNIQUE,
    event        TEXT NOT NULL,
    occurred_at  TIMESTAMPTZ NOT NULL,
    data         TEXT NOT NULL
);

-- One mail to one user: an immediate alert (event_id set) or a digest (event_id NULL, its
-- items pointing here). Written before the SMTP server is asked (started_at) and marked
-- sent_at after it accepted; a refused send deletes the row (its digest items are pending
-- again), so a retry sends it, while a row with no outcome (a crash mid-send) stops any
-- retry from mailing it a second time.
CREATE TABLE alert_mails (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event_id    BIGINT REFERENCES alert_events(id) ON DELETE CASCADE,
    started_at  TIMESTAMPTZ NOT NULL,
    sent_at     TIMESTAMPTZ
);
CREATE UNIQUE INDEX alert_mails_user_event ON alert_mails (user_id, event_id)
    WHERE event_id IS NOT NULL;

-- Events waiting for a user's daily digest (mail_id NULL), or mailed in one.
CREATE TABLE alert_digest_items (
    user_id   BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event_id  BIGINT NOT NULL REFERENCES alert_events(id) ON DELETE CASCADE,
    mail_id   BIGINT REFERENCES alert_mails(id),
    PRIMARY KEY (user_id, event_id)
);
CREATE INDEX alert_digest_items_pending ON alert_digest_items (user_id) WHERE mail_id IS NULL;

-- Webhooks added by admins in the UI, beside the configured [[notify.webhooks]]. The secret
-- is kept as given: it is the HMAC key of every delivery. events: a JSON array of event
-- names, empty for every event.
CREATE TABLE webhooks (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url         TEXT NOT NULL UNIQUE,
    secret      TEXT NOT NULL,
    events      TEXT NOT NULL DEFAULT '[]',
    enabled     BOOLEAN NOT NULL DEFAULT TRUE,
    created_at  TIMESTAMPTZ NOT NULL,
    created_by  TEXT NOT NULL
);
