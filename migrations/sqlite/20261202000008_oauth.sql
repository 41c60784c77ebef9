-- Signing agents in (OAuth 2.1 for the MCP endpoint). Codes and tokens are
-- stored only as their sha256, like every other token.

-- A client: registered (RFC 7591), or known by its metadata document's URL.
-- One that no person has connected is forgotten a day after its last use.
CREATE TABLE oauth_clients (
    id            INTEGER PRIMARY KEY,
    client_id     TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    -- Its redirect URIs, one per line, matched exactly.
    redirect_uris TEXT    NOT NULL,
    -- 'registered' or 'document'.
    kind          TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    last_used_at  BIGINT  NOT NULL
);
CREATE INDEX oauth_clients_last_used ON oauth_clients (last_used_at);

-- A person's connection to a client: what Disconnect removes, with every
-- token issued under it.
CREATE TABLE oauth_grants (
    id           INTEGER PRIMARY KEY,
    user_id      BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id    BIGINT  NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    resource     TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    last_used_at BIGINT  NOT NULL
);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

-- One-time authorization codes. A used code is kept until it expires, with
-- the grant it made, so that a second use revokes that grant.
CREATE TABLE oauth_codes (
    code_hash      TEXT    NOT NULL PRIMARY KEY,
    client_id      BIGINT  NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id        BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri   TEXT    NOT NULL,
    code_challenge TEXT    NOT NULL,
    resource       TEXT    NOT NULL,
    expires_at     BIGINT  NOT NULL,
    used_at        BIGINT,
    grant_id       BIGINT  REFERENCES oauth_grants (id) ON DELETE SET NULL
);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

-- Access tokens ('access') and refresh tokens ('refresh'). A refresh token
-- is used once: rotated, it is kept until it expires, so that a second use
-- revokes its grant.
CREATE TABLE oauth_tokens (
    token_hash TEXT    NOT NULL PRIMARY KEY,
    grant_id   BIGINT  NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    expires_at BIGINT  NOT NULL,
    used_at    BIGINT
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_expires ON oauth_tokens (expires_at);
