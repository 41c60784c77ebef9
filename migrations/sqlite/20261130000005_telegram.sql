-- Telegram (DESIGN §7): one-time codes that link a chat to a person, the
-- updates already handled (Telegram may send one twice), and the short ids
-- that inline buttons carry (callback_data holds at most 64 bytes).
CREATE TABLE telegram_links (
    code       TEXT    NOT NULL PRIMARY KEY,
    user_id    BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at BIGINT  NOT NULL
);

CREATE TABLE telegram_updates (
    update_id   BIGINT NOT NULL PRIMARY KEY,
    received_at BIGINT NOT NULL
);

CREATE TABLE telegram_buttons (
    id         TEXT    NOT NULL PRIMARY KEY,
    event_id   BIGINT  NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    user_id    BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- done or remember
    action     TEXT    NOT NULL,
    created_at BIGINT  NOT NULL
);
