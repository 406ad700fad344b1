package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

func groupOf(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	expect(t, w, 200, "")
	return decodeBody(t, w)
}

func groupsOf(t *testing.T, w *httptest.ResponseRecorder) []map[string]any {
	t.Helper()
	expect(t, w, 200, "")
	var gs []map[string]any
	decodeInto(t, w, &gs)
	return gs
}

func shareOf(g map[string]any) any {
	data, _ := g["data"].(map[string]any)
	cfg, _ := data["config"].(map[string]any)
	return cfg["share"]
}

func TestCreateGroupDefaultShare(t *testing.T) {
	for _, c := range []struct {
		env  string
		want any
	}{{"", "members"}, {"members", "members"}, {"true", true}, {"false", false}} {
		env := map[string]string{}
		if c.env != "" {
			env["DEFAULT_GROUP_SHARE_PERMISSION"] = c.env
		}
		f := newFixture(t, env)
		g := groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok, `{"name":"staff","description":"d"}`))
		if got := shareOf(g); got != c.want {
			t.Fatalf("env %q: share %v, want %v", c.env, got, c.want)
		}
		if g["name"] != "staff" || g["description"] != "d" || g["user_id"] != f.admin.ID || g["member_count"] != float64(0) || g["permissions"] != nil {
			t.Fatalf("created: %v", g)
		}
		// A share given in data wins; other data keys are kept.
		g = groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok,
			`{"name":"locked","data":{"config":{"share":false,"x":1},"y":"z"}}`))
		if shareOf(g) != false || g["data"].(map[string]any)["y"] != "z" {
			t.Fatalf("explicit share: %v", g["data"])
		}
	}
}

func TestCreateGroupValidation(t *testing.T) {
	f := newFixture(t, nil)
	groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok, `{"name":"Staff"}`))
	for _, c := range []struct {
		body   string
		status int
		detail string
	}{
		{`{"name":"staff"}`, 400, `A group named "staff" already exists. Please choose another name.`},
		{`{"description":"no name"}`, 422, `Field "name" is required`},
		{`{"name":"  "}`, 422, ""},
		{`{"name":7}`, 422, ""},
		{`{"name":"g","permissions":[]}`, 422, ""},
		{`{"name":"g","permissions":"all"}`, 422, ""},
		{`{"name":"g","permissions":{"chat":true}}`, 422, ""},
		{`{"name":"g","permissions":{"chat":null}}`, 422, ""},
		{`{"name":"g","permissions":{"chat":{"edit":"yes"}}}`, 422, ""},
		{`{"name":"g","permissions":{"chat":{"edit":null}}}`, 422, ""},
		{`{"name":"g","data":[]}`, 422, ""},
		{`{"name":"g","data":{"config":"x"}}`, 422, ""},
		{`{"name":"g","data":{"config":{"share":"everyone"}}}`, 422, ""},
		{`[]`, 422, ""},
	} {
		w := f.do("POST", "/api/v1/groups/create", f.adminTok, c.body)
		expect(t, w, c.status, c.detail)
		if _, ok := decodeBody(t, w)["detail"].(string); !ok {
			t.Fatalf("%s: %s", c.body, w.Body.String())
		}
	}
	if gs := groupsOf(t, f.do("GET", "/api/v1/groups/", f.adminTok, "")); len(gs) != 1 {
		t.Fatalf("refused creates left groups: %v", gs)
	}
	g := groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok, `{"name":"g","permissions":{"chat":{"edit":false},"features":{}}}`))
	if p, _ := json.Marshal(g["permissions"]); string(p) != `{"chat":{"edit":false},"features":{}}` {
		t.Fatalf("permissions stored as %s", p)
	}
}

func TestGroupMembership(t *testing.T) {
	f := newFixture(t, nil)
	g := groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok, `{"name":"staff"}`))
	base := "/api/v1/groups/id/" + g["id"].(string)

	g = groupOf(t, f.do("POST", base+"/users/add", f.adminTok, `{"user_ids":["`+f.user.ID+`","`+f.other.ID+`","no-such-user"]}`))
	if g["member_count"] != float64(2) || len(g["user_ids"].([]any)) != 2 {
		t.Fatalf("after add: %v", g)
	}
	// Adding again changes nothing.
	g = groupOf(t, f.do("POST", base+"/users/add", f.adminTok, `{"user_ids":["`+f.user.ID+`"]}`))
	if g["member_count"] != float64(2) {
		t.Fatalf("re-add: %v", g)
	}
	members := groupsOf(t, f.do("POST", base+"/users", f.adminTok, ""))
	emails := map[any]bool{}
	for _, m := range members {
		emails[m["email"]] = true
		if gs, _ := m["groups"].([]any); len(gs) != 1 || gs[0].(map[string]any)["name"] != "staff" {
			t.Fatalf("member groups: %v", m)
		}
	}
	if len(members) != 2 || !emails["user@example.com"] || !emails["other@example.com"] {
		t.Fatalf("members: %v", members)
	}

	g = groupOf(t, f.do("POST", base+"/users/remove", f.adminTok, `{"user_ids":["`+f.other.ID+`"]}`))
	if g["member_count"] != float64(1) || g["user_ids"].([]any)[0] != f.user.ID {
		t.Fatalf("after remove: %v", g)
	}
	expect(t, f.do("POST", base+"/users/add", f.adminTok, `{"user_ids":"x"}`), 422, "")
	expect(t, f.do("POST", base+"/users/add", f.adminTok, `{"user_ids":[1]}`), 422, "")

	// Members see their groups (without the member list); others do not.
	gs := groupsOf(t, f.do("GET", "/api/v1/groups/", f.userTok, ""))
	if len(gs) != 1 || gs[0]["name"] != "staff" || gs[0]["member_count"] != float64(1) {
		t.Fatalf("user's groups: %v", gs)
	}
	if _, has := gs[0]["user_ids"]; has {
		t.Fatalf("member list shown to a non-admin: %v", gs[0])
	}
	if gs := groupsOf(t, f.do("GET", "/api/v1/groups/", f.otherTok, "")); len(gs) != 0 {
		t.Fatalf("non-member sees %v", gs)
	}
	if gs := groupsOf(t, f.do("GET", "/api/v1/users/groups", f.userTok, "")); len(gs) != 1 || gs[0]["name"] != "staff" {
		t.Fatalf("my groups: %v", gs)
	}
	if gs := groupsOf(t, f.do("GET", "/api/v1/users/groups", f.otherTok, "")); len(gs) != 0 {
		t.Fatalf("other's groups: %v", gs)
	}
	if gs := groupsOf(t, f.do("GET", "/api/v1/users/"+f.user.ID+"/groups", f.adminTok, "")); len(gs) != 1 {
		t.Fatalf("admin view of user's groups: %v", gs)
	}

	// An empty group lists [] members; an unknown one is 404.
	g2 := groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok, `{"name":"empty"}`))
	if ms := groupsOf(t, f.do("POST", "/api/v1/groups/id/"+g2["id"].(string)+"/users", f.adminTok, "")); len(ms) != 0 {
		t.Fatalf("empty group members: %v", ms)
	}
	for _, c := range []struct{ method, suffix, body string }{
		{"GET", "", ""}, {"POST", "/update", `{"name":"x"}`}, {"POST", "/users", ""},
		{"POST", "/users/add", `{"user_ids":[]}`}, {"POST", "/users/remove", `{"user_ids":[]}`}, {"DELETE", "/delete", ""},
	} {
		expect(t, f.do(c.method, "/api/v1/groups/id/nope"+c.suffix, f.adminTok, c.body), 404, msgNotFound)
	}
}

func TestGroupPermissionsGrantFeatures(t *testing.T) {
	f := newFixture(t, map[string]string{"USER_PERMISSIONS_FEATURES_API_KEYS": "false"})
	perms := func(tok string) map[string]map[string]bool {
		var p map[string]map[string]bool
		w := f.do("GET", "/api/v1/users/permissions", tok, "")
		expect(t, w, 200, "")
		decodeInto(t, w, &p)
		return p
	}
	if perms(f.userTok)["features"]["api_keys"] {
		t.Fatal("api_keys granted before any group")
	}
	// The user's API key is refused without features.api_keys.
	expect(t, f.do("GET", "/api/v1/users/permissions", f.userKey, ""), 403, msgAPIKeyNotAllowed)

	g := groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok,
		`{"name":"devs","permissions":{"features":{"api_keys":true},"chat":{"edit":false}}}`))
	groupOf(t, f.do("POST", "/api/v1/groups/id/"+g["id"].(string)+"/users/add", f.adminTok, `{"user_ids":["`+f.user.ID+`"]}`))

	p := perms(f.userTok)
	if !p["features"]["api_keys"] {
		t.Fatalf("group grant missing: %v", p["features"])
	}
	// A group cannot take a default grant away: the most permissive wins.
	if !p["chat"]["edit"] {
		t.Fatal("group false overrode default true")
	}
	if perms(f.otherTok)["features"]["api_keys"] {
		t.Fatal("non-member got the grant")
	}
	expect(t, f.do("GET", "/api/v1/users/permissions", f.userKey, ""), 200, "")

	// Removing the grant from the group takes effect on the next request.
	groupOf(t, f.do("POST", "/api/v1/groups/id/"+g["id"].(string)+"/update", f.adminTok, `{"permissions":{"features":{"api_keys":false}}}`))
	if perms(f.userTok)["features"]["api_keys"] {
		t.Fatal("grant survived the update")
	}
}

func TestUpdateAndDeleteGroup(t *testing.T) {
	f := newFixture(t, nil)
	g := groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok, `{"name":"staff","description":"old","permissions":{"chat":{"edit":true}}}`))
	groupOf(t, f.do("POST", "/api/v1/groups/create", f.adminTok, `{"name":"taken"}`))
	base := "/api/v1/groups/id/" + g["id"].(string)

	g = groupOf(t, f.do("POST", base+"/update", f.adminTok, `{"name":"crew","user_ids":["`+f.user.ID+`","`+f.other.ID+`"]}`))
	if g["name"] != "crew" || g["description"] != "old" || g["member_count"] != float64(2) || g["permissions"] == nil {
		t.Fatalf("after rename: %v", g)
	}
	g = groupOf(t, f.do("POST", base+"/update", f.adminTok, `{"description":"new","user_ids":["`+f.other.ID+`"],"data":{"config":{"share":true}}}`))
	if g["description"] != "new" || g["member_count"] != float64(1) || shareOf(g) != true {
		t.Fatalf("after update: %v", g)
	}
	before := w2s(f.do("GET", base, f.adminTok, ""))
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"name":"TAKEN"}`, 400},
		{`{"name":""}`, 422},
		{`{"permissions":{"chat":{"edit":1}}}`, 422},
		{`{"permissions":[]}`, 422},
		{`{"data":"x"}`, 422},
		{`{"user_ids":"x"}`, 422},
		{`{"description":5}`, 422},
	} {
		w := f.do("POST", base+"/update", f.adminTok, c.body)
		expect(t, w, c.status, "")
		if _, ok := decodeBody(t, w)["detail"].(string); !ok {
			t.Fatalf("%s: %s", c.body, w.Body.String())
		}
	}
	if after := w2s(f.do("GET", base, f.adminTok, "")); after != before {
		t.Fatalf("refused updates changed the group:\n%s\n%s", before, after)
	}

	w := f.do("DELETE", base+"/delete", f.adminTok, "")
	expect(t, w, 200, "")
	if strings.TrimSpace(w.Body.String()) != "true" {
		t.Fatalf("delete answer %s", w.Body.String())
	}
	expect(t, f.do("GET", base, f.adminTok, ""), 404, msgNotFound)
	if gs, _, _ := f.store.UserGroups(context.Background(), f.other.ID); len(gs) != 0 {
		t.Fatalf("membership survived the group: %v", gs)
	}
}

func w2s(w *httptest.ResponseRecorder) string { return w.Body.String() }
