-- Both kinds of a chapter's winnowing postings packed in one value (store::packed, version
-- byte first): what the matcher's start-up load reads, one row per chapter instead of
-- ~350 rows of winnow_postings to sort and aggregate. winnow_postings keeps every row, for
-- the reads that look postings up by hash. NULL for chapters written before this
-- migration: the load falls back to aggregating their rows.
ALTER TABLE fingerprints ADD COLUMN postings BLOB;
