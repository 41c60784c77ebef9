-- Postgres's migration of the same number makes the notices of an ended
-- OAuth grant name it, so that other cores forget only its access tokens;
-- one core owns a SQLite file, so there is none.
SELECT 1;
