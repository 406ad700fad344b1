package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"

	"hearth/store"
)

// scimDo sends a SCIM request with the SCIM token and SCIM's media type.
// (No t.Helper: fuzz targets call it through a fixture made with *testing.F.)
func (f *fixture) scimDo(method, path, body string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, scimBase+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	req.Header.Set("Authorization", "Bearer "+testSCIMToken)
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	return w
}

// scimJSON decodes a SCIM answer, checking status and media type.
func scimJSON(t *testing.T, w *httptest.ResponseRecorder, status int) map[string]any {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body.String())
	}
	if ct := w.Header().Get("Content-Type"); ct != scimContentType {
		t.Fatalf("Content-Type %q, want %q", ct, scimContentType)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %s: %v", w.Body.String(), err)
	}
	return m
}

// expectSCIMError checks the SCIM Error envelope exactly.
func expectSCIMError(t *testing.T, w *httptest.ResponseRecorder, status int, scimType, detail string) {
	t.Helper()
	m := scimJSON(t, w, status)
	want := map[string]any{"schemas": []any{scimErrorSchema}, "status": itoa(int64(status)), "detail": m["detail"]}
	if scimType != "" {
		want["scimType"] = scimType
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("error body %s, want %v", w.Body.String(), want)
	}
	if detail != "" && m["detail"] != detail {
		t.Fatalf("detail %q, want %q", m["detail"], detail)
	}
}

func scimFixture(t *testing.T) *fixture { return newFixture(t, scimEnv) }

func TestSCIMDisabledAndPaths(t *testing.T) {
	f := newFixture(t, nil) // SCIM off
	for _, p := range []string{"/Users", "/Groups", "/ServiceProviderConfig", "/Users/" + f.user.ID} {
		w := f.doH("GET", scimBase+p, "", map[string]string{"Authorization": "Bearer " + testSCIMToken})
		expectSCIMError(t, w, 401, "", "SCIM is not enabled")
		if w.Header().Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("no WWW-Authenticate on %s", p)
		}
	}
	f = scimFixture(t)
	// A wrong path under the SCIM base: 404 in the SCIM envelope, never the
	// web client; a wrong base: the API's JSON 404.
	expectSCIMError(t, f.scimDo("GET", "/Nope", ""), 404, "", "Not Found")
	expectSCIMError(t, f.scimDo("POST", "/Users/x", `{}`), 405, "", "Method Not Allowed")
	w := f.do("GET", "/api/v1/scim/Users", testSCIMToken, "")
	expect(t, w, 404, "Not Found")
	if !strings.HasPrefix(w.Body.String(), `{"detail":`) {
		t.Fatalf("wrong base: %s", w.Body.String())
	}
}

func TestSCIMAuth(t *testing.T) {
	f := scimFixture(t)
	get := func(authz string) *httptest.ResponseRecorder {
		return f.doH("GET", scimBase+"/Users", "", map[string]string{"Authorization": authz})
	}
	expectSCIMError(t, get(""), 401, "", "Authorization header required")
	expectSCIMError(t, get("Bearer a b"), 401, "", "Invalid authorization format. Expected: Bearer <token>")
	expectSCIMError(t, get("Basic "+testSCIMToken), 401, "", "Invalid authentication scheme")
	expectSCIMError(t, get("Bearer wrong"), 401, "", "Invalid SCIM token")
	expectSCIMError(t, get("Bearer "+testSCIMToken+"x"), 401, "", "Invalid SCIM token")
	// No account credential is a SCIM credential, not even the admin's.
	expectSCIMError(t, get("Bearer "+f.adminTok), 401, "", "Invalid SCIM token")
	expectSCIMError(t, get("Bearer "+f.userKey), 401, "", "Invalid SCIM token")
	expectSCIMError(t, f.doH("GET", scimBase+"/Users", "", map[string]string{"Cookie": "token=" + f.adminTok}), 401, "", "Authorization header required")
	scimJSON(t, get("bearer "+testSCIMToken), 200) // scheme is case-insensitive

	// SCIM on with an empty token: nothing gets in.
	g := newFixture(t, map[string]string{"SCIM_ENABLED": "true", "SCIM_AUTH_PROVIDER": "idp"})
	w := g.doH("GET", scimBase+"/Users", "", map[string]string{"Authorization": "Bearer "})
	expectSCIMError(t, w, 401, "", "")
	w = g.doH("GET", scimBase+"/Users", "", map[string]string{"Authorization": "Bearer x"})
	expectSCIMError(t, w, 401, "", "Invalid SCIM token")
}

// normalize replaces the values that differ per run.
func normalize(m map[string]any, id string) map[string]any {
	b, _ := json.Marshal(m)
	s := strings.ReplaceAll(string(b), id, "<id>")
	var out map[string]any
	json.Unmarshal([]byte(s), &out)
	if meta, ok := out["meta"].(map[string]any); ok {
		meta["created"], meta["lastModified"] = "<t>", "<t>"
	}
	return out
}

func TestSCIMCreateUserShape(t *testing.T) {
	f := scimFixture(t)
	w := f.scimDo("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],
		"externalId":"ext-1","userName":"Ada@Example.org","name":{"givenName":"Ada","familyName":"Lovelace King"},
		"emails":[{"value":"ada.work@example.org","type":"work","primary":true}],"active":true,"password":"ignored"}`)
	m := scimJSON(t, w, 201)
	id := m["id"].(string)
	if w.Header().Get("Location") != "http://example.com/api/v1/scim/v2/Users/"+id {
		t.Fatalf("Location %q", w.Header().Get("Location"))
	}
	created := m["meta"].(map[string]any)["created"].(string)
	if !strings.HasSuffix(created, "+00:00") || len(created) != 25 {
		t.Fatalf("created %q is not ISO 8601 UTC", created)
	}
	want := map[string]any{
		"schemas": []any{scimUserSchema}, "id": "<id>", "externalId": "ext-1", "userName": "ada.work@example.org",
		"name": map[string]any{"formatted": "Ada Lovelace King", "givenName": "Ada", "familyName": "Lovelace King",
			"middleName": nil, "honorificPrefix": nil, "honorificSuffix": nil},
		"displayName": "Ada Lovelace King",
		"emails":      []any{map[string]any{"value": "ada.work@example.org", "type": "work", "primary": true, "display": nil}},
		"active":      true,
		"photos":      []any{map[string]any{"value": "/user.png", "type": "photo", "primary": true, "display": nil}},
		"groups":      []any{},
		"meta": map[string]any{"resourceType": "User", "created": "<t>", "lastModified": "<t>",
			"location": "http://example.com/api/v1/scim/v2/Users/<id>", "version": nil},
	}
	if got := normalize(m, id); !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("user\n got %s\nwant %s", gb, wb)
	}
	// Stored per provider; no password; role user.
	u, err := f.store.UserByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if string(u.SCIM) != `{"idp":{"external_id":"ext-1"}}` || u.PasswordHash != "" || u.Role != "user" || !u.Active {
		t.Fatalf("stored %+v", u)
	}
	// GET answers the same resource.
	if got := normalize(scimJSON(t, f.scimDo("GET", "/Users/"+id, ""), 200), id); !reflect.DeepEqual(got, want) {
		t.Fatalf("GET %v", got)
	}
	// A user created inactive cannot sign in; displayName wins for the name.
	m = scimJSON(t, f.scimDo("POST", "/Users", `{"userName":"b@example.org","displayName":"Bee","active":false}`), 201)
	if m["active"] != false || m["displayName"] != "Bee" || m["userName"] != "b@example.org" {
		t.Fatalf("inactive create %v", m)
	}
}

func TestSCIMCreateUserErrors(t *testing.T) {
	f := scimFixture(t)
	scimJSON(t, f.scimDo("POST", "/Users", `{"userName":"a@example.org","externalId":"e1"}`), 201)
	cases := []struct {
		body, scimType, detail string
		status                 int
	}{
		{`{"displayName":"x"}`, "invalidValue", "userName is required", 400},
		{`{"userName":"not-an-email"}`, "invalidValue", "userName must be a valid e-mail address", 400},
		{`{"userName":"a@example.org","emails":[{"value":"bad"}]}`, "invalidValue", "emails.value must be a valid e-mail address", 400},
		{`{"userName":"A@example.org"}`, "uniqueness", "User with email a@example.org already exists", 409},
		{`{"userName":"user@example.com"}`, "uniqueness", "User with email user@example.com already exists", 409},
		{`{"userName":"n@example.org","externalId":"e1"}`, "uniqueness", "User with externalId e1 already exists", 409},
		{`{"userName":`, "invalidSyntax", "", 400},
		{`[]`, "invalidSyntax", "", 400},
		{`{"userName":5}`, "invalidSyntax", "", 400},
		{`{"userName":"n@example.org","active":"maybe"}`, "invalidSyntax", "", 400},
		{`{"userName":"n@example.org","photos":[{"value":"javascript:alert(1)"}]}`, "invalidValue", "", 400},
	}
	for _, c := range cases {
		t.Run(c.body, func(t *testing.T) {
			expectSCIMError(t, f.scimDo("POST", "/Users", c.body), c.status, c.scimType, c.detail)
		})
	}
	expectSCIMError(t, f.scimDo("GET", "/Users/nope", ""), 404, "invalidValue", "User nope not found")
	expectSCIMError(t, f.scimDo("PUT", "/Users/nope", `{}`), 404, "invalidValue", "User nope not found")
	expectSCIMError(t, f.scimDo("PATCH", "/Users/nope", `{"Operations":[]}`), 404, "invalidValue", "User nope not found")
	expectSCIMError(t, f.scimDo("DELETE", "/Users/nope", ""), 404, "invalidValue", "User nope not found")
}

func TestSCIMExternalIDWithoutProvider(t *testing.T) {
	f := newFixture(t, map[string]string{"SCIM_ENABLED": "true", "SCIM_TOKEN": testSCIMToken})
	// Without SCIM_AUTH_PROVIDER, anything with an externalId is a 500
	// (SPEC.md §7); everything else works.
	expectSCIMError(t, f.scimDo("POST", "/Users", `{"userName":"a@example.org","externalId":"e"}`), 500, "", msgSCIMNoProvider)
	expectSCIMError(t, f.scimDo("GET", "/Users?filter="+url.QueryEscape(`externalId eq "e"`), ""), 500, "", msgSCIMNoProvider)
	expectSCIMError(t, f.scimDo("POST", "/Groups", `{"displayName":"g","externalId":"e"}`), 500, "", msgSCIMNoProvider)
	m := scimJSON(t, f.scimDo("POST", "/Users", `{"userName":"a@example.org"}`), 201)
	if m["externalId"] != nil {
		t.Fatalf("externalId %v", m["externalId"])
	}
	id := m["id"].(string)
	expectSCIMError(t, f.scimDo("PATCH", "/Users/"+id, `{"Operations":[{"op":"replace","path":"externalId","value":"x"}]}`), 500, "", msgSCIMNoProvider)
	// An id stored under some provider is still shown (the first one).
	if _, err := f.store.UpdateSCIMUser(context.Background(), scimActor(), id, store.SCIMUserPatch{Provider: "okta", ExternalID: ptr("o-1")}); err != nil {
		t.Fatal(err)
	}
	m = scimJSON(t, f.scimDo("GET", "/Users/"+id, ""), 200)
	if m["externalId"] != "o-1" {
		t.Fatalf("externalId %v", m["externalId"])
	}
	// A PUT that repeats the same externalId changes nothing and needs no provider.
	scimJSON(t, f.scimDo("PUT", "/Users/"+id, `{"externalId":"o-1","displayName":"A"}`), 200)
}

func ptr[T any](v T) *T { return &v }

// scimIDs lists the ids of a ListResponse's resources, sorted.
func scimIDs(t *testing.T, m map[string]any) []string {
	t.Helper()
	ids := []string{}
	for _, r := range m["Resources"].([]any) {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	sort.Strings(ids)
	return ids
}

func sorted(ids ...string) []string {
	out := append([]string{}, ids...)
	sort.Strings(out)
	return out
}

func TestSCIMUserFilters(t *testing.T) {
	f := scimFixture(t)
	mk := func(body string) string {
		return scimJSON(t, f.scimDo("POST", "/Users", body), 201)["id"].(string)
	}
	ada := mk(`{"userName":"ada@lovelace.org","displayName":"Ada Lovelace","externalId":"ext-ada"}`)
	bob := mk(`{"userName":"bob@builder.net","displayName":"Bob Builder","externalId":"ext-bob","active":false}`)
	all := []string{f.admin.ID, f.user.ID, f.other.ID, f.pending.ID, ada, bob}
	q := func(filter string) []string {
		t.Helper()
		return scimIDs(t, scimJSON(t, f.scimDo("GET", "/Users?count=100&filter="+url.QueryEscape(filter), ""), 200))
	}
	cases := []struct {
		filter string
		want   []string
	}{
		{`userName eq "ADA@lovelace.org"`, []string{ada}},
		{`userName ne "ada@lovelace.org"`, []string{f.admin.ID, f.user.ID, f.other.ID, f.pending.ID, bob}},
		{`userName co "BUILDER"`, []string{bob}},
		{`userName sw "ada@"`, []string{ada}},
		{`userName ew ".net"`, []string{bob}},
		{`userName ew "@example.com"`, []string{f.admin.ID, f.user.ID, f.other.ID, f.pending.ID}},
		{`externalId pr`, []string{ada, bob}},
		{`userName gt "pending@example.com"`, []string{f.user.ID}},
		{`userName ge "pending@example.com"`, []string{f.pending.ID, f.user.ID}},
		{`userName lt "b"`, []string{f.admin.ID, ada}},
		{`userName le "bob@builder.net"`, []string{f.admin.ID, ada, bob}},
		{`externalId eq "ext-ada"`, []string{ada}},
		{`externalId eq "EXT-ADA"`, []string{}}, // externalId is case-exact
		{`displayName eq "ada lovelace"`, []string{ada}},
		{`name.givenName eq "Bob"`, []string{bob}},
		{`name.familyName sw "Love"`, []string{ada}},
		{`active eq false`, []string{f.pending.ID, bob}},
		{`active eq true and userName ew ".org"`, []string{ada}},
		{`userName sw "ada" or userName sw "bob"`, []string{ada, bob}},
		{`not (userName ew "@example.com")`, []string{ada, bob}},
		{`(userName sw "ada" or userName sw "bob") and not (active eq false)`, []string{ada}},
		{`emails[type eq "work" and value co "lovelace"]`, []string{ada}},
		{`emails.value eq "bob@builder.net"`, []string{bob}},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob@builder.net"`, []string{bob}},
		{`id eq "` + ada + `"`, []string{ada}},
		{`meta.created gt "2000-01-01T00:00:00Z"`, all},
		{`meta.lastModified lt "2000-01-01T00:00:00Z"`, []string{}},
		{`USERNAME EQ "ada@lovelace.org"`, []string{ada}},
	}
	for _, c := range cases {
		t.Run(c.filter, func(t *testing.T) {
			if got := q(c.filter); !reflect.DeepEqual(got, sorted(c.want...)) {
				t.Fatalf("got %v, want %v", got, sorted(c.want...))
			}
		})
	}
	for _, bad := range []string{`userName`, `userName eq`, `userName xx "a"`, `nope eq "a"`, `active co "t"`,
		`userName eq "a" and`, `(userName eq "a"`, `userName eq true`, `meta.created gt "yesterday"`, `userName eq "a`,
		strings.Repeat("(", 20) + `userName pr` + strings.Repeat(")", 20)} {
		t.Run("bad "+bad, func(t *testing.T) {
			expectSCIMError(t, f.scimDo("GET", "/Users?filter="+url.QueryEscape(bad), ""), 400, "invalidFilter", "")
		})
	}
}

func TestSCIMUserPaging(t *testing.T) {
	f := scimFixture(t)
	m := scimJSON(t, f.scimDo("GET", "/Users?startIndex=2&count=2", ""), 200)
	if m["totalResults"] != 4.0 || m["itemsPerPage"] != 2.0 || m["startIndex"] != 2.0 ||
		!reflect.DeepEqual(m["schemas"], []any{scimListSchema}) || len(m) != 5 {
		t.Fatalf("page %v", m)
	}
	// Newest first: users 2 and 3 of [pending, other, user, admin] are other and user,
	// but they share a creation second, so only check membership.
	if len(scimIDs(t, m)) != 2 {
		t.Fatal(m)
	}
	m = scimJSON(t, f.scimDo("GET", "/Users?startIndex=0&count=1000", ""), 200)
	if m["startIndex"] != 1.0 || m["itemsPerPage"] != 4.0 {
		t.Fatalf("clamped %v", m)
	}
	m = scimJSON(t, f.scimDo("GET", "/Users?count=0", ""), 200)
	if m["totalResults"] != 4.0 || len(m["Resources"].([]any)) != 0 {
		t.Fatalf("count=0 %v", m)
	}
	expectSCIMError(t, f.scimDo("GET", "/Users?count=x", ""), 400, "invalidValue", "count must be an integer")
}

func TestSCIMReplaceUser(t *testing.T) {
	f := scimFixture(t)
	w := f.scimDo("PUT", "/Users/"+f.user.ID, `{"userName":"renamed@example.com","name":{"givenName":"Re","familyName":"Named"},
		"externalId":"x1","photos":[{"value":"https://img.example.com/a.png"}]}`)
	m := scimJSON(t, w, 200)
	if m["userName"] != "renamed@example.com" || m["displayName"] != "Re Named" || m["externalId"] != "x1" ||
		m["photos"].([]any)[0].(map[string]any)["value"] != "https://img.example.com/a.png" || m["active"] != true {
		t.Fatalf("PUT %v", m)
	}
	// emails wins over userName.
	m = scimJSON(t, f.scimDo("PUT", "/Users/"+f.user.ID, `{"userName":"a@example.com","emails":[{"value":"b@example.com","primary":true}]}`), 200)
	if m["userName"] != "b@example.com" {
		t.Fatalf("PUT emails %v", m)
	}
	expectSCIMError(t, f.scimDo("PUT", "/Users/"+f.user.ID, `{"userName":"other@example.com"}`), 409, "uniqueness", "User with email other@example.com already exists")
	expectSCIMError(t, f.scimDo("PUT", "/Users/"+f.other.ID, `{"externalId":"x1"}`), 409, "uniqueness", "User with externalId x1 already exists")
	expectSCIMError(t, f.scimDo("PUT", "/Users/"+f.user.ID, `{"userName":"nope"}`), 400, "invalidValue", "")
}

func TestSCIMPatchUser(t *testing.T) {
	f := scimFixture(t)
	patch := func(ops string) *httptest.ResponseRecorder {
		return f.scimDo("PATCH", "/Users/"+f.user.ID, `{"schemas":["`+scimPatchSchema+`"],"Operations":`+ops+`}`)
	}
	steps := []struct {
		ops   string
		check map[string]any // top-level attribute → want
	}{
		{`[{"op":"replace","path":"userName","value":"u2@example.com"}]`, map[string]any{"userName": "u2@example.com"}},
		{`[{"op":"Replace","path":"displayName","value":"Jane Doe"}]`, map[string]any{"displayName": "Jane Doe"}},
		{`[{"op":"replace","path":"name.givenName","value":"Janet"}]`, map[string]any{"displayName": "Janet Doe"}},
		{`[{"op":"replace","path":"name.familyName","value":"Roe"}]`, map[string]any{"displayName": "Janet Roe"}},
		{`[{"op":"replace","path":"name.formatted","value":"J R"}]`, map[string]any{"displayName": "J R"}},
		{`[{"op":"remove","path":"name.familyName"}]`, map[string]any{"displayName": "J"}},
		{`[{"op":"replace","path":"emails[type eq \"work\"].value","value":"u3@example.com"}]`, map[string]any{"userName": "u3@example.com"}},
		{`[{"op":"add","path":"emails","value":[{"value":"u4@example.com","primary":true}]}]`, map[string]any{"userName": "u4@example.com"}},
		{`[{"op":"add","path":"externalId","value":"ext-9"}]`, map[string]any{"externalId": "ext-9"}},
		{`[{"op":"remove","path":"externalId"}]`, map[string]any{"externalId": nil}},
		{`[{"op":"replace","path":"active","value":false}]`, map[string]any{"active": false}},
		{`[{"op":"replace","path":"active","value":"True"}]`, map[string]any{"active": true}},
		// Entra ID's form: no path, a value object with dotted keys and string booleans.
		{`[{"op":"Replace","value":{"active":"False","name.givenName":"Kim","displayName":"Kim Doe","externalId":"e-kim"}}]`,
			map[string]any{"active": false, "displayName": "Kim Doe", "externalId": "e-kim"}},
		{`[{"op":"add","value":{"name":{"givenName":"Lee","familyName":"Park"},"active":true,"title":"ignored"}}]`,
			map[string]any{"displayName": "Lee Park", "active": true}},
		{`[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"x"}]`,
			map[string]any{"displayName": "Lee Park"}},
		{`[{"op":"replace","path":"photos","value":[{"value":"https://img.example.com/p.png","primary":true}]}]`, nil},
		{`[]`, map[string]any{"userName": "u4@example.com"}},
	}
	for _, s := range steps {
		m := scimJSON(t, patch(s.ops), 200)
		for k, v := range s.check {
			if !reflect.DeepEqual(m[k], v) {
				t.Fatalf("after %s: %s = %v, want %v", s.ops, k, m[k], v)
			}
		}
	}
	errs := []struct{ ops, scimType string }{
		{`[{"op":"remove","path":"userName"}]`, "mutability"},
		{`[{"op":"remove","path":"displayName"}]`, "mutability"},
		{`[{"op":"remove","path":"active"}]`, "mutability"},
		{`[{"op":"remove"}]`, "noTarget"},
		{`[{"op":"move","path":"userName","value":"a@b.co"}]`, "invalidSyntax"},
		{`[{"op":"replace","path":"emails[type eq","value":"a@b.co"}]`, "invalidPath"},
		{`[{"op":"replace","path":"userName","value":"not-mail"}]`, "invalidValue"},
		{`[{"op":"replace","path":"active","value":3}]`, "invalidValue"},
		{`[{"op":"replace","value":"x"}]`, "invalidValue"},
		{`[{"op":"replace","path":"displayName","value":""}]`, "invalidValue"},
		{`[{"op":"replace","path":"userName","value":"other@example.com"}]`, "uniqueness"},
	}
	for _, e := range errs {
		w := patch(e.ops)
		status := 400
		if e.scimType == "uniqueness" {
			status = 409
		}
		expectSCIMError(t, w, status, e.scimType, "")
	}
	// A failed request changes nothing, even when earlier operations were fine.
	expectSCIMError(t, patch(`[{"op":"replace","path":"displayName","value":"Changed"},{"op":"remove","path":"userName"}]`), 400, "mutability", "")
	if m := scimJSON(t, f.scimDo("GET", "/Users/"+f.user.ID, ""), 200); m["displayName"] != "Lee Park" {
		t.Fatalf("partial apply: %v", m["displayName"])
	}
}

func TestSCIMDeactivateReactivate(t *testing.T) {
	f := scimFixture(t)
	signin := func() int {
		return f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"secret-password"}`).Code
	}
	if c := signin(); c != 200 {
		t.Fatalf("sign-in before: %d", c)
	}
	expect(t, f.do("GET", "/api/v1/auths/", f.userTok, ""), 200, "")

	w := f.scimDo("DELETE", "/Users/"+f.user.ID, "")
	if w.Code != 204 || w.Body.Len() != 0 {
		t.Fatalf("DELETE %d %q", w.Code, w.Body.String())
	}
	// Kept, inactive; sessions, API keys and sign-in stop working.
	m := scimJSON(t, f.scimDo("GET", "/Users/"+f.user.ID, ""), 200)
	if m["active"] != false {
		t.Fatalf("after DELETE %v", m)
	}
	expect(t, f.do("GET", "/api/v1/auths/", f.userTok, ""), 401, msgInvalidToken)
	expect(t, f.do("GET", "/api/v1/auths/", f.userKey, ""), 401, msgInvalidToken)
	if c := signin(); c != 400 {
		t.Fatalf("sign-in while inactive: %d", c)
	}
	u, err := f.store.UserByID(context.Background(), f.user.ID)
	if err != nil || u.Active || u.Role != "user" {
		t.Fatalf("stored %+v %v", u, err)
	}
	// DELETE again is fine; the admin list still has the account.
	if w := f.scimDo("DELETE", "/Users/"+f.user.ID, ""); w.Code != 204 {
		t.Fatal(w.Code)
	}
	expect(t, f.do("GET", "/api/v1/users/"+f.user.ID, f.adminTok, ""), 200, "")

	// Reactivation restores the same credentials.
	m = scimJSON(t, f.scimDo("PATCH", "/Users/"+f.user.ID, `{"Operations":[{"op":"replace","path":"active","value":true}]}`), 200)
	if m["active"] != true {
		t.Fatal(m)
	}
	expect(t, f.do("GET", "/api/v1/auths/", f.userTok, ""), 200, "")
	expect(t, f.do("GET", "/api/v1/auths/", f.userKey, ""), 200, "")
	if c := signin(); c != 200 {
		t.Fatalf("sign-in after: %d", c)
	}

	// PUT active=false works the same; an admin stays admin through it.
	adminID := f.mkUser("admin2@example.com", "Admin Two", "admin").ID
	scimJSON(t, f.scimDo("PUT", "/Users/"+adminID, `{"active":false}`), 200)
	scimJSON(t, f.scimDo("PUT", "/Users/"+adminID, `{"active":true}`), 200)
	if u, _ := f.store.UserByID(context.Background(), adminID); u.Role != "admin" || !u.Active {
		t.Fatalf("admin after cycle %+v", u)
	}
	// A pending account shows inactive; activating it approves it.
	if m := scimJSON(t, f.scimDo("GET", "/Users/"+f.pending.ID, ""), 200); m["active"] != false {
		t.Fatal(m)
	}
	scimJSON(t, f.scimDo("PATCH", "/Users/"+f.pending.ID, `{"Operations":[{"op":"replace","value":{"active":true}}]}`), 200)
	if u, _ := f.store.UserByID(context.Background(), f.pending.ID); u.Role != "user" {
		t.Fatalf("pending after activation: %s", u.Role)
	}
	// The primary admin cannot be deactivated.
	expectSCIMError(t, f.scimDo("DELETE", "/Users/"+f.admin.ID, ""), 403, "", "The primary admin cannot be deactivated")
	expectSCIMError(t, f.scimDo("PATCH", "/Users/"+f.admin.ID, `{"Operations":[{"op":"replace","path":"active","value":false}]}`), 403, "", "")
}

func TestSCIMTrustedHeaderSigninInactive(t *testing.T) {
	f := newFixture(t, map[string]string{"SCIM_ENABLED": "true", "SCIM_TOKEN": testSCIMToken, "SCIM_AUTH_PROVIDER": "idp",
		"WEBUI_AUTH_TRUSTED_EMAIL_HEADER": "X-User-Email"})
	if w := f.scimDo("DELETE", "/Users/"+f.user.ID, ""); w.Code != 204 {
		t.Fatal(w.Code)
	}
	w := f.doH("POST", "/api/v1/auths/signin", `{}`, map[string]string{"X-User-Email": "user@example.com"})
	expect(t, w, 403, msgAccessProhibited)
}

func TestSCIMGroups(t *testing.T) {
	f := scimFixture(t)
	w := f.scimDo("POST", "/Groups", `{"schemas":["`+scimGroupSchema+`"],"displayName":"Engineering","externalId":"g-1",
		"members":[{"value":"`+f.user.ID+`"},{"value":"`+f.other.ID+`"},{"value":"unknown"}]}`)
	m := scimJSON(t, w, 201)
	gid := m["id"].(string)
	member := func(u store.User) map[string]any {
		return map[string]any{"value": u.ID, "$ref": "http://example.com/api/v1/scim/v2/Users/" + u.ID, "type": "User", "display": u.Name}
	}
	members := []any{member(f.user), member(f.other)}
	if f.other.ID < f.user.ID { // joined in the same second: id order
		members[0], members[1] = members[1], members[0]
	}
	want := map[string]any{
		"schemas": []any{scimGroupSchema}, "id": "<id>", "displayName": "Engineering", "externalId": "g-1",
		"members": members,
		"meta": map[string]any{"resourceType": "Group", "created": "<t>", "lastModified": "<t>",
			"location": "http://example.com/api/v1/scim/v2/Groups/<id>", "version": nil},
	}
	if got := normalize(m, gid); !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("group\n got %s\nwant %s", gb, wb)
	}
	if w.Header().Get("Location") != "http://example.com/api/v1/scim/v2/Groups/"+gid {
		t.Fatal(w.Header().Get("Location"))
	}
	g, err := f.store.GetGroup(context.Background(), actorOf(f.admin), gid)
	if err != nil || string(g.SCIM) != `{"idp":{"external_id":"g-1"}}` || g.UserID != f.admin.ID ||
		!strings.Contains(string(g.Data), `"share"`) {
		t.Fatalf("stored %+v %v", g, err)
	}
	// The user resource lists its groups.
	um := scimJSON(t, f.scimDo("GET", "/Users/"+f.user.ID, ""), 200)
	wantGroups := []any{map[string]any{"value": gid, "display": "Engineering", "$ref": "http://example.com/api/v1/scim/v2/Groups/" + gid, "type": "direct"}}
	if !reflect.DeepEqual(um["groups"], wantGroups) {
		t.Fatalf("user groups %v", um["groups"])
	}
	lm := scimJSON(t, f.scimDo("GET", "/Users?filter="+url.QueryEscape(`userName eq "user@example.com"`), ""), 200)
	if !reflect.DeepEqual(lm["Resources"].([]any)[0].(map[string]any)["groups"], wantGroups) {
		t.Fatalf("listed user groups %v", lm)
	}
	if reflect.DeepEqual(normalize(scimJSON(t, f.scimDo("GET", "/Groups/"+gid, ""), 200), gid), want) == false {
		t.Fatal("GET group differs")
	}

	other := scimJSON(t, f.scimDo("POST", "/Groups", `{"displayName":"Sales"}`), 201)["id"].(string)
	list := func(filter string) []string {
		return scimIDs(t, scimJSON(t, f.scimDo("GET", "/Groups?filter="+url.QueryEscape(filter), ""), 200))
	}
	for filter, want := range map[string][]string{
		`displayName eq "engineering"`:                  {gid},
		`displayName ne "Engineering"`:                  {other},
		`displayName co "ale"`:                          {other},
		`displayName sw "Eng"`:                          {gid},
		`displayName ew "les"`:                          {other},
		`displayName gt "F"`:                            {other},
		`displayName ge "Sales"`:                        {other},
		`displayName lt "F"`:                            {gid},
		`displayName le "Engineering"`:                  {gid},
		`externalId eq "g-1"`:                           {gid},
		`externalId pr`:                                 {gid},
		`members pr`:                                    {gid},
		`members eq "` + f.other.ID + `"`:               {gid},
		`members[value eq "` + f.admin.ID + `"]`:        {},
		`not (members pr)`:                              {other},
		`displayName eq "Sales" or externalId eq "g-1"`: {gid, other},
	} {
		if got := list(filter); !reflect.DeepEqual(got, sorted(want...)) {
			t.Errorf("%s: got %v want %v", filter, got, want)
		}
	}
	lm = scimJSON(t, f.scimDo("GET", "/Groups?count=1", ""), 200)
	if lm["totalResults"] != 2.0 || lm["itemsPerPage"] != 1.0 {
		t.Fatalf("groups page %v", lm)
	}

	patch := func(ops string) map[string]any {
		t.Helper()
		return scimJSON(t, f.scimDo("PATCH", "/Groups/"+gid, `{"schemas":["`+scimPatchSchema+`"],"Operations":`+ops+`}`), 200)
	}
	// Members who joined in the same second come in id order: compare sets.
	ids := func(m map[string]any) []string {
		out := []string{}
		for _, x := range m["members"].([]any) {
			out = append(out, x.(map[string]any)["value"].(string))
		}
		sort.Strings(out)
		return out
	}
	if m := patch(`[{"op":"add","path":"members","value":[{"value":"` + f.admin.ID + `"}]}]`); !reflect.DeepEqual(ids(m), sorted(f.user.ID, f.other.ID, f.admin.ID)) {
		t.Fatalf("add %v", ids(m))
	}
	if m := patch(`[{"op":"remove","path":"members[value eq \"` + f.user.ID + `\"]"}]`); !reflect.DeepEqual(ids(m), sorted(f.other.ID, f.admin.ID)) {
		t.Fatalf("remove filter %v", ids(m))
	}
	if m := patch(`[{"op":"Remove","path":"members","value":[{"value":"` + f.admin.ID + `"}]}]`); !reflect.DeepEqual(ids(m), []string{f.other.ID}) {
		t.Fatalf("remove value %v", ids(m))
	}
	if m := patch(`[{"op":"replace","path":"members","value":[{"value":"` + f.user.ID + `"},{"value":"` + f.other.ID + `"}]}]`); !reflect.DeepEqual(ids(m), sorted(f.other.ID, f.user.ID)) {
		t.Fatalf("replace %v", ids(m))
	}
	if m := patch(`[{"op":"replace","path":"displayName","value":"Eng"},{"op":"replace","path":"externalId","value":"g-2"}]`); m["displayName"] != "Eng" || m["externalId"] != "g-2" {
		t.Fatalf("rename %v", m)
	}
	if m := patch(`[{"op":"replace","value":{"displayName":"Eng 2","members":[{"value":"` + f.admin.ID + `"}]}}]`); m["displayName"] != "Eng 2" || !reflect.DeepEqual(ids(m), []string{f.admin.ID}) {
		t.Fatalf("no-path %v", m)
	}
	if m := patch(`[{"op":"remove","path":"members"},{"op":"remove","path":"externalId"}]`); len(ids(m)) != 0 || m["externalId"] != nil {
		t.Fatalf("remove all %v", m)
	}
	for _, e := range []struct{ ops, scimType string }{
		{`[{"op":"remove","path":"displayName"}]`, "mutability"},
		{`[{"op":"replace","path":"members[value eq \"x\"]","value":[]}]`, "invalidPath"},
		{`[{"op":"add","path":"members","value":"x"}]`, "invalidValue"},
		{`[{"op":"nope"}]`, "invalidSyntax"},
	} {
		expectSCIMError(t, f.scimDo("PATCH", "/Groups/"+gid, `{"Operations":`+e.ops+`}`), 400, e.scimType, "")
	}
	expectSCIMError(t, f.scimDo("PATCH", "/Groups/"+gid, `{"Operations":[{"op":"replace","path":"displayName","value":"sales"}]}`),
		409, "uniqueness", "Group with displayName sales already exists")

	// PUT: name; members replace when present, stay when absent.
	m = scimJSON(t, f.scimDo("PUT", "/Groups/"+gid, `{"displayName":"Platform","members":[{"value":"`+f.user.ID+`"}]}`), 200)
	if m["displayName"] != "Platform" || !reflect.DeepEqual(ids(m), []string{f.user.ID}) {
		t.Fatalf("PUT %v", m)
	}
	m = scimJSON(t, f.scimDo("PUT", "/Groups/"+gid, `{"displayName":"Platform 2"}`), 200)
	if !reflect.DeepEqual(ids(m), []string{f.user.ID}) {
		t.Fatalf("PUT without members %v", m)
	}

	// Errors.
	expectSCIMError(t, f.scimDo("POST", "/Groups", `{"members":[]}`), 400, "invalidValue", "displayName is required")
	expectSCIMError(t, f.scimDo("POST", "/Groups", `{"displayName":"SALES"}`), 409, "uniqueness", "Group with displayName SALES already exists")
	scimJSON(t, f.scimDo("PATCH", "/Groups/"+other, `{"Operations":[{"op":"add","path":"externalId","value":"g-3"}]}`), 200)
	expectSCIMError(t, f.scimDo("POST", "/Groups", `{"displayName":"X","externalId":"g-3"}`), 409, "uniqueness", "Group with externalId g-3 already exists")
	expectSCIMError(t, f.scimDo("GET", "/Groups/nope", ""), 404, "invalidValue", "Group nope not found")
	expectSCIMError(t, f.scimDo("PUT", "/Groups/nope", `{}`), 404, "invalidValue", "Group nope not found")
	expectSCIMError(t, f.scimDo("PATCH", "/Groups/nope", `{"Operations":[]}`), 404, "invalidValue", "Group nope not found")

	// DELETE removes the group, not its members.
	if w := f.scimDo("DELETE", "/Groups/"+gid, ""); w.Code != 204 || w.Body.Len() != 0 {
		t.Fatal(w.Code)
	}
	expectSCIMError(t, f.scimDo("DELETE", "/Groups/"+gid, ""), 404, "invalidValue", "Group "+gid+" not found")
	scimJSON(t, f.scimDo("GET", "/Users/"+f.user.ID, ""), 200)
}

func TestSCIMGroupNoAdmin(t *testing.T) {
	f := emptyFixture(t, scimEnv)
	expectSCIMError(t, f.scimDo("POST", "/Groups", `{"displayName":"g"}`), 500, "", "No admin user found")
	// The provider's first user does not become admin.
	m := scimJSON(t, f.scimDo("POST", "/Users", `{"userName":"first@example.org"}`), 201)
	if u, _ := f.store.UserByID(context.Background(), m["id"].(string)); u.Role != "user" {
		t.Fatalf("first SCIM user role %s", u.Role)
	}
}

func TestSCIMDiscovery(t *testing.T) {
	f := scimFixture(t)
	m := scimJSON(t, f.do("GET", scimBase+"/ServiceProviderConfig", "", ""), 200)
	want := map[string]any{
		"schemas":        []any{"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"},
		"patch":          map[string]any{"supported": true},
		"bulk":           map[string]any{"supported": false, "maxOperations": 1000.0, "maxPayloadSize": 1048576.0},
		"filter":         map[string]any{"supported": true, "maxResults": 200.0},
		"changePassword": map[string]any{"supported": false},
		"sort":           map[string]any{"supported": false},
		"etag":           map[string]any{"supported": false},
		"authenticationSchemes": []any{map[string]any{"type": "oauthbearertoken", "name": "OAuth Bearer Token",
			"description": "Authentication using OAuth 2.0 Bearer Token"}},
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("ServiceProviderConfig %v", m)
	}
	var rts []map[string]any
	w := f.do("GET", scimBase+"/ResourceTypes", "", "")
	if err := json.Unmarshal(w.Body.Bytes(), &rts); err != nil || len(rts) != 2 || rts[0]["endpoint"] != "/Users" ||
		rts[1]["endpoint"] != "/Groups" || rts[0]["schema"] != scimUserSchema ||
		rts[0]["meta"].(map[string]any)["location"] != "http://example.com/api/v1/scim/v2/ResourceTypes/User" {
		t.Fatalf("ResourceTypes %s", w.Body.String())
	}
	var schemas []map[string]any
	w = f.do("GET", scimBase+"/Schemas", "", "")
	if err := json.Unmarshal(w.Body.Bytes(), &schemas); err != nil || len(schemas) != 2 || schemas[0]["id"] != scimUserSchema ||
		len(schemas[0]["attributes"].([]any)) != 4 || len(schemas[1]["attributes"].([]any)) != 2 {
		t.Fatalf("Schemas %s", w.Body.String())
	}
}

func TestSCIMBodyMediaTypes(t *testing.T) {
	f := scimFixture(t)
	for i, ct := range []string{"application/scim+json", "application/json", "application/scim+json; charset=utf-8"} {
		req := httptest.NewRequest("POST", scimBase+"/Users", strings.NewReader(`{"userName":"m`+itoa(int64(i))+`@example.org"}`))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+testSCIMToken)
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, req)
		scimJSON(t, w, http.StatusCreated)
	}
}

func TestSCIMFilterParser(t *testing.T) {
	f, err := parseSCIMFilter(`a eq "x" or b pr and not (c ne 1.5)`)
	if err != nil {
		t.Fatal(err)
	}
	want := store.SCIMLogic{Op: "or", Left: store.SCIMCompare{Attr: "a", Op: "eq", Value: "x"},
		Right: store.SCIMLogic{Op: "and", Left: store.SCIMCompare{Attr: "b", Op: "pr"},
			Right: store.SCIMNot{X: store.SCIMCompare{Attr: "c", Op: "ne", Value: 1.5}}}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("%#v", f)
	}
	p, err := parseSCIMPath(`members[value eq "a\"b"]`)
	if err != nil || p.attr != "members" || !reflect.DeepEqual(p.filter, store.SCIMCompare{Attr: "value", Op: "eq", Value: `a"b`}) {
		t.Fatalf("%+v %v", p, err)
	}
	p, err = parseSCIMPath(`emails[type eq "work"].value`)
	if err != nil || p.attr != "emails" || p.sub != "value" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{`a[b eq "c"`, `a]`, `a[b eq "c"]x`, `a[b eq "c"].d.e`, ``} {
		if _, err := parseSCIMPath(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
