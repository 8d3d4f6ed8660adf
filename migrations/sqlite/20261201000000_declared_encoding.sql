-- The charset a page declared (Content-Type or <meta>) when its bytes were decoded in another
-- one, because the declaration was weak (iso-8859-1 over GBK, say) or did not decode cleanly
-- (issue #27); NULL when the page was decoded as declared or declared nothing.
ALTER TABLE page_texts ADD COLUMN declared_encoding TEXT;
