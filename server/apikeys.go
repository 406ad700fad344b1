package server

import (
	"net/http"
	"strings"

	"hearth/auth"
	"hearth/store"
)

// legacyKeyName names the key behind Open WebUI's one-key-per-user
// endpoints (/api/v1/auths/api_key); Hearth also keeps named keys.
const legacyKeyName = "default"

// mayCreateKeys: keys enabled and (admin or features.api_keys) — COMPAT.md §2.5.
func (s *Server) mayCreateKeys(r *http.Request) error {
	id := ident(r)
	if !s.cfg().EnableAPIKeys || (!id.actor.IsAdmin() && !s.allowed(id, "features.api_keys")) {
		return errorf(http.StatusForbidden, msgAPIKeyCreation)
	}
	return nil
}

// handleCreateLegacyKey is POST /api/v1/auths/api_key: a new key replaces
// the previous one; the key is in this answer and never again.
func (s *Server) handleCreateLegacyKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayCreateKeys(r); err != nil {
		return err
	}
	key, hash, hint := auth.NewAPIKey()
	if _, err := s.store.CreateAPIKey(r.Context(), actor(r), legacyKeyName, hash, hint, true); err != nil {
		return err
	}
	return ok(w, map[string]string{"api_key": key})
}

// handleGetLegacyKey is GET /api/v1/auths/api_key. Keys are stored hashed,
// so the answer carries the hint ("sk-ab…cd12"), not the key.
func (s *Server) handleGetLegacyKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayCreateKeys(r); err != nil {
		return err
	}
	keys, err := s.store.ListAPIKeys(r.Context(), actor(r))
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Name == legacyKeyName {
			return ok(w, map[string]string{"api_key": k.Hint})
		}
	}
	return errorf(http.StatusNotFound, msgAPIKeyNotFound)
}

// handleDeleteLegacyKey is DELETE /api/v1/auths/api_key.
func (s *Server) handleDeleteLegacyKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteAPIKeysNamed(r.Context(), actor(r), legacyKeyName); err != nil {
		return err
	}
	return ok(w, true)
}

type apiKeyResponse struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Hint       string `json:"hint"`
	Key        string `json:"key,omitempty"` // only in the creation answer
	CreatedAt  int64  `json:"created_at"`
	LastUsedAt *int64 `json:"last_used_at"`
}

func keyResponse(k store.APIKey) apiKeyResponse {
	resp := apiKeyResponse{ID: k.ID, Name: k.Name, Hint: k.Hint, CreatedAt: k.CreatedAt}
	if k.LastUsedAt != 0 {
		t := k.LastUsedAt
		resp.LastUsedAt = &t
	}
	return resp
}

// handleListKeys is GET /api/v1/auths/api_keys: the caller's keys (hints only).
func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.store.ListAPIKeys(r.Context(), actor(r))
	if err != nil {
		return err
	}
	out := make([]apiKeyResponse, 0, len(keys))
	for _, k := range keys {
		out = append(out, keyResponse(k))
	}
	return ok(w, out)
}

// handleCreateKey is POST /api/v1/auths/api_keys {name}: an additional named key.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayCreateKeys(r); err != nil {
		return err
	}
	var f struct {
		Name string `json:"name"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	f.Name = strings.TrimSpace(f.Name)
	if f.Name == "" || len(f.Name) > 100 {
		return errorf(http.StatusUnprocessableEntity, `Field "name" is required (at most 100 characters)`)
	}
	key, hash, hint := auth.NewAPIKey()
	k, err := s.store.CreateAPIKey(r.Context(), actor(r), f.Name, hash, hint, false)
	if err != nil {
		return err
	}
	resp := keyResponse(k)
	resp.Key = key
	return ok(w, resp)
}

// handleDeleteKey is DELETE /api/v1/auths/api_keys/{id}: revokes one of the
// caller's keys; another user's key id is the same 404 as a missing one.
func (s *Server) handleDeleteKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteAPIKey(r.Context(), actor(r), r.PathValue("id")); err != nil {
		return err
	}
	return ok(w, true)
}
