package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"hearth/chat"
	"hearth/config"
	"hearth/store"
)

// Models (COMPAT.md §5): the merged model list GET /api/models, the model
// records of /api/v1/models/..., and DEFAULT_MODELS & co. at
// /api/v1/configs/models. The list and the resolver are chat.Registry;
// records live in the store.

const (
	msgModelIDTaken   = "Uh-oh! This model id is already registered. Please choose another model id string."
	msgModelIDTooLong = "The model id is too long. Please make sure your model id is less than 256 characters long."
	msgOverrideAdmin  = "Only admins can create or change a model without a base model: it overrides a provider model for everyone."
	modelsPerPage     = 30 // Open WebUI's page size of /api/v1/models/list
)

// modelsState is the model registry's state on Server.
type modelsState struct {
	models      *chat.Registry
	registryCfg atomic.Pointer[registryCfgEntry]
	upstream    *http.Client  // verify calls; nil = http.DefaultClient
	verifyWait  time.Duration // timeout of POST /ollama/verify and /openai/verify
}

type registryCfgEntry struct {
	src *config.Config
	rc  *chat.RegistryConfig
}

// initModels builds the registry. Nothing is fetched here: a dead upstream
// must not delay start-up.
func (s *Server) initModels(ctx context.Context, d Deps) error {
	s.upstream = d.HTTPClient
	s.verifyWait = 5 * time.Second
	s.models = chat.NewRegistry(chat.RegistryOptions{
		Config:     s.registryConfig,
		Records:    d.Store,
		HTTPClient: d.HTTPClient,
		Log:        s.log,
	})
	return nil
}

// resolver is the model resolver the pipeline uses.
func (s *Server) resolver() chat.Resolver { return s.models }

// registryConfig converts the configuration snapshot into the registry's,
// once per snapshot (the pointer changes exactly when settings change).
func (s *Server) registryConfig() *chat.RegistryConfig {
	c := s.cfg()
	if e := s.registryCfg.Load(); e != nil && e.src == c {
		return e.rc
	}
	rc := &chat.RegistryConfig{
		Connections: chat.BuildConnections(chat.ConnectionSettings{
			EnableOllama: c.EnableOllamaAPI, OllamaURLs: c.OllamaBaseURLs, OllamaConfigs: c.OllamaAPIConfigs,
			EnableOpenAI: c.EnableOpenAIAPI, OpenAIURLs: c.OpenAIAPIBaseURLs, OpenAIKeys: c.OpenAIAPIKeys, OpenAIConfigs: c.OpenAIAPIConfigs,
		}),
		DefaultModels:       splitModelIDs(c.DefaultModels),
		DefaultMetadata:     c.DefaultModelMetadata,
		DefaultParams:       c.DefaultModelParams,
		BypassModelAccess:   c.BypassModelAccessControl,
		BypassAdminAccess:   c.BypassAdminAccessControl,
		CustomModelFallback: c.EnableCustomModelFallback,
	}
	s.registryCfg.Store(&registryCfgEntry{src: c, rc: rc})
	return rc
}

// splitModelIDs splits DEFAULT_MODELS ("a,b").
func splitModelIDs(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// ---- GET /api/models ----

// handleModels is GET /api/models (and /api/v1/models): {"data": [...]}
// filtered for the caller; ?refresh=true refetches the provider lists.
// Entries are encoded once per change of the list (and the whole answer
// for callers who see everything), so a request only filters and writes.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) error {
	refresh, err := queryBool(r, "refresh")
	if err != nil {
		return err
	}
	v, err := s.models.View(r.Context(), refresh)
	if err != nil {
		return err
	}
	ms := v.Visible(actor(r))
	if len(ms) == len(v.All()) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(v.ListJSON())))
		w.WriteHeader(http.StatusOK)
		w.Write(v.ListJSON())
		return nil
	}
	parts := make([][]byte, len(ms))
	for i, m := range ms {
		parts[i] = m.JSON
	}
	writeDataList(w, parts)
	return nil
}

// handleBaseModels is GET /api/models/base (admin): the provider models
// before records are applied, unfiltered.
func (s *Server) handleBaseModels(w http.ResponseWriter, r *http.Request) error {
	v, err := s.models.View(r.Context(), false)
	if err != nil {
		return err
	}
	writeDataList(w, v.BaseJSON())
	return nil
}

// writeDataList writes {"data": [parts...]} piece by piece (no copy of the
// whole answer), with its length.
func writeDataList(w http.ResponseWriter, parts [][]byte) {
	n := len(`{"data":[]}`)
	for i, p := range parts {
		n += len(p)
		if i > 0 {
			n++
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(`{"data":[`))
	comma := []byte{','}
	for i, p := range parts {
		if i > 0 {
			w.Write(comma)
		}
		w.Write(p)
	}
	w.Write([]byte("]}"))
}

// ---- model records ----

// modelRecordJSON is Open WebUI's ModelModel.
type modelRecordJSON struct {
	ID           string          `json:"id"`
	UserID       string          `json:"user_id"`
	BaseModelID  *string         `json:"base_model_id"`
	Name         string          `json:"name"`
	Params       json.RawMessage `json:"params"`
	Meta         json.RawMessage `json:"meta"`
	AccessGrants json.RawMessage `json:"access_grants"`
	IsActive     bool            `json:"is_active"`
	UpdatedAt    int64           `json:"updated_at"`
	CreatedAt    int64           `json:"created_at"`
}

// modelAccessJSON is ModelAccessResponse: the record, its owner (list
// only; null otherwise) and whether the caller may change it.
type modelAccessJSON struct {
	modelRecordJSON
	User        *modelOwnerJSON `json:"user"`
	WriteAccess bool            `json:"write_access"`
}

type modelOwnerJSON struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Email           string `json:"email"`
	Role            string `json:"role"`
	ProfileImageURL string `json:"profile_image_url"`
}

func modelRecord(m store.Model) modelRecordJSON {
	out := modelRecordJSON{ID: m.ID, UserID: m.UserID, Name: m.Name, Params: m.Params, Meta: m.Meta,
		AccessGrants: chat.GrantsJSON(m.Grants), IsActive: m.IsActive, UpdatedAt: m.UpdatedAt, CreatedAt: m.CreatedAt}
	if m.BaseModelID != "" {
		out.BaseModelID = &m.BaseModelID
	}
	return out
}

// modelAccess is the record as a caller sees it: readers without write
// access get params {} (system prompts and curated settings stay with
// their editors, as Open WebUI does).
func modelAccess(m store.Model) modelAccessJSON {
	out := modelAccessJSON{modelRecordJSON: modelRecord(m), WriteAccess: m.WriteAccess}
	if !m.WriteAccess {
		out.Params = json.RawMessage("{}")
	}
	if m.Owner != nil {
		out.User = &modelOwnerJSON{ID: m.Owner.ID, Name: m.Owner.Name, Email: m.Owner.Email, Role: m.Owner.Role, ProfileImageURL: m.Owner.ProfileImageURL}
	}
	return out
}

// modelForm is Open WebUI's ModelForm (plus the legacy access_control,
// converted to grants). Absent fields keep their stored value on update
// (Hearth's decision: upstream replaces the whole record, so a client that
// leaves out meta would wipe it).
type modelForm struct {
	ID            string          `json:"id"`
	BaseModelID   json.RawMessage `json:"base_model_id"`
	Name          *string         `json:"name"`
	Meta          json.RawMessage `json:"meta"`
	Params        json.RawMessage `json:"params"`
	AccessGrants  *[]grantForm    `json:"access_grants"`
	AccessControl json.RawMessage `json:"access_control"`
	IsActive      *bool           `json:"is_active"`
}

type grantForm struct {
	PrincipalType string `json:"principal_type"`
	PrincipalID   string `json:"principal_id"`
	Permission    string `json:"permission"`
}

// baseID reads base_model_id: nil when absent, "" when null.
func (f *modelForm) baseID() (*string, error) {
	if f.BaseModelID == nil {
		return nil, nil
	}
	var s *string
	if err := json.Unmarshal(f.BaseModelID, &s); err != nil {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q must be a string or null", "base_model_id")
	}
	if s == nil {
		s = new(string)
	}
	return s, nil
}

// grants reads access_grants, or the legacy access_control (null = public
// read, {} = private, {read|write: {group_ids, user_ids}}). nil when
// neither is given.
func (f *modelForm) grants() (*[]store.Grant, error) {
	return parseGrants(f.AccessGrants, f.AccessControl)
}

// parseGrants reads access_grants, or else the legacy access_control, of
// a model or knowledge form. nil when neither is given.
func parseGrants(accessGrants *[]grantForm, accessControl json.RawMessage) (*[]store.Grant, error) {
	if accessGrants != nil {
		out := make([]store.Grant, 0, len(*accessGrants))
		for _, g := range *accessGrants {
			out = append(out, store.Grant{PrincipalType: g.PrincipalType, PrincipalID: g.PrincipalID, Permission: g.Permission})
		}
		return &out, nil
	}
	if accessControl == nil {
		return nil, nil
	}
	out := []store.Grant{}
	if string(accessControl) == "null" {
		out = append(out, store.Grant{PrincipalType: store.PrincipalUser, PrincipalID: store.Everyone, Permission: store.PermRead})
		return &out, nil
	}
	var ac map[string]struct {
		GroupIDs []string `json:"group_ids"`
		UserIDs  []string `json:"user_ids"`
	}
	if err := json.Unmarshal(accessControl, &ac); err != nil {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q must be an object or null", "access_control")
	}
	for _, perm := range []string{store.PermRead, store.PermWrite} {
		for _, id := range ac[perm].GroupIDs {
			out = append(out, store.Grant{PrincipalType: store.PrincipalGroup, PrincipalID: id, Permission: perm})
		}
		for _, id := range ac[perm].UserIDs {
			out = append(out, store.Grant{PrincipalType: store.PrincipalUser, PrincipalID: id, Permission: perm})
		}
	}
	return &out, nil
}

// defaultModelMeta is ModelMeta() with nothing set.
var defaultModelMeta = json.RawMessage(`{"profile_image_url":"/static/favicon.png","description":null,"capabilities":null}`)

// normalizeMeta checks that meta is an object and gives it ModelMeta's
// defaults (profile_image_url, description, capabilities) and tags as
// [{"name"}]. nil stays nil (absent).
func normalizeMeta(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	m, err := jsonObject(raw, "meta")
	if err != nil {
		return nil, err
	}
	if _, ok := m["profile_image_url"]; !ok {
		m["profile_image_url"] = "/static/favicon.png"
	}
	for _, k := range []string{"description", "capabilities"} {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
	if tags, ok := m["tags"].([]any); ok {
		norm := make([]any, 0, len(tags))
		for _, t := range tags {
			switch t := t.(type) {
			case string:
				norm = append(norm, map[string]any{"name": t})
			case map[string]any:
				if _, named := t["name"]; named {
					norm = append(norm, t)
				}
			}
		}
		m["tags"] = norm
	}
	return encodeJSON(m), nil
}

// normalizeParams checks that params is an object (null = {}).
func normalizeParams(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	m, err := jsonObject(raw, "params")
	if err != nil {
		return nil, err
	}
	return encodeJSON(m), nil
}

func jsonObject(raw json.RawMessage, field string) (map[string]any, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q must be an object", field)
	}
	return m, nil
}

func encodeJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// filterGrants drops the grants the caller may not give (COMPAT.md §5.4,
// filter_allowed_access_grants): without sharing.public_models no grant to
// everyone, without access_grants.allow_users no grant to single users.
// Admins give anything.
func (s *Server) filterGrants(id *identity, gs *[]store.Grant) *[]store.Grant {
	return s.filterGrantsFor(id, gs, "sharing.public_models")
}

// filterGrantsFor is filterGrants with the permission that allows a grant
// to everyone ("sharing.public_knowledge" for collections).
func (s *Server) filterGrantsFor(id *identity, gs *[]store.Grant, publicPerm string) *[]store.Grant {
	if gs == nil || id.actor.IsAdmin() {
		return gs
	}
	public, users := s.allowed(id, publicPerm), s.allowed(id, "access_grants.allow_users")
	out := make([]store.Grant, 0, len(*gs))
	for _, g := range *gs {
		if g.PrincipalType == store.PrincipalUser {
			if g.PrincipalID == store.Everyone && !public {
				continue
			}
			if g.PrincipalID != store.Everyone && !users {
				continue
			}
		}
		out = append(out, g)
	}
	return &out
}

// recordChanged drops the registry's cached records after a write.
func (s *Server) recordChanged() { s.models.InvalidateRecords() }

// handleCreateModelRecord is POST /api/v1/models/create (admin or
// workspace.models).
func (s *Server) handleCreateModelRecord(w http.ResponseWriter, r *http.Request) error {
	id := ident(r)
	if !id.actor.IsAdmin() && !s.allowed(id, "workspace.models") {
		return errorf(http.StatusUnauthorized, msgUnauthorized)
	}
	var f modelForm
	if err := decode(r, &f); err != nil {
		return err
	}
	name := ""
	if f.Name != nil {
		name = *f.Name
	}
	if err := required("id", f.ID, "name", name); err != nil {
		return err
	}
	if utf8.RuneCountInString(f.ID) >= 256 {
		return errorf(http.StatusBadRequest, msgModelIDTooLong)
	}
	base, err := f.baseID()
	if err != nil {
		return err
	}
	meta, err := normalizeMeta(f.Meta)
	if err != nil {
		return err
	}
	if meta == nil {
		meta = defaultModelMeta
	}
	params, err := normalizeParams(f.Params)
	if err != nil {
		return err
	}
	grants, err := f.grants()
	if err != nil {
		return err
	}
	m := store.Model{ID: f.ID, Name: name, Meta: meta, Params: params, IsActive: f.IsActive == nil || *f.IsActive}
	if base != nil {
		m.BaseModelID = *base
	}
	// A record without a base model overrides (or, inactive, hides) the
	// provider model with its id for every user: admins only (Hearth's
	// decision; Open WebUI's API lets any workspace.models holder do it).
	if m.BaseModelID == "" && !id.actor.IsAdmin() {
		return errorf(http.StatusForbidden, msgOverrideAdmin)
	}
	if g := s.filterGrants(id, grants); g != nil {
		m.Grants = *g
	}
	m, err = s.store.CreateModel(r.Context(), id.actor, m)
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusUnauthorized, msgModelIDTaken)
	}
	if err != nil {
		return err
	}
	s.recordChanged()
	return ok(w, modelRecord(m))
}

// handleGetModelRecord is GET /api/v1/models/model?id= : missing 404, not
// readable 401 (COMPAT.md §1.4). Admins read everything under
// BYPASS_ADMIN_ACCESS_CONTROL.
func (s *Server) handleGetModelRecord(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	m, err := s.store.GetModel(r.Context(), a, r.URL.Query().Get("id"), s.cfg().BypassAdminAccessControl)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, msgNotFound)
	case errors.Is(err, store.ErrForbidden):
		return errorf(http.StatusUnauthorized, msgAccessProhibited)
	case err != nil:
		return err
	}
	return ok(w, modelAccess(m))
}

// handleListModelRecords is GET /api/v1/models/list: the workspace list of
// presets, 30 per page, {items, total}.
func (s *Server) handleListModelRecords(w http.ResponseWriter, r *http.Request) error {
	page, _, err := queryPage(r)
	if err != nil {
		return err
	}
	a := actor(r)
	q := r.URL.Query()
	items, total, err := s.store.ListModels(r.Context(), a, store.ModelFilter{
		Query: q.Get("query"), ViewOption: q.Get("view_option"), Tag: q.Get("tag"),
		OrderBy: q.Get("order_by"), Direction: q.Get("direction"),
		All:   a.IsAdmin() && s.cfg().BypassAdminAccessControl,
		Limit: modelsPerPage, Offset: (page - 1) * modelsPerPage,
	})
	if err != nil {
		return err
	}
	out := make([]modelAccessJSON, len(items))
	for i, m := range items {
		out[i] = modelAccess(m)
		out[i].Meta = withoutKey(out[i].Meta, "profile_image_url") // served by /model/profile/image
	}
	return ok(w, map[string]any{"items": out, "total": total})
}

func withoutKey(raw json.RawMessage, key string) json.RawMessage {
	m, err := jsonObject(raw, "meta")
	if err != nil {
		return raw
	}
	if _, ok := m[key]; !ok {
		return raw
	}
	delete(m, key)
	return encodeJSON(m)
}

// modelWriteError maps a refused record write: missing is 401 NOT_FOUND on
// every write route; a caller without write access gets forbidden (the
// status and text differ by route upstream, see the callers).
func modelWriteError(err error, forbidden error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusUnauthorized, msgNotFound)
	case errors.Is(err, store.ErrForbidden):
		return forbidden
	}
	return err
}

// queryOrBodyID is the model id of a write route: ?id= (older clients),
// else the body's id.
func queryOrBodyID(r *http.Request, bodyID string) string {
	if id := r.URL.Query().Get("id"); id != "" {
		return id
	}
	return bodyID
}

// handleUpdateModelRecord is POST /api/v1/models/model/update (ModelForm).
// Owner, admin or write grant; missing 401 NOT_FOUND, refused 400
// ACCESS_PROHIBITED (as Open WebUI's update_model_by_id answers).
func (s *Server) handleUpdateModelRecord(w http.ResponseWriter, r *http.Request) error {
	id := ident(r)
	var f modelForm
	if err := decode(r, &f); err != nil {
		return err
	}
	modelID := queryOrBodyID(r, f.ID)
	if err := required("id", modelID); err != nil {
		return err
	}
	var p store.ModelPatch
	var err error
	if p.BaseModelID, err = f.baseID(); err != nil {
		return err
	}
	if p.BaseModelID != nil && *p.BaseModelID == "" && !id.actor.IsAdmin() {
		return errorf(http.StatusForbidden, msgOverrideAdmin)
	}
	if f.Name != nil {
		if err := required("name", *f.Name); err != nil {
			return err
		}
		p.Name = f.Name
	}
	if p.Meta, err = normalizeMeta(f.Meta); err != nil {
		return err
	}
	if p.Params, err = normalizeParams(f.Params); err != nil {
		return err
	}
	p.IsActive = f.IsActive
	grants, err := f.grants()
	if err != nil {
		return err
	}
	p.Grants = s.filterGrants(id, grants)
	m, err := s.store.UpdateModel(r.Context(), id.actor, modelID, p)
	if err != nil {
		return modelWriteError(err, errorf(http.StatusBadRequest, msgAccessProhibited))
	}
	s.recordChanged()
	return ok(w, modelRecord(m))
}

// handleToggleModelRecord is POST /api/v1/models/model/toggle?id= .
func (s *Server) handleToggleModelRecord(w http.ResponseWriter, r *http.Request) error {
	modelID := r.URL.Query().Get("id")
	if err := required("id", modelID); err != nil {
		return err
	}
	m, err := s.store.ToggleModel(r.Context(), actor(r), modelID)
	if err != nil {
		return modelWriteError(err, errorf(http.StatusUnauthorized, msgUnauthorized))
	}
	s.recordChanged()
	return ok(w, modelRecord(m))
}

// handleDeleteModelRecord is POST /api/v1/models/model/delete {id} (or
// ?id=): true.
func (s *Server) handleDeleteModelRecord(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ID string `json:"id"`
	}
	if r.URL.Query().Get("id") == "" {
		if err := decode(r, &body); err != nil {
			return err
		}
	}
	modelID := queryOrBodyID(r, body.ID)
	if err := required("id", modelID); err != nil {
		return err
	}
	if err := s.store.DeleteModel(r.Context(), actor(r), modelID); err != nil {
		return modelWriteError(err, errorf(http.StatusUnauthorized, msgUnauthorized))
	}
	s.recordChanged()
	return ok(w, true)
}

// handleUpdateModelAccess is POST /api/v1/models/model/access/update {id,
// name?, access_grants}. A provider model has no record yet: an admin's
// call creates a minimal one to hold the grants (as Open WebUI does);
// anyone else gets 403. Refused: 400 ACCESS_PROHIBITED.
func (s *Server) handleUpdateModelAccess(w http.ResponseWriter, r *http.Request) error {
	id := ident(r)
	var f modelForm
	if err := decode(r, &f); err != nil {
		return err
	}
	if err := required("id", f.ID); err != nil {
		return err
	}
	grants, err := f.grants()
	if err != nil {
		return err
	}
	if grants == nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "access_grants")
	}
	grants = s.filterGrants(id, grants)
	ctx := r.Context()
	m, err := s.store.SetModelGrants(ctx, id.actor, f.ID, *grants)
	if errors.Is(err, store.ErrNotFound) {
		if !id.actor.IsAdmin() {
			return errorf(http.StatusForbidden, msgAccessProhibited)
		}
		name := f.ID
		if f.Name != nil && *f.Name != "" {
			name = *f.Name
		}
		m, err = s.store.CreateModel(ctx, id.actor, store.Model{ID: f.ID, Name: name, Meta: defaultModelMeta,
			Params: json.RawMessage("{}"), IsActive: true, Grants: *grants})
		if errors.Is(err, store.ErrConflict) { // created meanwhile
			m, err = s.store.SetModelGrants(ctx, id.actor, f.ID, *grants)
		}
	}
	if err != nil {
		return modelWriteError(err, errorf(http.StatusBadRequest, msgAccessProhibited))
	}
	s.recordChanged()
	return ok(w, modelRecord(m))
}

// ---- /api/v1/configs/models ----

var modelsConfigVars = []string{"DEFAULT_MODELS", "DEFAULT_PINNED_MODELS", "DEFAULT_MODEL_METADATA", "DEFAULT_MODEL_PARAMS"}

// modelsConfig is the GET payload. MODEL_ORDER_LIST is always [] (Hearth
// sorts the list by name and does not store an order yet).
func (s *Server) modelsConfig() map[string]any {
	out := map[string]any{"MODEL_ORDER_LIST": []string{}}
	for _, name := range modelsConfigVars {
		out[name], _ = s.settings.Value(name)
	}
	return out
}

// handleGetModelsConfig is GET /api/v1/configs/models.
func (s *Server) handleGetModelsConfig(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.modelsConfig())
}

// handleSetModelsConfig is POST /api/v1/configs/models: the given keys in
// one all-or-nothing Set (null clears); MODEL_ORDER_LIST is accepted and
// ignored.
func (s *Server) handleSetModelsConfig(w http.ResponseWriter, r *http.Request) error {
	var body map[string]any
	if err := decode(r, &body); err != nil {
		return err
	}
	if err := unknownKeys(body, func(k string) bool { return k == "MODEL_ORDER_LIST" || slices.Contains(modelsConfigVars, k) }); err != nil {
		return err
	}
	delete(body, "MODEL_ORDER_LIST")
	if err := s.applySettings(r, body, http.StatusUnprocessableEntity); err != nil {
		return err
	}
	return ok(w, s.modelsConfig())
}
