// Package store owns all SQL. It is a leaf: it imports nothing internal.
//
// Layout: one SQLite file (modernc.org/sqlite, CGO-free) opened twice — a pool
// of read-only connections for queries and exactly one writer connection whose
// transactions start with BEGIN IMMEDIATE, so writers queue in Go instead of
// failing with SQLITE_BUSY. Pragmas are applied in the order that matters:
// busy_timeout first, page_size before WAL on a new file, then WAL,
// synchronous=NORMAL and foreign_keys=ON.
//
// Migrations are embedded numbered files (migrations/sqlite/NNNN_name.sql),
// forward-only, each applied in its own transaction and recorded in
// schema_migrations. A database whose newest migration is unknown to this
// binary is refused (ErrSchemaTooNew) instead of being half-understood.
//
// Invariants:
//   - every read or write of user-owned data takes the Actor and filters by
//     owner or grant in the SQL itself; nothing is loaded first and checked
//     in Go afterwards;
//   - errors callers must tell apart are the sentinels ErrNotFound and
//     ErrConflict, wrapped with %w;
//   - a write either commits whole or leaves nothing behind.
package store
