package server

import (
	"sort"
	"strings"
	"testing"
)

// authzRow is one route of the authorization matrix: how to call it and the
// status each kind of caller must get. Order of want: anonymous, pending,
// user, other (a second plain user; for owned resources, the non-owner) and
// admin. The fixture's resources (an API key, groups...) belong to `user`.
type authzRow struct {
	pattern string                  // exactly as in routes.go
	path    func(f *fixture) string // concrete path; nil = the pattern's path
	body    string                  // JSON body for POST/PUT/PATCH
	ctype   string                  // Content-Type of body when not JSON
	setup   func(f *fixture)        // optional: prepares state before the call
	want    [5]int
	env     map[string]string // optional: the fixture's environment
	// scim, when not 0, is the status of one more call made with the SCIM
	// bearer token (testSCIMToken) instead of an account's credential.
	scim int
}

// authzRows gathers the rows of every API area; each area keeps its rows
// next to its handlers' tests.
func authzRows() []authzRow {
	var rows []authzRow
	for _, part := range [][]authzRow{authzAuthRows(), authzUsersRows(), authzGroupsRows(), authzDiscoveryRows(),
		authzSettingsRows(), authzChatsRows(), authzFoldersRows(), authzModelsRows(), authzPipelineRows(),
		authzRealtimeRows(), authzRuntimeRows(), authzMessagesRows(), authzSCIMRows(), authzFilesRows(),
		authzKnowledgeRows(), authzOAuthRows(), authzWebRows()} {
		rows = append(rows, part...)
	}
	return rows
}

// TestAuthzMatrix calls every route as each kind of caller, on a fresh
// fixture per call (so destructive routes cannot affect the next caller),
// and fails for any route of the table without a row.
func TestAuthzMatrix(t *testing.T) {
	rows := authzRows()
	byPattern := map[string]authzRow{}
	for _, r := range rows {
		if _, dup := byPattern[r.pattern]; dup {
			t.Errorf("two authz rows for %q", r.pattern)
		}
		byPattern[r.pattern] = r
	}
	f0 := newFixture(t, nil)
	var missing []string
	for _, rt := range f0.srv.routes {
		if _, ok := byPattern[rt.pattern]; !ok {
			missing = append(missing, rt.pattern)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("routes without an authz row:\n  %s", strings.Join(missing, "\n  "))
	}
	registered := map[string]bool{}
	for _, rt := range f0.srv.routes {
		registered[rt.pattern] = true
	}
	callers := [5]string{"anonymous", "pending", "user", "other", "admin"}
	for _, row := range rows {
		if !registered[row.pattern] {
			t.Errorf("authz row for unregistered route %q", row.pattern)
			continue
		}
		method, patPath, _ := strings.Cut(row.pattern, " ")
		t.Run(row.pattern, func(t *testing.T) {
			n := len(callers)
			if row.scim != 0 {
				n++
			}
			for i := 0; i < n; i++ {
				f := newFixture(t, row.env)
				if row.setup != nil {
					row.setup(f)
				}
				path := patPath
				if row.path != nil {
					path = row.path(f)
				}
				who, want, tok := "scim", row.scim, testSCIMToken
				if i < len(callers) {
					who, want, tok = callers[i], row.want[i], [5]string{"", f.pendingTok, f.userTok, f.otherTok, f.adminTok}[i]
				}
				w := f.doH(method, path, row.body, map[string]string{"Authorization": bearer(tok), "Content-Type": row.ctype})
				if w.Code != want {
					t.Errorf("%s %s as %s: status %d, want %d; body %.200s", method, path, who, w.Code, want, w.Body.String())
				}
				// Errors are {"detail"}; under the SCIM base, the SCIM Error
				// envelope (COMPAT.md decision 6), which carries "detail" too.
				wantPrefix := `{"detail":`
				if isSCIMPath(path) {
					wantPrefix = `{"schemas":["` + scimErrorSchema + `"],"status":"`
				}
				if w.Code >= 400 && !strings.HasPrefix(w.Body.String(), wantPrefix) {
					t.Errorf("%s %s as %s: error body does not start with %s: %.200s", method, path, who, wantPrefix, w.Body.String())
				}
			}
		})
	}
}

// Common expectations.
var (
	wantPublic   = [5]int{200, 200, 200, 200, 200}
	wantAnyRole  = [5]int{401, 200, 200, 200, 200}
	wantVerified = [5]int{401, 401, 200, 200, 200}
	wantAdmin    = [5]int{401, 401, 401, 401, 200}
)
