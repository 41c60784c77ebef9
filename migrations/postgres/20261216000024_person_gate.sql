-- A person's gate: what a write decides from the person's zone and quiet
-- hours (a new event's day and checks, an edit's, a Remember's next
-- check) must never be decided in settings that change before it commits,
-- or the change, which moves only the events it sees, would miss it. So
-- such a write passes the person's gate shared, and a change of the
-- settings passes it alone: an advisory lock of the transaction, keyed by
-- the person (class 4173, beside send_requests' 4171 and 4172). Postgres
-- queues a lock's waiters in turn, so a steady stream of writes never
-- keeps a change waiting behind it, and, unlike a lock on the person's
-- row, the gate is no part of what other writes to the row take.
--
-- A write passes the gates of its people, in the order of their ids, and
-- reads them after: each statement of a function such as this one sees
-- what was committed before it began, so a change that held the gate is
-- read as it was committed. Only the people whose gates were passed are
-- read: one made meanwhile by another transaction is left out, and the
-- write takes it for a newcomer, which passes its gate as it is made.
CREATE FUNCTION hado_people_through_gate(logins text[], ids bigint[])
RETURNS TABLE (id bigint, login text, tz text, tz_chosen bigint, quiet_start text, quiet_end text, locale text)
-- Its reads are planned for their values on every call, as every read on
-- group commit's connections is (storage/src/pools.rs), not kept as one
-- plan made while the table was small.
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    passed bigint[];
BEGIN
    SELECT array_agg(people.id) INTO passed FROM (
        SELECT users.id, pg_advisory_xact_lock_shared(4173, hashtext(users.id::text))
        FROM users WHERE users.login = ANY(logins) OR users.id = ANY(ids) ORDER BY users.id
    ) AS people;
    RETURN QUERY
        SELECT users.id, users.login, users.tz, users.tz_chosen, users.quiet_start, users.quiet_end, users.locale
        FROM users WHERE users.id = ANY(passed);
END
$$;
