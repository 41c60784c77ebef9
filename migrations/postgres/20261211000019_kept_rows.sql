-- A change notifies the cores that keep credentials (migration 18) only
-- when a kept column really changed: an update that writes the same values
-- (a profile saved unchanged, say) notifies no one, so a person cannot
-- empty every core's memory by saving again and again. Updates are
-- compared row by row; inserts and deletes still notify once a statement.
-- Postgres folds equal notices of one transaction into one.
DROP TRIGGER agent_tokens_kept ON agent_tokens;
DROP TRIGGER users_kept ON users;
DROP TRIGGER sources_kept ON sources;

CREATE TRIGGER agent_tokens_kept AFTER INSERT OR DELETE ON agent_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER agent_tokens_kept_update AFTER UPDATE OF user_id, token_hash ON agent_tokens
    FOR EACH ROW WHEN ((OLD.user_id, OLD.token_hash) IS DISTINCT FROM (NEW.user_id, NEW.token_hash))
    EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER users_kept AFTER DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER users_kept_update AFTER UPDATE OF login, tz, tz_chosen, quiet_start, quiet_end, locale ON users
    FOR EACH ROW WHEN ((OLD.login, OLD.tz, OLD.tz_chosen, OLD.quiet_start, OLD.quiet_end, OLD.locale)
        IS DISTINCT FROM (NEW.login, NEW.tz, NEW.tz_chosen, NEW.quiet_start, NEW.quiet_end, NEW.locale))
    EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER sources_kept AFTER DELETE ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION hado_kept_changed();
CREATE TRIGGER sources_kept_update AFTER UPDATE OF name, token_hash ON sources
    FOR EACH ROW WHEN ((OLD.name, OLD.token_hash) IS DISTINCT FROM (NEW.name, NEW.token_hash))
    EXECUTE FUNCTION hado_kept_changed();
