-- Accounts for the admin UI (issue #13). A user's language: NULL follows the browser's
-- Accept-Language. Sessions and API tokens are looked up by their user when a password
-- changes or a user is disabled (both end every session) and when tokens are listed.
ALTER TABLE users ADD COLUMN locale TEXT;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX api_tokens_user ON api_tokens (user_id);
