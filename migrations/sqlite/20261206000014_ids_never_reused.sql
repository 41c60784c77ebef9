-- no-transaction
-- Ids are never handed out twice. Without AUTOINCREMENT, SQLite gives a new
-- row the highest id again once that row is deleted, so an old link,
-- token or webhook-id could name a newer row. Every table whose id leaves
-- the database (in a link, a URL, a message or a delivery's id) is rebuilt
-- with AUTOINCREMENT, keeping every row and id, by SQLite's documented
-- procedure (https://www.sqlite.org/lang_altertable.html, "Making Other
-- Kinds Of Table Schema Changes"): foreign keys off, a new table, copy,
-- drop, rename, indexes again, all in one transaction. An id deleted
-- before this migration can still come back once: links also bind the
-- row's creation, which refuses them then.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE users_rebuilt (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    login       TEXT    NOT NULL UNIQUE,
    tz          TEXT    NOT NULL,
    quiet_start TEXT    NOT NULL DEFAULT '22:00',
    quiet_end   TEXT    NOT NULL DEFAULT '08:00',
    locale      TEXT    NOT NULL DEFAULT 'en',
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);
INSERT INTO users_rebuilt SELECT id, login, tz, quiet_start, quiet_end, locale, created_at, updated_at FROM users;
DROP TABLE users;
ALTER TABLE users_rebuilt RENAME TO users;

CREATE TABLE sources_rebuilt (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE,
    token_hash TEXT    UNIQUE,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL
);
INSERT INTO sources_rebuilt SELECT id, name, token_hash, created_at, updated_at FROM sources;
DROP TABLE sources;
ALTER TABLE sources_rebuilt RENAME TO sources;

CREATE TABLE agent_tokens_rebuilt (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      BIGINT  NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    token_hash   TEXT    NOT NULL UNIQUE,
    last_used_at BIGINT,
    created_at   BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL
);
INSERT INTO agent_tokens_rebuilt SELECT id, user_id, token_hash, last_used_at, created_at, updated_at FROM agent_tokens;
DROP TABLE agent_tokens;
ALTER TABLE agent_tokens_rebuilt RENAME TO agent_tokens;

CREATE TABLE events_rebuilt (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id         BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    source_id       BIGINT  NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    source_ref      TEXT    NOT NULL,
    topic           TEXT    NOT NULL DEFAULT '',
    title           TEXT    NOT NULL,
    subtitle        TEXT,
    due_at          TEXT    NOT NULL,
    due_date        TEXT    NOT NULL,
    due_time        TEXT,
    due_offset_min  BIGINT,
    due_ms          BIGINT  NOT NULL,
    fire_at         TEXT,
    fire_date       TEXT    NOT NULL,
    after_due       TEXT    NOT NULL,
    done_label      TEXT,
    deep_link       TEXT,
    state           TEXT    NOT NULL,
    quiet_until     BIGINT,
    closed_at       BIGINT,
    next_check_at   BIGINT,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL,
    checkpoint_at   BIGINT,
    attention_since BIGINT,
    repeat_at       BIGINT,
    revision        BIGINT  NOT NULL DEFAULT 0,
    UNIQUE (source_id, user_id, source_ref, topic)
);
INSERT INTO events_rebuilt SELECT id, user_id, source_id, source_ref, topic, title, subtitle, due_at, due_date,
    due_time, due_offset_min, due_ms, fire_at, fire_date, after_due, done_label, deep_link, state, quiet_until,
    closed_at, next_check_at, created_at, updated_at, checkpoint_at, attention_since, repeat_at, revision FROM events;
DROP TABLE events;
ALTER TABLE events_rebuilt RENAME TO events;
CREATE INDEX events_by_user_state_due ON events (user_id, state, due_ms);
CREATE INDEX events_by_user_closed ON events (user_id, closed_at);
CREATE INDEX events_due_for_check ON events (next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX events_attention ON events (user_id, state) WHERE attention_since IS NOT NULL;

CREATE TABLE channels_rebuilt (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- telegram, webhook or email
    kind          TEXT    NOT NULL,
    -- the chat, the webhook's URL or the address
    target        TEXT    NOT NULL,
    -- the webhook's signing secret (whsec_…): needed to sign, so kept as is
    secret        TEXT,
    -- 1 or 0
    enabled       BIGINT  NOT NULL DEFAULT 1,
    last_error    TEXT,
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL,
    receiver      TEXT    NOT NULL DEFAULT '',
    last_error_at BIGINT,
    confirmed_at  BIGINT,
    -- No longer used (send_requests counts confirmations per address);
    -- kept for one release, as on Postgres.
    confirmations_sent  BIGINT NOT NULL DEFAULT 0,
    confirmations_since BIGINT
);
INSERT INTO channels_rebuilt SELECT id, user_id, kind, target, secret, enabled, last_error, created_at, updated_at,
    receiver, last_error_at, confirmed_at, confirmations_sent, confirmations_since FROM channels;
DROP TABLE channels;
ALTER TABLE channels_rebuilt RENAME TO channels;
CREATE INDEX channels_user ON channels (user_id);

CREATE TABLE deliveries_rebuilt (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    -- msg_<ulid>: the webhook-id receivers drop duplicates by
    message_id      TEXT    NOT NULL UNIQUE,
    -- NULL for a message that is not about an event
    event_id        BIGINT  REFERENCES events (id) ON DELETE CASCADE,
    -- NULL for a reminder that reached no channel (suppressed)
    channel_id      BIGINT  REFERENCES channels (id) ON DELETE CASCADE,
    kind            TEXT    NOT NULL,
    -- the checkpoint or repeat moment it stands for
    due_at          BIGINT  NOT NULL,
    status          TEXT    NOT NULL,
    attempts        BIGINT  NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    last_error      TEXT,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL,
    leased_until    BIGINT
);
INSERT INTO deliveries_rebuilt SELECT id, message_id, event_id, channel_id, kind, due_at, status, attempts,
    next_attempt_at, last_error, created_at, updated_at, leased_until FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_rebuilt RENAME TO deliveries;
CREATE INDEX deliveries_pending ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_leased ON deliveries (leased_until) WHERE leased_until IS NOT NULL;

CREATE TABLE oauth_clients_rebuilt (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id     TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    -- Its redirect URIs, one per line, matched exactly.
    redirect_uris TEXT    NOT NULL,
    -- 'registered' or 'document'.
    kind          TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    last_used_at  BIGINT  NOT NULL
);
INSERT INTO oauth_clients_rebuilt SELECT id, client_id, name, redirect_uris, kind, created_at, last_used_at FROM oauth_clients;
DROP TABLE oauth_clients;
ALTER TABLE oauth_clients_rebuilt RENAME TO oauth_clients;
CREATE INDEX oauth_clients_last_used ON oauth_clients (last_used_at);

CREATE TABLE oauth_grants_rebuilt (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id    BIGINT  NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    resource     TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    last_used_at BIGINT  NOT NULL
);
INSERT INTO oauth_grants_rebuilt SELECT id, user_id, client_id, resource, created_at, last_used_at FROM oauth_grants;
DROP TABLE oauth_grants;
ALTER TABLE oauth_grants_rebuilt RENAME TO oauth_grants;
CREATE INDEX oauth_grants_user ON oauth_grants (user_id);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

-- What one person made Hado send to an address or a receiver that is not
-- theirs to vouch for (a confirmation, a test), counted by a hash of the
-- target so that removing and adding it again does not reset the count.
-- Rows older than a day are pruned as new ones are written.
CREATE TABLE send_requests (
    user_id     BIGINT NOT NULL,
    -- confirmation or test
    purpose     TEXT   NOT NULL,
    -- sha256 hex of the channel's kind and normalized target
    target_hash TEXT   NOT NULL,
    sent_at     BIGINT NOT NULL
);
CREATE INDEX send_requests_target ON send_requests (target_hash, purpose, sent_at);
CREATE INDEX send_requests_user ON send_requests (user_id, purpose, sent_at);

-- Addresses whose owner asked, from a confirmation's one-click unsubscribe,
-- never to be sent another confirmation; kept as a hash of the address.
CREATE TABLE email_suppressions (
    address_hash  TEXT   NOT NULL PRIMARY KEY,
    suppressed_at BIGINT NOT NULL
);

COMMIT;
PRAGMA foreign_keys = ON;
