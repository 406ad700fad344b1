package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"hearth/chat"
	"hearth/store"
)

// Messages of the knowledge routes (COMPAT.md §1.3, SPEC.md §7).
const (
	msgEmptyContent = "The content provided is empty. Please ensure that there is text or data present before proceeding."
)

// knowledgePerPage is the page size of GET /api/v1/knowledge/ (COMPAT.md §8.6).
const knowledgePerPage = 30

// fileMetaJSON is Open WebUI's FileMetadataResponse: a collection's file
// without its content.
type fileMetaJSON struct {
	ID        string          `json:"id"`
	Hash      *string         `json:"hash"`
	Meta      json.RawMessage `json:"meta"`
	CreatedAt int64           `json:"created_at"`
	UpdatedAt int64           `json:"updated_at"`
}

// knowledgeJSON is KnowledgeModel plus the optional parts of
// KnowledgeResponse (files: null unless listed), KnowledgeFilesResponse
// (write_access) and KnowledgeAccessResponse (user).
type knowledgeJSON struct {
	ID           string          `json:"id"`
	UserID       string          `json:"user_id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Meta         json.RawMessage `json:"meta"`
	AccessGrants json.RawMessage `json:"access_grants"`
	CreatedAt    int64           `json:"created_at"`
	UpdatedAt    int64           `json:"updated_at"`
	Files        *[]fileMetaJSON `json:"files,omitempty"`
	User         *modelOwnerJSON `json:"user,omitempty"`
	WriteAccess  *bool           `json:"write_access,omitempty"`
}

// knowledgeRecord is the collection; withFiles adds files and write_access.
func knowledgeRecord(k store.Knowledge, withFiles bool) knowledgeJSON {
	out := knowledgeJSON{ID: k.ID, UserID: k.UserID, Name: k.Name, Description: k.Description, Meta: k.Meta,
		AccessGrants: chat.GrantsJSON(k.Grants), CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt}
	if out.Meta == nil {
		out.Meta = json.RawMessage("null")
	}
	if withFiles {
		files := make([]fileMetaJSON, len(k.Files))
		for i, f := range k.Files {
			files[i] = fileMetaJSON{ID: f.ID, Meta: f.Meta, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
			if f.Hash != "" {
				files[i].Hash = &k.Files[i].Hash
			}
		}
		out.Files = &files
		out.WriteAccess = &k.WriteAccess
	}
	return out
}

// knowledgeForm is Open WebUI's KnowledgeForm (plus the legacy
// access_control). Absent fields keep their stored value on update.
type knowledgeForm struct {
	Name          *string         `json:"name"`
	Description   *string         `json:"description"`
	Meta          json.RawMessage `json:"meta"`
	AccessGrants  *[]grantForm    `json:"access_grants"`
	AccessControl json.RawMessage `json:"access_control"`
}

// knowledgeWriteError maps a refused write: missing 400 NOT_FOUND, no
// write access 400 ACCESS_PROHIBITED (COMPAT.md §1.4 "Knowledge").
func knowledgeWriteError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusBadRequest, msgNotFound)
	case errors.Is(err, store.ErrForbidden):
		return errorf(http.StatusBadRequest, msgAccessProhibited)
	}
	return err
}

// handleCreateKnowledge is POST /api/v1/knowledge/create (admin or
// workspace.knowledge; else 401 "401 Unauthorized").
func (s *Server) handleCreateKnowledge(w http.ResponseWriter, r *http.Request) error {
	id := ident(r)
	if !id.actor.IsAdmin() && !s.allowed(id, "workspace.knowledge") {
		return errorf(http.StatusUnauthorized, msgUnauthorized)
	}
	var f knowledgeForm
	if err := decode(r, &f); err != nil {
		return err
	}
	k := store.Knowledge{Meta: f.Meta}
	if f.Name != nil {
		k.Name = *f.Name
	}
	if f.Description != nil {
		k.Description = *f.Description
	}
	if err := required("name", k.Name); err != nil {
		return err
	}
	if err := checkMetaObject(f.Meta); err != nil {
		return err
	}
	grants, err := parseGrants(f.AccessGrants, f.AccessControl)
	if err != nil {
		return err
	}
	if g := s.filterGrantsFor(id, grants, "sharing.public_knowledge"); g != nil {
		k.Grants = *g
	}
	k, err = s.store.CreateKnowledge(r.Context(), id.actor, k)
	if err != nil {
		return err
	}
	return ok(w, knowledgeRecord(k, false))
}

// checkMetaObject refuses a meta that is neither absent, null nor an object.
func checkMetaObject(raw json.RawMessage) error {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q must be an object or null", "meta")
	}
	return nil
}

// handleListKnowledge is GET /api/v1/knowledge/?page= : the collections the
// caller may read (an admin's: all under BYPASS_ADMIN_ACCESS_CONTROL), 30
// per page, each with its owner and write_access.
func (s *Server) handleListKnowledge(w http.ResponseWriter, r *http.Request) error {
	page, _, err := queryPage(r)
	if err != nil {
		return err
	}
	a := actor(r)
	items, total, err := s.store.ListKnowledge(r.Context(), a, a.IsAdmin() && s.cfg().BypassAdminAccessControl,
		knowledgePerPage, (page-1)*knowledgePerPage)
	if err != nil {
		return err
	}
	out := make([]knowledgeJSON, len(items))
	for i, k := range items {
		out[i] = knowledgeRecord(k, false)
		out[i].WriteAccess = &items[i].WriteAccess
		if o := k.Owner; o != nil {
			out[i].User = &modelOwnerJSON{ID: o.ID, Name: o.Name, Email: o.Email, Role: o.Role, ProfileImageURL: o.ProfileImageURL}
		}
	}
	return ok(w, map[string]any{"items": out, "total": total})
}

// handleGetKnowledge is GET /api/v1/knowledge/{id}: the collection with its
// files and write_access; missing 404, not readable 401.
func (s *Server) handleGetKnowledge(w http.ResponseWriter, r *http.Request) error {
	k, err := s.store.GetKnowledge(r.Context(), actor(r), r.PathValue("id"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, msgNotFound)
	case errors.Is(err, store.ErrForbidden):
		return errorf(http.StatusUnauthorized, msgAccessProhibited)
	case err != nil:
		return err
	}
	return ok(w, knowledgeRecord(k, true))
}

// handleUpdateKnowledge is POST /api/v1/knowledge/{id}/update {name,
// description, access_grants?}.
func (s *Server) handleUpdateKnowledge(w http.ResponseWriter, r *http.Request) error {
	id := ident(r)
	var f knowledgeForm
	if err := decode(r, &f); err != nil {
		return err
	}
	if f.Name != nil {
		if err := required("name", *f.Name); err != nil {
			return err
		}
	}
	if err := checkMetaObject(f.Meta); err != nil {
		return err
	}
	grants, err := parseGrants(f.AccessGrants, f.AccessControl)
	if err != nil {
		return err
	}
	k, err := s.store.UpdateKnowledge(r.Context(), id.actor, r.PathValue("id"), store.KnowledgePatch{
		Name: f.Name, Description: f.Description, Meta: f.Meta,
		Grants: s.filterGrantsFor(id, grants, "sharing.public_knowledge"),
	})
	if err != nil {
		return knowledgeWriteError(err)
	}
	return ok(w, knowledgeRecord(k, true))
}

// handleUpdateKnowledgeAccess is POST /api/v1/knowledge/{id}/access/update
// {access_grants}.
func (s *Server) handleUpdateKnowledgeAccess(w http.ResponseWriter, r *http.Request) error {
	id := ident(r)
	var f knowledgeForm
	if err := decode(r, &f); err != nil {
		return err
	}
	grants, err := parseGrants(f.AccessGrants, f.AccessControl)
	if err != nil {
		return err
	}
	if grants == nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "access_grants")
	}
	k, err := s.store.UpdateKnowledge(r.Context(), id.actor, r.PathValue("id"), store.KnowledgePatch{
		Grants: s.filterGrantsFor(id, grants, "sharing.public_knowledge"),
	})
	if err != nil {
		return knowledgeWriteError(err)
	}
	return ok(w, knowledgeRecord(k, true))
}

// handleDeleteKnowledge is DELETE /api/v1/knowledge/{id}/delete: true. The
// files stay.
func (s *Server) handleDeleteKnowledge(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteKnowledge(r.Context(), actor(r), r.PathValue("id")); err != nil {
		return knowledgeWriteError(err)
	}
	return ok(w, true)
}

type knowledgeFileForm struct {
	FileID string `json:"file_id"`
}

// handleAddKnowledgeFile is POST /api/v1/knowledge/{id}/file/add {file_id}
// (COMPAT.md §8.6): a file without extracted text (still processing,
// failed, or empty) is refused with SPEC.md §7's message.
func (s *Server) handleAddKnowledgeFile(w http.ResponseWriter, r *http.Request) error {
	var f knowledgeFileForm
	if err := decode(r, &f); err != nil {
		return err
	}
	if err := required("file_id", f.FileID); err != nil {
		return err
	}
	k, err := s.store.AddKnowledgeFile(r.Context(), actor(r), r.PathValue("id"), f.FileID)
	switch {
	case errors.Is(err, store.ErrFileNotReadable):
		return errorf(http.StatusForbidden, msgAccessProhibited)
	case errors.Is(err, store.ErrEmptyContent):
		return errorf(http.StatusBadRequest, msgEmptyContent)
	case err != nil:
		return knowledgeWriteError(err)
	}
	return ok(w, knowledgeRecord(k, true))
}

// handleRemoveKnowledgeFile is POST /api/v1/knowledge/{id}/file/remove
// {file_id} ?delete_file= (default true: the owner's or an admin's removal
// deletes the file too, as Open WebUI does).
func (s *Server) handleRemoveKnowledgeFile(w http.ResponseWriter, r *http.Request) error {
	deleteFile, err := queryBoolDefault(r, "delete_file", true)
	if err != nil {
		return err
	}
	var f knowledgeFileForm
	if err := decode(r, &f); err != nil {
		return err
	}
	if err := required("file_id", f.FileID); err != nil {
		return err
	}
	k, err := s.store.RemoveKnowledgeFile(r.Context(), actor(r), r.PathValue("id"), f.FileID, deleteFile)
	if err != nil {
		return knowledgeWriteError(err)
	}
	if deleteFile {
		s.ingest.Notify()
	}
	return ok(w, knowledgeRecord(k, true))
}
