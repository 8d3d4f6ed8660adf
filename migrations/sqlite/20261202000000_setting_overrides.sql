-- Settings an admin changes in the UI (issue #26): a row overrides the settings file's value
-- of its key until it is deleted, which goes back to the file's. Keys are the file's dotted
-- names (notices.rights_holder.name, notices.template, notices.abuse_contacts,
-- server.time_zone); values are text, the abuse contacts a JSON object of host → address.
-- Each change is audited (settings.change) in the transaction that writes it.
CREATE TABLE setting_overrides (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);
