-- gc keeps a capture's body while a revisit of it (a 304 re-fetch, issue #42) is evidence:
-- it looks the revisits of each snapshot up by the capture they name.
CREATE INDEX snapshots_revisit_of ON snapshots (revisit_of) WHERE revisit_of IS NOT NULL;
