-- An app's refresh (about once an hour) and its disconnection end only the
-- access tokens of its own grant, so the notice names those grants
-- ('oauth_grants:12,40'), and each core forgets only their access tokens
-- (engine/src/kept.rs) instead of everything it keeps. A delete that took
-- no grant and no access token still tells no one (migration 21); one that
-- took so many grants that their list would not fit a notice tells every
-- core to forget everything, as before.
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
DROP FUNCTION hado_kept_deleted();
