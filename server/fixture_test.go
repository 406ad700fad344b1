package server

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hearth/auth"
	"hearth/config"
	"hearth/store"
)

// fixture is a real server on a real SQLite file in t.TempDir(), with four
// accounts: admin (the first, primary admin), user, other (a second plain
// user) and pending. Requests go through the real route table.
type fixture struct {
	t        testing.TB
	store    *store.Store
	settings *config.Settings
	srv      *Server
	tokens   *auth.Tokens

	admin, user, other, pending store.User
	// JWTs of the four accounts, and an API key of user.
	adminTok, userTok, otherTok, pendingTok string
	userKey                                 string
}

// testSecret is the fixture's JWT secret (32+ bytes, used as-is).
const testSecret = "test-secret-test-secret-test-secret"

// newFixture starts a server with the four accounts; env entries override
// the environment the configuration is loaded from (nothing is read from the
// real environment).
func newFixture(t testing.TB, env map[string]string) *fixture {
	t.Helper()
	f := emptyFixture(t, env)
	f.admin = f.mkUser("admin@example.com", "Admin", "user") // first account: promoted to admin
	f.user = f.mkUser("user@example.com", "User", "user")
	f.other = f.mkUser("other@example.com", "Other", "user")
	f.pending = f.mkUser("pending@example.com", "Pending", "pending")
	f.adminTok, f.userTok, f.otherTok, f.pendingTok = f.jwt(f.admin), f.jwt(f.user), f.jwt(f.other), f.jwt(f.pending)
	key, hash, hint := auth.NewAPIKey()
	if _, err := f.store.CreateAPIKey(context.Background(), actorOf(f.user), "test", hash, hint, false); err != nil {
		t.Fatal(err)
	}
	f.userKey = key
	return f
}

// emptyFixture starts a server on a database without accounts.
func emptyFixture(t testing.TB, env map[string]string) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	settings, _, err := config.Load(ctx, getenv, st)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.NewTokens([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	// The server's background work (file processing, generations) ends
	// with this context; the cleanup waits for it before the store closes
	// (cleanups run last-registered first).
	srvCtx, cancel := context.WithCancel(ctx)
	srv, err := New(srvCtx, Deps{Store: st, Settings: settings, Tokens: tokens, Passwords: auth.NewPasswords(4), Version: "test"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		srv.WaitTasks(wctx)
	})
	return &fixture{t: t, store: st, settings: settings, srv: srv, tokens: tokens}
}

// mkUser creates an account with password "secret-password".
func (f *fixture) mkUser(email, name, role string) store.User {
	f.t.Helper()
	hash, err := f.srv.passwords.Hash("secret-password")
	if err != nil {
		f.t.Fatal(err)
	}
	u, err := f.store.CreateUser(context.Background(), store.NewUser{Email: email, Name: name, PasswordHash: hash, Role: role})
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

func (f *fixture) jwt(u store.User) string {
	tok, _, err := f.tokens.Issue(u.ID, time.Hour)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

// do sends a request with an optional bearer token and JSON body.
func (f *fixture) do(method, path, token, body string) *httptest.ResponseRecorder {
	return f.doH(method, path, body, map[string]string{"Authorization": bearer(token)})
}

// doH sends a request with the given headers (empty values are skipped).
func (f *fixture) doH(method, path, body string, headers map[string]string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	return w
}

func bearer(tok string) string {
	if tok == "" {
		return ""
	}
	return "Bearer " + tok
}

// expect fails the test unless the response has the status (and, when
// detail is not empty, that exact detail).
func expect(t *testing.T, w *httptest.ResponseRecorder, status int, detail string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body.String())
	}
	if detail != "" && !strings.Contains(w.Body.String(), jsonString(detail)) {
		t.Fatalf("body %s, want detail %q", w.Body.String(), detail)
	}
}

func jsonString(s string) string {
	r := strings.NewReplacer(`"`, `\"`, `<`, `\u003c`, `>`, `\u003e`, `&`, `\u0026`)
	return `"` + r.Replace(s) + `"`
}

// actorOf is the Actor of an account (groups are not needed by the tests
// that use it).
func actorOf(u store.User) store.Actor { return store.Actor{UserID: u.ID, Role: u.Role} }
