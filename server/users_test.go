package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"hearth/store"
)

// execSQL changes the fixture's database behind the store's back, for state
// no API produces (old activity, fixed creation times).
func execSQL(f *fixture, q string, args ...any) {
	f.t.Helper()
	db, err := sql.Open("sqlite", "file:"+f.store.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		f.t.Fatal(err)
	}
}

// decodeInto decodes the body into v; v should be fresh (json reuses maps
// already present in a slice it decodes into).
func decodeInto(t *testing.T, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatalf("body: %v: %s", err, w.Body.String())
	}
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

type userList struct {
	Users []map[string]any `json:"users"`
	Total int              `json:"total"`
}

func listOf(t *testing.T, w *httptest.ResponseRecorder) userList {
	t.Helper()
	expect(t, w, 200, "")
	var l userList
	decodeInto(t, w, &l)
	return l
}

func TestListUsersPagingSearchOrder(t *testing.T) {
	f := newFixture(t, nil)
	for i := range 35 {
		f.mkUser(fmt.Sprintf("bulk%02d@example.com", i), fmt.Sprintf("Bulk %02d", i), "user")
	}
	// Distinct creation times: bulk00 oldest ... bulk34 newest, all after
	// the fixture's four accounts.
	for i := range 35 {
		execSQL(f, `UPDATE users SET created_at = ? WHERE email = ?`, time.Now().Unix()+int64(i+1), fmt.Sprintf("bulk%02d@example.com", i))
	}
	l := listOf(t, f.do("GET", "/api/v1/users/", f.adminTok, ""))
	if l.Total != 39 || len(l.Users) != 30 {
		t.Fatalf("page 1: total %d, %d users", l.Total, len(l.Users))
	}
	if l.Users[0]["email"] != "bulk34@example.com" || l.Users[1]["email"] != "bulk33@example.com" {
		t.Fatalf("default order is not created_at desc: %v, %v", l.Users[0]["email"], l.Users[1]["email"])
	}
	l = listOf(t, f.do("GET", "/api/v1/users/?page=2", f.adminTok, ""))
	if l.Total != 39 || len(l.Users) != 9 {
		t.Fatalf("page 2: total %d, %d users", l.Total, len(l.Users))
	}
	l = listOf(t, f.do("GET", "/api/v1/users/?page=0", f.adminTok, ""))
	if len(l.Users) != 30 {
		t.Fatalf("page 0 is page 1: %d users", len(l.Users))
	}

	l = listOf(t, f.do("GET", "/api/v1/users/?query=BULK%200&order_by=name&direction=asc", f.adminTok, ""))
	if l.Total != 10 || len(l.Users) != 10 || l.Users[0]["name"] != "Bulk 00" || l.Users[9]["name"] != "Bulk 09" {
		t.Fatalf("query + name asc: total %d, first %v", l.Total, l.Users)
	}
	l = listOf(t, f.do("GET", "/api/v1/users/?order_by=email&direction=desc&query=example.com", f.adminTok, ""))
	if l.Users[0]["email"] != "user@example.com" {
		t.Fatalf("email desc: first %v", l.Users[0]["email"])
	}
	// LIKE wildcards in the query are literal.
	l = listOf(t, f.do("GET", "/api/v1/users/?query=%25", f.adminTok, ""))
	if l.Total != 0 {
		t.Fatalf("%% matched %d users", l.Total)
	}
	expect(t, f.do("GET", "/api/v1/users/?page=x", f.adminTok, ""), 422, "")
}

func TestUserModelShape(t *testing.T) {
	f := newFixture(t, nil)
	g, err := f.store.CreateGroup(context.Background(), actorOf(f.admin), store.Group{Name: "staff"})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, f.do("POST", "/api/v1/groups/id/"+g.ID+"/users/add", f.adminTok, `{"user_ids":["`+f.user.ID+`"]}`), 200, "")
	w := f.do("GET", "/api/v1/users/?query=user@", f.adminTok, "")
	expect(t, w, 200, "")
	if strings.Contains(w.Body.String(), "password") || strings.Contains(w.Body.String(), f.user.PasswordHash) {
		t.Fatalf("password hash leaked: %s", w.Body.String())
	}
	var l userList
	decodeInto(t, w, &l)
	if len(l.Users) != 1 {
		t.Fatalf("users: %v", l.Users)
	}
	u := l.Users[0]
	want := []string{"bio", "created_at", "date_of_birth", "email", "gender", "group_ids", "id", "info", "last_active_at",
		"name", "oauth", "presence_state", "profile_banner_image_url", "profile_image_url", "role", "scim", "settings",
		"status_emoji", "status_expires_at", "status_message", "timezone", "updated_at", "username"}
	if got := keysOf(u); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("UserModel keys\n got %v\nwant %v", got, want)
	}
	if ids, _ := u["group_ids"].([]any); len(ids) != 1 || ids[0] != g.ID {
		t.Fatalf("group_ids %v", u["group_ids"])
	}
	if u["profile_image_url"] != "/api/v1/users/"+f.user.ID+"/profile/image" || u["bio"] != nil || u["settings"] != nil {
		t.Fatalf("defaults: %v", u)
	}
	// Users with no groups get [] rather than null.
	w = f.do("GET", "/api/v1/users/?query=other@", f.adminTok, "")
	if !strings.Contains(w.Body.String(), `"group_ids":[]`) {
		t.Fatalf("empty group_ids: %s", w.Body.String())
	}
}

func TestAllAndSearchUsers(t *testing.T) {
	f := newFixture(t, nil)
	g, _ := f.store.CreateGroup(context.Background(), actorOf(f.admin), store.Group{Name: "staff"})
	f.store.ChangeMembers(context.Background(), actorOf(f.admin), g.ID, []string{f.user.ID}, nil)

	l := listOf(t, f.do("GET", "/api/v1/users/all", f.adminTok, ""))
	if l.Total != 4 || len(l.Users) != 4 {
		t.Fatalf("all: %+v", l)
	}
	for _, u := range l.Users {
		if u["email"] == "user@example.com" {
			gs, _ := u["groups"].([]any)
			if len(gs) != 1 || gs[0].(map[string]any)["name"] != "staff" || u["is_active"] != true {
				t.Fatalf("user info: %v", u)
			}
		}
		if _, leak := u["settings"]; leak {
			t.Fatalf("UserInfoResponse carries settings: %v", u)
		}
	}

	// A non-admin sees only the card: nothing beyond name, e-mail, picture
	// and role (and the always-null status fields).
	l = listOf(t, f.do("GET", "/api/v1/users/search?query=user@", f.otherTok, ""))
	if l.Total != 1 || len(l.Users) != 1 {
		t.Fatalf("search as user: %+v", l)
	}
	want := "email,id,name,profile_image_url,role,status_emoji,status_expires_at,status_message"
	if got := strings.Join(keysOf(l.Users[0]), ","); got != want {
		t.Fatalf("card keys %s, want %s", got, want)
	}
	// Admins get UserInfoResponse, with groups.
	l = listOf(t, f.do("GET", "/api/v1/users/search?query=user@", f.adminTok, ""))
	if gs, _ := l.Users[0]["groups"].([]any); len(gs) != 1 {
		t.Fatalf("admin search: %v", l.Users[0])
	}
	l = listOf(t, f.do("GET", "/api/v1/users/search", f.userTok, ""))
	if l.Total != 4 {
		t.Fatalf("empty query: total %d", l.Total)
	}
}

func TestRoleChangeTakesEffectOnNextRequest(t *testing.T) {
	f := newFixture(t, nil)
	expect(t, f.do("GET", "/api/v1/users/", f.userTok, ""), 401, msgAccessProhibited)
	w := f.do("POST", "/api/v1/users/"+f.user.ID+"/update", f.adminTok, `{"role":"admin"}`)
	expect(t, w, 200, "")
	if m := decodeBody(t, w); m["role"] != "admin" || m["email"] != "user@example.com" {
		t.Fatalf("update answer: %v", m)
	}
	expect(t, f.do("GET", "/api/v1/users/", f.userTok, ""), 200, "")
	expect(t, f.do("POST", "/api/v1/users/"+f.user.ID+"/update", f.adminTok, `{"role":"pending"}`), 200, "")
	expect(t, f.do("GET", "/api/v1/users/search", f.userTok, ""), 401, msgAccessProhibited)
	expect(t, f.do("POST", "/api/v1/users/"+f.pending.ID+"/update", f.adminTok, `{"role":"user"}`), 200, "")
	expect(t, f.do("GET", "/api/v1/users/search", f.pendingTok, ""), 200, "")
}

func TestPrimaryAdminProtection(t *testing.T) {
	f := newFixture(t, nil)
	// other becomes a second admin.
	expect(t, f.do("POST", "/api/v1/users/"+f.other.ID+"/update", f.adminTok, `{"role":"admin"}`), 200, "")
	primary := "/api/v1/users/" + f.admin.ID
	expect(t, f.do("POST", primary+"/update", f.otherTok, `{"name":"Hijacked"}`), 403, msgActionProhibited)
	expect(t, f.do("POST", primary+"/update", f.otherTok, `{"role":"user"}`), 403, msgActionProhibited)
	expect(t, f.do("DELETE", primary, f.otherTok, ""), 403, msgActionProhibited)
	// The primary admin may edit itself but not demote itself.
	expect(t, f.do("POST", primary+"/update", f.adminTok, `{"role":"user"}`), 403, msgActionProhibited)
	expect(t, f.do("POST", primary+"/update", f.adminTok, `{"role":"admin","name":"Boss"}`), 200, "")
	// No admin deletes their own account.
	expect(t, f.do("DELETE", "/api/v1/users/"+f.other.ID, f.otherTok, ""), 403, msgActionProhibited)
	u, err := f.store.UserByID(context.Background(), f.admin.ID)
	if err != nil || u.Role != "admin" || u.Name != "Boss" {
		t.Fatalf("primary admin: %+v %v", u, err)
	}
	// The second admin may still be demoted by the primary admin.
	expect(t, f.do("POST", "/api/v1/users/"+f.other.ID+"/update", f.adminTok, `{"role":"user"}`), 200, "")
	expect(t, f.do("GET", "/api/v1/users/", f.otherTok, ""), 401, msgAccessProhibited)
}

func TestUpdateUserValidation(t *testing.T) {
	f := newFixture(t, nil)
	path := "/api/v1/users/" + f.user.ID + "/update"
	before, _ := f.store.UserByID(context.Background(), f.user.ID)
	for _, c := range []struct {
		body   string
		status int
		detail string
	}{
		{`{"email":"other@example.com"}`, 400, msgEmailTaken},
		{`{"email":"OTHER@example.com"}`, 400, msgEmailTaken},
		{`{"email":"not-an-email"}`, 400, msgInvalidEmail},
		{`{"role":"root"}`, 400, ""},
		{`{"name":"  "}`, 422, ""},
		{`{"name":5}`, 422, ""},
		{`{"role":["admin"]}`, 422, ""},
		{`{"profile_image_url":"javascript:alert(1)"}`, 400, ""},
		{`{"password":"` + strings.Repeat("x", 73) + `"}`, 400, msgPasswordTooLong},
		{`[]`, 422, ""},
		{``, 422, ""},
	} {
		w := f.do("POST", path, f.adminTok, c.body)
		expect(t, w, c.status, c.detail)
		if _, isString := decodeBody(t, w)["detail"].(string); !isString {
			t.Fatalf("%s: detail is not a string: %s", c.body, w.Body.String())
		}
	}
	after, _ := f.store.UserByID(context.Background(), f.user.ID)
	if after.Email != before.Email || after.Role != before.Role || after.Name != before.Name || after.PasswordHash != before.PasswordHash {
		t.Fatalf("a refused update changed the account: %+v", after)
	}
	expect(t, f.do("POST", "/api/v1/users/no-such-user/update", f.adminTok, `{"name":"X"}`), 400, msgNotFound)

	w := f.do("POST", path, f.adminTok, `{"email":"New@Example.com","name":"New","password":"fresh-password","profile_image_url":"https://img.example.com/a.png"}`)
	expect(t, w, 200, "")
	m := decodeBody(t, w)
	if m["email"] != "new@example.com" || m["name"] != "New" || m["profile_image_url"] != "https://img.example.com/a.png" {
		t.Fatalf("updated: %v", m)
	}
	if _, leak := m["password_hash"]; leak {
		t.Fatal("password hash in answer")
	}
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"new@example.com","password":"fresh-password"}`), 200, "")
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"new@example.com","password":"secret-password"}`), 400, msgInvalidCred)
	// An empty password leaves the password alone.
	expect(t, f.do("POST", path, f.adminTok, `{"password":""}`), 200, "")
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"new@example.com","password":"fresh-password"}`), 200, "")
}

func TestDeleteUserCascades(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	g, _ := f.store.CreateGroup(ctx, actorOf(f.admin), store.Group{Name: "staff"})
	f.store.ChangeMembers(ctx, actorOf(f.admin), g.ID, []string{f.user.ID, f.other.ID}, nil)
	expect(t, f.do("GET", "/api/v1/auths/", f.userTok, ""), 200, "")

	w := f.do("DELETE", "/api/v1/users/"+f.user.ID, f.adminTok, "")
	expect(t, w, 200, "")
	if strings.TrimSpace(w.Body.String()) != "true" {
		t.Fatalf("delete answer %s", w.Body.String())
	}
	expect(t, f.do("GET", "/api/v1/auths/", f.userTok, ""), 401, msgInvalidToken)
	expect(t, f.do("GET", "/api/v1/auths/", f.userKey, ""), 401, msgInvalidToken)
	w = f.do("GET", "/api/v1/groups/id/"+g.ID, f.adminTok, "")
	if m := decodeBody(t, w); m["member_count"] != float64(1) {
		t.Fatalf("membership not removed: %v", m)
	}
	expect(t, f.do("DELETE", "/api/v1/users/"+f.user.ID, f.adminTok, ""), 404, msgNotFound)
	expect(t, f.do("GET", "/api/v1/users/"+f.user.ID, f.otherTok, ""), 400, msgNotFound)
}

func TestMySettingsAndInfo(t *testing.T) {
	f := newFixture(t, map[string]string{"USER_PERMISSIONS_FEATURES_DIRECT_TOOL_SERVERS": "false"})
	w := f.do("GET", "/api/v1/users/user/settings", f.userTok, "")
	expect(t, w, 200, "")
	if strings.TrimSpace(w.Body.String()) != "null" {
		t.Fatalf("fresh settings %s", w.Body.String())
	}
	expect(t, f.do("POST", "/api/v1/users/user/settings/update", f.userTok, `{"ui":{"theme":"dark","models":["m1"]}}`), 200, "")
	expect(t, f.do("POST", "/api/v1/users/user/settings/update", f.userTok, `{"functions":{"valves":{"f1":{"x":1}}}}`), 200, "")
	// A new "ui" replaces the old one whole; other top-level keys stay.
	w = f.do("POST", "/api/v1/users/user/settings/update", f.userTok, `{"ui":{"theme":"light"}}`)
	expect(t, w, 200, "")
	want := `{"functions":{"valves":{"f1":{"x":1}}},"ui":{"theme":"light"}}`
	if got := strings.TrimSpace(w.Body.String()); got != want {
		t.Fatalf("settings %s, want %s", got, want)
	}
	w = f.do("GET", "/api/v1/users/user/settings", f.userTok, "")
	if got := strings.TrimSpace(w.Body.String()); got != want {
		t.Fatalf("stored settings %s, want %s", got, want)
	}
	// Bad bodies: 422 with a string detail, nothing stored.
	for _, body := range []string{`{"ui":5}`, `{"ui":[1]}`, `[1]`, `"x"`, `{"ui":`} {
		w := f.do("POST", "/api/v1/users/user/settings/update", f.userTok, body)
		expect(t, w, 422, "")
		if _, ok := decodeBody(t, w)["detail"].(string); !ok {
			t.Fatalf("%s: %s", body, w.Body.String())
		}
	}
	w = f.do("GET", "/api/v1/users/user/settings", f.userTok, "")
	if got := strings.TrimSpace(w.Body.String()); got != want {
		t.Fatalf("settings after bad bodies %s", got)
	}
	// Settings are per user.
	w = f.do("GET", "/api/v1/users/user/settings", f.otherTok, "")
	if strings.TrimSpace(w.Body.String()) != "null" {
		t.Fatalf("other's settings %s", w.Body.String())
	}

	// toolServers need features.direct_tool_servers (admins always have it).
	w = f.do("POST", "/api/v1/users/user/settings/update", f.userTok, `{"ui":{"toolServers":[{"url":"x"}],"a":1}}`)
	if got := strings.TrimSpace(w.Body.String()); !strings.Contains(got, `"ui":{"a":1}`) {
		t.Fatalf("toolServers kept for a user without permission: %s", got)
	}
	w = f.do("POST", "/api/v1/users/user/settings/update", f.adminTok, `{"ui":{"toolServers":[{"url":"x"}]}}`)
	if !strings.Contains(w.Body.String(), "toolServers") {
		t.Fatalf("toolServers dropped for admin: %s", w.Body.String())
	}

	// Info merges keys.
	w = f.do("GET", "/api/v1/users/user/info", f.userTok, "")
	if strings.TrimSpace(w.Body.String()) != "null" {
		t.Fatalf("fresh info %s", w.Body.String())
	}
	expect(t, f.do("POST", "/api/v1/users/user/info/update", f.userTok, `{"a":1,"b":{"c":2}}`), 200, "")
	w = f.do("POST", "/api/v1/users/user/info/update", f.userTok, `{"b":"x","d":null}`)
	expect(t, w, 200, "")
	wantInfo := `{"a":1,"b":"x","d":null}`
	if got := strings.TrimSpace(w.Body.String()); got != wantInfo {
		t.Fatalf("info %s, want %s", got, wantInfo)
	}
	expect(t, f.do("POST", "/api/v1/users/user/info/update", f.userTok, `[1]`), 422, "")
	w = f.do("GET", "/api/v1/users/user/info", f.userTok, "")
	if got := strings.TrimSpace(w.Body.String()); got != wantInfo {
		t.Fatalf("stored info %s", got)
	}
}

func TestGetUserAndActive(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("GET", "/api/v1/users/"+f.user.ID, f.otherTok, "")
	expect(t, w, 200, "")
	m := decodeBody(t, w)
	want := "active,name,profile_image_url,status_emoji,status_expires_at,status_message"
	if got := strings.Join(keysOf(m), ","); got != want {
		t.Fatalf("keys %s, want %s", got, want)
	}
	if m["name"] != "User" || m["active"] != true || m["profile_image_url"] != "/api/v1/users/"+f.user.ID+"/profile/image" {
		t.Fatalf("user: %v", m)
	}
	expect(t, f.do("GET", "/api/v1/users/nobody", f.otherTok, ""), 400, msgNotFound)

	w = f.do("GET", "/api/v1/users/"+f.user.ID+"/active", f.otherTok, "")
	if strings.TrimSpace(w.Body.String()) != `{"active":true}` {
		t.Fatalf("active: %s", w.Body.String())
	}
	execSQL(f, `UPDATE users SET last_active_at = ? WHERE id = ?`, time.Now().Add(-4*time.Minute).Unix(), f.user.ID)
	w = f.do("GET", "/api/v1/users/"+f.user.ID+"/active", f.otherTok, "")
	if strings.TrimSpace(w.Body.String()) != `{"active":false}` {
		t.Fatalf("inactive: %s", w.Body.String())
	}
	w = f.do("GET", "/api/v1/users/nobody/active", f.otherTok, "")
	if strings.TrimSpace(w.Body.String()) != `{"active":false}` {
		t.Fatalf("unknown: %s", w.Body.String())
	}
}

func TestDefaultPermissions(t *testing.T) {
	// Pin the leaves the test flips, whatever the built-in defaults are.
	f := newFixture(t, map[string]string{"USER_PERMISSIONS_FEATURES_API_KEYS": "false", "USER_PERMISSIONS_CHAT_EDIT": "true"})
	w := f.do("GET", "/api/v1/users/default/permissions", f.adminTok, "")
	expect(t, w, 200, "")
	var tree map[string]map[string]bool
	decodeInto(t, w, &tree)
	if tree["features"]["api_keys"] || !tree["chat"]["edit"] {
		t.Fatalf("defaults: %v", tree)
	}
	// Bad trees: 422, nothing changes.
	for _, body := range []string{`{"features":5}`, `{"features":{"api_keys":"yes"}}`, `{"features":{"api_keys":null}}`, `[]`, `{"chat":[true]}`} {
		w := f.do("POST", "/api/v1/users/default/permissions", f.adminTok, body)
		expect(t, w, 422, "")
		if _, ok := decodeBody(t, w)["detail"].(string); !ok {
			t.Fatalf("%s: %s", body, w.Body.String())
		}
	}
	if f.srv.cfg().UserPermissions["features"]["api_keys"] || !f.srv.cfg().UserPermissions["chat"]["edit"] {
		t.Fatal("a refused tree changed the defaults")
	}
	w = f.do("POST", "/api/v1/users/default/permissions", f.adminTok, `{"features":{"api_keys":true},"chat":{"edit":false}}`)
	expect(t, w, 200, "")
	decodeInto(t, w, &tree)
	if !tree["features"]["api_keys"] || tree["chat"]["edit"] || !tree["chat"]["delete"] {
		t.Fatalf("answer: %v", tree)
	}
	// The new defaults apply to everyone's effective permissions at once.
	w = f.do("GET", "/api/v1/users/permissions", f.userTok, "")
	decodeInto(t, w, &tree)
	if !tree["features"]["api_keys"] || tree["chat"]["edit"] {
		t.Fatalf("effective: %v", tree)
	}
	// ... and are persisted.
	stored, err := f.store.LoadConfig(context.Background())
	if err != nil || !strings.Contains(string(stored["user.permissions"]), `"api_keys":true`) {
		t.Fatalf("stored: %s %v", stored["user.permissions"], err)
	}
}
