-- Chats as rows (issue 3). A chat's JSON document is split so that a turn
-- costs O(messages touched), never O(chat size):
--   chats.doc        the chat object without history.messages and without the
--                    legacy messages[] list (title, models, params, files,
--                    history.currentId and any unknown keys, as sent); where
--                    the list was, "messages": null marks its place
--   messages.body    one row per history message, the object exactly as sent
--   chat_lists.body  the legacy messages[] array exactly as last sent; kept
--                    out of the chats row because SQLite rewrites a whole row
--                    on any UPDATE (updated_at bumps must stay cheap)
-- Tables referenced by FTS rowids have an explicit INTEGER PRIMARY KEY:
-- VACUUM (and VACUUM INTO backups) may renumber implicit rowids.
--
-- messages.seq is not a free counter: seq = (chats.seq << 20) | n, n = 0, 1,
-- 2... in insertion order within the chat (store/chats.go, msgSeqBits). So a
-- chat's messages are one contiguous rowid range (GET reads them with a range
-- scan, already in history order), and a message_fts rowid names its chat
-- without a lookup (rowid >> 20), which keeps search from joining messages.

CREATE TABLE folders (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    parent_id   TEXT REFERENCES folders (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    items       TEXT, -- JSON
    meta        TEXT, -- JSON
    data        TEXT, -- JSON: {system_prompt?, files?}
    is_expanded INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX folders_name ON folders (user_id, coalesce(parent_id, ''), name COLLATE NOCASE);
CREATE INDEX folders_parent ON folders (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE chats (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title        TEXT NOT NULL DEFAULT 'New Chat',
    doc          TEXT NOT NULL DEFAULT '{}',
    archived     INTEGER NOT NULL DEFAULT 0,
    pinned       INTEGER NOT NULL DEFAULT 0,
    folder_id    TEXT REFERENCES folders (id) ON DELETE SET NULL,
    share_id     TEXT UNIQUE,
    meta         TEXT NOT NULL DEFAULT '{}', -- JSON; tags are rendered from chat_tags
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    last_read_at INTEGER
);
-- The sidebar list: own, not archived, newest first. pinned is not a key
-- column: the default list (pinned left out) and include_pinned=true both walk
-- it in order and stop after a page, and search walks it too (pinned chats are
-- few, skipping them costs nothing). Pinned chats have their own small index.
CREATE INDEX chats_list ON chats (user_id, archived, updated_at DESC, id);
CREATE INDEX chats_pinned ON chats (user_id, updated_at DESC, id) WHERE pinned = 1;
CREATE INDEX chats_folder ON chats (folder_id, user_id) WHERE folder_id IS NOT NULL;

CREATE TABLE chat_lists (
    chat_id TEXT PRIMARY KEY REFERENCES chats (id) ON DELETE CASCADE,
    body    TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE messages (
    seq       INTEGER PRIMARY KEY, -- insertion order = history.messages order; FTS rowid
    chat_id   TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    id        TEXT NOT NULL,
    parent_id TEXT,                -- NULL when absent or not a string
    role      TEXT,
    done      INTEGER,
    timestamp INTEGER,
    content   TEXT NOT NULL DEFAULT '', -- searchable text taken from body.content
    leaf      INTEGER NOT NULL DEFAULT 1, -- 1 when body.childrenIds is absent, not a list or empty
    body      TEXT NOT NULL,
    UNIQUE (chat_id, id)
);

CREATE VIRTUAL TABLE message_fts USING fts5(
    content, content = 'messages', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO message_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER messages_au AFTER UPDATE OF content ON messages WHEN old.content IS NOT new.content BEGIN
    INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO message_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE VIRTUAL TABLE chat_title_fts USING fts5(
    title, content = 'chats', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER chats_ai AFTER INSERT ON chats BEGIN
    INSERT INTO chat_title_fts (rowid, title) VALUES (new.seq, new.title);
END;
CREATE TRIGGER chats_ad AFTER DELETE ON chats BEGIN
    INSERT INTO chat_title_fts (chat_title_fts, rowid, title) VALUES ('delete', old.seq, old.title);
END;
CREATE TRIGGER chats_au AFTER UPDATE OF title ON chats WHEN old.title IS NOT new.title BEGIN
    INSERT INTO chat_title_fts (chat_title_fts, rowid, title) VALUES ('delete', old.seq, old.title);
    INSERT INTO chat_title_fts (rowid, title) VALUES (new.seq, new.title);
END;

-- Tags: id = normalized name (lower-case, spaces → "_"), per user (Open WebUI).
CREATE TABLE tags (
    id      TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    meta    TEXT,
    PRIMARY KEY (user_id, id)
) WITHOUT ROWID;

CREATE TABLE chat_tags (
    chat_id    TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    tag_id     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (chat_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX chat_tags_by_tag ON chat_tags (user_id, tag_id, chat_id);

-- Share links: a snapshot of the chat as it was when shared; later changes
-- to the chat do not reach it until it is shared again.
CREATE TABLE shared_chats (
    id         TEXT PRIMARY KEY, -- the share token
    chat_id    TEXT NOT NULL UNIQUE REFERENCES chats (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    title      TEXT NOT NULL,
    snapshot   TEXT NOT NULL, -- the whole chat object (JSON)
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
