-- Postgres's migration of the same number makes the notices of an issued
-- or revoked agent token name its person, so that other cores forget only
-- that person's agent tokens; one core owns a SQLite file, so there is none.
SELECT 1;
