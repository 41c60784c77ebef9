-- Where each open event stands on its checkpoint ladder (DESIGN §6): the next
-- checkpoint, since when it needs attention (an unanswered reminder), and
-- when that reminder repeats. All are instants in UTC milliseconds.
ALTER TABLE events ADD COLUMN checkpoint_at BIGINT;
ALTER TABLE events ADD COLUMN attention_since BIGINT;
ALTER TABLE events ADD COLUMN repeat_at BIGINT;

-- The inbox badge counts a person's events that need attention.
CREATE INDEX events_attention ON events (user_id) WHERE attention_since IS NOT NULL;

-- Open events written before this migration have no ladder yet: the
-- scheduler places each on its ladder at its next pass.
UPDATE events SET next_check_at = 0 WHERE state IN ('scheduled', 'preparing', 'today', 'overdue');
