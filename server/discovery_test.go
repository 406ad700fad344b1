package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"hearth/auth"
	"hearth/config"
	"hearth/store"
)

// newEmptyFixture is a server on a fresh database without any account (the
// onboarding case). Only srv, store and settings are set.
func newEmptyFixture(t *testing.T, env map[string]string) *fixture {
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
	tokens, err := auth.NewTokens([]byte("test-secret"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(ctx, Deps{Store: st, Settings: settings, Tokens: tokens, Passwords: auth.NewPasswords(4), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, store: st, settings: settings, srv: srv, tokens: tokens}
}

// jsonBody decodes a response body into a generic object.
func jsonBody(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, w.Body.String())
	}
	return m
}

func TestHealthRoutes(t *testing.T) {
	f := newFixture(t, nil)
	for _, p := range []string{"/health", "/health/db", "/ready"} {
		w := f.do("GET", p, "", "")
		expect(t, w, 200, "")
		if got := strings.TrimSpace(w.Body.String()); got != `{"status":true}` {
			t.Errorf("%s: body %s", p, got)
		}
	}
	// Once the database is gone, every health route says so.
	f.store.Close()
	for _, p := range []string{"/health", "/health/db", "/ready"} {
		w := f.do("GET", p, "", "")
		expect(t, w, 503, "Database not ready")
	}
}

func TestVersion(t *testing.T) {
	f := newFixture(t, map[string]string{"DEPLOYMENT_ID": "eu-1"})
	w := f.do("GET", "/api/version", "", "")
	expect(t, w, 200, "")
	m := jsonBody(t, w)
	if m["version"] != "test" || m["deployment_id"] != "eu-1" {
		t.Fatalf("version payload %v", m)
	}
}

func TestAppConfigShapes(t *testing.T) {
	f := newFixture(t, map[string]string{
		"WEBUI_NAME":                   "Acme Chat",
		"PENDING_USER_OVERLAY_TITLE":   "Wait",
		"PENDING_USER_OVERLAY_CONTENT": "An admin will approve you.",
		"DEFAULT_MODELS":               "llama3",
		"RESPONSE_WATERMARK":           "wm",
	})
	publicFeatures := []string{"auth", "auth_trusted_header", "enable_signup_password_confirmation",
		"enable_ldap", "enable_signup", "enable_login_form", "enable_websocket", "enable_password_auth"}
	signedInOnly := []string{"default_models", "default_pinned_models", "default_prompt_suggestions",
		"permissions", "file", "code", "audio", "license_metadata"}

	get := func(tok string) map[string]any {
		t.Helper()
		w := f.do("GET", "/api/config", tok, "")
		expect(t, w, 200, "")
		return jsonBody(t, w)
	}
	features := func(m map[string]any) map[string]any {
		t.Helper()
		fs, ok := m["features"].(map[string]any)
		if !ok {
			t.Fatalf("features missing: %v", m)
		}
		return fs
	}

	// Anonymous: only what the sign-in page needs.
	anon := get("")
	if anon["status"] != true || anon["name"] != "Acme Chat" || anon["version"] != "test" || anon["default_locale"] != "en" {
		t.Errorf("anonymous basics: %v", anon)
	}
	if _, ok := anon["onboarding"]; ok {
		t.Errorf("onboarding shown although users exist")
	}
	oauth, _ := anon["oauth"].(map[string]any)
	if providers, ok := oauth["providers"].(map[string]any); !ok || len(providers) != 0 || oauth["auto_redirect"] != false {
		t.Errorf("oauth: %v", anon["oauth"])
	}
	af := features(anon)
	for _, k := range publicFeatures {
		if _, ok := af[k]; !ok {
			t.Errorf("anonymous features lack %s", k)
		}
	}
	if len(af) != len(publicFeatures) {
		t.Errorf("anonymous features = %v, want only %v", af, publicFeatures)
	}
	for _, k := range append(signedInOnly, "ui") {
		if _, ok := anon[k]; ok {
			t.Errorf("anonymous config contains %s", k)
		}
	}
	// An invalid token is simply anonymous.
	if bad := get("not-a-token"); len(features(bad)) != len(publicFeatures) {
		t.Errorf("invalid token got more than the anonymous view")
	}

	// Pending: the public part plus the overlay text.
	pend := get(f.pendingTok)
	if len(features(pend)) != len(publicFeatures) {
		t.Errorf("pending features = %v", features(pend))
	}
	for _, k := range signedInOnly {
		if _, ok := pend[k]; ok {
			t.Errorf("pending config contains %s", k)
		}
	}
	ui, _ := pend["ui"].(map[string]any)
	if ui["pending_user_overlay_title"] != "Wait" || ui["pending_user_overlay_content"] != "An admin will approve you." || len(ui) != 2 {
		t.Errorf("pending ui = %v", pend["ui"])
	}

	// User and admin: everything.
	for _, tok := range []string{f.userTok, f.adminTok} {
		m := get(tok)
		for _, k := range signedInOnly {
			if _, ok := m[k]; !ok {
				t.Errorf("signed-in config lacks %s", k)
			}
		}
		if m["default_models"] != "llama3" {
			t.Errorf("default_models = %v", m["default_models"])
		}
		if s, ok := m["default_prompt_suggestions"].([]any); !ok || len(s) != 0 {
			t.Errorf("default_prompt_suggestions = %v", m["default_prompt_suggestions"])
		}
		fs := features(m)
		for k, want := range map[string]any{"enable_api_keys": true, "enable_folders": true, "enable_web_search": false,
			"enable_code_interpreter": false, "enable_channels": false, "folder_max_file_count": ""} {
			if fs[k] != want {
				t.Errorf("feature %s = %v, want %v", k, fs[k], want)
			}
		}
		perms, _ := m["permissions"].(map[string]any)
		if chat, _ := perms["chat"].(map[string]any); chat["controls"] != true {
			t.Errorf("permissions = %v", m["permissions"])
		}
		ui, _ := m["ui"].(map[string]any)
		if ui["response_watermark"] != "wm" || ui["pending_user_overlay_title"] != "Wait" {
			t.Errorf("ui = %v", m["ui"])
		}
		if v, ok := m["license_metadata"]; !ok || v != nil {
			t.Errorf("license_metadata = %v", v)
		}
		if _, ok := m["banners"]; ok {
			t.Errorf("banners are not part of /api/config")
		}
	}
}

func TestAppConfigPermissionsAreEffective(t *testing.T) {
	f := newFixture(t, nil)
	// A group grant shows in the member's tree, not in anyone else's.
	ctx := context.Background()
	g, err := f.store.CreateGroup(ctx, actorOf(f.admin), store.Group{Name: "modelers", Permissions: json.RawMessage(`{"workspace":{"models":true}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.ChangeMembers(ctx, actorOf(f.admin), g.ID, []string{f.user.ID}, nil); err != nil {
		t.Fatal(err)
	}
	models := func(tok string) any {
		m := jsonBody(t, f.do("GET", "/api/config", tok, ""))
		perms, _ := m["permissions"].(map[string]any)
		ws, _ := perms["workspace"].(map[string]any)
		return ws["models"]
	}
	if got := models(f.userTok); got != true {
		t.Errorf("member workspace.models = %v", got)
	}
	if got := models(f.otherTok); got != false {
		t.Errorf("non-member workspace.models = %v", got)
	}
}

func TestAppConfigOAuthProvider(t *testing.T) {
	f := newFixture(t, map[string]string{
		"OAUTH_CLIENT_ID": "cid", "OPENID_PROVIDER_URL": "https://idp.example.com/.well-known/openid-configuration",
		"OAUTH_PROVIDER_NAME": "Corp SSO", "WEBUI_AUTH_TRUSTED_EMAIL_HEADER": "X-Email",
	})
	m := jsonBody(t, f.do("GET", "/api/config", "", ""))
	oauth, _ := m["oauth"].(map[string]any)
	providers, _ := oauth["providers"].(map[string]any)
	if providers["oidc"] != "Corp SSO" || len(providers) != 1 {
		t.Errorf("providers = %v", oauth["providers"])
	}
	if feats, _ := m["features"].(map[string]any); feats["auth_trusted_header"] != true {
		t.Errorf("auth_trusted_header = %v", feats["auth_trusted_header"])
	}
}

func TestAppConfigOnboarding(t *testing.T) {
	f := newEmptyFixture(t, nil)
	m := jsonBody(t, f.do("GET", "/api/config", "", ""))
	if m["onboarding"] != true {
		t.Fatalf("empty instance: onboarding = %v", m["onboarding"])
	}
	f.mkUser("first@example.com", "First", "user")
	m = jsonBody(t, f.do("GET", "/api/config", "", ""))
	if _, ok := m["onboarding"]; ok {
		t.Fatalf("onboarding still shown after the first account")
	}
}

func TestManifestBuiltin(t *testing.T) {
	f := newFixture(t, map[string]string{"WEBUI_NAME": "Acme Chat"})
	w := f.do("GET", "/manifest.json", "", "")
	expect(t, w, 200, "")
	m := jsonBody(t, w)
	if m["name"] != "Acme Chat" || m["short_name"] != "Acme Chat" || m["start_url"] != "/" || m["display"] != "standalone" {
		t.Fatalf("manifest = %v", m)
	}
	if !strings.HasPrefix(m["description"].(string), "Acme Chat is ") {
		t.Errorf("description = %v", m["description"])
	}
	icons, _ := m["icons"].([]any)
	if len(icons) != 2 {
		t.Fatalf("icons = %v", m["icons"])
	}
	for i, purpose := range []string{"any", "maskable"} {
		ic := icons[i].(map[string]any)
		if ic["src"] != "/static/logo.png" || ic["purpose"] != purpose || ic["type"] != "image/png" {
			t.Errorf("icon %d = %v", i, ic)
		}
	}
	if st, _ := m["share_target"].(map[string]any); st["action"] != "/" {
		t.Errorf("share_target = %v", m["share_target"])
	}
}

func TestManifestExternal(t *testing.T) {
	const doc = `{"name":"External","icons":[]}`
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/manifest.json":
			w.Header().Set("Content-Type", "application/manifest+json")
			w.Write([]byte(doc))
		case "/html":
			w.Write([]byte("<html>not json</html>"))
		default:
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	}))
	defer ext.Close()

	f := newFixture(t, map[string]string{"EXTERNAL_PWA_MANIFEST_URL": ext.URL + "/manifest.json", "WEBUI_NAME": "Acme"})
	w := f.do("GET", "/manifest.json", "", "")
	expect(t, w, 200, "")
	if got := w.Body.String(); got != doc {
		t.Fatalf("external manifest not passed through: %s", got)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}

	// Failures fall back to the built-in manifest: an error status, a body
	// that is not JSON, a host that does not answer.
	for _, u := range []string{ext.URL + "/missing", ext.URL + "/html", "http://127.0.0.1:1/manifest.json"} {
		if err := f.settings.Set(context.Background(), map[string]any{"EXTERNAL_PWA_MANIFEST_URL": u}); err != nil {
			t.Fatal(err)
		}
		w := f.do("GET", "/manifest.json", "", "")
		expect(t, w, 200, "")
		if m := jsonBody(t, w); m["name"] != "Acme" {
			t.Errorf("%s: fallback manifest = %v", u, m)
		}
	}
}

func TestDocsOnlyInDev(t *testing.T) {
	prod := newFixture(t, map[string]string{"ENV": "prod"})
	for _, p := range []string{"/docs", "/openapi.json"} {
		w := prod.do("GET", p, prod.adminTok, "")
		expect(t, w, 404, "Not Found")
		if got := strings.TrimSpace(w.Body.String()); got != `{"detail":"Not Found"}` {
			t.Errorf("%s in prod: %s", p, got)
		}
	}

	dev := newFixture(t, map[string]string{"ENV": "dev"})
	w := dev.do("GET", "/openapi.json", "", "")
	expect(t, w, 200, "")
	w = dev.do("GET", "/docs", "", "")
	expect(t, w, 200, "")
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("/docs content type %q", ct)
	}
	body := w.Body.String()
	for _, want := range []string{"/api/v1/auths/admin/config", "/openapi.json", "<h2 id=\"configs\">configs</h2>"} {
		if !strings.Contains(body, want) {
			t.Errorf("/docs lacks %q", want)
		}
	}
	// Self-contained: nothing is loaded from elsewhere.
	for _, bad := range []string{"<script", "http://", "https://"} {
		if strings.Contains(body, bad) {
			t.Errorf("/docs contains %q", bad)
		}
	}
}

func TestOpenAPIListsEveryRouteOnce(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("GET", "/openapi.json", "", "")
	expect(t, w, 200, "")
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
		Comps   struct {
			Schemes map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	ops := 0
	ids := map[string]bool{}
	for _, item := range doc.Paths {
		for _, op := range item {
			ops++
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] {
				t.Errorf("operationId %q missing or repeated", id)
			}
			ids[id] = true
		}
	}
	if ops != len(f.srv.routes) {
		t.Errorf("%d operations for %d routes", ops, len(f.srv.routes))
	}
	for _, rt := range f.srv.routes {
		method, path := splitPattern(rt.pattern)
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("route %q missing from the document", rt.pattern)
			continue
		}
		sec, hasSec := op["security"].([]any)
		if rt.access == public && (!hasSec || len(sec) != 0) {
			t.Errorf("%s: public route must declare no security, got %v", rt.pattern, op["security"])
		}
		if rt.access != public && hasSec {
			t.Errorf("%s: protected route overrides the global security", rt.pattern)
		}
		if op["x-access"] != rt.access.String() {
			t.Errorf("%s: x-access %v", rt.pattern, op["x-access"])
		}
		for _, m := range pathParamRe.FindAllStringSubmatch(path, -1) {
			params, _ := op["parameters"].([]any)
			found := false
			for _, p := range params {
				if pm := p.(map[string]any); pm["name"] == m[1] && pm["in"] == "path" && pm["required"] == true {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: path parameter %s not declared", rt.pattern, m[1])
			}
		}
	}
	if _, ok := doc.Comps.Schemes["bearerAuth"]; !ok {
		t.Errorf("no bearerAuth scheme")
	}
	// Spot checks of the generated names and tags.
	op := doc.Paths["/api/v1/users/{user_id}"]["get"]
	if tags, _ := op["tags"].([]any); len(tags) != 1 || tags[0] != "users" {
		t.Errorf("tags = %v", op["tags"])
	}
	if op := doc.Paths["/health"]["get"]; op["tags"].([]any)[0] != "system" || op["summary"] != "Health" {
		t.Errorf("/health op = %v", op)
	}
}

func TestOpenAPIHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"HealthDB": "Health DB", "OpenAPI": "Open API", "GetAdminConfig": "Get admin config",
		"LDAP": "LDAP", "CreateLegacyKey": "Create legacy key", "APIKeys": "API keys",
	} {
		if got := humanize(in); got != want {
			t.Errorf("humanize(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"LDAP": "ldap", "OpenAPI": "openAPI", "APIKeys": "apiKeys", "Health": "health"} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
	for pat, want := range map[string][2]string{
		"GET /api/v1/files/{id}/content/{name...}": {"GET", "/api/v1/files/{id}/content/{name}"},
		"POST /api/v1/x/{$}":                       {"POST", "/api/v1/x/"},
		"/static/":                                 {"GET", "/static/"},
	} {
		if m, p := splitPattern(pat); m != want[0] || p != want[1] {
			t.Errorf("splitPattern(%q) = %q %q", pat, m, p)
		}
	}
	for path, want := range map[string]string{
		"/api/v1/chats/{id}": "chats", "/api/config": "config", "/health/db": "system",
		"/ollama/api/tags": "ollama", "/manifest.json": "system",
	} {
		if got := pathTag(path); got != want {
			t.Errorf("pathTag(%q) = %q, want %q", path, got, want)
		}
	}
}
