-- Each core keeps who a token, a source and a person are in memory
-- (core/src/engine/kept.rs). One core owns a SQLite file and forgets what
-- it kept whenever it changes one of them, so SQLite needs no triggers
-- here; Postgres's migration of the same number adds them for the cores
-- that share its database.
SELECT 1;
