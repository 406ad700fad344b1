// Package ingest owns turning an uploaded file into text and, later, into
// searchable chunks: extract (txt, md, csv, json, code, html, pdf, docx) →
// chunk → embed → store + index, and the bounded background queue that
// runs it with the file's processing status (SPEC.md §3 "File
// processing").
//
// With an embedding engine configured (RAG_EMBEDDING_ENGINE ollama or
// openai) VectorIndex is the queue's Indexer: the text is split (Markdown
// headers, then the recursive character splitter, CHUNK_SIZE /
// CHUNK_OVERLAP), embedded through the engine's API and stored as the
// file's chunks; chat's retrieval searches them. Without one (Open WebUI's
// default engine is a local model a Go binary does not ship) or with
// BYPASS_EMBEDDING_AND_RETRIEVAL a file is completed once its text is
// extracted, and chats use it whole.
//
// FetchPage fetches a web page (POST /retrieval/process/web) with a client
// the caller provides — netguard's, which checks every connection — and
// extracts it by the response's content type with the same extractors.
//
// Invariants:
//   - a file's bytes are read from the store piece by piece (io.ReaderAt
//     for PDF and DOCX, a stream otherwise), never loaded whole for the
//     formats that do not need it;
//   - an extractor never panics on hostile input: malformed PDF, DOCX and
//     HTML end in an error (a panic inside the PDF library is recovered),
//     and every extractor stops when its context is cancelled between pages
//     or parts;
//   - at most Options.Workers files are processed at once, background and
//     foreground together; workers exist only while there is work, and Wait
//     returns once they have all stopped (after the Context given to New is
//     cancelled, unfinished files stay pending and Start resumes them at the
//     next start);
//   - every status change is announced on Changes, so waiters block on a
//     channel instead of polling.
package ingest
