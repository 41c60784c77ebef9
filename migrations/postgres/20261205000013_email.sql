-- Email channels: an address gets reminders only once its person has
-- followed the confirmation link (confirmed_at); the chats and webhooks
-- made before were confirmed as they were made. The confirmations sent in
-- the current hour (counted from confirmations_since) cap how often adding
-- the same address again sends one more.
ALTER TABLE channels ADD COLUMN confirmed_at BIGINT;
UPDATE channels SET confirmed_at = created_at;
ALTER TABLE channels ADD COLUMN confirmations_sent BIGINT NOT NULL DEFAULT 0;
ALTER TABLE channels ADD COLUMN confirmations_since BIGINT;
