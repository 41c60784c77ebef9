-- Hado's schema on SQLite. Instants are integer UTC milliseconds and dates
-- `YYYY-MM-DD` text, so that core runs one set of queries on both backends.

CREATE TABLE users (
    id          INTEGER PRIMARY KEY,
    login       TEXT    NOT NULL UNIQUE,
    tz          TEXT    NOT NULL,
    quiet_start TEXT    NOT NULL DEFAULT '22:00',
    quiet_end   TEXT    NOT NULL DEFAULT '08:00',
    locale      TEXT    NOT NULL DEFAULT 'en',
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);

CREATE TABLE sources (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    token_hash TEXT    UNIQUE,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL
);

-- The source of the events people (and their agents) make themselves.
INSERT INTO sources (name, token_hash, created_at, updated_at)
VALUES ('manual', NULL, CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now') AS INTEGER) * 1000);

CREATE TABLE agent_tokens (
    id           INTEGER PRIMARY KEY,
    user_id      BIGINT  NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    token_hash   TEXT    NOT NULL UNIQUE,
    last_used_at BIGINT,
    created_at   BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL
);

CREATE TABLE events (
    id             INTEGER PRIMARY KEY,
    user_id        BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    source_id      BIGINT  NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    source_ref     TEXT    NOT NULL,
    topic          TEXT    NOT NULL DEFAULT '',
    title          TEXT    NOT NULL,
    subtitle       TEXT,
    due_at         TEXT    NOT NULL,
    due_date       TEXT    NOT NULL,
    due_time       TEXT,
    due_offset_min BIGINT,
    due_ms         BIGINT  NOT NULL,
    fire_at        TEXT,
    fire_date      TEXT    NOT NULL,
    after_due      TEXT    NOT NULL,
    done_label     TEXT,
    deep_link      TEXT,
    state          TEXT    NOT NULL,
    quiet_until    BIGINT,
    closed_at      BIGINT,
    next_check_at  BIGINT,
    created_at     BIGINT  NOT NULL,
    updated_at     BIGINT  NOT NULL,
    UNIQUE (source_id, user_id, source_ref, topic)
);

CREATE INDEX events_by_user_state_due ON events (user_id, state, due_ms);
CREATE INDEX events_by_user_closed ON events (user_id, closed_at);
CREATE INDEX events_due_for_check ON events (next_check_at) WHERE next_check_at IS NOT NULL;
