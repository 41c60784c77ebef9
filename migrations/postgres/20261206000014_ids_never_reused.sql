-- Ids are never handed out twice: on Postgres every id is an identity
-- column, whose sequence never goes back, so only the new tables of this
-- step are made here (SQLite's migration of the same name rebuilds its
-- tables with AUTOINCREMENT).

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

-- channels.confirmations_sent and confirmations_since are no longer used
-- (send_requests counts confirmations per address, which removing and
-- adding a channel does not reset). They stay for one release, so that a
-- core of the release before, still running during a rolling upgrade,
-- can read and write channels.
