-- no-transaction
-- The attention count's second half: open events due today or overdue that
-- have neither an unanswered reminder nor a Remember. Its own index, with
-- both columns it asks to be empty in its key, so that the count, which
-- stops one row past 1,000, walks only such events; through
-- events_by_user_state_due it walked every overdue event of the person, the
-- reminded ones too, to find none. Only today's and overdue events are in it.
-- Built concurrently, outside a transaction, so that the cores still serving
-- the table keep writing to it while the index is built.
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_due_unanswered ON events (user_id, state, attention_since, quiet_until)
    WHERE state IN ('today', 'overdue');
