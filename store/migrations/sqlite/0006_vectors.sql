-- Chunks of processed files and their embedding vectors (COMPAT.md §8.4;
-- ARCHITECTURE.md "vectors live in the database").
--
-- A file's collection (Open WebUI's `file-<id>`) is its rows here; a
-- knowledge collection is the union of its files' rows, so adding a file
-- to a collection copies nothing. `model` names the embedding engine and
-- model ("openai:text-embedding-3-small"): vectors of another model are
-- never compared with a query. `vector` is little-endian float32.
CREATE TABLE chunks (
    file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    n       INTEGER NOT NULL, -- 0, 1, 2, ... in document order
    model   TEXT NOT NULL,
    start   INTEGER NOT NULL, -- start_index: offset of the chunk in the text, in characters
    text    TEXT NOT NULL,
    vector  BLOB NOT NULL,
    PRIMARY KEY (file_id, n)
);
