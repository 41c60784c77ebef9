-- Postgres's migration of the same number adds the person's gate, which
-- orders a change of a person's zone or quiet hours with the writes that
-- decide from them; SQLite's one writer orders every write, so there is none.
SELECT 1;
