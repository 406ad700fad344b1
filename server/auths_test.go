package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"hearth/auth"
	"hearth/store"
)

func decodeBody(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, w.Body.String())
	}
	return m
}

func signup(f *fixture, email string) *httptest.ResponseRecorder {
	return f.do("POST", "/api/v1/auths/signup", "", `{"name":"N","email":"`+email+`","password":"pw-123456"}`)
}

func TestSignupFirstUserIsAdminOthersDefaultRole(t *testing.T) {
	f := emptyFixture(t, nil)
	w := signup(f, "First@Example.com")
	expect(t, w, 200, "")
	m := decodeBody(t, w)
	if m["role"] != "admin" || m["email"] != "first@example.com" || m["token_type"] != "Bearer" {
		t.Fatalf("first sign-up: %v", m)
	}
	if m["permissions"] == nil || !strings.HasPrefix(m["profile_image_url"].(string), "/api/v1/users/") {
		t.Fatalf("session response misses fields: %v", m)
	}
	ck := w.Result().Cookies()
	if len(ck) != 1 || ck[0].Name != "token" || !ck[0].HttpOnly || ck[0].Value != m["token"] {
		t.Fatalf("token cookie: %+v", ck)
	}
	// Sign-up stays open after the first user (Hearth decision 25).
	w = signup(f, "second@example.com")
	expect(t, w, 200, "")
	if role := decodeBody(t, w)["role"]; role != "pending" {
		t.Fatalf("second user role %v, want pending (DEFAULT_USER_ROLE)", role)
	}
	expect(t, signup(f, "SECOND@example.com"), 400, msgEmailTaken)
}

func TestSignupRules(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		f := newFixture(t, map[string]string{"ENABLE_SIGNUP": "false"})
		expect(t, signup(f, "x@example.com"), 403, msgAccessProhibited)
		// The very first account is always allowed.
		e := emptyFixture(t, map[string]string{"ENABLE_SIGNUP": "false"})
		expect(t, signup(e, "x@example.com"), 200, "")
	})
	t.Run("login form off", func(t *testing.T) {
		f := newFixture(t, map[string]string{"ENABLE_LOGIN_FORM": "false"})
		expect(t, signup(f, "x@example.com"), 403, msgAccessProhibited)
	})
	t.Run("default role and group", func(t *testing.T) {
		f := newFixture(t, nil)
		g, err := f.store.CreateGroup(context.Background(), actorOf(f.admin), store.Group{Name: "staff"})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.settings.Set(context.Background(), map[string]any{"DEFAULT_USER_ROLE": "user", "DEFAULT_GROUP_ID": g.ID}); err != nil {
			t.Fatal(err)
		}
		w := signup(f, "x@example.com")
		expect(t, w, 200, "")
		m := decodeBody(t, w)
		if m["role"] != "user" {
			t.Fatalf("role %v", m["role"])
		}
		ids, _, _ := f.store.UserGroups(context.Background(), m["id"].(string))
		if len(ids) != 1 || ids[0] != g.ID {
			t.Fatalf("groups %v, want [%s]", ids, g.ID)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		f := newFixture(t, nil)
		for _, tc := range []struct{ body, detail string }{
			{`{"name":"N","email":"not-an-email","password":"pw"}`, msgInvalidEmail},
			{`{"name":"N","email":"a@localhost","password":"pw"}`, msgInvalidEmail},
			{`{"name":"N","email":"a@example.com","password":"` + strings.Repeat("x", 73) + `"}`, msgPasswordTooLong},
		} {
			expect(t, f.do("POST", "/api/v1/auths/signup", "", tc.body), 400, tc.detail)
		}
		for _, body := range []string{`{"name":"N","email":"a@example.com"}`, `{"email":"a@example.com","password":"pw"}`,
			`{"name":1,"email":"a@example.com","password":"pw"}`, `[]`, `{"name":"N",`, ``, `{"name":"N","email":"a@example.com","password":"pw"} {}`} {
			w := f.do("POST", "/api/v1/auths/signup", "", body)
			expect(t, w, 422, "")
			if _, isString := decodeBody(t, w)["detail"].(string); !isString {
				t.Fatalf("detail is not a string: %s", w.Body.String())
			}
		}
		if n, _ := f.store.CountUsers(context.Background()); n != 4 {
			t.Fatalf("bad sign-ups created accounts: %d users", n)
		}
	})
	t.Run("password confirmation", func(t *testing.T) {
		f := newFixture(t, map[string]string{"ENABLE_SIGNUP_PASSWORD_CONFIRMATION": "true"})
		expect(t, f.do("POST", "/api/v1/auths/signup", "", `{"name":"N","email":"a@example.com","password":"pw-1"}`), 422, "")
		expect(t, f.do("POST", "/api/v1/auths/signup", "", `{"name":"N","email":"a@example.com","password":"pw-1","confirm_password":"pw-2"}`), 400, "")
		expect(t, f.do("POST", "/api/v1/auths/signup", "", `{"name":"N","email":"a@example.com","password":"pw-1","confirm_password":"pw-1"}`), 200, "")
	})
}

func TestSignin(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("POST", "/api/v1/auths/signin", "", `{"email":"USER@example.com","password":"secret-password"}`)
	expect(t, w, 200, "")
	tok := decodeBody(t, w)["token"].(string)
	// The token works as Bearer and as the cookie.
	expect(t, f.do("GET", "/api/v1/auths/", tok, ""), 200, "")
	req := httptest.NewRequest("GET", "/api/v1/auths/", nil)
	req.AddCookie(&http.Cookie{Name: "token", Value: tok})
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	expect(t, rec, 200, "")
	if decodeBody(t, rec)["email"] != "user@example.com" {
		t.Fatalf("cookie session: %s", rec.Body.String())
	}

	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"wrong"}`), 400, msgInvalidCred)
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"nobody@example.com","password":"wrong"}`), 400, msgInvalidCred)

	// Pending users sign in but reach nothing else.
	w = f.do("POST", "/api/v1/auths/signin", "", `{"email":"pending@example.com","password":"secret-password"}`)
	expect(t, w, 200, "")
	ptok := decodeBody(t, w)["token"].(string)
	expect(t, f.do("GET", "/api/v1/auths/", ptok, ""), 200, "")
	expect(t, f.do("GET", "/api/v1/auths/api_keys", ptok, ""), 401, msgAccessProhibited)
}

func TestSigninRateLimit(t *testing.T) {
	f := newFixture(t, nil)
	for i := 0; i < 15; i++ {
		expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"wrong"}`), 400, msgInvalidCred)
	}
	// The 16th attempt in the window is refused even with the right password.
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"secret-password"}`), 429, msgRateLimited)
	// Another account from a fresh address is not affected.
	expect(t, f.doH("POST", "/api/v1/auths/signin", `{"email":"other@example.com","password":"secret-password"}`, nil), 200, "")
}

func TestSigninRateLimitPerAddress(t *testing.T) {
	f := newFixture(t, nil)
	// Failures spread over many accounts from one address.
	for i := 0; i < 60; i++ {
		email := "guess" + itoa(int64(i)) + "@example.com"
		expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"`+email+`","password":"x"}`), 400, "")
	}
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"secret-password"}`), 429, msgRateLimited)
}

// Unknown e-mail and wrong password must cost the same: both run one bcrypt
// comparison. Compared as the fastest of repeated runs at a real cost (the
// minimum is what the work costs; slower runs only measure machine load).
// Skipping the comparison for unknown accounts makes them ~1000x faster.
func TestSigninTimingUnknownEqualsWrong(t *testing.T) {
	p := auth.NewPasswords(8)
	hash, _ := p.Hash("right")
	fastest := func(fn func()) time.Duration {
		best := time.Duration(1 << 62)
		for i := 0; i < 15; i++ {
			start := time.Now()
			fn()
			best = min(best, time.Since(start))
		}
		return best
	}
	wrong := fastest(func() { p.Check(hash, "wrong") })
	unknown := fastest(func() { p.Check("", "wrong") })
	if unknown < wrong/3 {
		t.Fatalf("unknown account took %v, wrong password %v: timing reveals which e-mails exist", unknown, wrong)
	}
}

func TestPasswordAuthDisabled(t *testing.T) {
	f := newFixture(t, map[string]string{"ENABLE_PASSWORD_AUTH": "false", "ENABLE_OAUTH_SIGNUP": "true"})
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"secret-password"}`), 403, msgActionProhibited)
	expect(t, f.do("POST", "/api/v1/auths/ldap", "", `{"user":"user","password":"secret-password"}`), 403, msgActionProhibited)
}

func TestTokens(t *testing.T) {
	f := newFixture(t, nil)
	expect(t, f.do("GET", "/api/v1/auths/", "", ""), 401, msgNotAuthenticated)
	expect(t, f.do("GET", "/api/v1/auths/", "garbage", ""), 401, msgUnauthorized)
	other, _ := auth.NewTokens([]byte("another-secret"))
	forged, _, _ := other.Issue(f.admin.ID, time.Hour)
	expect(t, f.do("GET", "/api/v1/auths/", forged, ""), 401, msgUnauthorized)
	// An expired token, signed with the right key.
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(testSecret)}, nil)
	old, _ := jwt.Signed(signer).Claims(auth.Claims{ID: f.user.ID, JTI: "j", IAT: time.Now().Add(-2 * time.Hour).Unix(),
		Exp: time.Now().Add(-time.Hour).Unix()}).Serialize()
	expect(t, f.do("GET", "/api/v1/auths/", old, ""), 401, msgUnauthorized)

	// A deleted account's token stops working.
	if err := f.store.DeleteUser(context.Background(), actorOf(f.admin), f.other.ID); err != nil {
		t.Fatal(err)
	}
	expect(t, f.do("GET", "/api/v1/auths/", f.otherTok, ""), 401, msgInvalidToken)

	// Admin routes answer 401 (not 403) to non-admins, as Open WebUI does.
	expect(t, f.do("POST", "/api/v1/auths/add", f.userTok, `{}`), 401, msgAccessProhibited)
}

func TestSignoutRevokesToken(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("POST", "/api/v1/auths/signout", f.userTok, "")
	expect(t, w, 200, "")
	if m := decodeBody(t, w); m["status"] != true {
		t.Fatalf("signout: %v", m)
	}
	expect(t, f.do("GET", "/api/v1/auths/", f.userTok, ""), 401, "Invalid token")
	// The revocation survives a restart.
	srv2, err := New(context.Background(), Deps{Store: f.store, Settings: f.settings, Tokens: f.tokens, Passwords: f.srv.passwords})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/v1/auths/", nil)
	req.Header.Set("Authorization", "Bearer "+f.userTok)
	rec := httptest.NewRecorder()
	srv2.ServeHTTP(rec, req)
	expect(t, rec, 401, "Invalid token")
	// Other sessions of the same user keep working.
	expect(t, f.do("GET", "/api/v1/auths/", f.jwt(f.user), ""), 200, "")
}

func TestAPIKeys(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("POST", "/api/v1/auths/api_key", f.userTok, "")
	expect(t, w, 200, "")
	key := decodeBody(t, w)["api_key"].(string)
	if !strings.HasPrefix(key, "sk-") || len(key) != 35 {
		t.Fatalf("key %q", key)
	}
	// Bearer, x-api-key, and x-api-key winning over a proxy's Authorization.
	expect(t, f.do("GET", "/api/v1/auths/", key, ""), 200, "")
	expect(t, f.doH("GET", "/api/v1/auths/", "", map[string]string{"x-api-key": key}), 200, "")
	expect(t, f.doH("GET", "/api/v1/auths/", "", map[string]string{"x-api-key": key, "Authorization": "Basic cHJveHk6cHc="}), 200, "")
	// The key is never shown again: GET gives only the hint.
	w = f.do("GET", "/api/v1/auths/api_key", f.userTok, "")
	expect(t, w, 200, "")
	if hint := decodeBody(t, w)["api_key"].(string); hint == key || !strings.HasPrefix(hint, "sk-") {
		t.Fatalf("GET api_key returned %q", hint)
	}
	// A key has exactly its owner's permissions.
	expect(t, f.do("GET", "/api/v1/users/", key, ""), 401, msgAccessProhibited)
	// A new legacy key replaces the old one.
	w = f.do("POST", "/api/v1/auths/api_key", f.userTok, "")
	key2 := decodeBody(t, w)["api_key"].(string)
	expect(t, f.do("GET", "/api/v1/auths/", key, ""), 401, msgInvalidToken)
	expect(t, f.do("GET", "/api/v1/auths/", key2, ""), 200, "")
	expect(t, f.do("DELETE", "/api/v1/auths/api_key", f.userTok, ""), 200, "")
	expect(t, f.do("GET", "/api/v1/auths/", key2, ""), 401, msgInvalidToken)

	// Named keys: list shows hints only; revoke by id; another user cannot.
	w = f.do("POST", "/api/v1/auths/api_keys", f.userTok, `{"name":"ci"}`)
	expect(t, w, 200, "")
	created := decodeBody(t, w)
	named := created["key"].(string)
	w = f.do("GET", "/api/v1/auths/api_keys", f.userTok, "")
	expect(t, w, 200, "")
	if strings.Contains(w.Body.String(), named) {
		t.Fatal("key list leaks a key")
	}
	id := created["id"].(string)
	expect(t, f.do("DELETE", "/api/v1/auths/api_keys/"+id, f.otherTok, ""), 404, msgNotFound)
	expect(t, f.do("GET", "/api/v1/auths/", named, ""), 200, "")
	expect(t, f.do("DELETE", "/api/v1/auths/api_keys/"+id, f.userTok, ""), 200, "")
	expect(t, f.do("GET", "/api/v1/auths/", named, ""), 401, msgInvalidToken)
}

func TestAPIKeyCustomHeader(t *testing.T) {
	f := newFixture(t, map[string]string{"CUSTOM_API_KEY_HEADER": "X-Hearth-Key"})
	expect(t, f.doH("GET", "/api/v1/auths/", "", map[string]string{"X-Hearth-Key": f.userKey}), 200, "")
	// x-api-key is no longer read once renamed.
	expect(t, f.doH("GET", "/api/v1/auths/", "", map[string]string{"x-api-key": f.userKey}), 401, msgNotAuthenticated)
}

func TestAPIKeysDisabled(t *testing.T) {
	f := newFixture(t, map[string]string{"ENABLE_API_KEYS": "false"})
	expect(t, f.do("GET", "/api/v1/auths/", f.userKey, ""), 403, msgAPIKeyNotAllowed)
	expect(t, f.doH("GET", "/api/v1/auths/", "", map[string]string{"x-api-key": f.userKey}), 403, msgAPIKeyNotAllowed)
	expect(t, f.do("POST", "/api/v1/auths/api_key", f.userTok, ""), 403, msgAPIKeyCreation)
}

func TestAPIKeyEndpointRestrictions(t *testing.T) {
	f := newFixture(t, map[string]string{"ENABLE_API_KEYS_ENDPOINT_RESTRICTIONS": "true", "API_KEYS_ALLOWED_ENDPOINTS": "/api/v1/auths, /api/v1/user"})
	expect(t, f.do("GET", "/api/v1/auths/", f.userKey, ""), 200, "")
	// The same restriction whichever header carries the key.
	expect(t, f.do("GET", "/api/v1/groups/", f.userKey, ""), 403, msgAccessProhibited)
	expect(t, f.doH("GET", "/api/v1/groups/", "", map[string]string{"x-api-key": f.userKey}), 403, msgAccessProhibited)
	// Prefix match is by whole segments: /api/v1/user does not allow /api/v1/users.
	expect(t, f.do("GET", "/api/v1/users/permissions", f.userKey, ""), 403, msgAccessProhibited)
	// JWTs are not restricted.
	expect(t, f.do("GET", "/api/v1/groups/", f.userTok, ""), 200, "")
}

func TestTrustedHeaderSignin(t *testing.T) {
	f := newFixture(t, map[string]string{
		"WEBUI_AUTH_TRUSTED_EMAIL_HEADER": "X-User-Email", "WEBUI_AUTH_TRUSTED_NAME_HEADER": "X-User-Name",
		"WEBUI_AUTH_TRUSTED_GROUPS_HEADER": "X-User-Groups", "WEBUI_AUTH_TRUSTED_ROLE_HEADER": "X-User-Role",
		"ENABLE_PASSWORD_AUTH": "false", "ENABLE_OAUTH_SIGNUP": "true",
	})
	ctx := context.Background()
	g, _ := f.store.CreateGroup(ctx, actorOf(f.admin), store.Group{Name: "Eng"})
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"","password":""}`), 400, msgTrustedHeader)
	w := f.doH("POST", "/api/v1/auths/signin", `{"email":"","password":""}`, map[string]string{
		"X-User-Email": "New@Corp.example", "X-User-Name": "J%C3%BCrgen", "X-User-Groups": "eng, missing", "X-User-Role": " User "})
	expect(t, w, 200, "")
	m := decodeBody(t, w)
	if m["email"] != "new@corp.example" || m["name"] != "Jürgen" || m["role"] != "user" {
		t.Fatalf("trusted sign-in: %v", m)
	}
	ids, _, _ := f.store.UserGroups(ctx, m["id"].(string))
	if len(ids) != 1 || ids[0] != g.ID {
		t.Fatalf("groups %v", ids)
	}
	// An invalid role value leaves the role alone.
	w = f.doH("POST", "/api/v1/auths/signin", `{"email":"","password":""}`, map[string]string{"X-User-Email": "new@corp.example", "X-User-Role": "root"})
	expect(t, w, 200, "")
	if decodeBody(t, w)["role"] != "user" {
		t.Fatal("invalid role header changed the role")
	}
	// A token presented with another user's trusted header is refused.
	expect(t, f.doH("GET", "/api/v1/auths/", "", map[string]string{"Authorization": "Bearer " + f.userTok, "X-User-Email": "new@corp.example"}), 401, msgUserMismatch)
	// Password change is refused in this mode.
	expect(t, f.do("POST", "/api/v1/auths/update/password", f.userTok, `{"password":"secret-password","new_password":"x-123456"}`), 400, msgActionProhibited)
}

func TestUpdatePasswordAndProfile(t *testing.T) {
	f := newFixture(t, nil)
	expect(t, f.do("POST", "/api/v1/auths/update/password", f.userTok, `{"password":"nope","new_password":"new-password"}`), 400, msgIncorrectPassword)
	expect(t, f.do("POST", "/api/v1/auths/update/password", f.userTok, `{"password":"secret-password","new_password":"new-password"}`), 200, "")
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"secret-password"}`), 400, msgInvalidCred)
	expect(t, f.do("POST", "/api/v1/auths/signin", "", `{"email":"user@example.com","password":"new-password"}`), 200, "")

	w := f.do("POST", "/api/v1/auths/update/profile", f.userTok, `{"name":"Renamed","profile_image_url":"https://img.example/p.png","bio":"hi"}`)
	expect(t, w, 200, "")
	if m := decodeBody(t, w); m["name"] != "Renamed" || m["profile_image_url"] != "https://img.example/p.png" {
		t.Fatalf("profile: %v", m)
	}
	expect(t, f.do("POST", "/api/v1/auths/update/profile", f.userTok, `{"profile_image_url":"javascript:alert(1)"}`), 400, "")
	expect(t, f.do("POST", "/api/v1/auths/update/profile", f.userTok, `{"name":"  "}`), 422, "")
	expect(t, f.do("POST", "/api/v1/auths/update/timezone", f.userTok, `{"timezone":"Mars/Olympus"}`), 400, "")
	expect(t, f.do("POST", "/api/v1/auths/update/timezone", f.userTok, `{"timezone":"Europe/Paris"}`), 200, "")
}

func TestAddUserAndAdminDetails(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("POST", "/api/v1/auths/add", f.adminTok, `{"name":"Added","email":"added@example.com","password":"pw-123456","role":"user"}`)
	expect(t, w, 200, "")
	m := decodeBody(t, w)
	if m["role"] != "user" || m["token"] == "" {
		t.Fatalf("add user: %v", m)
	}
	expect(t, f.do("POST", "/api/v1/auths/add", f.adminTok, `{"name":"A","email":"x@example.com","password":"pw","role":"root"}`), 400, "")
	w = f.do("GET", "/api/v1/auths/admin/details", f.pendingTok, "")
	expect(t, w, 200, "")
	if m := decodeBody(t, w); m["email"] != "admin@example.com" {
		t.Fatalf("admin details: %v", m)
	}
	g := newFixture(t, map[string]string{"SHOW_ADMIN_DETAILS": "false"})
	expect(t, g.do("GET", "/api/v1/auths/admin/details", g.userTok, ""), 400, msgActionProhibited)
}

func TestErrorsAndSafety(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("GET", "/api/v1/no/such/route", f.userTok, "")
	expect(t, w, 404, "Not Found")
	expect(t, f.do("PUT", "/api/v1/auths/signin", "", `{}`), 405, "Method Not Allowed")
	big := `{"name":"` + strings.Repeat("x", 2<<20) + `","email":"a@example.com","password":"p"}`
	expect(t, f.do("POST", "/api/v1/auths/signup", "", big), 413, "")

	// A panicking handler becomes a logged 500 with a generic detail, and
	// the server keeps serving.
	f.srv.routes = append(f.srv.routes, route{pattern: "GET /api/v1/test/panic", access: public,
		h: func(w http.ResponseWriter, r *http.Request) error { panic("boom") }})
	f.srv.handler = f.srv.buildMux()
	expect(t, f.do("GET", "/api/v1/test/panic", "", ""), 500, msgInternal)
	expect(t, f.do("GET", "/api/v1/auths/", f.userTok, ""), 200, "")
}

func TestPasswordValidation(t *testing.T) {
	f := newFixture(t, map[string]string{"ENABLE_PASSWORD_VALIDATION": "true"})
	for pw, want := range map[string]int{"weak": 400, "alllowercase1!": 400, "NoDigits!!": 400, "Str0ng!pw": 200} {
		w := f.do("POST", "/api/v1/auths/signup", "", `{"name":"N","email":"v`+itoa(int64(len(pw)))+pw[:2]+`@example.com","password":"`+pw+`"}`)
		if w.Code != want {
			t.Errorf("password %q: status %d, want %d: %s", pw, w.Code, want, w.Body.String())
		}
	}
	g := newFixture(t, map[string]string{"ENABLE_PASSWORD_VALIDATION": "true", "PASSWORD_VALIDATION_REGEX_PATTERN": "^[0-9]{4}$", "PASSWORD_VALIDATION_HINT": "Four digits."})
	expect(t, g.do("POST", "/api/v1/auths/signup", "", `{"name":"N","email":"p@example.com","password":"12345"}`), 400, "Four digits.")
	expect(t, g.do("POST", "/api/v1/auths/signup", "", `{"name":"N","email":"p@example.com","password":"1234"}`), 200, "")
}
