-- Whether the person chose their time zone (Settings, an agent's
-- update_profile, or the offer to take the browser's or the host's zone):
-- until they do, it is the deployment's HADO_DEFAULT_TZ, and the web inbox
-- and the agent's in-chat view offer to set it.
ALTER TABLE users ADD COLUMN tz_chosen BIGINT NOT NULL DEFAULT 0;
