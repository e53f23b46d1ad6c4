-- API keys: a bearer token is shown once at creation; only the SHA-256 of its
-- secret part is kept. The token names its key's id, so a lookup is by
-- primary key and the secret is compared in constant time.
CREATE TABLE api_keys (
    id            uuid PRIMARY KEY,
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    scope         text NOT NULL CHECK (scope IN ('read', 'write', 'events', 'admin')),
    secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz
);

CREATE INDEX api_keys_created_at ON api_keys (created_at DESC, id DESC);
