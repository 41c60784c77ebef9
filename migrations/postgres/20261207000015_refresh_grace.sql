-- A refresh token's answer: the access and refresh token its exchange
-- gave, sealed under a key that only the refresh token itself gives (its
-- hash beside it does not), kept for a few seconds after the exchange so
-- that a client that sent the same refresh twice at once gets the same
-- answer twice rather than losing its grant; then forgotten. Core's
-- engine/oauth_tokens.rs says why it is sealed this way.
ALTER TABLE oauth_tokens ADD COLUMN successor TEXT;
