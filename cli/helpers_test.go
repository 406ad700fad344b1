package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"hearth/store"
)

// lockedBuffer is a bytes.Buffer safe for a server goroutine writing logs
// while the test reads them.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// result is what one command run printed and returned.
type result struct {
	stdout, stderr *lockedBuffer
	err            error
}

// run runs the real app with args (without the program name) and an
// environment of exactly env: nothing leaks in from the test process.
func run(ctx context.Context, env map[string]string, args ...string) result {
	return runWithInput(ctx, env, "", args...)
}

// runWithInput is run with stdin as the standard input.
func runWithInput(ctx context.Context, env map[string]string, stdin string, args ...string) result {
	r := result{stdout: new(lockedBuffer), stderr: new(lockedBuffer)}
	app := New(Options{
		Version:    "test-version",
		Getenv:     func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Stdin:      strings.NewReader(stdin),
		Stdout:     r.stdout,
		Stderr:     r.stderr,
		BcryptCost: 4, // bcrypt.MinCost: the tests hash many passwords
	})
	r.err = app.RunContext(ctx, append([]string{"hearth"}, args...))
	return r
}

// mustRun runs a command that has to succeed.
func mustRun(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	r := run(t.Context(), env, args...)
	if r.err != nil {
		t.Fatalf("hearth %v: %v\nstderr: %s", args, r.err, r.stderr)
	}
	return r.stdout.String()
}

// mustFail runs a command that has to fail with exit code code.
func mustFail(t *testing.T, env map[string]string, code int, args ...string) error {
	t.Helper()
	r := run(t.Context(), env, args...)
	if r.err == nil {
		t.Fatalf("hearth %v: succeeded, want exit code %d\nstdout: %s", args, code, r.stdout)
	}
	if got := ExitCode(r.err); got != code {
		t.Fatalf("hearth %v: exit code %d (%v), want %d", args, got, r.err, code)
	}
	return r.err
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// openDB opens the database of a data dir for a test's own checks.
func openDB(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func countUsers(t *testing.T, st *store.Store) int {
	t.Helper()
	n, err := st.CountUsers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
