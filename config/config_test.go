package config

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStore is an in-memory Store that counts calls and can be told to fail.
type fakeStore struct {
	mu       sync.Mutex
	data     map[string]json.RawMessage
	loads    int
	saves    int
	failLoad error
	failSave error
}

func newFakeStore() *fakeStore { return &fakeStore{data: map[string]json.RawMessage{}} }

func (f *fakeStore) LoadConfig(context.Context) (map[string]json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	if f.failLoad != nil {
		return nil, f.failLoad
	}
	return maps.Clone(f.data), nil
}

func (f *fakeStore) SaveConfig(_ context.Context, values map[string]json.RawMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failSave != nil {
		return f.failSave
	}
	f.saves++
	for k, v := range values {
		f.data[k] = append(json.RawMessage(nil), v...)
	}
	return nil
}

func (f *fakeStore) put(key, rawJSON string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[key] = json.RawMessage(rawJSON)
}

func (f *fakeStore) get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.data[key]
	return string(v), ok
}

// copyData returns the stored rows as strings, for before/after comparisons.
func (f *fakeStore) copyData() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.data))
	for k, v := range f.data {
		out[k] = string(v)
	}
	return out
}

func (f *fakeStore) counts() (loads, saves int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads, f.saves
}

func envOf(kv map[string]string) Getenv {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func mustLoad(t testing.TB, env map[string]string, st Store) (*Settings, []Warning) {
	t.Helper()
	var s Store
	if st != nil { // keep a typed-nil *fakeStore from becoming a non-nil Store
		s = st
	}
	set, warns, err := Load(context.Background(), envOf(env), s)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return set, warns
}

func value(t testing.TB, s *Settings, name string) any {
	t.Helper()
	v, ok := s.Value(name)
	if !ok {
		t.Fatalf("Value(%s): unknown", name)
	}
	return v
}

func source(t testing.TB, s *Settings, name string) Source {
	t.Helper()
	src, ok := s.Source(name)
	if !ok {
		t.Fatalf("Source(%s): unknown", name)
	}
	return src
}

func hasWarning(warns []Warning, substr string) bool {
	for _, w := range warns {
		if strings.Contains(string(w), substr) {
			return true
		}
	}
	return false
}

func persistentVars() []Var {
	var out []Var
	for _, d := range Vars() {
		if d.Persistent {
			out = append(out, d)
		}
	}
	return out
}

func TestVarsTable(t *testing.T) {
	names := map[string]bool{}
	keys := map[string]string{}
	for _, d := range Vars() {
		if d.Name == "" || names[d.Name] {
			t.Errorf("duplicate or empty name %q", d.Name)
		}
		names[d.Name] = true
		if d.Persistent != (d.Key != "") {
			t.Errorf("%s: Persistent=%v but Key=%q", d.Name, d.Persistent, d.Key)
		}
		if d.Persistent {
			if other, dup := keys[d.Key]; dup {
				t.Errorf("%s and %s share key %q", d.Name, other, d.Key)
			}
			keys[d.Key] = d.Name
			if oauthKey := strings.HasPrefix(d.Key, "oauth."); oauthKey != (d.Section == SectionOAuth) {
				t.Errorf("%s: section %s with key %q (oauth keys and oauth section must coincide)", d.Name, d.Section, d.Key)
			}
		}
		if d.Description == "" {
			t.Errorf("%s: no description", d.Name)
		}
		if goType(d.Type) == nil {
			t.Errorf("%s: unknown kind %q", d.Name, d.Type)
		}
		if (d.Type == KindEnum) != (len(d.Enum) > 0) {
			t.Errorf("%s: Enum %v does not fit kind %s", d.Name, d.Enum, d.Type)
		}
		if d.Type == KindList && d.Sep != "," && d.Sep != ";" {
			t.Errorf("%s: list separator %q", d.Name, d.Sep)
		}
		if d.Type != KindPermissions {
			if val, problem := parseEnv(&d, d.Default); problem != "" || val == nil {
				t.Errorf("%s: default %q does not parse: %s", d.Name, d.Default, problem)
			}
		}
	}
	if _, err := newSettings(nil); err != nil {
		t.Fatalf("table does not bind to Config: %v", err)
	}
	// Vars hands out copies.
	a := Vars()
	a[0].Name = "CHANGED"
	for i := range a {
		if len(a[i].Enum) > 0 {
			a[i].Enum[0] = "changed"
		}
	}
	b := Vars()
	if b[0].Name == "CHANGED" || slices.Contains(b[slices.IndexFunc(b, func(d Var) bool { return d.Type == KindEnum })].Enum, "changed") {
		t.Fatal("Vars shares state between calls")
	}
}

// The brief's env-only list plus SPEC's "(env only)" rows must be env-only; the named
// persistent ones must be persistent.
func TestPersistenceDecisions(t *testing.T) {
	byName := map[string]Var{}
	for _, d := range Vars() {
		byName[d.Name] = d
	}
	envOnly := []string{"PORT", "HOST", "DATA_DIR", "ENV", "WEBUI_ADMIN_EMAIL", "WEBUI_ADMIN_PASSWORD",
		"WEBUI_ADMIN_NAME", "WEBUI_BUILD_HASH", "THREAD_POOL_SIZE", "LICENSE_KEY", "WEBUI_SECRET_KEY",
		"ENABLE_PASSWORD_AUTH", "ENABLE_PERSISTENT_CONFIG", "ENABLE_OAUTH_PERSISTENT_CONFIG",
		"CUSTOM_API_KEY_HEADER", "DATABASE_URL", "REDIS_URL", "ENABLE_EASTER_EGGS", "IFRAME_CSP",
		"ENABLE_PROFILE_IMAGE_URL_FORWARDING", "PROFILE_IMAGE_ALLOWED_MIME_TYPES", "SCIM_ENABLED",
		"SCIM_TOKEN", "SCIM_AUTH_PROVIDER", "WEBUI_AUTH_TRUSTED_EMAIL_HEADER", "WEBSOCKET_EVENT_CALLER_TIMEOUT",
		"OAUTH_SESSION_TOKEN_ENCRYPTION_KEY", "OAUTH_CLIENT_INFO_ENCRYPTION_KEY", "RELEASE_CHANNEL", "WEBUI_AUTH"}
	for _, n := range envOnly {
		d, ok := byName[n]
		if !ok || d.Persistent {
			t.Errorf("%s must exist and be env-only", n)
		}
	}
	persistent := map[string]string{
		"ENABLE_SIGNUP": "ui.enable_signup", "ENABLE_LOGIN_FORM": "ui.enable_login_form",
		"DEFAULT_USER_ROLE": "ui.default_user_role", "DEFAULT_GROUP_ID": "ui.default_group_id",
		"DEFAULT_MODELS": "ui.default_models", "DEFAULT_PINNED_MODELS": "ui.default_pinned_models",
		"PENDING_USER_OVERLAY_TITLE": "ui.pending_user_overlay_title", "WEBUI_BANNERS": "ui.banners",
		"WEBUI_URL": "webui.url", "JWT_EXPIRES_IN": "auth.jwt_expiry", "ENABLE_API_KEYS": "auth.api_key.enable",
		"RESPONSE_WATERMARK": "ui.watermark", "FOLDER_MAX_FILE_COUNT": "folders.max_file_count",
		"USER_PERMISSIONS": "user.permissions", "OLLAMA_BASE_URLS": "ollama.base_urls",
		"OPENAI_API_BASE_URLS": "openai.api_base_urls", "OPENAI_API_KEYS": "openai.api_keys",
		"TASK_MODEL": "task.model.default", "TASK_MODEL_EXTERNAL": "task.model.external",
		"DEFAULT_MODEL_PARAMS": "models.default_params", "DEFAULT_MODEL_METADATA": "models.default_metadata",
	}
	for n, key := range persistent {
		if d := byName[n]; d.Key != key {
			t.Errorf("%s: key %q, want %q", n, d.Key, key)
		}
	}
	for _, n := range []string{"ENABLE_ADMIN_EXPORT", "ENABLE_ADMIN_ANALYTICS"} {
		if d := byName[n]; !d.Persistent || !d.RestartNeeded {
			t.Errorf("%s must be persistent and RestartNeeded", n)
		}
	}
	for _, n := range []string{"WEBUI_SECRET_KEY", "WEBUI_ADMIN_PASSWORD", "OAUTH_CLIENT_SECRET", "SCIM_TOKEN",
		"OPENAI_API_KEYS", "LICENSE_KEY", "OAUTH_SESSION_TOKEN_ENCRYPTION_KEY", "OAUTH_CLIENT_INFO_ENCRYPTION_KEY"} {
		if !byName[n].Secret {
			t.Errorf("%s must be secret", n)
		}
	}
}

func TestDefaults(t *testing.T) {
	s, warns := mustLoad(t, nil, nil)
	if len(warns) != 0 {
		t.Fatalf("warnings with an empty environment: %v", warns)
	}
	c := s.Get()
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"Port", c.Port, 8080},
		{"WebUIURL", c.WebUIURL, "http://localhost:3000"},
		{"WebUIName", c.WebUIName, "Hearth"},
		{"Env", c.Env, "dev"},
		{"EnableSignup", c.EnableSignup, true},
		{"DefaultUserRole", c.DefaultUserRole, "pending"},
		{"DefaultGroupSharePermission", c.DefaultGroupSharePermission, "members"},
		{"EnableChannels", c.EnableChannels, false},
		{"EnableAPIKeys", c.EnableAPIKeys, true},
		{"JWTExpiresIn", c.JWTExpiresIn, "4w"},
		{"CustomAPIKeyHeader", c.CustomAPIKeyHeader, "x-api-key"},
		{"AuthCookieSameSite", c.AuthCookieSameSite, "lax"},
		{"WebUIAuth", c.WebUIAuth, true},
		{"ReleaseChannel", c.ReleaseChannel, "stable"},
		{"EnablePersistentConfig", c.EnablePersistentConfig, true},
		{"EnableOAuthPersistentConfig", c.EnableOAuthPersistentConfig, true},
		{"ChatResponseStreamDeltaChunkSize", c.ChatResponseStreamDeltaChunkSize, 1},
		{"ProfileImageAllowedMimeTypes", c.ProfileImageAllowedMimeTypes, []string{"image/png", "image/jpeg", "image/gif", "image/webp"}},
		{"DefaultModelParams", c.DefaultModelParams, map[string]any{}},
		{"Banners", c.Banners, []Banner{}},
		{"FolderMaxFileCount", c.FolderMaxFileCount, OptionalInt{}},
		{"OAuthPictureClaim", c.OAuthPictureClaim, "picture"},
		{"OAuthProviderName", c.OAuthProviderName, "SSO"},
		{"OAuthScopes", c.OAuthScopes, "openid email profile"},
		{"OAuthMaxSessionsPerUser", c.OAuthMaxSessionsPerUser, 10},
		{"OAuthRolesClaim", c.OAuthRolesClaim, "roles"},
		{"OAuthGroupClaim", c.OAuthGroupClaim, "groups"},
		{"OAuthGroupDefaultShare", c.OAuthGroupDefaultShare, "true"},
		{"EnableOAuthIDTokenCookie", c.EnableOAuthIDTokenCookie, true},
		{"WebsocketEventCallerTimeout", c.WebsocketEventCallerTimeout, 300},
		{"SchedulerPollInterval", c.SchedulerPollInterval, 10},
		{"CalendarAlertLookaheadMinutes", c.CalendarAlertLookaheadMinutes, 10},
		{"ForwardSessionInfoHeaderChatID", c.ForwardSessionInfoHeaderChatID, "X-Service-Chat-Id"},
		{"ForwardSessionInfoHeaderMessageID", c.ForwardSessionInfoHeaderMessageID, "X-Service-Message-Id"},
		{"OllamaBaseURLs", c.OllamaBaseURLs, []string{"http://localhost:11434"}},
		{"OpenAIAPIBaseURLs", c.OpenAIAPIBaseURLs, []string{"https://api.openai.com/v1"}},
		{"OpenAIAPIKeys", c.OpenAIAPIKeys, []string{}},
		{"UserPermissions", c.UserPermissions, DefaultPermissions()},
		{"EnableTagsGeneration", c.EnableTagsGeneration, true},
	}
	for _, tc := range checks {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
	for _, row := range s.Explain() {
		if row.Source != SourceDefault {
			t.Errorf("%s: source %s with an empty environment", row.Name, row.Source)
		}
	}
	if d, no := c.JWTExpiry(); no || d != 4*7*24*time.Hour {
		t.Errorf("JWTExpiry = %v, %v", d, no)
	}
	if !c.UserPermissions.Allowed("chat.delete") || !c.UserPermissions.Allowed("features.api_keys") || c.UserPermissions.Allowed("workspace.models") {
		t.Error("permission defaults wrong")
	}
}

func TestEnvParsing(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		varName string
		want    any
		src     Source
		warn    string // substring expected in a warning; "" = no warnings at all
	}{
		{"bool true", map[string]string{"ENABLE_CHANNELS": "TRUE"}, "ENABLE_CHANNELS", true, SourceEnv, ""},
		{"bool yes", map[string]string{"ENABLE_CHANNELS": "yes"}, "ENABLE_CHANNELS", true, SourceEnv, ""},
		{"bool 1", map[string]string{"ENABLE_CHANNELS": "1"}, "ENABLE_CHANNELS", true, SourceEnv, ""},
		{"bool on", map[string]string{"ENABLE_CHANNELS": "On"}, "ENABLE_CHANNELS", true, SourceEnv, ""},
		{"bool false", map[string]string{"ENABLE_SIGNUP": "False"}, "ENABLE_SIGNUP", false, SourceEnv, ""},
		{"bool typo is false", map[string]string{"ENABLE_SIGNUP": "ture"}, "ENABLE_SIGNUP", false, SourceEnv, "ENABLE_SIGNUP"},
		{"bool empty = unset", map[string]string{"ENABLE_SIGNUP": ""}, "ENABLE_SIGNUP", true, SourceDefault, ""},
		{"int", map[string]string{"PORT": " 9000 "}, "PORT", 9000, SourceEnv, ""},
		{"int invalid", map[string]string{"PORT": "80a"}, "PORT", 8080, SourceDefault, "PORT"},
		{"int out of range", map[string]string{"PORT": "70000"}, "PORT", 8080, SourceDefault, "PORT"},
		{"int below min", map[string]string{"CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE": "0"}, "CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE", 1, SourceDefault, "minimum"},
		{"enum", map[string]string{"DEFAULT_USER_ROLE": "User"}, "DEFAULT_USER_ROLE", "user", SourceEnv, ""},
		{"enum invalid", map[string]string{"DEFAULT_USER_ROLE": "boss"}, "DEFAULT_USER_ROLE", "pending", SourceDefault, "DEFAULT_USER_ROLE"},
		{"share enum", map[string]string{"DEFAULT_GROUP_SHARE_PERMISSION": "false"}, "DEFAULT_GROUP_SHARE_PERMISSION", "false", SourceEnv, ""},
		{"json", map[string]string{"DEFAULT_MODEL_PARAMS": `{"temperature":0.5}`}, "DEFAULT_MODEL_PARAMS", map[string]any{"temperature": 0.5}, SourceEnv, ""},
		{"json invalid", map[string]string{"DEFAULT_MODEL_METADATA": `{"a":`}, "DEFAULT_MODEL_METADATA", map[string]any{}, SourceDefault, "DEFAULT_MODEL_METADATA"},
		{"json not object", map[string]string{"DEFAULT_MODEL_PARAMS": `[1]`}, "DEFAULT_MODEL_PARAMS", map[string]any{}, SourceDefault, "DEFAULT_MODEL_PARAMS"},
		{"banners", map[string]string{"WEBUI_BANNERS": `[{"id":"b1","type":"info","title":"T","content":"C","dismissible":true,"timestamp":1700000000}]`},
			"WEBUI_BANNERS", []Banner{{ID: "b1", Type: "info", Title: "T", Content: "C", Dismissible: true, Timestamp: 1700000000}}, SourceEnv, ""},
		{"banners invalid JSON", map[string]string{"WEBUI_BANNERS": `[{`}, "WEBUI_BANNERS", []Banner{}, SourceDefault, "WEBUI_BANNERS"},
		{"banners bad type", map[string]string{"WEBUI_BANNERS": `[{"id":"b1","type":"fatal","content":"C"}]`}, "WEBUI_BANNERS", []Banner{}, SourceDefault, "fatal"},
		{"comma list", map[string]string{"PROFILE_IMAGE_ALLOWED_MIME_TYPES": "image/png, ,image/svg+xml"}, "PROFILE_IMAGE_ALLOWED_MIME_TYPES", []string{"image/png", "image/svg+xml"}, SourceEnv, ""},
		{"ollama urls", map[string]string{"OLLAMA_BASE_URLS": "http://a:1;http://b:2"}, "OLLAMA_BASE_URLS", []string{"http://a:1", "http://b:2"}, SourceEnv, ""},
		{"ollama singular alias", map[string]string{"OLLAMA_BASE_URL": "http://gpu:11434"}, "OLLAMA_BASE_URLS", []string{"http://gpu:11434"}, SourceEnv, ""},
		{"plural wins over alias", map[string]string{"OLLAMA_BASE_URLS": "http://a", "OLLAMA_BASE_URL": "http://b"}, "OLLAMA_BASE_URLS", []string{"http://a"}, SourceEnv, ""},
		{"openai keys positional", map[string]string{"OPENAI_API_KEYS": "sk-a;;sk-c"}, "OPENAI_API_KEYS", []string{"sk-a", "", "sk-c"}, SourceEnv, ""},
		{"optional int", map[string]string{"FOLDER_MAX_FILE_COUNT": "5"}, "FOLDER_MAX_FILE_COUNT", OptionalInt{Set: true, V: 5}, SourceEnv, ""},
		{"optional int negative", map[string]string{"CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE": "-1"}, "CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE", OptionalInt{}, SourceEnv, ""},
		{"optional int invalid", map[string]string{"AUTOMATION_MAX_COUNT": "many"}, "AUTOMATION_MAX_COUNT", OptionalInt{}, SourceDefault, "AUTOMATION_MAX_COUNT"},
		{"jwt multi pair", map[string]string{"JWT_EXPIRES_IN": "1h30m"}, "JWT_EXPIRES_IN", "1h30m", SourceEnv, ""},
		{"jwt invalid", map[string]string{"JWT_EXPIRES_IN": "forever"}, "JWT_EXPIRES_IN", "4w", SourceDefault, "JWT_EXPIRES_IN"},
		{"api keys alias", map[string]string{"ENABLE_API_KEY": "false"}, "ENABLE_API_KEYS", false, SourceEnv, ""},
		{"scim alias", map[string]string{"ENABLE_SCIM": "true", "SCIM_TOKEN": "t", "SCIM_AUTH_PROVIDER": "p"}, "SCIM_ENABLED", true, SourceEnv, ""},
		{"empty string is a value", map[string]string{"OAUTH_PICTURE_CLAIM": ""}, "OAUTH_PICTURE_CLAIM", "", SourceEnv, ""},
		{"string verbatim", map[string]string{"OAUTH_SCOPES": "openid email"}, "OAUTH_SCOPES", "openid email", SourceEnv, ""},
		{"encryption key defaults to secret", map[string]string{"WEBUI_SECRET_KEY": "s3"}, "OAUTH_SESSION_TOKEN_ENCRYPTION_KEY", "s3", SourceEnv, ""},
		{"encryption key own value", map[string]string{"WEBUI_SECRET_KEY": "s3", "OAUTH_CLIENT_INFO_ENCRYPTION_KEY": "k"}, "OAUTH_CLIENT_INFO_ENCRYPTION_KEY", "k", SourceEnv, ""},
		{"empty secret = unset", map[string]string{"WEBUI_SECRET_KEY": "s3", "OAUTH_SESSION_TOKEN_ENCRYPTION_KEY": ""}, "OAUTH_SESSION_TOKEN_ENCRYPTION_KEY", "s3", SourceEnv, ""},
		{"regex", map[string]string{"PASSWORD_VALIDATION_REGEX_PATTERN": `^.{12,}$`}, "PASSWORD_VALIDATION_REGEX_PATTERN", `^.{12,}$`, SourceEnv, ""},
		{"regex look-ahead rejected", map[string]string{"PASSWORD_VALIDATION_REGEX_PATTERN": `^(?=.*[a-z]).{8,}$`}, "PASSWORD_VALIDATION_REGEX_PATTERN", "", SourceDefault, "RE2"},
		{"same-site enum", map[string]string{"WEBUI_AUTH_COOKIE_SAME_SITE": "Strict"}, "WEBUI_AUTH_COOKIE_SAME_SITE", "strict", SourceEnv, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, warns := mustLoad(t, tc.env, nil)
			if got := value(t, s, tc.varName); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s = %#v, want %#v", tc.varName, got, tc.want)
			}
			if got := source(t, s, tc.varName); got != tc.src {
				t.Errorf("source %s, want %s", got, tc.src)
			}
			if tc.warn == "" && len(warns) > 0 {
				t.Errorf("unexpected warnings %v", warns)
			}
			if tc.warn != "" && !hasWarning(warns, tc.warn) {
				t.Errorf("want a warning containing %q, got %v", tc.warn, warns)
			}
		})
	}
}

func TestPermissionsEnv(t *testing.T) {
	env := map[string]string{
		"USER_PERMISSIONS_FEATURES_API_KEYS":         "true",
		"USER_PERMISSIONS_CHAT_DELETE":               "false",
		"USER_PERMISSIONS_WORKSPACE_MODELS_IMPORT":   "1",
		"USER_PERMISSIONS_ACCESS_GRANTS_ALLOW_USERS": "no",
	}
	s, warns := mustLoad(t, env, nil)
	if len(warns) > 0 {
		t.Fatalf("warnings: %v", warns)
	}
	p := s.Get().UserPermissions
	want := DefaultPermissions()
	want["features"]["api_keys"] = true
	want["chat"]["delete"] = false
	want["workspace"]["models_import"] = true
	want["access_grants"]["allow_users"] = false
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("permissions = %v", p)
	}
	if source(t, s, "USER_PERMISSIONS") != SourceEnv {
		t.Error("source should be env")
	}
	if PermissionEnvName("workspace", "models_import") != "USER_PERMISSIONS_WORKSPACE_MODELS_IMPORT" {
		t.Error("PermissionEnvName")
	}
	// DefaultPermissions and Clone hand out independent copies.
	c := p.Clone()
	c["chat"]["delete"] = true
	if p["chat"]["delete"] {
		t.Error("Clone aliases the original")
	}
	d := DefaultPermissions()
	d["chat"]["delete"] = false
	if !DefaultPermissions()["chat"]["delete"] {
		t.Error("DefaultPermissions shares state")
	}
}

// Rules 1, 2, 3: seed on first start, stored wins later, env-only re-read, Set persists.
func TestPersistentOverlay(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()

	// First start: every persistent key is seeded in one SaveConfig, env values included.
	s1, _ := mustLoad(t, map[string]string{"ENABLE_SIGNUP": "false", "PORT": "9000", "OAUTH_CLIENT_ID": "cid"}, st)
	if loads, saves := st.counts(); loads != 1 || saves != 1 {
		t.Fatalf("first start: loads=%d saves=%d, want 1/1", loads, saves)
	}
	if got := len(st.copyData()); got != len(persistentVars()) {
		t.Fatalf("seeded %d keys, want %d", got, len(persistentVars()))
	}
	if v, _ := st.get("ui.enable_signup"); v != "false" {
		t.Fatalf("ui.enable_signup seeded as %s", v)
	}
	if v, _ := st.get("oauth.oidc.client_id"); v != `"cid"` {
		t.Fatalf("oauth.oidc.client_id seeded as %s", v)
	}
	if v, _ := st.get("folders.max_file_count"); v != `""` {
		t.Fatalf("unset OptionalInt seeded as %s, want \"\"", v)
	}
	if s1.Get().EnableSignup || source(t, s1, "ENABLE_SIGNUP") != SourceEnv {
		t.Fatal("first start: ENABLE_SIGNUP should be false from env")
	}

	// Second start with a different environment: stored values win; env-only re-read;
	// nothing is missing, so nothing is written.
	s2, _ := mustLoad(t, map[string]string{"ENABLE_SIGNUP": "true", "PORT": "9100", "OAUTH_CLIENT_ID": "other"}, st)
	if s2.Get().EnableSignup || source(t, s2, "ENABLE_SIGNUP") != SourceDatabase {
		t.Fatal("second start: stored ENABLE_SIGNUP=false must win over env")
	}
	if s2.Get().OAuthClientID != "cid" || source(t, s2, "OAUTH_CLIENT_ID") != SourceDatabase {
		t.Fatal("second start: stored OAUTH_CLIENT_ID must win")
	}
	if s2.Get().Port != 9100 || source(t, s2, "PORT") != SourceEnv {
		t.Fatal("env-only PORT must be re-read")
	}
	if _, stored := st.get("PORT"); stored {
		t.Fatal("env-only variable stored")
	}
	if _, saves := st.counts(); saves != 1 {
		t.Fatalf("second start wrote to the store (saves=%d)", saves)
	}

	// A key added by a newer version is seeded alone.
	st.mu.Lock()
	delete(st.data, "task.tags.enable")
	st.mu.Unlock()
	mustLoad(t, map[string]string{"ENABLE_TAGS_GENERATION": "false"}, st)
	if v, _ := st.get("task.tags.enable"); v != "false" {
		t.Fatalf("missing key not seeded: %q", v)
	}

	// Set persists and survives a restart.
	if err := s2.Set(ctx, map[string]any{"DEFAULT_USER_ROLE": "user", "FOLDER_MAX_FILE_COUNT": 7.0}); err != nil {
		t.Fatal(err)
	}
	if v, _ := st.get("ui.default_user_role"); v != `"user"` {
		t.Fatalf("stored role %s", v)
	}
	if v, _ := st.get("folders.max_file_count"); v != "7" {
		t.Fatalf("stored folder limit %s", v)
	}
	if source(t, s2, "DEFAULT_USER_ROLE") != SourceDatabase {
		t.Fatal("Set with persistence on should report database")
	}
	s3, _ := mustLoad(t, map[string]string{"DEFAULT_USER_ROLE": "admin"}, st)
	if s3.Get().DefaultUserRole != "user" || s3.Get().FolderMaxFileCount != (OptionalInt{Set: true, V: 7}) {
		t.Fatal("Set value did not survive a re-Load")
	}
}

func TestStoredValueInvalid(t *testing.T) {
	st := newFakeStore()
	st.put("ui.default_user_role", `"superuser"`)
	st.put("ui.banners", `[{"id":"x","type":"nope","content":"c"}]`)
	st.put("auth.jwt_expiry", `"1h30m"`) // multi-pair is fine from storage
	st.put("user.permissions", `{"chat":{"delete":false}}`)
	st.put("some.unknown.key", `42`)
	s, warns := mustLoad(t, map[string]string{"DEFAULT_USER_ROLE": "user", "USER_PERMISSIONS_FEATURES_NOTES": "false"}, st)
	c := s.Get()
	if c.DefaultUserRole != "user" || source(t, s, "DEFAULT_USER_ROLE") != SourceEnv {
		t.Errorf("invalid stored role should fall back to env, got %q", c.DefaultUserRole)
	}
	if !hasWarning(warns, "DEFAULT_USER_ROLE") || !hasWarning(warns, "WEBUI_BANNERS") {
		t.Errorf("warnings %v", warns)
	}
	if len(c.Banners) != 0 {
		t.Error("invalid stored banners used")
	}
	if v, _ := st.get("ui.default_user_role"); v != `"superuser"` {
		t.Error("invalid stored row must be left alone")
	}
	if c.JWTExpiresIn != "1h30m" {
		t.Errorf("JWT %q", c.JWTExpiresIn)
	}
	if d, _ := c.JWTExpiry(); d != 90*time.Minute {
		t.Errorf("JWTExpiry %v", d)
	}
	// A partial stored tree keeps its values and gains the env/default ones it lacks.
	if c.UserPermissions["chat"]["delete"] || c.UserPermissions["features"]["notes"] || !c.UserPermissions["chat"]["edit"] {
		t.Errorf("merged permissions wrong: %v", c.UserPermissions)
	}
}

// Rule 4: ENABLE_PERSISTENT_CONFIG=false.
func TestPersistenceOff(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	st.put("ui.enable_signup", "false")
	env := map[string]string{"ENABLE_PERSISTENT_CONFIG": "false", "ENABLE_SIGNUP": "true"}
	s, _ := mustLoad(t, env, st)
	if !s.Get().EnableSignup || source(t, s, "ENABLE_SIGNUP") != SourceEnv {
		t.Fatal("env must win when persistence is off")
	}
	if err := s.Set(ctx, map[string]any{"ENABLE_SIGNUP": false}); err != nil {
		t.Fatal(err)
	}
	if s.Get().EnableSignup || source(t, s, "ENABLE_SIGNUP") != SourceAdmin {
		t.Fatal("Set must change memory with source admin")
	}
	if loads, saves := st.counts(); loads != 0 || saves != 0 {
		t.Fatalf("store touched: loads=%d saves=%d", loads, saves)
	}
	if s.Persisted("ENABLE_SIGNUP") {
		t.Error("Persisted should be false")
	}
	s2, _ := mustLoad(t, env, st)
	if !s2.Get().EnableSignup {
		t.Fatal("after restart the env value must be back")
	}
}

// Rule 6: ENABLE_OAUTH_PERSISTENT_CONFIG=false affects oauth variables only.
func TestOAuthPersistenceOff(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	st.put("oauth.oidc.client_id", `"stored"`)
	st.put("ui.enable_signup", "false")
	env := map[string]string{"ENABLE_OAUTH_PERSISTENT_CONFIG": "false", "OAUTH_CLIENT_ID": "env", "ENABLE_SIGNUP": "true"}
	s, _ := mustLoad(t, env, st)
	c := s.Get()
	if c.OAuthClientID != "env" || source(t, s, "OAUTH_CLIENT_ID") != SourceEnv {
		t.Fatalf("oauth var must come from env, got %q", c.OAuthClientID)
	}
	if c.EnableSignup || source(t, s, "ENABLE_SIGNUP") != SourceDatabase {
		t.Fatal("non-oauth var must still come from the store")
	}
	for k := range st.copyData() {
		if strings.HasPrefix(k, "oauth.") && k != "oauth.oidc.client_id" {
			t.Errorf("oauth key %s seeded", k)
		}
	}
	before := st.copyData()
	if err := s.Set(ctx, map[string]any{"OAUTH_CLIENT_ID": "admin-edit"}); err != nil {
		t.Fatal(err)
	}
	if s.Get().OAuthClientID != "admin-edit" || source(t, s, "OAUTH_CLIENT_ID") != SourceAdmin {
		t.Fatal("oauth Set must be memory-only")
	}
	if !maps.Equal(before, st.copyData()) {
		t.Fatal("oauth Set wrote to the store")
	}
	if err := s.Set(ctx, map[string]any{"ENABLE_SIGNUP": true, "OAUTH_PROVIDER_NAME": "Corp"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := st.get("ui.enable_signup"); v != "true" {
		t.Fatal("non-oauth Set must persist")
	}
	if _, ok := st.get("oauth.oidc.provider_name"); ok {
		t.Fatal("oauth var persisted in a mixed Set")
	}
	s2, _ := mustLoad(t, env, st)
	if s2.Get().OAuthClientID != "env" || s2.Get().OAuthProviderName != "SSO" {
		t.Fatal("after restart oauth env values must be back")
	}
}

func TestSetAllOrNothing(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		changes map[string]any
		bad     string // variable the error must name
		is      error
	}{
		{"invalid enum among valid", map[string]any{"ENABLE_SIGNUP": false, "DEFAULT_USER_ROLE": "boss", "WEBUI_NAME": "X"}, "DEFAULT_USER_ROLE", ErrInvalid},
		{"bad banner type", map[string]any{"ENABLE_SIGNUP": false, "WEBUI_BANNERS": []any{map[string]any{"id": "1", "type": "fatal", "content": "c"}}}, "WEBUI_BANNERS", ErrInvalid},
		{"banner missing content", map[string]any{"WEBUI_BANNERS": []any{map[string]any{"id": "1", "type": "info"}}}, "WEBUI_BANNERS", ErrInvalid},
		{"banner bad timestamp", map[string]any{"WEBUI_BANNERS": []any{map[string]any{"id": "1", "type": "info", "content": "c", "timestamp": 1.5}}}, "WEBUI_BANNERS", ErrInvalid},
		{"jwt multi pair rejected by admin", map[string]any{"JWT_EXPIRES_IN": "1h30m"}, "JWT_EXPIRES_IN", ErrInvalid},
		{"jwt garbage", map[string]any{"JWT_EXPIRES_IN": "soon"}, "JWT_EXPIRES_IN", ErrInvalid},
		{"bool from number", map[string]any{"ENABLE_SIGNUP": 1.0}, "ENABLE_SIGNUP", ErrInvalid},
		{"bool from odd string", map[string]any{"ENABLE_SIGNUP": "maybe"}, "ENABLE_SIGNUP", ErrInvalid},
		{"int fraction", map[string]any{"CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE": 2.5}, "CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE", ErrInvalid},
		{"int below min", map[string]any{"CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE": 0.0}, "CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE", ErrInvalid},
		{"json not object", map[string]any{"DEFAULT_MODEL_PARAMS": []any{1.0}}, "DEFAULT_MODEL_PARAMS", ErrInvalid},
		{"permissions leaf not bool", map[string]any{"USER_PERMISSIONS": map[string]any{"chat": map[string]any{"delete": "no"}}}, "USER_PERMISSIONS", ErrInvalid},
		{"list with number", map[string]any{"OLLAMA_BASE_URLS": []any{"http://a", 3.0}}, "OLLAMA_BASE_URLS", ErrInvalid},
		{"optional int junk", map[string]any{"AUTOMATION_MAX_COUNT": "lots"}, "AUTOMATION_MAX_COUNT", ErrInvalid},
		{"env-only", map[string]any{"ENABLE_SIGNUP": false, "PORT": 9000.0}, "PORT", ErrEnvOnly},
		{"env-only secret", map[string]any{"WEBUI_SECRET_KEY": "x"}, "WEBUI_SECRET_KEY", ErrEnvOnly},
		{"unknown", map[string]any{"ENABLE_SIGNUP": false, "NO_SUCH_VAR": true}, "NO_SUCH_VAR", ErrUnknownVar},
		{"unmarshalable", map[string]any{"DEFAULT_MODEL_PARAMS": map[string]any{"f": func() {}}}, "DEFAULT_MODEL_PARAMS", ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newFakeStore()
			s, _ := mustLoad(t, nil, st)
			before, beforeStore := s.Get(), st.copyData()
			_, savesBefore := st.counts()
			err := s.Set(ctx, tc.changes)
			var ve *VarError
			if !errors.As(err, &ve) || ve.Name != tc.bad || !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want VarError for %s wrapping %v", err, tc.bad, tc.is)
			}
			if !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("error %q does not name %s", err, tc.bad)
			}
			if s.Get() != before {
				t.Error("snapshot changed")
			}
			if _, saves := st.counts(); saves != savesBefore || !maps.Equal(beforeStore, st.copyData()) {
				t.Error("store changed")
			}
		})
	}
}

func TestSetStoreFailureChangesNothing(t *testing.T) {
	st := newFakeStore()
	s, _ := mustLoad(t, nil, st)
	before := s.Get()
	st.failSave = errors.New("disk full")
	err := s.Set(context.Background(), map[string]any{"ENABLE_SIGNUP": false})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	var ve *VarError
	if errors.As(err, &ve) {
		t.Error("a store failure is not a VarError (it is a 500, not a 400)")
	}
	if s.Get() != before || source(t, s, "ENABLE_SIGNUP") != SourceDefault {
		t.Fatal("memory changed although the store write failed")
	}
}

func TestSetConversions(t *testing.T) {
	tests := []struct {
		varName string
		in      any
		want    any
	}{
		{"ENABLE_SIGNUP", "false", false},
		{"ENABLE_SIGNUP", "TRUE", true},
		{"ENABLE_SIGNUP", true, true},
		{"OAUTH_MAX_SESSIONS_PER_USER", "3", 3},
		{"OAUTH_MAX_SESSIONS_PER_USER", 4.0, 4},
		{"OAUTH_MAX_SESSIONS_PER_USER", 5, 5}, // Go int from a non-JSON caller
		{"FOLDER_MAX_FILE_COUNT", "", OptionalInt{}},
		{"FOLDER_MAX_FILE_COUNT", nil, OptionalInt{}},
		{"FOLDER_MAX_FILE_COUNT", "12", OptionalInt{Set: true, V: 12}},
		{"FOLDER_MAX_FILE_COUNT", OptionalInt{Set: true, V: 3}, OptionalInt{Set: true, V: 3}},
		{"DEFAULT_GROUP_SHARE_PERMISSION", false, "false"},
		{"DEFAULT_GROUP_SHARE_PERMISSION", "Members", "members"},
		{"OAUTH_GROUP_DEFAULT_SHARE", true, "true"},
		{"JWT_EXPIRES_IN", "2h", "2h"},
		{"JWT_EXPIRES_IN", "-1", "-1"},
		{"JWT_EXPIRES_IN", "1.5d", "1.5d"},
		{"ADMIN_EMAIL", nil, ""},
		{"OPENAI_API_KEYS", []any{"sk-1", ""}, []string{"sk-1", ""}},
		{"OPENAI_API_KEYS", []string{"sk-2"}, []string{"sk-2"}},
		{"OLLAMA_BASE_URLS", "http://a;http://b", []string{"http://a", "http://b"}},
		{"DEFAULT_MODEL_PARAMS", `{"top_k":5}`, map[string]any{"top_k": 5.0}},
		{"DEFAULT_MODEL_METADATA", nil, map[string]any{}},
		{"WEBUI_BANNERS", []Banner{{ID: "1", Type: "warning", Content: "c", Timestamp: 7}}, []Banner{{ID: "1", Type: "warning", Content: "c", Timestamp: 7}}},
		{"WEBUI_BANNERS", `[{"id":"2","type":"error","content":"x","title":null}]`, []Banner{{ID: "2", Type: "error", Content: "x"}}},
		{"WEBUI_BANNERS", []any{}, []Banner{}},
	}
	for _, tc := range tests {
		t.Run(tc.varName, func(t *testing.T) {
			s, _ := mustLoad(t, nil, newFakeStore())
			if err := s.Set(context.Background(), map[string]any{tc.varName: tc.in}); err != nil {
				t.Fatalf("Set(%v): %v", tc.in, err)
			}
			if got := value(t, s, tc.varName); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// A partial permission tree from the admin keeps the env-derived value of missing leaves.
func TestSetPermissionsMerge(t *testing.T) {
	s, _ := mustLoad(t, map[string]string{"USER_PERMISSIONS_FEATURES_API_KEYS": "true"}, newFakeStore())
	err := s.Set(context.Background(), map[string]any{"USER_PERMISSIONS": map[string]any{
		"chat":   map[string]any{"delete": false},
		"future": map[string]any{"thing": true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Get().UserPermissions
	if p["chat"]["delete"] || !p["features"]["api_keys"] || !p["future"]["thing"] || !p["chat"]["edit"] {
		t.Fatalf("merge wrong: %v", p)
	}
}

// Value output is always acceptable to Set: admin GET -> edit -> POST round trips.
func TestValueSetRoundTrip(t *testing.T) {
	s, _ := mustLoad(t, nil, newFakeStore())
	for _, d := range persistentVars() {
		v := value(t, s, d.Name)
		if err := s.Set(context.Background(), map[string]any{d.Name: v}); err != nil {
			t.Errorf("%s: Set(Value()) = %v", d.Name, err)
		}
		if got := value(t, s, d.Name); !reflect.DeepEqual(got, v) {
			t.Errorf("%s: round trip changed %#v to %#v", d.Name, v, got)
		}
	}
}

func TestSnapshotsAreNotAliased(t *testing.T) {
	s, _ := mustLoad(t, nil, newFakeStore())
	in := map[string]any{"temperature": 0.2}
	list := []any{"http://a"}
	if err := s.Set(context.Background(), map[string]any{"DEFAULT_MODEL_PARAMS": in, "OLLAMA_BASE_URLS": list}); err != nil {
		t.Fatal(err)
	}
	in["temperature"] = 0.9
	list[0] = "http://evil"
	c := s.Get()
	if c.DefaultModelParams["temperature"] != 0.2 || c.OllamaBaseURLs[0] != "http://a" {
		t.Fatal("caller's input aliases the snapshot")
	}
	got := value(t, s, "DEFAULT_MODEL_PARAMS").(map[string]any)
	got["temperature"] = 1.0
	urls := value(t, s, "OLLAMA_BASE_URLS").([]string)
	urls[0] = "x"
	if c.DefaultModelParams["temperature"] != 0.2 || c.OllamaBaseURLs[0] != "http://a" {
		t.Fatal("Value aliases the snapshot")
	}
	// An old snapshot is untouched by a later Set.
	if err := s.Set(context.Background(), map[string]any{"ENABLE_SIGNUP": false}); err != nil {
		t.Fatal(err)
	}
	if !c.EnableSignup || s.Get().EnableSignup {
		t.Fatal("copy-modify-swap broken")
	}
}

func TestValidatePasswordAuth(t *testing.T) {
	s, _ := mustLoad(t, map[string]string{"ENABLE_PASSWORD_AUTH": "false"}, newFakeStore())
	if err := s.Get().Validate(); err == nil {
		t.Fatal("ENABLE_PASSWORD_AUTH=false without ENABLE_OAUTH_SIGNUP must fail Validate")
	}
	s, _ = mustLoad(t, map[string]string{"ENABLE_PASSWORD_AUTH": "false", "ENABLE_OAUTH_SIGNUP": "true"}, newFakeStore())
	if err := s.Get().Validate(); err != nil {
		t.Fatal(err)
	}
	err := s.Set(context.Background(), map[string]any{"ENABLE_OAUTH_SIGNUP": false})
	var ve *VarError
	if !errors.As(err, &ve) || ve.Name != "ENABLE_OAUTH_SIGNUP" || !s.Get().EnableOAuthSignup {
		t.Fatalf("turning OAuth sign-up off with password auth off must be refused: %v", err)
	}
}

func TestStartupWarnings(t *testing.T) {
	_, warns := mustLoad(t, map[string]string{"SCIM_ENABLED": "true"}, nil)
	if !hasWarning(warns, "SCIM_TOKEN") || !hasWarning(warns, "SCIM_AUTH_PROVIDER") {
		t.Fatalf("warnings %v", warns)
	}
}

func TestLoadStoreErrors(t *testing.T) {
	st := newFakeStore()
	st.failLoad = errors.New("no table")
	if _, _, err := Load(context.Background(), envOf(nil), st); err == nil {
		t.Fatal("LoadConfig failure must fail Load")
	}
	st = newFakeStore()
	st.failSave = errors.New("read-only")
	if _, _, err := Load(context.Background(), envOf(nil), st); err == nil {
		t.Fatal("seeding failure must fail Load")
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in       string
		d        time.Duration
		noExpiry bool
		wantErr  bool
	}{
		{"4w", 4 * 7 * 24 * time.Hour, false, false},
		{"1h30m", 90 * time.Minute, false, false},
		{"500ms", 500 * time.Millisecond, false, false},
		{"2d12h", 60 * time.Hour, false, false},
		{"1.5h", 90 * time.Minute, false, false},
		{"30s", 30 * time.Second, false, false},
		{" 7d ", 7 * 24 * time.Hour, false, false},
		{"-1", 0, true, false},
		{"0", 0, true, false},
		{"0s", 0, true, false},
		{"", 0, false, true},
		{"bad", 0, false, true},
		{"10", 0, false, true},
		{"10x", 0, false, true},
		{"1h 30m", 0, false, true},
		{"-5m", 0, false, true},
		{"1.h", 0, false, true},
		{"99999999999999999999w", 0, false, true},
		{"1000000w1000000w", 0, false, true},
	}
	for _, tc := range tests {
		d, no, err := ParseDuration(tc.in)
		if (err != nil) != tc.wantErr || d != tc.d || no != tc.noExpiry {
			t.Errorf("ParseDuration(%q) = %v, %v, %v; want %v, %v, err=%v", tc.in, d, no, err, tc.d, tc.noExpiry, tc.wantErr)
		}
	}
	for in, ok := range map[string]bool{"4w": true, "-1": true, "0": true, "1.5h": true, "1h30m": false, "-5m": false, "x": false} {
		if got := validAdminJWTExpiry(in) == nil; got != ok {
			t.Errorf("validAdminJWTExpiry(%q) = %v, want %v", in, got, ok)
		}
	}
}

func TestExplain(t *testing.T) {
	st := newFakeStore()
	mustLoad(t, map[string]string{"ENABLE_CHANNELS": "true"}, st) // seeds channels.enable=true
	// Pretend these two keys are new in this version: they are seeded from this start's env.
	st.mu.Lock()
	delete(st.data, "openai.api_keys")
	delete(st.data, "oauth.oidc.client_secret")
	st.mu.Unlock()
	env := map[string]string{
		"WEBUI_SECRET_KEY":    "topsecret",
		"OPENAI_API_KEYS":     "sk-live;",
		"WEBUI_NAME":          "Home",
		"ENABLE_CHANNELS":     "false", // ignored: stored value wins
		"DATABASE_URL":        "",
		"OAUTH_CLIENT_SECRET": "shh",
	}
	s, _ := mustLoad(t, env, st)
	if err := s.Set(context.Background(), map[string]any{"WEBUI_NAME": "Edited"}); err != nil {
		t.Fatal(err)
	}
	rows := map[string]ExplainRow{}
	for _, r := range s.Explain() {
		rows[r.Name] = r
	}
	if len(rows) != len(Vars()) {
		t.Fatalf("%d rows for %d vars", len(rows), len(Vars()))
	}
	tests := []struct {
		name       string
		value      string
		src        Source
		persistent bool
		stored     bool
	}{
		{"WEBUI_SECRET_KEY", "<redacted>", SourceEnv, false, false},
		{"OAUTH_SESSION_TOKEN_ENCRYPTION_KEY", "<redacted>", SourceEnv, false, false},
		{"SCIM_TOKEN", "", SourceDefault, false, false},
		{"OPENAI_API_KEYS", "<redacted>", SourceEnv, true, true},
		{"OAUTH_CLIENT_SECRET", "<redacted>", SourceEnv, true, true},
		{"OAUTH_CLIENT_INFO_ENCRYPTION_KEY", "<redacted>", SourceEnv, false, false},
		{"LICENSE_KEY", "", SourceDefault, false, false},
		{"WEBUI_NAME", "Edited", SourceDatabase, true, true},
		{"ENABLE_CHANNELS", "true", SourceDatabase, true, true},
		{"PORT", "8080", SourceDefault, false, false},
		{"OLLAMA_BASE_URLS", "http://localhost:11434", SourceDatabase, true, true},
		{"FOLDER_MAX_FILE_COUNT", "", SourceDatabase, true, true},
		{"DEFAULT_MODEL_PARAMS", "{}", SourceDatabase, true, true},
	}
	for _, tc := range tests {
		r := rows[tc.name]
		if r.Value != tc.value || r.Source != tc.src || r.Persistent != tc.persistent || r.Stored != tc.stored {
			t.Errorf("%s: got %+v, want value=%q src=%s persistent=%v stored=%v", tc.name, r, tc.value, tc.src, tc.persistent, tc.stored)
		}
		if tc.persistent != (r.Key != "") || r.Description == "" {
			t.Errorf("%s: key/description %+v", tc.name, r)
		}
	}
	for _, r := range rows {
		for _, secret := range []string{"topsecret", "sk-live", "shh"} {
			if strings.Contains(r.Value, secret) {
				t.Errorf("%s leaks a secret: %q", r.Name, r.Value)
			}
		}
	}
	// Value is for admins and does not redact.
	if v := value(t, s, "OPENAI_API_KEYS"); !reflect.DeepEqual(v, []string{"sk-live", ""}) {
		t.Errorf("OPENAI_API_KEYS = %#v", v)
	}

	// Persistence off: admin source, Stored false.
	s2, _ := mustLoad(t, map[string]string{"ENABLE_PERSISTENT_CONFIG": "false", "OPENAI_API_KEYS": "sk-x"}, st)
	if err := s2.Set(context.Background(), map[string]any{"ENABLE_NOTES": false}); err != nil {
		t.Fatal(err)
	}
	for _, r := range s2.Explain() {
		switch r.Name {
		case "ENABLE_NOTES":
			if r.Source != SourceAdmin || r.Stored || !r.Persistent || r.Value != "false" {
				t.Errorf("ENABLE_NOTES %+v", r)
			}
		case "OPENAI_API_KEYS":
			if r.Value != "<redacted>" || r.Source != SourceEnv {
				t.Errorf("OPENAI_API_KEYS %+v", r)
			}
		}
	}
}

func TestConcurrentGetSet(t *testing.T) {
	s, _ := mustLoad(t, nil, newFakeStore())
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 8; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := s.Get()
				// A snapshot is internally consistent: both fields come from the same Set.
				if c.EnableSignup != c.EnableLoginForm {
					t.Error("torn snapshot")
					return
				}
				_ = c.UserPermissions["chat"]["delete"]
				_ = len(c.OllamaBaseURLs)
				_, _ = s.Value("WEBUI_NAME")
				_ = s.Explain()
			}
		}()
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				on := i%2 == 0
				err := s.Set(ctx, map[string]any{
					"ENABLE_SIGNUP": on, "ENABLE_LOGIN_FORM": on,
					"OLLAMA_BASE_URLS": []any{"http://a", "http://b"},
					"USER_PERMISSIONS": map[string]any{"chat": map[string]any{"delete": on}},
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Let the writers finish, then stop the readers.
	done := make(chan struct{})
	go func() {
		for {
			time.Sleep(10 * time.Millisecond)
			if _, saves := s.st.(*fakeStore).counts(); saves >= 1+4*200 {
				close(done)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Error("writers did not finish")
	}
	close(stop)
	wg.Wait()
}

func TestOptionalIntJSON(t *testing.T) {
	for in, want := range map[string]OptionalInt{`""`: {}, `null`: {}, `5`: {Set: true, V: 5}, `"7"`: {Set: true, V: 7}, `-3`: {}} {
		var o OptionalInt
		if err := json.Unmarshal([]byte(in), &o); err != nil || o != want {
			t.Errorf("Unmarshal(%s) = %+v, %v", in, o, err)
		}
	}
	var o OptionalInt
	if err := json.Unmarshal([]byte(`"x"`), &o); err == nil {
		t.Error("junk accepted")
	}
	for o, want := range map[OptionalInt]string{{}: `""`, {Set: true, V: 0}: `0`, {Set: true, V: 42}: `42`} {
		if b, _ := json.Marshal(o); string(b) != want {
			t.Errorf("Marshal(%+v) = %s", o, b)
		}
	}
}

func TestWithOverrides(t *testing.T) {
	env := WithOverrides(envOf(map[string]string{"WEBUI_NAME": "A"}), map[string]string{"WEBUI_SECRET_KEY": "gen"})
	set, _, err := Load(context.Background(), env, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := set.Get()
	if c.WebUISecretKey != "gen" || c.OAuthSessionTokenEncryptionKey != "gen" || c.WebUIName != "A" {
		t.Fatalf("overrides not applied: %q %q %q", c.WebUISecretKey, c.OAuthSessionTokenEncryptionKey, c.WebUIName)
	}
}

// FuzzSet: arbitrary JSON objects never panic Set, and a failed Set changes nothing.
func FuzzSet(f *testing.F) {
	seeds := []string{
		`{"ENABLE_SIGNUP": false}`,
		`{"ENABLE_SIGNUP": "yes", "DEFAULT_USER_ROLE": "admin"}`,
		`{"DEFAULT_USER_ROLE": "boss", "ENABLE_SIGNUP": false}`,
		`{"WEBUI_BANNERS": [{"id":"1","type":"info","content":"c","dismissible":true,"timestamp":1}]}`,
		`{"WEBUI_BANNERS": [{"id":"1","type":"bogus","content":"c"}]}`,
		`{"WEBUI_BANNERS": "[{\"id\":1}]"}`,
		`{"JWT_EXPIRES_IN": "1h30m"}`,
		`{"JWT_EXPIRES_IN": "99999999999999999999999w"}`,
		`{"FOLDER_MAX_FILE_COUNT": 1e300}`,
		`{"FOLDER_MAX_FILE_COUNT": -4, "AUTOMATION_MIN_INTERVAL": ""}`,
		`{"USER_PERMISSIONS": {"chat": {"delete": "x"}}}`,
		`{"USER_PERMISSIONS": {"chat": null}}`,
		`{"USER_PERMISSIONS": null}`,
		`{"OPENAI_API_KEYS": [null]}`,
		`{"DEFAULT_MODEL_PARAMS": "{\"a\":[1,{}]}"}`,
		`{"PORT": 1}`,
		`{"OAUTH_MAX_SESSIONS_PER_USER": -9223372036854775808}`,
		`{"": null}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var changes map[string]any
		if err := json.Unmarshal(data, &changes); err != nil {
			return
		}
		st := newFakeStore()
		s, _, err := Load(context.Background(), envOf(nil), st)
		if err != nil {
			t.Fatal(err)
		}
		before, beforeStore := s.Get(), st.copyData()
		beforeExplain := s.Explain()
		if err := s.Set(context.Background(), changes); err != nil {
			if s.Get() != before || !maps.Equal(beforeStore, st.copyData()) || !reflect.DeepEqual(beforeExplain, s.Explain()) {
				t.Fatalf("failed Set (%v) changed state", err)
			}
			return
		}
		// Success: every changed variable reads back, and its value is accepted again.
		for name := range changes {
			v, ok := s.Value(name)
			if !ok {
				t.Fatalf("Set accepted unknown %q", name)
			}
			if err := s.Set(context.Background(), map[string]any{name: v}); err != nil {
				t.Fatalf("%s: Value %#v not accepted by Set: %v", name, v, err)
			}
		}
	})
}
