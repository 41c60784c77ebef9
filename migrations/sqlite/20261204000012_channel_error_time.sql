-- When a channel's last send failed, shown with its error from the first
-- failed attempt on, not only once the retries are spent.
ALTER TABLE channels ADD COLUMN last_error_at BIGINT;
