-- A work being imported is written in batches (issue #10: one transaction for a whole
-- novel held SQLite's write lock for ~22 s and failed crawls and other imports). Until its
-- last batch commits, importing_since holds the Unix time in milliseconds of its latest
-- batch, and no read sees the work, its chapters or its fingerprints; NULL means complete.
-- An import that stopped (a killed process) leaves a row whose importing_since grows old:
-- the next import removes it, chapters and all.
ALTER TABLE works ADD COLUMN importing_since BIGINT;
