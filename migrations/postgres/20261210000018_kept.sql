-- Each core keeps who a token, a source and a person are in memory
-- (core/src/engine/kept.rs) and listens on the channel hado_kept. A write
-- that changes one of them notifies the channel in its own transaction, so
-- every core forgets what it kept as the change commits. Only the columns
-- a core keeps count: recording an agent token's use (last_used_at) or a
-- push service's refusal (push_gone) notifies no one.
CREATE FUNCTION hado_kept_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('hado_kept', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER agent_tokens_kept AFTER INSERT OR DELETE OR UPDATE OF user_id, token_hash ON agent_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER users_kept AFTER DELETE OR UPDATE OF login, tz, tz_chosen, quiet_start, quiet_end, locale ON users
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER sources_kept AFTER DELETE OR UPDATE OF name, token_hash ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_changed();
