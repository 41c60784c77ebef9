-- The inbox badge counts a person's open events that need attention. Keyed
-- by state as well, so that SQLite's planner takes this small index for the
-- count instead of walking every open event of the person.
DROP INDEX events_attention;
CREATE INDEX events_attention ON events (user_id, state) WHERE attention_since IS NOT NULL;
