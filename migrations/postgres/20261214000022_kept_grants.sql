-- An app's refresh (about once an hour) and its disconnection end only the
-- access tokens of its own grant, so the notice names those grants
-- ('oauth_grants:12,40'), and each core forgets only their access tokens
-- (engine/src/kept.rs) instead of everything it keeps. A delete that took
-- no grant and no access token still tells no one (migration 21); one that
-- took so many grants that their list would not fit a notice tells every
-- core to forget everything, as before. And a revoke of an agent token that
-- found none now tells no one (below).
CREATE OR REPLACE FUNCTION hado_kept_grants_notice(grants text, fallback text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF grants IS NULL THEN
        RETURN;
    END IF;
    IF length(grants) > 7000 THEN
        PERFORM pg_notify('hado_kept', fallback);
    ELSE
        PERFORM pg_notify('hado_kept', 'oauth_grants:' || grants);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION hado_kept_grants_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hado_kept_grants_notice(
        (SELECT string_agg(DISTINCT id::text, ',') FROM gone), TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION hado_kept_access_tokens_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hado_kept_grants_notice(
        (SELECT string_agg(DISTINCT grant_id::text, ',') FROM gone WHERE kind = 'access'), TG_TABLE_NAME);
    RETURN NULL;
END
$$;

DROP TRIGGER oauth_grants_kept ON oauth_grants;
CREATE TRIGGER oauth_grants_kept AFTER DELETE ON oauth_grants
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_grants_deleted();

-- A revoke that found no agent token tells no one either (a statement-level
-- trigger fires even when its statement deleted nothing), so a person
-- revoking again and again cannot empty every core's memory.
DROP TRIGGER agent_tokens_kept ON agent_tokens;
CREATE TRIGGER agent_tokens_kept AFTER INSERT ON agent_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER agent_tokens_kept_deleted AFTER DELETE ON agent_tokens
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_deleted();
