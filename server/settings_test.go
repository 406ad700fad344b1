package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"hearth/config"
)

// reload loads the configuration again from the fixture's database, as the
// next start would (empty environment).
func reload(t *testing.T, f *fixture) *config.Config {
	t.Helper()
	s, _, err := config.Load(context.Background(), nil, f.store)
	if err != nil {
		t.Fatal(err)
	}
	return s.Get()
}

func TestAdminConfigGet(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("GET", "/api/v1/auths/admin/config", f.adminTok, "")
	expect(t, w, 200, "")
	m := jsonBody(t, w)
	names := adminConfigVars()
	if len(m) != len(names) {
		t.Errorf("%d fields, want %d: %v", len(m), len(names), m)
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			t.Errorf("field %s missing", n)
		}
	}
	for k, want := range map[string]any{
		"ENABLE_SIGNUP": true, "DEFAULT_USER_ROLE": "pending", "JWT_EXPIRES_IN": "4w",
		"FOLDER_MAX_FILE_COUNT": "", "WEBUI_URL": "http://localhost:3000", "SHOW_ADMIN_DETAILS": true,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
}

func TestAdminConfigRoundTripAndPersistence(t *testing.T) {
	f := newFixture(t, nil)
	body := `{"ENABLE_SIGNUP":false,"DEFAULT_USER_ROLE":"user","FOLDER_MAX_FILE_COUNT":25,
		"AUTOMATION_MAX_COUNT":"","JWT_EXPIRES_IN":"1h","PENDING_USER_OVERLAY_TITLE":"Hold on",
		"API_KEYS_ALLOWED_ENDPOINTS":"/api/v1/chats,/api/models"}`
	w := f.do("POST", "/api/v1/auths/admin/config", f.adminTok, body)
	expect(t, w, 200, "")
	m := jsonBody(t, w)
	for k, want := range map[string]any{
		"ENABLE_SIGNUP": false, "DEFAULT_USER_ROLE": "user", "FOLDER_MAX_FILE_COUNT": 25.0,
		"AUTOMATION_MAX_COUNT": "", "JWT_EXPIRES_IN": "1h", "PENDING_USER_OVERLAY_TITLE": "Hold on",
		"ENABLE_NOTES": true, // not sent: unchanged
	} {
		if m[k] != want {
			t.Errorf("answer %s = %v, want %v", k, m[k], want)
		}
	}
	if len(m) != len(adminConfigVars()) {
		t.Errorf("answer is not the full GET payload: %v", m)
	}
	// Live and in the next GET.
	if c := f.settings.Get(); c.EnableSignup || c.DefaultUserRole != "user" {
		t.Errorf("live config not updated")
	}
	if g := jsonBody(t, f.do("GET", "/api/v1/auths/admin/config", f.adminTok, "")); g["DEFAULT_USER_ROLE"] != "user" {
		t.Errorf("GET after POST: %v", g["DEFAULT_USER_ROLE"])
	}
	// Persistent: a fresh load from the same database sees the new values.
	c := reload(t, f)
	if c.EnableSignup || c.DefaultUserRole != "user" || c.JWTExpiresIn != "1h" || c.PendingUserOverlayTitle != "Hold on" {
		t.Errorf("not persisted: signup=%v role=%q jwt=%q title=%q", c.EnableSignup, c.DefaultUserRole, c.JWTExpiresIn, c.PendingUserOverlayTitle)
	}
	if n, set := c.FolderMaxFileCount.Limit(); !set || n != 25 {
		t.Errorf("FOLDER_MAX_FILE_COUNT not persisted: %v", c.FolderMaxFileCount)
	}
}

func TestAdminConfigAllOrNothing(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("POST", "/api/v1/auths/admin/config", f.adminTok, `{"ENABLE_SIGNUP":false,"DEFAULT_USER_ROLE":"root"}`)
	expect(t, w, 400, "")
	if !strings.Contains(w.Body.String(), "DEFAULT_USER_ROLE") {
		t.Errorf("error does not name the variable: %s", w.Body.String())
	}
	if c := f.settings.Get(); !c.EnableSignup || c.DefaultUserRole != "pending" {
		t.Errorf("partial update applied: signup=%v role=%q", c.EnableSignup, c.DefaultUserRole)
	}
	if c := reload(t, f); !c.EnableSignup || c.DefaultUserRole != "pending" {
		t.Errorf("partial update stored")
	}

	// Unknown keys are named; nothing changes either.
	w = f.do("POST", "/api/v1/auths/admin/config", f.adminTok, `{"ENABLE_SIGNUP":false,"WEBUI_NAME":"x","BOGUS":1}`)
	expect(t, w, 400, "Unknown setting(s): BOGUS, WEBUI_NAME")
	if !f.settings.Get().EnableSignup {
		t.Errorf("update applied despite unknown keys")
	}

	// Wrong types and malformed bodies.
	expect(t, f.do("POST", "/api/v1/auths/admin/config", f.adminTok, `{"ENABLE_SIGNUP":"maybe"}`), 400, "")
	expect(t, f.do("POST", "/api/v1/auths/admin/config", f.adminTok, `{"JWT_EXPIRES_IN":"forever"}`), 400, "")
	expect(t, f.do("POST", "/api/v1/auths/admin/config", f.adminTok, `[1]`), 422, "")
}

func TestBanners(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("GET", "/api/v1/configs/banners", f.userTok, "")
	expect(t, w, 200, "")
	if got := strings.TrimSpace(w.Body.String()); got != "[]" {
		t.Fatalf("no banners must be [], got %s", got)
	}

	set := `{"banners":[{"id":"b1","type":"warning","title":"Maintenance","content":"<b>Down</b> at 6","dismissible":true,"timestamp":1700000000},
		{"id":"b2","type":"info","content":"Hi"}]}`
	w = f.do("POST", "/api/v1/configs/banners", f.adminTok, set)
	expect(t, w, 200, "")
	var got []config.Banner
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := []config.Banner{
		{ID: "b1", Type: "warning", Title: "Maintenance", Content: "<b>Down</b> at 6", Dismissible: true, Timestamp: 1700000000},
		{ID: "b2", Type: "info", Content: "Hi"},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("stored banners = %+v", got)
	}
	// Every field is present on the wire (clients read them all).
	w = f.do("GET", "/api/v1/configs/banners", f.otherTok, "")
	var raw []map[string]any
	json.Unmarshal(w.Body.Bytes(), &raw)
	if len(raw) != 2 || len(raw[1]) != 6 || raw[1]["dismissible"] != false || raw[1]["title"] != "" {
		t.Errorf("banners on the wire: %s", w.Body.String())
	}
	if b := reload(t, f).Banners; len(b) != 2 || b[0] != want[0] {
		t.Errorf("banners not persisted: %+v", b)
	}

	// Invalid banners are refused and nothing changes.
	for _, bad := range []string{
		`{"banners":[{"id":"b3","type":"shout","content":"x"}]}`,
		`{"banners":[{"id":"b3","type":"info"}]}`,
		`{"banners":[{"id":"ok","type":"info","content":"x"},{"type":"info","content":"no id"}]}`,
		`{"banners":[{"id":"b3","type":"info","content":"x","dismissible":"yes"}]}`,
		`{"banners":"nope"}`,
		`{"banners":null}`,
		`{}`,
	} {
		w := f.do("POST", "/api/v1/configs/banners", f.adminTok, bad)
		expect(t, w, 422, "")
		if b := f.settings.Get().Banners; len(b) != 2 {
			t.Fatalf("%s changed the banners: %+v", bad, b)
		}
	}

	// An empty list clears them.
	w = f.do("POST", "/api/v1/configs/banners", f.adminTok, `{"banners":[]}`)
	expect(t, w, 200, "")
	if got := strings.TrimSpace(w.Body.String()); got != "[]" {
		t.Errorf("cleared banners = %s", got)
	}
}

func TestConfigExportImport(t *testing.T) {
	f := newFixture(t, map[string]string{"OPENAI_API_KEYS": "sk-upstream-secret", "OAUTH_CLIENT_SECRET": "shh"})
	w := f.do("GET", "/api/v1/configs/export", f.adminTok, "")
	expect(t, w, 200, "")
	exp := jsonBody(t, w)
	for _, v := range config.Vars() {
		_, present := exp[v.Key]
		if want := v.Persistent && !v.Secret; present != want {
			t.Errorf("%s (%s): in export = %v, want %v", v.Name, v.Key, present, want)
		}
	}
	if strings.Contains(w.Body.String(), "sk-upstream-secret") || strings.Contains(w.Body.String(), "shh") {
		t.Fatalf("export leaks a secret")
	}
	if exp["ui.enable_signup"] != true || exp["webui.name"] != "Hearth" {
		t.Errorf("export values: signup=%v name=%v", exp["ui.enable_signup"], exp["webui.name"])
	}

	// Import maps keys back to variables, applies them at once, answers the export.
	w = f.do("POST", "/api/v1/configs/import", f.adminTok, `{"config":{"ui.enable_signup":false,"webui.name":"Imported","ui.banners":[{"id":"i","type":"info","content":"c"}]}}`)
	expect(t, w, 200, "")
	got := jsonBody(t, w)
	if got["ui.enable_signup"] != false || got["webui.name"] != "Imported" {
		t.Errorf("import answer: %v %v", got["ui.enable_signup"], got["webui.name"])
	}
	if c := reload(t, f); c.EnableSignup || c.WebUIName != "Imported" || len(c.Banners) != 1 {
		t.Errorf("import not persisted")
	}

	// Unknown keys and invalid values: 400, nothing changes.
	w = f.do("POST", "/api/v1/configs/import", f.adminTok, `{"config":{"ui.enable_signup":true,"rag.pdf_extract_images":true}}`)
	expect(t, w, 400, "Unknown setting(s): rag.pdf_extract_images")
	w = f.do("POST", "/api/v1/configs/import", f.adminTok, `{"config":{"ui.enable_signup":true,"ui.default_user_role":"root"}}`)
	expect(t, w, 400, "")
	if f.settings.Get().EnableSignup {
		t.Errorf("failed import changed the configuration")
	}
	expect(t, f.do("POST", "/api/v1/configs/import", f.adminTok, `{}`), 422, "")

	// A full export imports back unchanged.
	w = f.do("POST", "/api/v1/configs/import", f.adminTok, `{"config":`+f.do("GET", "/api/v1/configs/export", f.adminTok, "").Body.String()+`}`)
	expect(t, w, 200, "")
}

func TestSettingsList(t *testing.T) {
	f := newFixture(t, map[string]string{"OPENAI_API_KEYS": "sk-upstream-secret", "WEBUI_NAME": "Env Name"})
	w := f.do("GET", "/api/v1/configs/settings", f.adminTok, "")
	expect(t, w, 200, "")
	if strings.Contains(w.Body.String(), "sk-upstream-secret") {
		t.Fatalf("settings list leaks a secret")
	}
	var rows []map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(config.Vars()) {
		t.Fatalf("%d rows for %d variables", len(rows), len(config.Vars()))
	}
	byName := map[string]map[string]any{}
	for _, r := range rows {
		byName[r["name"].(string)] = r
		for _, k := range []string{"name", "key", "value", "source", "persistent", "secret", "section", "type", "description"} {
			if _, ok := r[k]; !ok {
				t.Errorf("%v lacks %s", r["name"], k)
			}
		}
	}
	keys := byName["OPENAI_API_KEYS"]
	if keys["value"] != nil || keys["is_set"] != true || keys["secret"] != true {
		t.Errorf("secret row = %v", keys)
	}
	if s := byName["SCIM_TOKEN"]; s["value"] != nil || s["is_set"] != false {
		t.Errorf("unset secret row = %v", s)
	}
	name := byName["WEBUI_NAME"]
	if name["value"] != "Env Name" || name["key"] != "webui.name" || name["type"] != "string" || name["persistent"] != true {
		t.Errorf("WEBUI_NAME row = %v", name)
	}
	role := byName["DEFAULT_USER_ROLE"]
	if enum, _ := role["enum"].([]any); len(enum) != 3 {
		t.Errorf("enum of DEFAULT_USER_ROLE = %v", role["enum"])
	}
	if p := byName["PORT"]; p["persistent"] != false || p["min"] != 1.0 || p["max"] != 65535.0 {
		t.Errorf("PORT row = %v", p)
	}
}

func TestSettingsUpdate(t *testing.T) {
	f := newFixture(t, nil)
	w := f.do("POST", "/api/v1/configs/settings", f.adminTok, `{"WEBUI_NAME":"Renamed","ENABLE_CHANNELS":true}`)
	expect(t, w, 200, "")
	var rows []map[string]any
	json.Unmarshal(w.Body.Bytes(), &rows)
	for _, r := range rows {
		if r["name"] == "WEBUI_NAME" && (r["value"] != "Renamed" || r["source"] != "database") {
			t.Errorf("WEBUI_NAME row after update = %v", r)
		}
	}
	if c := reload(t, f); c.WebUIName != "Renamed" || !c.EnableChannels {
		t.Errorf("update not persisted")
	}

	for body, detail := range map[string]string{
		`{"WEBUI_NAME":"X","PORT":9000}`:           "PORT: env-only",
		`{"WEBUI_NAME":"X","NOPE":1}`:              "NOPE: unknown configuration variable",
		`{"WEBUI_NAME":"X","ENABLE_SIGNUP":"idk"}`: "ENABLE_SIGNUP: invalid value",
	} {
		w := f.do("POST", "/api/v1/configs/settings", f.adminTok, body)
		expect(t, w, 400, "")
		if !strings.Contains(w.Body.String(), detail) {
			t.Errorf("%s: body %s, want %q", body, w.Body.String(), detail)
		}
		if f.settings.Get().WebUIName != "Renamed" {
			t.Fatalf("%s: rejected update changed WEBUI_NAME", body)
		}
	}
}
