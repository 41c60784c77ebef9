-- One row that core writes every second to learn whether its storage can
-- be written (a full disk, a database that went away); its health check
-- follows the answer.
CREATE TABLE liveness (
    id BIGINT PRIMARY KEY,
    checked_at BIGINT NOT NULL
);
INSERT INTO liveness (id, checked_at) VALUES (1, 0);
