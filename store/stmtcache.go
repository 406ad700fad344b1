package store

import (
	"context"
	"database/sql"
	"sync"
)

// readDB is the reader pool with a prepared-statement cache. Parsing SQL is
// most of the cost of a small indexed query in modernc SQLite (a third of
// an authenticated request's CPU before this cache), so each distinct query
// text is prepared once and reused; database/sql re-prepares it per
// connection as needed. The cache is bounded: query texts built from input
// (search with n terms) stop being cached once it is full.
type readDB struct {
	*sql.DB
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

const maxCachedStmts = 512

func newReadDB(db *sql.DB) *readDB { return &readDB{DB: db, stmts: map[string]*sql.Stmt{}} }

func (r *readDB) stmt(ctx context.Context, query string) *sql.Stmt {
	r.mu.RLock()
	st := r.stmts[query]
	r.mu.RUnlock()
	if st != nil {
		return st
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st = r.stmts[query]; st != nil || len(r.stmts) >= maxCachedStmts {
		return st
	}
	st, err := r.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil // the uncached call reports the error
	}
	r.stmts[query] = st
	return st
}

// QueryContext runs a cached prepared statement.
func (r *readDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a cached prepared statement.
func (r *readDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.DB.QueryRowContext(ctx, query, args...)
}

// Close closes the cached statements and the pool.
func (r *readDB) Close() error {
	r.mu.Lock()
	for _, st := range r.stmts {
		st.Close()
	}
	clear(r.stmts)
	r.mu.Unlock()
	return r.DB.Close()
}
