package cli

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hearth/store"
)

// TestBackupWhileWriting: a backup taken while another connection keeps
// inserting is a whole database as of one moment (the inserts are sequential,
// so that means exactly the first n of them), and restoring it works.
func TestBackupWhileWriting(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	mustRun(t, nil, "migrate", "--data-dir", dir)
	live, err := store.Open(ctx, filepath.Join(dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}

	var written atomic.Int64
	wctx, stopWriter := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	var writeErr error
	go func() {
		defer wg.Done()
		for i := 0; wctx.Err() == nil; i++ {
			_, err := live.CreateUser(wctx, store.NewUser{
				Email: fmt.Sprintf("u%06d@example.org", i), Name: "u", Role: "user", ForceRole: true,
			})
			if err != nil {
				if wctx.Err() == nil {
					writeErr = err
				}
				return
			}
			written.Add(1)
		}
	}()
	waitFor := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for written.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("writer stuck at %d rows (err %v)", written.Load(), writeErr)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(50)

	file := filepath.Join(t.TempDir(), "backup.db")
	out := mustRun(t, nil, "backup", "--data-dir", dir, file)
	atBackup := written.Load()
	waitFor(atBackup + 20) // the writer kept going after the copy
	stopWriter()
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("writer: %v", writeErr)
	}
	if !strings.Contains(out, file) {
		t.Errorf("backup output %q does not name the file", out)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}

	// The copy opens and holds exactly the first n inserts.
	n := checkPrefix(t, file)
	if n < 50 || int64(n) > written.Load() {
		t.Fatalf("backup holds %d users; the writer had written at least 50 before and %d in all", n, written.Load())
	}

	// backup never overwrites.
	mustFail(t, nil, 1, "backup", "--data-dir", dir, file)

	// Restore it (server stopped: close our connection first).
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "restore", "--data-dir", dir, file)
	if got := checkPrefix(t, filepath.Join(dir, dbFile)); got != n {
		t.Fatalf("restored database has %d users, backup had %d", got, n)
	}
	var baks []string
	for _, name := range dirNames(t, dir) {
		if strings.HasPrefix(name, dbFile+".bak-") && !strings.HasSuffix(name, "-wal") && !strings.HasSuffix(name, "-shm") {
			baks = append(baks, name)
		}
		if name == dbFile+"-wal" || name == dbFile+"-shm" {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Size() > 0 {
				t.Errorf("%s (%d bytes) of the old database left beside the restored one", name, fi.Size())
			}
		}
		if strings.Contains(name, ".restore-") {
			t.Errorf("temporary file %s left behind", name)
		}
	}
	if len(baks) != 1 {
		t.Fatalf("want one hearth.db.bak-<time>, have %v", dirNames(t, dir))
	}
	// The old database was kept whole (with its WAL, if one was left): it has
	// every row the writer made.
	if got := checkPrefix(t, filepath.Join(dir, baks[0])); int64(got) != written.Load() {
		t.Errorf("kept database has %d users, writer wrote %d", got, written.Load())
	}
}

// checkPrefix opens a database file and checks that its users are exactly
// u000000 .. u(n-1); it returns n.
func checkPrefix(t *testing.T, path string) int {
	t.Helper()
	st, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer st.Close()
	rows, _, err := st.ListUsers(t.Context(), store.Actor{Role: "admin"}, store.UserFilter{OrderBy: "email", Direction: "asc"})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if want := fmt.Sprintf("u%06d@example.org", i); r.Email != want {
			t.Fatalf("%s: user %d is %s, want %s: not one consistent moment", path, i, r.Email, want)
		}
	}
	return len(rows)
}

func TestRestoreRefusals(t *testing.T) {
	future := futureSchema(t)

	notSQLite := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notSQLite, []byte("this is not a database, just some text of enough length"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "plain.db") // SQLite, but not Hearth's
	db, err := sql.Open("sqlite", plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	cases := []struct{ name, file, want string }{
		{"newer schema", future, "newer than this binary"},
		{"not sqlite", notSQLite, "not a SQLite database"},
		{"not hearth", plain, "not a Hearth database"},
		{"missing", filepath.Join(t.TempDir(), "nope.db"), "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mustRun(t, nil, "user", "create", "--data-dir", dir, "--email", "keep@example.org", "--password", "pw")
			before := fileHash(t, filepath.Join(dir, dbFile))
			names := dirNames(t, dir)
			err := mustFail(t, nil, 1, "restore", "--data-dir", dir, tc.file)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
			if fileHash(t, filepath.Join(dir, dbFile)) != before {
				t.Error("the current database was changed")
			}
			if got := dirNames(t, dir); !slices.Equal(got, names) {
				t.Errorf("data dir now holds %v, before %v", got, names)
			}
		})
	}
	// A restore needs exactly one argument.
	mustFail(t, nil, 2, "restore", "--data-dir", t.TempDir())
}
