package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"hearth/store"
)

// testIDP is an in-process OpenID provider: discovery, authorize (not
// called: the test plays the browser), token with PKCE check, JWKS and
// userinfo. ID tokens are ES256-signed with go-jose. Nothing leaves the
// process.
type testIDP struct {
	t        *testing.T
	srv      *httptest.Server
	key      *ecdsa.PrivateKey
	forgeKey *ecdsa.PrivateKey // when set, ID tokens are signed with it (not in the JWKS)
	requests atomic.Int64

	mu    sync.Mutex
	codes map[string]idpGrant
	// userinfo claims by access token
	userinfo map[string]map[string]any
}

type idpGrant struct {
	challenge string
	claims    map[string]any // ID token claims
	userinfo  map[string]any
}

const (
	idpClientID     = "hearth-client"
	idpClientSecret = "hearth-client-secret"
)

func newTestIDP(t *testing.T) *testIDP {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &testIDP{t: t, key: key, codes: map[string]idpGrant{}, userinfo: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize",
			"token_endpoint": p.srv.URL + "/token", "jwks_uri": p.srv.URL + "/jwks",
			"userinfo_endpoint": p.srv.URL + "/userinfo", "end_session_endpoint": p.srv.URL + "/logout",
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		p.mu.Lock()
		g, found := p.codes[r.Form.Get("code")]
		delete(p.codes, r.Form.Get("code"))
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !found || id != idpClientID || secret != idpClientSecret ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		access := "at-" + rand.Text()
		p.mu.Lock()
		p.userinfo[access] = g.userinfo
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer",
			"refresh_token": "rt-" + rand.Text(), "expires_in": 3600, "id_token": p.sign(g.claims)})
	})
	mux.HandleFunc("GET /userinfo", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		c, ok := p.userinfo[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		p.mu.Unlock()
		if !ok || c == nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(c)
	})
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *testIDP) sign(claims map[string]any) string {
	key := p.key
	if p.forgeKey != nil {
		key = p.forgeKey
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		p.t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := sig.Sign(payload)
	if err != nil {
		p.t.Fatal(err)
	}
	s, err := obj.CompactSerialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

// env is the fixture environment for this provider, plus extra entries.
func (p *testIDP) env(extra map[string]string) map[string]string {
	env := map[string]string{
		"WEBUI_SECRET_KEY":    testSecret,
		"WEBUI_URL":           "http://hearth.test",
		"OAUTH_CLIENT_ID":     idpClientID,
		"OAUTH_CLIENT_SECRET": idpClientSecret,
		"OPENID_PROVIDER_URL": p.srv.URL + "/.well-known/openid-configuration",
		"OAUTH_PROVIDER_NAME": "Test IdP",
		"ENABLE_OAUTH_SIGNUP": "true",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// loginOpts tweaks one login.
type loginOpts struct {
	claims   map[string]any // ID token claims over the defaults (nil value removes a claim)
	userinfo map[string]any
	state    string // callback state override
	noCookie bool   // drop the flow cookie
}

type loginResult struct {
	authorize *url.URL
	resp      *httptest.ResponseRecorder
	cookies   map[string]*http.Cookie
}

// oauthLogin plays the browser: /oauth/oidc/login, the provider's consent
// (a code bound to the PKCE challenge and the claims), then the callback.
func (f *fixture) oauthLogin(p *testIDP, o loginOpts) loginResult {
	f.t.Helper()
	w := f.doH("GET", "/oauth/oidc/login", "", nil)
	if w.Code != http.StatusFound {
		f.t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	loc, err := url.Parse(w.Header().Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), p.srv.URL+"/authorize?") {
		f.t.Fatalf("login redirect: %s", w.Header().Get("Location"))
	}
	var flow *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == flowCookie {
			flow = c
		}
	}
	if flow == nil || !flow.HttpOnly {
		f.t.Fatalf("no httponly flow cookie: %v", w.Result().Cookies())
	}
	q := loc.Query()
	now := time.Now()
	claims := map[string]any{"iss": p.srv.URL, "aud": idpClientID, "sub": "sub-1", "email": "new@example.com",
		"name": "New Person", "nonce": q.Get("nonce"), "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range o.claims {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	code := "code-" + rand.Text()
	p.mu.Lock()
	p.codes[code] = idpGrant{challenge: q.Get("code_challenge"), claims: claims, userinfo: o.userinfo}
	p.mu.Unlock()
	state := q.Get("state")
	if o.state != "" {
		state = o.state
	}
	req := httptest.NewRequest("GET", "/oauth/oidc/callback?code="+url.QueryEscape(code)+"&state="+url.QueryEscape(state), nil)
	if !o.noCookie {
		req.AddCookie(&http.Cookie{Name: flow.Name, Value: flow.Value})
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	res := loginResult{authorize: loc, resp: rec, cookies: map[string]*http.Cookie{}}
	for _, c := range rec.Result().Cookies() {
		res.cookies[c.Name] = c
	}
	return res
}

// wantSignedIn checks a successful login and returns the session user.
func (f *fixture) wantSignedIn(r loginResult) map[string]any {
	f.t.Helper()
	if r.resp.Code != http.StatusFound || r.resp.Header().Get("Location") != "/auth" {
		f.t.Fatalf("callback: %d %q", r.resp.Code, r.resp.Header().Get("Location"))
	}
	tok, sid := r.cookies["token"], r.cookies["oauth_session_id"]
	if tok == nil || tok.Value == "" || sid == nil || sid.Value == "" || !sid.HttpOnly {
		f.t.Fatalf("cookies: %v", r.resp.Result().Cookies())
	}
	// The web client boots on GET /api/v1/auths/ with the cookie.
	req := httptest.NewRequest("GET", "/api/v1/auths/", nil)
	req.AddCookie(&http.Cookie{Name: "token", Value: tok.Value})
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	if w.Code != 200 {
		f.t.Fatalf("session: %d %s", w.Code, w.Body)
	}
	var u map[string]any
	json.Unmarshal(w.Body.Bytes(), &u)
	return u
}

// wantRefused checks an error redirect carrying msg (a substring) and no
// session cookie.
func (f *fixture) wantRefused(r loginResult, msg string) {
	f.t.Helper()
	loc := r.resp.Header().Get("Location")
	if r.resp.Code != http.StatusFound || !strings.HasPrefix(loc, "/auth?error=") {
		f.t.Fatalf("want error redirect, got %d %q", r.resp.Code, loc)
	}
	if e, _ := url.QueryUnescape(strings.TrimPrefix(loc, "/auth?error=")); !strings.Contains(e, msg) {
		f.t.Errorf("error %q, want it to contain %q", e, msg)
	}
	if c := r.cookies["token"]; c != nil && c.Value != "" {
		f.t.Errorf("refused login set a token cookie")
	}
	if c := r.cookies["oauth_session_id"]; c != nil && c.Value != "" {
		f.t.Errorf("refused login set an oauth_session_id cookie")
	}
}

func TestOAuthLoginCreatesUser(t *testing.T) {
	p := newTestIDP(t)
	f := newFixture(t, p.env(map[string]string{"OAUTH_AUDIENCE": "api://hearth", "OAUTH_SCOPES": "openid email profile groups"}))
	if n := p.requests.Load(); n != 0 {
		t.Fatalf("provider contacted %d times before the first login", n)
	}
	// /api/config lists the provider for the sign-in button.
	var cfg struct {
		OAuth struct {
			Providers map[string]string `json:"providers"`
		} `json:"oauth"`
	}
	json.Unmarshal(f.do("GET", "/api/config", "", "").Body.Bytes(), &cfg)
	if cfg.OAuth.Providers["oidc"] != "Test IdP" {
		t.Errorf("providers = %v", cfg.OAuth.Providers)
	}
	r := f.oauthLogin(p, loginOpts{claims: map[string]any{"picture": "https://cdn.example.com/p.png"}})
	q := r.authorize.Query()
	for k, want := range map[string]string{"client_id": idpClientID, "response_type": "code",
		"redirect_uri": "http://hearth.test/oauth/oidc/callback", "scope": "openid email profile groups",
		"audience": "api://hearth", "code_challenge_method": "S256"} {
		if q.Get(k) != want {
			t.Errorf("authorize %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if q.Get("state") == "" || q.Get("nonce") == "" || q.Get("code_challenge") == "" {
		t.Errorf("authorize URL lacks state, nonce or challenge: %s", r.authorize)
	}
	u := f.wantSignedIn(r)
	if u["email"] != "new@example.com" || u["name"] != "New Person" || u["role"] != "pending" ||
		u["profile_image_url"] != "https://cdn.example.com/p.png" {
		t.Errorf("session user = %v", u)
	}
	ctx := context.Background()
	su, err := f.store.UserByEmail(ctx, "new@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if string(su.OAuth) != `{"oidc":{"sub":"sub-1"}}` {
		t.Errorf("oauth = %s", su.OAuth)
	}
	// The token response is stored sealed: neither the store's value nor
	// the database files contain the access token.
	sessions, err := f.store.OAuthSessions(ctx, su.ID)
	if err != nil || len(sessions) != 1 || sessions[0].ID != r.cookies["oauth_session_id"].Value {
		t.Fatalf("sessions = %v, %v", sessions, err)
	}
	raw, err := f.srv.sessionCipher.Open(sessions[0].Token)
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		IDToken      string `json:"id_token"`
	}
	json.Unmarshal(raw, &stored)
	if !strings.HasPrefix(stored.AccessToken, "at-") || stored.RefreshToken == "" || stored.IDToken == "" {
		t.Fatalf("stored token = %s", raw)
	}
	if strings.Contains(sessions[0].Token, stored.AccessToken) || sessions[0].ExpiresAt == 0 {
		t.Errorf("stored session not sealed: %+v", sessions[0])
	}
	for _, suffix := range []string{"", "-wal"} {
		b, _ := os.ReadFile(f.store.Path() + suffix)
		if strings.Contains(string(b), stored.AccessToken) || strings.Contains(string(b), stored.RefreshToken) {
			t.Errorf("hearth.db%s holds the token in clear", suffix)
		}
	}
	// The second login finds the account by subject, even with another e-mail.
	u2 := f.wantSignedIn(f.oauthLogin(p, loginOpts{claims: map[string]any{"email": "renamed@example.com"}}))
	if u2["id"] != su.ID {
		t.Errorf("second login made another account: %v", u2)
	}
}

func TestOAuthFirstUserIsAdmin(t *testing.T) {
	p := newTestIDP(t)
	f := emptyFixture(t, p.env(nil))
	if u := f.wantSignedIn(f.oauthLogin(p, loginOpts{})); u["role"] != "admin" {
		t.Errorf("first account role = %v", u["role"])
	}
}

func TestOAuthSignupOff(t *testing.T) {
	p := newTestIDP(t)
	f := newFixture(t, p.env(map[string]string{"ENABLE_OAUTH_SIGNUP": "false"}))
	f.wantRefused(f.oauthLogin(p, loginOpts{}), msgAccessProhibited)
	if _, err := f.store.UserByEmail(context.Background(), "new@example.com"); err == nil {
		t.Error("account created with sign-up off")
	}
}

func TestOAuthMergeByEmail(t *testing.T) {
	p := newTestIDP(t)
	claims := map[string]any{"email": "USER@example.com", "sub": "sub-user"}
	t.Run("off", func(t *testing.T) {
		f := newFixture(t, p.env(nil))
		f.wantRefused(f.oauthLogin(p, loginOpts{claims: claims}), msgEmailTaken)
	})
	t.Run("on", func(t *testing.T) {
		f := newFixture(t, p.env(map[string]string{"OAUTH_MERGE_ACCOUNTS_BY_EMAIL": "true", "ENABLE_OAUTH_SIGNUP": "false"}))
		u := f.wantSignedIn(f.oauthLogin(p, loginOpts{claims: claims}))
		if u["id"] != f.user.ID {
			t.Fatalf("merged into %v, want %s", u["id"], f.user.ID)
		}
		su, _ := f.store.UserByID(context.Background(), f.user.ID)
		if string(su.OAuth) != `{"oidc":{"sub":"sub-user"}}` {
			t.Errorf("oauth = %s", su.OAuth)
		}
	})
}

func TestOAuthDeactivatedRefused(t *testing.T) {
	p := newTestIDP(t)
	f := newFixture(t, p.env(map[string]string{"OAUTH_MERGE_ACCOUNTS_BY_EMAIL": "true"}))
	if _, err := f.store.UpdateSCIMUser(context.Background(), scimActor(), f.user.ID, store.SCIMUserPatch{Active: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	f.wantRefused(f.oauthLogin(p, loginOpts{claims: map[string]any{"email": "user@example.com"}}), msgAccessProhibited)
}

func TestOAuthRoles(t *testing.T) {
	p := newTestIDP(t)
	env := p.env(map[string]string{"ENABLE_OAUTH_ROLE_MANAGEMENT": "true", "OAUTH_ROLES_CLAIM": "realm.roles",
		"OAUTH_ADMIN_ROLES": "boss", "OAUTH_ALLOWED_ROLES": "staff|crew", "OAUTH_ROLES_SEPARATOR": "|"})
	for _, tc := range []struct {
		roles any
		want  string // "" = refused
	}{
		{[]any{"staff"}, "user"},
		{[]any{"staff", "boss"}, "admin"},
		{"crew|other", "user"},
		{[]any{"visitor"}, ""},
		{nil, "pending"}, // no roles in the token: DEFAULT_USER_ROLE
	} {
		f := newFixture(t, env)
		claims := map[string]any{}
		if tc.roles != nil {
			claims["realm"] = map[string]any{"roles": tc.roles}
		}
		r := f.oauthLogin(p, loginOpts{claims: claims})
		if tc.want == "" {
			f.wantRefused(r, msgAccessProhibited)
			continue
		}
		if u := f.wantSignedIn(r); u["role"] != tc.want {
			t.Errorf("roles %v: role %v, want %s", tc.roles, u["role"], tc.want)
		}
	}
	// An existing account's role follows the claim at the next login.
	f := newFixture(t, env)
	f.oauthLogin(p, loginOpts{claims: map[string]any{"realm": map[string]any{"roles": []any{"boss"}}}})
	if u := f.wantSignedIn(f.oauthLogin(p, loginOpts{claims: map[string]any{"realm": map[string]any{"roles": []any{"staff"}}}})); u["role"] != "user" {
		t.Errorf("demotion at next login: role %v", u["role"])
	}
}

func TestOAuthGroups(t *testing.T) {
	p := newTestIDP(t)
	f := newFixture(t, p.env(map[string]string{"ENABLE_OAUTH_GROUP_MANAGEMENT": "true", "ENABLE_OAUTH_GROUP_CREATION": "true",
		"OAUTH_GROUP_CLAIM": "groups", "OAUTH_MERGE_ACCOUNTS_BY_EMAIL": "true"}))
	ctx := context.Background()
	admin := actorOf(f.admin)
	eng, err := f.store.CreateGroup(ctx, admin, store.Group{Name: "Eng"})
	if err != nil {
		t.Fatal(err)
	}
	manual, err := f.store.CreateGroup(ctx, admin, store.Group{Name: "Manual"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.ChangeMembers(ctx, admin, manual.ID, []string{f.user.ID, f.admin.ID}, nil); err != nil {
		t.Fatal(err)
	}
	f.wantSignedIn(f.oauthLogin(p, loginOpts{claims: map[string]any{"email": "user@example.com", "groups": []any{"eng", "New Team"}}}))
	names := func(id string) map[string]bool {
		gs, err := f.store.GroupsOfUser(ctx, admin, id)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, g := range gs {
			out[g.Name] = true
		}
		return out
	}
	if got := names(f.user.ID); len(got) != 2 || !got["Eng"] || !got["New Team"] {
		t.Errorf("user groups = %v, want Eng and New Team", got)
	}
	_ = eng
	// An empty claim leaves memberships alone; an admin is never synced.
	f.wantSignedIn(f.oauthLogin(p, loginOpts{claims: map[string]any{"email": "user@example.com", "groups": []any{}}}))
	if got := names(f.user.ID); len(got) != 2 {
		t.Errorf("empty claim changed groups: %v", got)
	}
	f.wantSignedIn(f.oauthLogin(p, loginOpts{claims: map[string]any{"sub": "sub-admin", "email": "admin@example.com", "groups": []any{"Eng"}}}))
	if got := names(f.admin.ID); !got["Manual"] || got["Eng"] {
		t.Errorf("admin groups changed: %v", got)
	}
}

func TestOAuthRefusesBadFlows(t *testing.T) {
	p := newTestIDP(t)
	f := newFixture(t, p.env(nil))
	for name, o := range map[string]loginOpts{
		"bad state":      {state: "forged"},
		"no flow cookie": {noCookie: true},
		"bad nonce":      {claims: map[string]any{"nonce": "other"}},
		"no nonce":       {claims: map[string]any{"nonce": nil}},
		"wrong audience": {claims: map[string]any{"aud": "someone-else"}},
		"wrong issuer":   {claims: map[string]any{"iss": "https://evil.example.com"}},
		"expired":        {claims: map[string]any{"exp": time.Now().Add(-time.Hour).Unix(), "iat": time.Now().Add(-2 * time.Hour).Unix()}},
		"no email":       {claims: map[string]any{"email": nil}},
	} {
		t.Run(name, func(t *testing.T) {
			f.t = t
			f.wantRefused(f.oauthLogin(p, o), "")
		})
	}
	f.t = t
	if _, err := f.store.UserByEmail(context.Background(), "new@example.com"); err == nil {
		t.Error("a refused flow created an account")
	}
	// A forged ID token (signed by another key) is refused too.
	p.forgeKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f.wantRefused(f.oauthLogin(p, loginOpts{}), "")
}

func TestOAuthUserinfoFallback(t *testing.T) {
	p := newTestIDP(t)
	f := newFixture(t, p.env(nil))
	u := f.wantSignedIn(f.oauthLogin(p, loginOpts{claims: map[string]any{"email": nil},
		userinfo: map[string]any{"sub": "sub-1", "email": "fromuserinfo@example.com"}}))
	if u["email"] != "fromuserinfo@example.com" {
		t.Errorf("email = %v", u["email"])
	}
}

func TestOAuthSessionPruningAndSignout(t *testing.T) {
	p := newTestIDP(t)
	f := newFixture(t, p.env(map[string]string{"OAUTH_MAX_SESSIONS_PER_USER": "2"}))
	var last loginResult
	for range 3 {
		last = f.oauthLogin(p, loginOpts{})
		f.wantSignedIn(last)
	}
	ctx := context.Background()
	su, _ := f.store.UserByEmail(ctx, "new@example.com")
	sessions, _ := f.store.OAuthSessions(ctx, su.ID)
	if len(sessions) != 2 || sessions[0].ID != last.cookies["oauth_session_id"].Value {
		t.Fatalf("sessions after 3 logins with max 2: %d (newest %v)", len(sessions), sessions)
	}
	// Sign-out with the cookies deletes that session and clears the cookies.
	req := httptest.NewRequest("POST", "/api/v1/auths/signout", nil)
	req.AddCookie(&http.Cookie{Name: "token", Value: last.cookies["token"].Value})
	req.AddCookie(&http.Cookie{Name: "oauth_session_id", Value: last.cookies["oauth_session_id"].Value})
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Fatalf("signout: %d %s", w.Code, w.Body)
	}
	cleared := map[string]bool{}
	for _, c := range w.Result().Cookies() {
		if c.MaxAge < 0 {
			cleared[c.Name] = true
		}
	}
	if !cleared["token"] || !cleared["oauth_session_id"] || !cleared["oauth_id_token"] {
		t.Errorf("cookies cleared: %v", cleared)
	}
	var resp map[string]any
	json.Unmarshal(w.Body.Bytes(), &resp)
	if ru, _ := resp["redirect_url"].(string); !strings.HasPrefix(ru, p.srv.URL+"/logout?id_token_hint=") {
		t.Errorf("redirect_url = %v", resp["redirect_url"])
	}
	sessions, _ = f.store.OAuthSessions(ctx, su.ID)
	if len(sessions) != 1 || sessions[0].ID == last.cookies["oauth_session_id"].Value {
		t.Errorf("sessions after sign-out: %v", sessions)
	}
	// Another account's token cannot delete this user's session.
	req = httptest.NewRequest("POST", "/api/v1/auths/signout", nil)
	req.AddCookie(&http.Cookie{Name: "token", Value: f.otherTok})
	req.AddCookie(&http.Cookie{Name: "oauth_session_id", Value: sessions[0].ID})
	f.srv.ServeHTTP(httptest.NewRecorder(), req)
	if s2, _ := f.store.OAuthSessions(ctx, su.ID); len(s2) != 1 {
		t.Errorf("another account deleted the session")
	}
}

func TestOAuthProviderNotConfigured(t *testing.T) {
	f := newFixture(t, nil)
	for _, path := range []string{"/oauth/oidc/login", "/oauth/oidc/callback?code=x&state=y", "/oauth/google/login"} {
		if w := f.do("GET", path, "", ""); w.Code != 404 {
			t.Errorf("%s: %d", path, w.Code)
		}
	}
	p := newTestIDP(t)
	f = newFixture(t, p.env(nil))
	if w := f.do("GET", "/oauth/google/login", "", ""); w.Code != 404 {
		t.Errorf("unknown provider: %d", w.Code)
	}
}

// authzOAuthRows: the OAuth routes are public; without a flow started in
// the same browser they only ever answer with the error redirect (302), and
// for an unconfigured or unknown provider with 404, whoever calls.
func authzOAuthRows() []authzRow {
	// A provider on a closed local port: the login's lazy discovery fails
	// at once, without leaving the machine.
	env := map[string]string{"WEBUI_SECRET_KEY": testSecret, "OAUTH_CLIENT_ID": "c",
		"OPENID_PROVIDER_URL": "http://127.0.0.1:1/.well-known/openid-configuration"}
	found := [5]int{302, 302, 302, 302, 302}
	return []authzRow{
		{pattern: "GET /oauth/{provider}/login", path: func(*fixture) string { return "/oauth/oidc/login" }, env: env, want: found},
		{pattern: "GET /oauth/{provider}/callback", path: func(*fixture) string { return "/oauth/oidc/callback?code=c&state=s" }, env: env, want: found},
		{pattern: "GET /oauth/{provider}/login/callback", path: func(*fixture) string { return "/oauth/google/login/callback?code=c&state=s" }, env: env, want: [5]int{404, 404, 404, 404, 404}},
	}
}

// TestOAuthCallbackLeaksNothing: a callback without the flow cookie, by any
// caller, is the error redirect with no session cookie, and a provider
// discovery failure at login is an error redirect too.
func TestOAuthCallbackLeaksNothing(t *testing.T) {
	f := newFixture(t, authzOAuthRows()[0].env)
	for _, tok := range []string{"", f.pendingTok, f.userTok, f.adminTok} {
		w := f.do("GET", "/oauth/oidc/login/callback?code=c&state=s", tok, "")
		f.wantRefused(loginResult{resp: w, cookies: cookieMap(w)}, "")
		w = f.do("GET", "/oauth/oidc/login", tok, "")
		f.wantRefused(loginResult{resp: w, cookies: cookieMap(w)}, "not reachable")
	}
}

func cookieMap(w *httptest.ResponseRecorder) map[string]*http.Cookie {
	m := map[string]*http.Cookie{}
	for _, c := range w.Result().Cookies() {
		m[c.Name] = c
	}
	return m
}
