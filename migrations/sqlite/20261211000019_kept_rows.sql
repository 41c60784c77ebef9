-- Postgres's migration of the same number narrows the triggers that tell
-- other cores of a change; one core owns a SQLite file, so there is none.
SELECT 1;
