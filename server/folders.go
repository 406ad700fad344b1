package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"hearth/store"
)

// folderView is Open WebUI's FolderModel.
type folderView struct {
	ID         string          `json:"id"`
	ParentID   *string         `json:"parent_id"`
	UserID     string          `json:"user_id"`
	Name       string          `json:"name"`
	Items      json.RawMessage `json:"items"`
	Meta       json.RawMessage `json:"meta"`
	Data       json.RawMessage `json:"data"`
	IsExpanded bool            `json:"is_expanded"`
	CreatedAt  int64           `json:"created_at"`
	UpdatedAt  int64           `json:"updated_at"`
}

func toFolderView(f store.Folder) folderView {
	return folderView{
		ID: f.ID, ParentID: strPtr(f.ParentID), UserID: f.UserID, Name: f.Name,
		Items: jsonOrNull(f.Items), Meta: jsonOrNull(f.Meta), Data: jsonOrNull(f.Data),
		IsExpanded: f.IsExpanded, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt,
	}
}

// folderChatView is a row of GET /api/v1/chats/folder/{folder_id}/list.
type folderChatView struct {
	Title      string `json:"title"`
	ID         string `json:"id"`
	UpdatedAt  int64  `json:"updated_at"`
	LastReadAt *int64 `json:"last_read_at"`
}

const (
	msgFolderExists    = "[ERROR: Folder already exists]"
	msgFoldersOff      = "Folders are disabled on this server (ENABLE_FOLDERS=false)."
	msgFolderCycle     = "[ERROR: A folder cannot be moved into itself or one of its sub-folders]"
	maxFolderName      = 255
	folderChatsPerPage = 10 // Open WebUI's page size of the folder chat list
)

// foldersAllowed gates every folder route: ENABLE_FOLDERS, then for
// non-admins the features.folders permission (Open WebUI answers 403
// ACCESS_PROHIBITED for both; Hearth names the switch when it is off).
func (s *Server) foldersAllowed(r *http.Request) error {
	if !s.cfg().EnableFolders {
		return errorf(http.StatusForbidden, msgFoldersOff)
	}
	if id := ident(r); !id.actor.IsAdmin() && !s.allowed(id, "features.folders") {
		return errorf(http.StatusForbidden, msgAccessProhibited)
	}
	return nil
}

// folderErr turns the store's folder refusals into Open WebUI's answers.
func folderErr(err error) error {
	switch {
	case errors.Is(err, store.ErrConflict):
		return errorf(http.StatusBadRequest, msgFolderExists)
	case errors.Is(err, store.ErrFolderCycle):
		return errorf(http.StatusBadRequest, msgFolderCycle)
	case errors.Is(err, store.ErrForbidden):
		return errorf(http.StatusForbidden, msgAccessProhibited)
	}
	return err
}

// folderName checks a folder name: not blank, bounded; it is stored trimmed.
func folderName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", errorf(http.StatusUnprocessableEntity, `Field "name" is required`)
	}
	if len(name) > maxFolderName {
		return "", errorf(http.StatusUnprocessableEntity, `Field "name" must be at most %d bytes`, maxFolderName)
	}
	return name, nil
}

// folderObject accepts an absent or null value (nil) or a JSON object.
func folderObject(field string, raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q must be an object", field)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q must be an object", field)
	}
	return b.Bytes(), nil
}

// checkFolderFiles enforces FOLDER_MAX_FILE_COUNT on data.files (COMPAT.md
// decision 24: enforced server-side; Open WebUI only reports it to the UI).
// data.files, when present, must be an array.
func (s *Server) checkFolderFiles(data json.RawMessage) error {
	if data == nil {
		return nil
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(data, &d); err != nil {
		return errorf(http.StatusUnprocessableEntity, `Field "data" must be an object`)
	}
	raw, has := d["files"]
	if !has || isNull(raw) {
		return nil
	}
	var files []json.RawMessage
	if err := json.Unmarshal(raw, &files); err != nil {
		return errorf(http.StatusUnprocessableEntity, `Field "data.files" must be an array`)
	}
	if limit, set := s.cfg().FolderMaxFileCount.Limit(); set && len(files) > limit {
		return errorf(http.StatusBadRequest, "A folder can hold at most %d files (FOLDER_MAX_FILE_COUNT); %d were given.", limit, len(files))
	}
	return nil
}

// handleListFolders is GET /api/v1/folders/: the caller's folders.
func (s *Server) handleListFolders(w http.ResponseWriter, r *http.Request) error {
	if err := s.foldersAllowed(r); err != nil {
		return err
	}
	fs, err := s.store.ListFolders(r.Context(), actor(r))
	if err != nil {
		return err
	}
	out := make([]folderView, 0, len(fs))
	for _, f := range fs {
		out = append(out, toFolderView(f))
	}
	return ok(w, out)
}

// handleCreateFolder is POST /api/v1/folders/ {name, parent_id?, data?,
// meta?}. The parent must be the caller's folder (else 404); a name taken
// under the same parent, ignoring case, is 400 "Folder already exists".
func (s *Server) handleCreateFolder(w http.ResponseWriter, r *http.Request) error {
	if err := s.foldersAllowed(r); err != nil {
		return err
	}
	var f struct {
		Name     string          `json:"name"`
		ParentID *string         `json:"parent_id"`
		Data     json.RawMessage `json:"data"`
		Meta     json.RawMessage `json:"meta"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	nf := store.NewFolder{}
	var err error
	if nf.Name, err = folderName(f.Name); err != nil {
		return err
	}
	if f.ParentID != nil {
		nf.ParentID = *f.ParentID
	}
	if nf.Data, err = folderObject("data", f.Data); err != nil {
		return err
	}
	if nf.Meta, err = folderObject("meta", f.Meta); err != nil {
		return err
	}
	if err := s.checkFolderFiles(nf.Data); err != nil {
		return err
	}
	folder, err := s.store.CreateFolder(r.Context(), actor(r), nf)
	if err != nil {
		return folderErr(err)
	}
	return ok(w, toFolderView(folder))
}

// handleGetFolder is GET /api/v1/folders/{id}: one of the caller's folders.
func (s *Server) handleGetFolder(w http.ResponseWriter, r *http.Request) error {
	if err := s.foldersAllowed(r); err != nil {
		return err
	}
	f, err := s.store.GetFolder(r.Context(), actor(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(w, toFolderView(f))
}

// handleUpdateFolder is POST /api/v1/folders/{id}/update {name?, data?,
// meta?}: rename and/or merge data and meta (top-level keys, as upstream).
func (s *Server) handleUpdateFolder(w http.ResponseWriter, r *http.Request) error {
	if err := s.foldersAllowed(r); err != nil {
		return err
	}
	var f struct {
		Name *string         `json:"name"`
		Data json.RawMessage `json:"data"`
		Meta json.RawMessage `json:"meta"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	var p store.FolderPatch
	var err error
	if f.Name != nil {
		name, err := folderName(*f.Name)
		if err != nil {
			return err
		}
		p.Name = &name
	}
	if p.Data, err = folderObject("data", f.Data); err != nil {
		return err
	}
	if p.Meta, err = folderObject("meta", f.Meta); err != nil {
		return err
	}
	// Only files sent now are counted: an update that leaves data.files
	// alone is not refused because the limit was lowered since.
	if err := s.checkFolderFiles(p.Data); err != nil {
		return err
	}
	folder, err := s.store.UpdateFolder(r.Context(), actor(r), r.PathValue("id"), p)
	if err != nil {
		return folderErr(err)
	}
	return ok(w, toFolderView(folder))
}

// handleUpdateFolderParent is POST /api/v1/folders/{id}/update/parent
// {parent_id|null}: move the folder (null = top level). The new parent must
// be the caller's (404) and not the folder or one of its descendants (400).
func (s *Server) handleUpdateFolderParent(w http.ResponseWriter, r *http.Request) error {
	if err := s.foldersAllowed(r); err != nil {
		return err
	}
	var f struct {
		ParentID *string `json:"parent_id"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	parent := ""
	if f.ParentID != nil {
		parent = *f.ParentID
	}
	folder, err := s.store.MoveFolder(r.Context(), actor(r), r.PathValue("id"), parent)
	if err != nil {
		return folderErr(err)
	}
	return ok(w, toFolderView(folder))
}

// handleUpdateFolderExpanded is POST /api/v1/folders/{id}/update/expanded
// {is_expanded}.
func (s *Server) handleUpdateFolderExpanded(w http.ResponseWriter, r *http.Request) error {
	if err := s.foldersAllowed(r); err != nil {
		return err
	}
	var f struct {
		IsExpanded *bool `json:"is_expanded"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	if f.IsExpanded == nil {
		return errorf(http.StatusUnprocessableEntity, `Field "is_expanded" is required`)
	}
	folder, err := s.store.SetFolderExpanded(r.Context(), actor(r), r.PathValue("id"), *f.IsExpanded)
	if err != nil {
		return err
	}
	return ok(w, toFolderView(folder))
}

// folderBoolParam reads a boolean query parameter the way FastAPI does (true/
// false, 1/0, yes/no, on/off, any case); absent → def, anything else 422.
func folderBoolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on", "t", "y":
		return true, nil
	case "false", "0", "no", "off", "f", "n":
		return false, nil
	}
	return false, errorf(http.StatusUnprocessableEntity, "Query parameter %q must be a boolean", name)
}

// handleDeleteFolder is DELETE /api/v1/folders/{id}?delete_contents=: the
// folder and all its sub-folders go; with delete_contents (default true, as
// upstream) their chats are deleted — which needs chat.delete for
// non-admins (403) — else the chats move to the top level. Answers true.
func (s *Server) handleDeleteFolder(w http.ResponseWriter, r *http.Request) error {
	if err := s.foldersAllowed(r); err != nil {
		return err
	}
	withContents, err := folderBoolParam(r, "delete_contents", true)
	if err != nil {
		return err
	}
	id := ident(r)
	mayDelete := id.actor.IsAdmin() || s.allowed(id, "chat.delete")
	if err := s.store.DeleteFolder(r.Context(), id.actor, r.PathValue("id"), withContents, mayDelete); err != nil {
		return folderErr(err)
	}
	return ok(w, true)
}

// handleFolderChatList is GET /api/v1/chats/folder/{folder_id}/list?page=:
// 10 of the caller's chats in that folder per page (not archived, not
// pinned, newest first). Another user's folder is 404 (Open WebUI answers
// an empty list). Not gated by ENABLE_FOLDERS: it is a chats route upstream.
func (s *Server) handleFolderChatList(w http.ResponseWriter, r *http.Request) error {
	page := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return errorf(http.StatusUnprocessableEntity, `Query parameter "page" must be an integer`)
		}
		page = min(max(n, 1), 1<<31) // bounded so the offset cannot overflow
	}
	cs, err := s.store.FolderChats(r.Context(), actor(r), r.PathValue("folder_id"), (page-1)*folderChatsPerPage, folderChatsPerPage)
	if err != nil {
		return err
	}
	out := make([]folderChatView, 0, len(cs))
	for _, c := range cs {
		out = append(out, folderChatView{Title: c.Title, ID: c.ID, UpdatedAt: c.UpdatedAt, LastReadAt: c.LastReadAt})
	}
	return ok(w, out)
}
