-- Accounts, credentials, groups and persistent settings (issue 2).
-- Timestamps are Unix seconds, as Open WebUI stores them.

CREATE TABLE users (
    id                TEXT PRIMARY KEY,
    email             TEXT NOT NULL UNIQUE COLLATE NOCASE,
    username          TEXT,
    role              TEXT NOT NULL CHECK (role IN ('pending', 'user', 'admin')),
    name              TEXT NOT NULL,
    password_hash     TEXT NOT NULL DEFAULT '',
    active            INTEGER NOT NULL DEFAULT 1,
    profile_image_url TEXT NOT NULL DEFAULT '',
    bio               TEXT,
    gender            TEXT,
    date_of_birth     TEXT,
    timezone          TEXT,
    info              TEXT, -- JSON object or NULL
    settings          TEXT, -- JSON object or NULL
    oauth             TEXT, -- JSON {provider: {sub}}
    scim              TEXT, -- JSON {provider: {external_id}}
    last_active_at    INTEGER NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
CREATE INDEX users_created ON users (created_at DESC, id);
CREATE INDEX users_name ON users (name COLLATE NOCASE);

-- API keys are stored as SHA-256 of the whole key: a key carries 128 random bits,
-- so a fast hash is safe and keeps authentication at tens of microseconds.
CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    key_hash     BLOB NOT NULL UNIQUE,
    hint         TEXT NOT NULL, -- "sk-ab12…cd34", safe to show again
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    expires_at   INTEGER
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at);

CREATE TABLE groups (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL, -- creator; kept even if the creator is deleted
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    data        TEXT, -- JSON, e.g. {"config": {"share": "members"}}
    meta        TEXT, -- JSON
    permissions TEXT, -- JSON permission tree (partial)
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX groups_name ON groups (name COLLATE NOCASE);

CREATE TABLE group_members (
    group_id   TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX group_members_user ON group_members (user_id, group_id);

-- Persistent settings: one row per dotted key (Open WebUI's layout), JSON value.
CREATE TABLE config (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Signed-out JWTs (by jti) until they would have expired anyway.
CREATE TABLE revoked_tokens (
    jti        TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
