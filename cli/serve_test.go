package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hearth/auth"
	"hearth/config"
	"hearth/store"
)

func TestBootstrapAdmin(t *testing.T) {
	ctx := t.Context()
	env := map[string]string{"WEBUI_ADMIN_EMAIL": " Root@Example.COM ", "WEBUI_ADMIN_PASSWORD": "s3cret-pw"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	pw := auth.NewPasswords(4)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), dbFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	settings, _, err := config.Load(ctx, getenv, st)
	if err != nil {
		t.Fatal(err)
	}
	if !settings.Get().EnableSignup {
		t.Fatal("ENABLE_SIGNUP should default to true")
	}

	email, err := bootstrapAdmin(ctx, st, settings, pw)
	if err != nil || email != "root@example.com" {
		t.Fatalf("bootstrapAdmin = %q, %v; want root@example.com", email, err)
	}
	u, err := st.UserByEmail(ctx, "root@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "root@example.com" || u.Name != "Admin" || u.Role != "admin" {
		t.Errorf("admin = %q %q %q, want root@example.com Admin admin", u.Email, u.Name, u.Role)
	}
	if !strings.HasPrefix(u.PasswordHash, "$2") || !pw.Check(u.PasswordHash, "s3cret-pw") {
		t.Errorf("password hash %q does not verify", u.PasswordHash)
	}
	if settings.Get().EnableSignup {
		t.Error("sign-up still enabled in memory after bootstrap")
	}
	// Persisted: a later start without the variables sees sign-up off.
	again, _, err := config.Load(ctx, nil, st)
	if err != nil {
		t.Fatal(err)
	}
	if src, _ := again.Source("ENABLE_SIGNUP"); again.Get().EnableSignup || src != config.SourceDatabase {
		t.Errorf("after restart ENABLE_SIGNUP = %v from %s, want false from database", again.Get().EnableSignup, src)
	}

	// Second start: users exist, nothing happens.
	email, err = bootstrapAdmin(ctx, st, settings, pw)
	if err != nil || email != "" {
		t.Fatalf("second bootstrapAdmin = %q, %v; want no-op", email, err)
	}
	if n := countUsers(t, st); n != 1 {
		t.Fatalf("%d users, want 1", n)
	}
}

func TestBootstrapAdminNoOp(t *testing.T) {
	ctx := t.Context()
	pw := auth.NewPasswords(4)
	cases := []struct {
		name      string
		env       map[string]string
		userFirst bool
	}{
		{"users exist", map[string]string{"WEBUI_ADMIN_EMAIL": "a@b.c", "WEBUI_ADMIN_PASSWORD": "pw"}, true},
		{"no password", map[string]string{"WEBUI_ADMIN_EMAIL": "a@b.c"}, false},
		{"no email", map[string]string{"WEBUI_ADMIN_PASSWORD": "pw"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(ctx, filepath.Join(t.TempDir(), dbFile))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if tc.userFirst {
				if _, err := st.CreateUser(ctx, store.NewUser{Email: "first@b.c", Name: "First", Role: "user"}); err != nil {
					t.Fatal(err)
				}
			}
			settings, _, err := config.Load(ctx, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, st)
			if err != nil {
				t.Fatal(err)
			}
			before := countUsers(t, st)
			email, err := bootstrapAdmin(ctx, st, settings, pw)
			if err != nil || email != "" {
				t.Fatalf("bootstrapAdmin = %q, %v; want no-op", email, err)
			}
			if countUsers(t, st) != before {
				t.Error("a user was created")
			}
			if !settings.Get().EnableSignup {
				t.Error("sign-up was disabled")
			}
		})
	}
}

func TestServeRefusesPasswordAuthWithoutOAuthSignup(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"ENABLE_PASSWORD_AUTH": "false"}
	err := mustFail(t, env, 1, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dir)
	if !strings.Contains(err.Error(), "ENABLE_OAUTH_SIGNUP") || !strings.Contains(err.Error(), "refusing to start") {
		t.Errorf("error %q does not explain the refusal", err)
	}
}

// startServe runs `hearth serve` until the returned stop is called and
// returns its base URL (it listens on a free port chosen by the kernel).
func startServe(t *testing.T, env map[string]string, args ...string) (base string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stderr := new(lockedBuffer)
	done := make(chan error, 1)
	go func() {
		app := New(Options{Version: "test-version", Stderr: stderr, Stdout: stderr, BcryptCost: 4,
			Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		done <- app.RunContext(ctx, append([]string{"hearth", "serve", "--port", "0", "--host", "127.0.0.1",
			"--log-format", "json"}, args...))
	}()
	deadline := time.Now().Add(20 * time.Second)
	for base == "" {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
				base = "http://" + rec.Addr
			}
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve exited early: %v\n%s", err, stderr)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not log its address\n%s", stderr)
		}
	}
	return base, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			return errors.New("serve did not stop")
		}
	}
}

func TestServeStartsAndShutsDown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	base, stop := startServe(t, map[string]string{"DATA_DIR": dir})
	if _, _, err := net.SplitHostPort(strings.TrimPrefix(base, "http://")); err != nil {
		t.Fatalf("logged address %q: %v", base, err)
	}
	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		t.Errorf("GET /health = %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("DATA_DIR mode %v, want 0700", fi.Mode().Perm())
	}
	for _, name := range []string{dbFile, "secret_key"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not created: %v", name, err)
		}
	}
}

func TestServeCreatesBootstrapAdmin(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"WEBUI_ADMIN_EMAIL": "Boss@Example.org", "WEBUI_ADMIN_PASSWORD": "pw", "WEBUI_ADMIN_NAME": "Boss"}
	_, stop := startServe(t, env, "--data-dir", dir)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	u, err := openDB(t, dir).UserByEmail(t.Context(), "boss@example.org")
	if err != nil || u.Role != "admin" || u.Name != "Boss" {
		t.Fatalf("bootstrap admin = %+v, %v", u, err)
	}
}

// futureSchema makes a copy of a Hearth database that claims a migration
// this binary does not know.
func futureSchema(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, nil, "migrate", "--data-dir", dir)
	file := filepath.Join(t.TempDir(), "future.db")
	mustRun(t, nil, "backup", "--data-dir", dir, file)
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)`,
		store.LatestMigration()+100000, "future.sql"); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestServeRefusesNewerSchema(t *testing.T) {
	file := futureSchema(t)
	dir := t.TempDir()
	if err := copyFile(file, filepath.Join(dir, dbFile)); err != nil {
		t.Fatal(err)
	}
	err := mustFail(t, nil, 1, "serve", "--port", "0", "--data-dir", dir)
	if !strings.Contains(err.Error(), "newer than this binary") {
		t.Errorf("error %q does not say the schema is too new", err)
	}
	mustFail(t, nil, 1, "migrate", "--data-dir", dir)
}

func TestExitCode(t *testing.T) {
	if ExitCode(nil) != 0 || ExitCode(errors.New("x")) != 1 {
		t.Error("ExitCode of nil / plain error")
	}
	if r := run(t.Context(), nil, "version"); r.err != nil || strings.TrimSpace(r.stdout.String()) != "test-version" {
		t.Errorf("version printed %q, %v", r.stdout, r.err)
	}
	if Version("v1.2.3") != "v1.2.3" || Version("") == "" {
		t.Error("Version")
	}
}
