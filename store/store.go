package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors; wrap with %w, compare with errors.Is.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
)

//go:embed migrations/sqlite/*.sql
var migrationFS embed.FS

// Actor is who is asking. Every query over user-owned data takes one.
type Actor struct {
	UserID string
	Role   string // pending, user, admin
	Groups []string
}

// IsAdmin reports whether the actor has the admin role.
func (a Actor) IsAdmin() bool { return a.Role == "admin" }

// Store is the SQLite-backed store.
type Store struct {
	read  *readDB // pool of query_only connections, statements cached
	write *sql.DB // exactly one connection; BEGIN IMMEDIATE
	path  string
	now   func() time.Time
}

// Open opens (creating if needed) the database at path and applies migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := initFile(ctx, path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)
	s := &Store{read: newReadDB(r), write: w, path: path, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// SchemaVersionOf reads the newest applied migration of a database file
// without changing it; `restore` uses it to refuse a file from a newer binary.
func SchemaVersionOf(ctx context.Context, path string) (int, error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return schemaVersion(ctx, db)
}

// LatestMigration is the newest migration this binary knows.
func LatestMigration() int {
	ms, _ := migrations()
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Close checkpoints the WAL into the database file and closes both pools,
// so a stopped server leaves one self-contained file behind.
func (s *Store) Close() error {
	errRead := s.read.Close()
	_, errCk := s.write.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return errors.Join(errRead, errCk, s.write.Close())
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.read.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	// busy_timeout must come first so every later pragma can wait for a lock.
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// initFile sets page_size on a new database before WAL is switched on (after
// that a page_size pragma is ignored), then enables WAL.
func initFile(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var pages int
	if err := db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if pages == 0 {
		if _, err := db.ExecContext(ctx, "PRAGMA page_size=8192"); err != nil {
			return err
		}
	}
	_, err = db.ExecContext(ctx, "PRAGMA journal_mode=WAL")
	return err
}

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations/sqlite")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("bad migration file name %q", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/sqlite/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name='schema_migrations'`).Scan(&n)
	if err != nil || n == 0 {
		return 0, err
	}
	var v sql.NullInt64
	err = db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), err
}

// migrate applies missing migrations, one transaction each, and refuses a
// database that has migrations this binary does not know.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	cur, err := schemaVersion(ctx, s.write)
	if err != nil {
		return err
	}
	if latest := LatestMigration(); cur > latest {
		return fmt.Errorf("%w: the database is at migration %d, this binary knows up to %d; use a newer Hearth", ErrSchemaTooNew, cur, latest)
	}
	for _, m := range ms {
		if m.version <= cur {
			continue
		}
		err := s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, s.now().Unix())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// tx runs fn in one write transaction (BEGIN IMMEDIATE via the writer DSN).
func (s *Store) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// isUnique reports a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Backup writes a consistent copy of the database at src to dst with VACUUM
// INTO on a connection of its own. VACUUM INTO reads one snapshot, so a server
// writing to src (in this process or another) keeps going and the copy is a
// whole database as of one moment. dst must not exist.
func Backup(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		return fmt.Errorf("backup to %s: %w", dst, err)
	}
	return nil
}

func nullStr(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
