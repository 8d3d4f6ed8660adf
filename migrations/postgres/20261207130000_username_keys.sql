-- The look-alike forms of each user name (issue #43): its TR39 confusable skeleton with
-- `.`, `_`, `-` and `@` left out, of the name lower-cased first and of the name as written
-- (lower-cased after). Unique, so two creations of `alice.` and `alice_` cannot both pass
-- the check. The values are computed by copyhound (Unicode's confusables table is not in
-- SQL): rows made before this migration get theirs when the store next migrates, the
-- oldest first; a newer row whose form an older one holds keeps NULL (NULLs never collide)
-- and is logged, so this migration never fails on a database that has both.
ALTER TABLE users ADD COLUMN name_key TEXT;
ALTER TABLE users ADD COLUMN name_key_cased TEXT;
CREATE UNIQUE INDEX users_name_key ON users (name_key);
CREATE UNIQUE INDEX users_name_key_cased ON users (name_key_cased);
