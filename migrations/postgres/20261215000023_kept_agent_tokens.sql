-- Issuing a person's agent token (which replaces the one before) and
-- revoking it end only that person's agent token, so the notice names the
-- people ('agent_tokens_of:7'), and each core forgets only the agent tokens
-- it keeps for them (engine/src/kept.rs) instead of everything it keeps.
-- A delete that took no token still tells no one (migration 22); a list of
-- people too long for a notice tells every core to forget everything, as
-- before. A core of an older release forgets everything on any notice it
-- does not know, so a rolling update stays safe.
CREATE FUNCTION hado_kept_agent_tokens_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    people text := (SELECT string_agg(DISTINCT user_id::text, ',') FROM changed);
BEGIN
    IF people IS NULL THEN
        RETURN NULL;
    END IF;
    IF length(people) > 7000 THEN
        PERFORM pg_notify('hado_kept', TG_TABLE_NAME);
    ELSE
        PERFORM pg_notify('hado_kept', 'agent_tokens_of:' || people);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER agent_tokens_kept ON agent_tokens;
CREATE TRIGGER agent_tokens_kept AFTER INSERT ON agent_tokens
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_agent_tokens_changed();
DROP TRIGGER agent_tokens_kept_deleted ON agent_tokens;
CREATE TRIGGER agent_tokens_kept_deleted AFTER DELETE ON agent_tokens
    REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_agent_tokens_changed();
