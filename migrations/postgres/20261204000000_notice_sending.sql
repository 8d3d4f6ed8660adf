-- Notices sent by copyhound over SMTP (issue #29). The SQLite twin has the same name
-- in migrations/sqlite/.
--
-- A send writes message_id and sending_since before it talks to the SMTP server and clears
-- sending_since once the server answered: accepted (the notice is marked sent, with the SHA-256
-- of the exact bytes sent and the server's reply) or refused (send_error says why). A row
-- still holding sending_since was cut off mid-send (a crash): nobody knows whether the server
-- took it, so no retry sends it again until a person says so.
ALTER TABLE notices ADD COLUMN message_id TEXT;
ALTER TABLE notices ADD COLUMN sending_since TIMESTAMPTZ;
ALTER TABLE notices ADD COLUMN send_error TEXT;
-- SHA-256 (lower-case hex) of the message as handed to the SMTP server, headers included.
ALTER TABLE notices ADD COLUMN sent_sha256 TEXT;
-- The server's reply to the message (250 ... queued as ...).
ALTER TABLE notices ADD COLUMN smtp_reply TEXT;
