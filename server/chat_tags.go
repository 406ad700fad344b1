package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"hearth/store"
)

// tagView is Open WebUI's TagModel.
type tagView struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	UserID string          `json:"user_id"`
	Meta   json.RawMessage `json:"meta"`
}

func toTagViews(ts []store.Tag) []tagView {
	out := make([]tagView, 0, len(ts))
	for _, t := range ts {
		out = append(out, tagView{ID: t.ID, Name: t.Name, UserID: t.UserID, Meta: jsonOrNull(t.Meta)})
	}
	return out
}

// taggedChatView is Open WebUI's ChatTitleIdResponse as the chats-by-tag
// list answers it (snippet is only filled by search).
type taggedChatView struct {
	ID         string  `json:"id"`
	Title      string  `json:"title"`
	UpdatedAt  int64   `json:"updated_at"`
	CreatedAt  int64   `json:"created_at"`
	LastReadAt *int64  `json:"last_read_at"`
	Snippet    *string `json:"snippet"`
}

// maxTagName bounds a tag name; longer is a 422 (Open WebUI has no bound,
// but a label longer than this is a mistake, not a label).
const maxTagName = 256

// tagName reads {name} of the tag routes: required, not blank, bounded.
func tagName(r *http.Request) (string, error) {
	var f struct {
		Name *string `json:"name"`
	}
	if err := decode(r, &f); err != nil {
		return "", err
	}
	if f.Name == nil || strings.TrimSpace(*f.Name) == "" {
		return "", errorf(http.StatusUnprocessableEntity, `Field "name" is required`)
	}
	if len(*f.Name) > maxTagName {
		return "", errorf(http.StatusUnprocessableEntity, `Field "name" must be at most %d bytes`, maxTagName)
	}
	return *f.Name, nil
}

// handleChatTags is GET /api/v1/chats/{id}/tags: the tags of one of the
// caller's chats. Not the caller's chat → 404, the same as a missing one
// (COMPAT.md decision 28; Open WebUI answers 401).
func (s *Server) handleChatTags(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.store.ChatTags(r.Context(), actor(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(w, toTagViews(ts))
}

// handleAddChatTag is POST /api/v1/chats/{id}/tags {name}: tags the chat
// (creating the caller's tag when new) and answers the chat's tags.
func (s *Server) handleAddChatTag(w http.ResponseWriter, r *http.Request) error {
	name, err := tagName(r)
	if err != nil {
		return err
	}
	// Open WebUI refuses the name its UI would show as Python's None.
	if store.NormalizeTagID(name) == "none" {
		return errorf(http.StatusBadRequest, "[ERROR: Tag name cannot be 'None']")
	}
	ts, err := s.store.AddChatTag(r.Context(), actor(r), r.PathValue("id"), name)
	if err != nil {
		return err
	}
	return ok(w, toTagViews(ts))
}

// handleRemoveChatTag is DELETE /api/v1/chats/{id}/tags with a JSON body
// {name}: untags the chat, drops the tag when nothing uses it any more, and
// answers the chat's remaining tags.
func (s *Server) handleRemoveChatTag(w http.ResponseWriter, r *http.Request) error {
	name, err := tagName(r)
	if err != nil {
		return err
	}
	ts, err := s.store.RemoveChatTag(r.Context(), actor(r), r.PathValue("id"), name)
	if err != nil {
		return err
	}
	return ok(w, toTagViews(ts))
}

// handleAllTags is GET /api/v1/chats/all/tags: the caller's tags.
func (s *Server) handleAllTags(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.store.ListTags(r.Context(), actor(r))
	if err != nil {
		return err
	}
	return ok(w, toTagViews(ts))
}

// maxTagPage bounds limit of the chats-by-tag list.
const maxTagPage = 1000

// handleChatsByTag is POST /api/v1/chats/tags {name, skip=0, limit=50}: the
// caller's non-archived chats with that tag, newest first. An empty answer
// drops the tag when no chat uses it any more.
func (s *Server) handleChatsByTag(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Name  *string `json:"name"`
		Skip  *int    `json:"skip"`
		Limit *int    `json:"limit"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	if f.Name == nil || strings.TrimSpace(*f.Name) == "" {
		return errorf(http.StatusUnprocessableEntity, `Field "name" is required`)
	}
	skip, limit := 0, 50
	if f.Skip != nil {
		skip = *f.Skip
	}
	if f.Limit != nil {
		limit = *f.Limit
	}
	if skip < 0 {
		return errorf(http.StatusUnprocessableEntity, `Field "skip" must not be negative`)
	}
	if limit < 0 || limit > maxTagPage {
		return errorf(http.StatusUnprocessableEntity, `Field "limit" must be between 0 and %d`, maxTagPage)
	}
	cs, err := s.store.ChatsByTag(r.Context(), actor(r), *f.Name, skip, limit)
	if err != nil {
		return err
	}
	out := make([]taggedChatView, 0, len(cs))
	for _, c := range cs {
		out = append(out, taggedChatView{ID: c.ID, Title: c.Title, UpdatedAt: c.UpdatedAt, CreatedAt: c.CreatedAt, LastReadAt: c.LastReadAt})
	}
	return ok(w, out)
}
