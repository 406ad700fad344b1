-- Files and knowledge collections (COMPAT.md §8.1, §8.5).
--
-- A file's bytes live here, in 1 MiB pieces, so a backup is this one
-- database. An upload writes its pieces in short transactions while the
-- body streams in (other writers are not blocked for the length of an
-- upload); the row becomes visible (complete = 1) only when the last piece
-- is in. Rows left incomplete by a crash are swept at the next start.
--
-- Open WebUI's `data` JSON ({status, content, error}) is kept as columns, so
-- listing files never reads the extracted text; the API assembles `data`.

CREATE TABLE files (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    filename   TEXT NOT NULL,
    meta       TEXT NOT NULL DEFAULT '{}', -- JSON: name, content_type, size, file_hash, data
    hash       TEXT,                       -- sha256 of the extracted text, set after processing
    status     TEXT CHECK (status IN ('pending', 'completed', 'failed')), -- NULL: not processed
    error      TEXT,
    content    TEXT,                       -- extracted text
    size       INTEGER NOT NULL DEFAULT 0, -- bytes stored so far
    complete   INTEGER NOT NULL DEFAULT 0, -- 1 once every piece is stored
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX files_user ON files (user_id, created_at DESC);
CREATE INDEX files_status ON files (status) WHERE status = 'pending';

CREATE TABLE file_pieces (
    file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    n       INTEGER NOT NULL, -- 0, 1, 2, ... in order
    data    BLOB NOT NULL,
    PRIMARY KEY (file_id, n)
);

-- The owner is kept when the account is deleted, as Open WebUI keeps it
-- (and as model records are kept).
CREATE TABLE knowledge (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    meta        TEXT, -- JSON object or NULL
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX knowledge_user ON knowledge (user_id);
CREATE INDEX knowledge_updated ON knowledge (updated_at DESC, id);

CREATE TABLE knowledge_files (
    id           TEXT PRIMARY KEY,
    knowledge_id TEXT NOT NULL REFERENCES knowledge (id) ON DELETE CASCADE,
    file_id      TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL, -- who added it
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (knowledge_id, file_id)
);
CREATE INDEX knowledge_files_file ON knowledge_files (file_id);

CREATE TRIGGER knowledge_delete_grants AFTER DELETE ON knowledge BEGIN
    DELETE FROM access_grants WHERE resource_type = 'knowledge' AND resource_id = old.id;
END;
