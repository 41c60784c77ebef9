-- Each core now also keeps who an OAuth access token names (engine/src/kept.rs),
-- so a change that ends one tells the cores, as the changes of migrations 18
-- and 19 do: a grant deleted (an app disconnected, a refresh token or a code
-- used twice), an access token deleted (replaced by a refresh, or swept once
-- expired), or a kept column changed. A delete notifies only when it took a
-- grant or an access token: a sweep that finds nothing expired, and the
-- refresh tokens it sweeps, empty no core's memory. So the notices come at
-- most as often as the deployment's access tokens are replaced or expire,
-- whoever asks for the sweep.
CREATE FUNCTION hado_kept_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM gone) THEN
        PERFORM pg_notify('hado_kept', TG_TABLE_NAME);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION hado_kept_access_tokens_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM gone WHERE kind = 'access') THEN
        PERFORM pg_notify('hado_kept', TG_TABLE_NAME);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER oauth_grants_kept AFTER DELETE ON oauth_grants
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_deleted();
CREATE TRIGGER oauth_grants_kept_update AFTER UPDATE OF user_id ON oauth_grants
    FOR EACH ROW WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id)
    EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER oauth_tokens_kept AFTER DELETE ON oauth_tokens
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_access_tokens_deleted();
CREATE TRIGGER oauth_tokens_kept_update AFTER UPDATE OF token_hash, grant_id, kind, expires_at ON oauth_tokens
    FOR EACH ROW WHEN ((OLD.token_hash, OLD.grant_id, OLD.kind, OLD.expires_at)
        IS DISTINCT FROM (NEW.token_hash, NEW.grant_id, NEW.kind, NEW.expires_at))
    EXECUTE FUNCTION hado_kept_changed();
