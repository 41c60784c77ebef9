-- Web Push (DESIGN §7): each device that subscribes is a channel of kind
-- push, its endpoint the target and its subscription's keys (p256dh and
-- auth) the secret; its name says which device it is, from its browser
-- and system, and its person may change it.
ALTER TABLE channels ADD COLUMN name TEXT;
-- The last device whose push service ended its subscription (404 or 410):
-- that channel is removed, and Settings says so until another subscribes.
ALTER TABLE users ADD COLUMN push_gone TEXT;
ALTER TABLE users ADD COLUMN push_gone_at BIGINT;
-- Keys this Hado makes for itself once and every core shares: the VAPID
-- key pair (RFC 8292) that push services know it by.
CREATE TABLE server_keys (
    name       TEXT   PRIMARY KEY,
    value      TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);
