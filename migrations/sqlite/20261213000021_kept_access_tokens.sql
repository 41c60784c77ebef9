-- Postgres's migration of the same number tells other cores when an OAuth
-- access token they keep ends; one core owns a SQLite file, so there is none.
SELECT 1;
