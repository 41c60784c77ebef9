-- How many times an event has changed by a person's or a source's hand
-- (an edit, a reschedule, Reopen, a delete, a withdrawal, a revival). Action links name it, so that a link made before a change
-- stops working even when the change is undone.
ALTER TABLE events ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;
