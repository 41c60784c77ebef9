-- A person's secret calendar feed (ICS): one per user, stored as the hash of
-- the token in its URL, like agent tokens.
CREATE TABLE calendar_feeds (
    user_id    BIGINT  NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    token_hash TEXT    NOT NULL UNIQUE,
    created_at BIGINT  NOT NULL
);
