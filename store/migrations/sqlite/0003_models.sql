-- Model records and access grants (issue 4; COMPAT.md §5.2, §5.4).
--
-- A model record wraps a provider model (base_model_id set: a "preset") or
-- overrides one with the same id (base_model_id NULL). Its owner is kept
-- when the account is deleted, as Open WebUI keeps it.

CREATE TABLE models (
    id            TEXT PRIMARY KEY, -- the API model id, < 256 characters
    user_id       TEXT NOT NULL,    -- owner
    base_model_id TEXT,             -- NULL: overrides the provider model with this id
    name          TEXT NOT NULL,
    params        TEXT NOT NULL DEFAULT '{}', -- JSON object (system, temperature, ...)
    meta          TEXT NOT NULL DEFAULT '{}', -- JSON object (description, capabilities, tags, ...)
    is_active     INTEGER NOT NULL DEFAULT 1,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX models_user ON models (user_id);
CREATE INDEX models_created ON models (created_at DESC, id);

-- Who may read or write a resource, for every resource type (models now;
-- knowledge, prompts, tools... later). principal_id "*" with principal_type
-- "user" means everyone. A write grant implies read (Hearth's decision).
CREATE TABLE access_grants (
    id             TEXT PRIMARY KEY,
    resource_type  TEXT NOT NULL,
    resource_id    TEXT NOT NULL,
    principal_type TEXT NOT NULL CHECK (principal_type IN ('user', 'group')),
    principal_id   TEXT NOT NULL,
    permission     TEXT NOT NULL CHECK (permission IN ('read', 'write')),
    created_at     INTEGER NOT NULL
);
CREATE UNIQUE INDEX access_grants_grant ON access_grants (resource_type, resource_id, principal_type, principal_id, permission);
CREATE INDEX access_grants_principal ON access_grants (principal_type, principal_id);

-- Grants die with their resource and their principal, so no stale grant can
-- come back to life for a later object that reuses an id.
CREATE TRIGGER models_delete_grants AFTER DELETE ON models BEGIN
    DELETE FROM access_grants WHERE resource_type = 'model' AND resource_id = old.id;
END;
CREATE TRIGGER users_delete_grants AFTER DELETE ON users BEGIN
    DELETE FROM access_grants WHERE principal_type = 'user' AND principal_id = old.id;
END;
CREATE TRIGGER groups_delete_grants AFTER DELETE ON groups BEGIN
    DELETE FROM access_grants WHERE principal_type = 'group' AND principal_id = old.id;
END;
