-- Where a person's reminders go (DESIGN §7), and the outbox of reminders on
-- their way (DESIGN §6): the scheduler writes deliveries in the same
-- transaction that fires a checkpoint; the delivery loop sends them.
CREATE TABLE channels (
    id          INTEGER PRIMARY KEY,
    user_id     BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- webhook (telegram comes with the Telegram work)
    kind        TEXT    NOT NULL,
    -- the webhook's URL
    target      TEXT    NOT NULL,
    -- the webhook's signing secret (whsec_…): needed to sign, so kept as is
    secret      TEXT,
    -- 1 or 0
    enabled     BIGINT  NOT NULL DEFAULT 1,
    last_error  TEXT,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);
CREATE INDEX channels_user ON channels (user_id);

CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY,
    -- msg_<ulid>: the webhook-id receivers drop duplicates by
    message_id      TEXT    NOT NULL UNIQUE,
    -- NULL for a test message
    event_id        BIGINT  REFERENCES events (id) ON DELETE CASCADE,
    -- NULL for a reminder that reached no channel (suppressed)
    channel_id      BIGINT  REFERENCES channels (id) ON DELETE CASCADE,
    -- checkpoint, repeat or test
    kind            TEXT    NOT NULL,
    -- the checkpoint or repeat moment it stands for
    due_at          BIGINT  NOT NULL,
    -- pending, sent, failed or suppressed
    status          TEXT    NOT NULL,
    attempts        BIGINT  NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    last_error      TEXT,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE INDEX deliveries_pending ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_event ON deliveries (event_id);
