-- Issuing a person's agent token (which replaces the one before) and
-- revoking it end only that person's agent token, so the notice names the
-- people ('agent_tokens_of:7'), and each core forgets only the agent tokens
-- it keeps for them (engine/src/kept.rs) instead of everything it keeps.
-- A delete that took no token still tells no one (migration 22); a list of
-- people too long for a notice tells every core to forget everything, as
-- before. A core of an older release forgets everything on any notice it
-- does not know, so a rolling update stays safe.

-- One rule for every notice that names what ended: the prefix and the ids,
-- or, past what a notice holds, the fallback that makes every core forget
-- everything. Migration 22's notice of ended grants now follows it too.
CREATE FUNCTION hado_kept_notice_naming(prefix text, ids text, fallback text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF ids IS NULL THEN
        RETURN;
    END IF;
    IF length(ids) > 7000 THEN
        PERFORM pg_notify('hado_kept', fallback);
    ELSE
        PERFORM pg_notify('hado_kept', prefix || ids);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION hado_kept_grants_notice(grants text, fallback text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hado_kept_notice_naming('oauth_grants:', grants, fallback);
END
$$;

CREATE FUNCTION hado_kept_agent_tokens_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hado_kept_notice_naming('agent_tokens_of:',
        (SELECT string_agg(DISTINCT user_id::text, ',') FROM changed), TG_TABLE_NAME);
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

-- No trigger calls it any more: the grants' and the agent tokens' deletes
-- name what they took.
DROP FUNCTION hado_kept_deleted();
