package server

import (
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"

	"hearth/config"
)

// Admin settings (COMPAT.md §13.1, §13.3, §15 banners), plus Hearth's
// generic settings list for its own admin UI. Every write goes through ONE
// Settings.Set call: it validates everything first and changes nothing when
// any value is rejected, so a request is applied entirely or not at all.

// adminConfigVars are the variables of GET/POST /api/v1/auths/admin/config,
// named as upstream names the fields (COMPAT.md §13.3).
func adminConfigVars() []string {
	return []string{
		"SHOW_ADMIN_DETAILS", "ADMIN_EMAIL", "WEBUI_URL", "ENABLE_SIGNUP", "ENABLE_API_KEYS",
		"ENABLE_API_KEYS_ENDPOINT_RESTRICTIONS", "API_KEYS_ALLOWED_ENDPOINTS", "DEFAULT_USER_ROLE",
		"DEFAULT_GROUP_ID", "JWT_EXPIRES_IN", "ENABLE_COMMUNITY_SHARING", "ENABLE_MESSAGE_RATING",
		"ENABLE_FOLDERS", "FOLDER_MAX_FILE_COUNT", "AUTOMATION_MAX_COUNT", "AUTOMATION_MIN_INTERVAL",
		"ENABLE_AUTOMATIONS", "ENABLE_CHANNELS", "ENABLE_CALENDAR", "ENABLE_MEMORIES",
		"ENABLE_MEMORY_SYSTEM_CONTEXT", "ENABLE_NOTES", "ENABLE_USER_WEBHOOKS", "ENABLE_USER_STATUS",
		"PENDING_USER_OVERLAY_TITLE", "PENDING_USER_OVERLAY_CONTENT", "RESPONSE_WATERMARK",
	}
}

// applySettings runs one all-or-nothing Set. A rejected value (unknown,
// env-only or invalid) is `status` with Set's own explanation; a failed
// database write is an internal error.
func (s *Server) applySettings(r *http.Request, changes map[string]any, status int) error {
	err := s.settings.Set(r.Context(), changes)
	if err == nil {
		return nil
	}
	var ve *config.VarError
	if errors.As(err, &ve) {
		return errorf(status, "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return err
}

// unknownKeys returns 400 naming the keys of body that are not in allowed.
func unknownKeys[V any](body map[string]V, allowed func(string) bool) error {
	var bad []string
	for k := range body {
		if !allowed(k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return errorf(http.StatusBadRequest, "Unknown setting(s): %s", strings.Join(bad, ", "))
}

// adminConfig is the flat GET payload.
func (s *Server) adminConfig() map[string]any {
	out := map[string]any{}
	for _, name := range adminConfigVars() {
		out[name], _ = s.settings.Value(name)
	}
	return out
}

// handleGetAdminConfig is GET /api/v1/auths/admin/config.
func (s *Server) handleGetAdminConfig(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.adminConfig())
}

// handleSetAdminConfig is POST /api/v1/auths/admin/config. Hearth is
// lenient where upstream requires every field: a missing key keeps its
// value. It is stricter where upstream is silent: an invalid value (say
// DEFAULT_USER_ROLE "root") is a 400 and nothing changes, instead of being
// dropped while the rest is saved. Unknown keys are a 400 naming them.
func (s *Server) handleSetAdminConfig(w http.ResponseWriter, r *http.Request) error {
	var body map[string]any
	if err := decode(r, &body); err != nil {
		return err
	}
	names := adminConfigVars()
	if err := unknownKeys(body, func(k string) bool { return slices.Contains(names, k) }); err != nil {
		return err
	}
	if err := s.applySettings(r, body, http.StatusBadRequest); err != nil {
		return err
	}
	return ok(w, s.adminConfig())
}

// banners is WEBUI_BANNERS as a JSON array (never null).
func (s *Server) banners() []config.Banner {
	b := s.cfg().Banners
	if b == nil {
		return []config.Banner{}
	}
	return b
}

// handleGetBanners is GET /api/v1/configs/banners (COMPAT.md §15).
func (s *Server) handleGetBanners(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.banners())
}

// handleSetBanners is POST /api/v1/configs/banners {"banners": [...]}. A
// malformed banner is a 422 (the status of a failed body validation
// upstream) and nothing is stored.
func (s *Server) handleSetBanners(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Banners any `json:"banners"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	if body.Banners == nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "banners")
	}
	if err := s.applySettings(r, map[string]any{"WEBUI_BANNERS": body.Banners}, http.StatusUnprocessableEntity); err != nil {
		return err
	}
	return ok(w, s.banners())
}

// exportable reports the variables of the export: persistent and not
// secret (keys and client secrets never leave through an export).
func exportable(v config.Var) bool { return v.Persistent && !v.Secret }

// configExport is the flat map persistent key → current value.
func (s *Server) configExport() map[string]any {
	out := map[string]any{}
	for _, v := range config.Vars() {
		if exportable(v) {
			out[v.Key], _ = s.settings.Value(v.Name)
		}
	}
	return out
}

// handleConfigExport is GET /api/v1/configs/export (COMPAT.md §13.1).
func (s *Server) handleConfigExport(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.configExport())
}

// handleConfigImport is POST /api/v1/configs/import {"config": {key: value}}.
// Unlike upstream, which stores any key it is given, a key Hearth does not
// know is a 400 (it would be stored and never read); every value is
// validated and the whole import applied at once or not at all. Secret
// persistent keys are accepted (an admin may set them), although the export
// never contains them.
func (s *Server) handleConfigImport(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Config map[string]any `json:"config"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	if body.Config == nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "config")
	}
	byKey := map[string]string{}
	for _, v := range config.Vars() {
		if v.Persistent {
			byKey[v.Key] = v.Name
		}
	}
	if err := unknownKeys(body.Config, func(k string) bool { _, ok := byKey[k]; return ok }); err != nil {
		return err
	}
	changes := make(map[string]any, len(body.Config))
	for k, val := range body.Config {
		changes[byKey[k]] = val
	}
	if err := s.applySettings(r, changes, http.StatusBadRequest); err != nil {
		return err
	}
	return ok(w, s.configExport())
}

// settingRow is one variable in Hearth's settings list. A secret's value is
// never sent: value is null and is_set tells whether one is configured.
type settingRow struct {
	Name          string         `json:"name"`
	Key           string         `json:"key"`
	Value         any            `json:"value"`
	IsSet         *bool          `json:"is_set,omitempty"`
	Source        config.Source  `json:"source"`
	Persistent    bool           `json:"persistent"`
	Stored        bool           `json:"stored"`
	Secret        bool           `json:"secret"`
	RestartNeeded bool           `json:"restart_needed"`
	Section       config.Section `json:"section"`
	Type          config.Kind    `json:"type"`
	Enum          []string       `json:"enum,omitempty"`
	Min           *int           `json:"min,omitempty"`
	Max           *int           `json:"max,omitempty"`
	Description   string         `json:"description"`
}

// settingsList is every variable in table order.
func (s *Server) settingsList() []settingRow {
	defs := map[string]config.Var{}
	for _, v := range config.Vars() {
		defs[v.Name] = v
	}
	rows := s.settings.Explain()
	out := make([]settingRow, 0, len(rows))
	for _, e := range rows {
		d := defs[e.Name]
		row := settingRow{
			Name: e.Name, Key: e.Key, Source: e.Source, Persistent: e.Persistent, Stored: e.Stored,
			Secret: d.Secret, RestartNeeded: d.RestartNeeded, Section: e.Section, Type: d.Type,
			Enum: d.Enum, Description: e.Description,
		}
		if d.Secret {
			set := e.Value != "" // Explain shows "<redacted>" for a set secret
			row.IsSet = &set
		} else {
			row.Value, _ = s.settings.Value(e.Name)
		}
		if d.Type == config.KindInt {
			lo := d.Min
			row.Min = &lo
			if d.Max != 0 {
				hi := d.Max
				row.Max = &hi
			}
		}
		out = append(out, row)
	}
	return out
}

// handleListSettings is GET /api/v1/configs/settings (Hearth): every
// variable with its value, source and type, secrets redacted.
func (s *Server) handleListSettings(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.settingsList())
}

// handleUpdateSettings is POST /api/v1/configs/settings {NAME: value, ...}
// (Hearth): one all-or-nothing Set; unknown and env-only names are a 400.
func (s *Server) handleUpdateSettings(w http.ResponseWriter, r *http.Request) error {
	var body map[string]any
	if err := decode(r, &body); err != nil {
		return err
	}
	if err := s.applySettings(r, body, http.StatusBadRequest); err != nil {
		return err
	}
	return ok(w, s.settingsList())
}
