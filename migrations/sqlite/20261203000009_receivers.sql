-- Deliveries are paced per receiver: a webhook's host and port, or
-- Telegram. At most so many posts are in flight to one receiver across all
-- cores (a claimed delivery is in flight until its lease ends), and a
-- receiver that strains (times out, or answers 429, 502, 503 or 504) is
-- paused for a while, longer each time in a row. Core fills in the
-- receiver of channels made before this migration when it starts.
ALTER TABLE channels ADD COLUMN receiver TEXT NOT NULL DEFAULT '';
ALTER TABLE deliveries ADD COLUMN leased_until BIGINT;
CREATE INDEX deliveries_leased ON deliveries (leased_until) WHERE leased_until IS NOT NULL;
CREATE TABLE receivers (
    receiver     TEXT   NOT NULL PRIMARY KEY,
    -- strained answers in a row
    strikes      BIGINT NOT NULL,
    paused_until BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
