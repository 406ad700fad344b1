package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hearth/auth"
	"hearth/config"
)

func TestUserCommands(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"DATA_DIR": dir} // DATA_DIR from the environment this time
	pw := auth.NewPasswords(4)

	// list before any database exists: a clear error, and nothing created.
	err := mustFail(t, env, 1, "user", "list")
	if !strings.Contains(err.Error(), "no database") {
		t.Errorf("list without database: %v", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("list created %v", names)
	}

	// The first account becomes admin, as with sign-up; later ones get --role.
	out := mustRun(t, env, "user", "create", "--email", "Owner@Example.org", "--password", "first-pw")
	if !strings.Contains(out, "owner@example.org") || !strings.Contains(out, "role admin") {
		t.Errorf("create printed %q", out)
	}
	mustRun(t, env, "user", "create", "--email", "sam@example.org", "--name", "Sam", "--password", "pw", "--role", "pending")
	mustFail(t, env, 1, "user", "create", "--email", "SAM@example.org", "--password", "pw")
	mustFail(t, env, 2, "user", "create", "--email", "nobody", "--password", "pw")
	mustFail(t, env, 2, "user", "create", "--email", "x@example.org", "--password", "pw", "--role", "root")
	mustFail(t, env, 1, "user", "create", "--email", "x@example.org") // --password is required

	var users []userJSON
	if err := json.Unmarshal([]byte(mustRun(t, env, "user", "list", "--json")), &users); err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, u := range users {
		roles[u.Email] = u.Role
	}
	if len(users) != 2 || roles["owner@example.org"] != "admin" || roles["sam@example.org"] != "pending" {
		t.Fatalf("users = %+v", users)
	}
	if table := mustRun(t, env, "user", "list"); !strings.Contains(table, "EMAIL") || !strings.Contains(table, "sam@example.org") {
		t.Errorf("table = %q", table)
	}

	// set-role works on others; the primary admin keeps the admin role.
	mustRun(t, env, "user", "set-role", "--email", "sam@example.org", "--role", "user")
	err = mustFail(t, env, 1, "user", "set-role", "--email", "owner@example.org", "--role", "user")
	if !strings.Contains(err.Error(), "primary admin") {
		t.Errorf("demoting the primary admin: %v", err)
	}
	mustFail(t, env, 1, "user", "set-role", "--email", "ghost@example.org", "--role", "user")

	// reset-password works for the primary admin too (Store.UpdateUser
	// refuses other admins on that account; the operator is not one).
	mustRun(t, env, "user", "reset-password", "--email", "OWNER@example.org", "--password", "new-pw")
	// --password - reads it from standard input (kept out of the process list).
	if r := runWithInput(t.Context(), env, "sam-new\n", "user", "reset-password", "--email", "sam@example.org", "--password", "-"); r.err != nil {
		t.Fatalf("reset-password from stdin: %v", r.err)
	}
	mustFail(t, env, 2, "user", "reset-password", "--email", "sam@example.org", "--password", "-") // empty input
	mustFail(t, env, 1, "user", "reset-password", "--email", "x@example.org", "--password", strings.Repeat("p", 73))

	st := openDB(t, dir)
	owner, err := st.UserByEmail(t.Context(), "owner@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if !pw.Check(owner.PasswordHash, "new-pw") || owner.Role != "admin" {
		t.Errorf("owner: role %s, new password ok=%v", owner.Role, pw.Check(owner.PasswordHash, "new-pw"))
	}
	sam, err := st.UserByEmail(t.Context(), "sam@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if !pw.Check(sam.PasswordHash, "sam-new") || sam.Role != "user" || sam.Name != "Sam" {
		t.Errorf("sam = %+v", sam)
	}
}

func TestConfigExplainDoesNotWrite(t *testing.T) {
	// No database: environment and defaults, and nothing is created.
	missing := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"WEBUI_SECRET_KEY": "very-secret-value", "ENABLE_SIGNUP": "false"}
	out := mustRun(t, env, "config", "explain", "--data-dir", missing)
	if strings.Contains(out, "very-secret-value") || !strings.Contains(out, "<redacted>") {
		t.Error("the secret is not redacted")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("explain created the data dir (%v)", err)
	}

	// A current database that has never been started: explain must not seed it.
	dir := t.TempDir()
	mustRun(t, nil, "migrate", "--data-dir", dir)
	path := filepath.Join(dir, dbFile)
	before, names := fileHash(t, path), dirNames(t, dir)
	rows := explainRows(t, env, dir)
	if r := rows["ENABLE_SIGNUP"]; r.Value != "false" || r.Source != "env" || !r.Stored {
		t.Errorf("ENABLE_SIGNUP row = %+v", r)
	}
	if r := rows["PORT"]; r.Persistent || r.Source != "default" || r.Value != "8080" {
		t.Errorf("PORT row = %+v", r)
	}
	if fileHash(t, path) != before {
		t.Error("explain changed hearth.db")
	}
	if got := dirNames(t, dir); strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("data dir now holds %v, before %v", got, names)
	}
	st := openDB(t, dir)
	stored, err := st.LoadConfig(t.Context())
	if err != nil || len(stored) != 0 {
		t.Fatalf("explain seeded %d settings (%v)", len(stored), err)
	}

	// Stored values are shown with their source, and still nothing is written.
	if _, _, err := config.Load(t.Context(), func(k string) (string, bool) {
		if k == "ENABLE_SIGNUP" {
			return "false", true
		}
		return "", false
	}, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before = fileHash(t, path)
	rows = explainRows(t, map[string]string{"ENABLE_SIGNUP": "true"}, dir)
	if r := rows["ENABLE_SIGNUP"]; r.Value != "false" || r.Source != "database" {
		t.Errorf("ENABLE_SIGNUP row = %+v, want false from database", r)
	}
	if fileHash(t, path) != before {
		t.Error("explain changed hearth.db")
	}

	// A setup serve would refuse is still explained, with a warning.
	r := run(t.Context(), map[string]string{"ENABLE_PASSWORD_AUTH": "false"}, "config", "explain", "--data-dir", dir)
	if r.err != nil || !strings.Contains(r.stderr.String(), "refuse") {
		t.Errorf("explain of a refused setup: %v, stderr %q", r.err, r.stderr)
	}
}

func explainRows(t *testing.T, env map[string]string, dir string) map[string]explainJSON {
	t.Helper()
	var rows []explainJSON
	if err := json.Unmarshal([]byte(mustRun(t, env, "config", "explain", "--json", "--data-dir", dir)), &rows); err != nil {
		t.Fatal(err)
	}
	m := map[string]explainJSON{}
	for _, r := range rows {
		m[r.Name] = r
	}
	if len(m) != len(config.Vars()) {
		t.Errorf("explain lists %d settings, config defines %d", len(m), len(config.Vars()))
	}
	return m
}
