-- When a session was last used (issue #23): a session unused for longer than the idle
-- timeout ([server] session_idle_timeout) ends, whatever its absolute end (expires_at).
-- Sessions open at the upgrade count as used now.
ALTER TABLE sessions ADD COLUMN last_seen_at TEXT;
UPDATE sessions SET last_seen_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
