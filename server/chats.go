package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"hearth/realtime"
	"hearth/store"
)

// Chats API (/api/v1/chats, COMPAT §3). Ownership is decided in the store's
// SQL; a chat that does not exist and a chat that is not the caller's get the
// same 404 (COMPAT decision 28), where Open WebUI mixes 401 and 404.
//
// Responses that carry a chat are built by hand from raw bytes
// (appendChatResponse): the chat object comes assembled from the store and
// is spliced in as is, so message bodies are never decoded or re-encoded on
// the read path and reach the client byte for byte as they were sent.

// chatsPerPage is Open WebUI's page size for the chat lists.
const chatsPerPage = 60

// chatErr turns the store's refusals of bad input into 422s.
func chatErr(err error) error {
	if errors.Is(err, store.ErrInvalid) {
		return errorf(http.StatusUnprocessableEntity, "%s", strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": "))
	}
	return err
}

// appendChatResponse appends Open WebUI's ChatResponse (COMPAT §3.3).
func appendChatResponse(b []byte, rec *store.ChatRecord) []byte {
	b = appendChatHead(b, rec)
	b = append(b, rec.Chat...)
	return appendChatTail(b, rec)
}

// appendChatHead is the ChatResponse up to the chat object.
func appendChatHead(b []byte, rec *store.ChatRecord) []byte {
	b = append(b, `{"id":`...)
	b = store.AppendJSONString(b, rec.ID)
	b = append(b, `,"user_id":`...)
	b = store.AppendJSONString(b, rec.UserID)
	b = append(b, `,"title":`...)
	b = store.AppendJSONString(b, rec.Title)
	return append(b, `,"chat":`...)
}

// appendChatTail is the ChatResponse after the chat object.
func appendChatTail(b []byte, rec *store.ChatRecord) []byte {
	b = append(b, `,"updated_at":`...)
	b = strconv.AppendInt(b, rec.UpdatedAt, 10)
	b = append(b, `,"created_at":`...)
	b = strconv.AppendInt(b, rec.CreatedAt, 10)
	b = append(b, `,"share_id":`...)
	b = appendNullString(b, rec.ShareID)
	b = append(b, `,"archived":`...)
	b = strconv.AppendBool(b, rec.Archived)
	b = append(b, `,"pinned":`...)
	b = strconv.AppendBool(b, rec.Pinned)
	b = append(b, `,"meta":`...)
	b = append(b, rec.Meta...)
	b = append(b, `,"folder_id":`...)
	b = appendNullString(b, rec.FolderID)
	b = append(b, `,"tasks":null,"summary":null,"last_read_at":`...)
	if rec.LastReadAt != nil {
		b = strconv.AppendInt(b, *rec.LastReadAt, 10)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return store.AppendJSONString(b, s)
}

// respondChat answers with one chat. The chat object is written as the
// store assembled it, without another copy into a response buffer.
func respondChat(w http.ResponseWriter, rec store.ChatRecord) error {
	head := appendChatHead(make([]byte, 0, 256), &rec)
	tail := appendChatTail(make([]byte, 0, 256+len(rec.Meta)), &rec)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(rec.Chat)+len(tail)))
	w.WriteHeader(http.StatusOK)
	w.Write(head)
	w.Write(rec.Chat)
	w.Write(tail)
	return nil
}

// respondStoredChat reads a chat back and answers with it; every write
// endpoint answers with the whole chat, as upstream.
func (s *Server) respondStoredChat(w http.ResponseWriter, r *http.Request, id string, adminAccess bool) error {
	rec, err := s.store.GetChat(r.Context(), actor(r), id, adminAccess)
	if err != nil {
		return err
	}
	return respondChat(w, rec)
}

// streamChats writes chats as a JSON array or as NDJSON (one ChatResponse
// per line), one chat at a time, flushing every 100. An error before the
// first byte goes to the error exit; after it, the connection is aborted so
// the client sees a truncated answer rather than a well-formed partial one.
func (s *Server) streamChats(w http.ResponseWriter, r *http.Request, ndjson bool, each func(fn func(*store.ChatRecord) error) error) error {
	started, clientGone := false, false
	n := 0
	var buf []byte
	flusher, _ := w.(http.Flusher)
	start := func() {
		if ndjson {
			w.Header().Set("Content-Type", "application/x-ndjson")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(http.StatusOK)
		if !ndjson {
			w.Write([]byte{'['})
		}
		started = true
	}
	err := each(func(rec *store.ChatRecord) error {
		if !started {
			start()
		}
		buf = buf[:0]
		if !ndjson && n > 0 {
			buf = append(buf, ',')
		}
		buf = appendChatResponse(buf, rec)
		if ndjson {
			buf = append(buf, '\n')
		}
		n++
		if _, err := w.Write(buf); err != nil {
			clientGone = true
			return err
		}
		if n%100 == 0 && flusher != nil {
			flusher.Flush()
		}
		return nil
	})
	switch {
	case err != nil && !started:
		return err
	case err != nil:
		if !clientGone {
			s.log.ErrorContext(r.Context(), "chat stream failed", slog.String("path", r.URL.Path),
				slog.String("request_id", requestID(r)), slog.Any("err", err))
			panic(http.ErrAbortHandler)
		}
		return nil
	}
	if !started {
		start()
	}
	if !ndjson {
		w.Write([]byte{']'})
	}
	return nil
}

// chatListItem is Open WebUI's ChatTitleIdResponse.
type chatListItem struct {
	ID         string  `json:"id"`
	Title      string  `json:"title"`
	UpdatedAt  int64   `json:"updated_at"`
	CreatedAt  int64   `json:"created_at"`
	LastReadAt *int64  `json:"last_read_at"`
	Snippet    *string `json:"snippet"`
}

func respondList(w http.ResponseWriter, items []store.ChatListItem) error {
	out := make([]chatListItem, 0, len(items))
	for _, it := range items {
		out = append(out, chatListItem{ID: it.ID, Title: it.Title, UpdatedAt: it.UpdatedAt, CreatedAt: it.CreatedAt,
			LastReadAt: it.LastReadAt, Snippet: it.Snippet})
	}
	return ok(w, out)
}

// queryPage reads ?page= (1-based). present is false when it is absent; a
// value that is not an integer is a 422 (FastAPI's answer); 0 and below
// count as 1.
func queryPage(r *http.Request) (page int, present bool, err error) {
	p := r.URL.Query().Get("page")
	if p == "" {
		return 1, false, nil
	}
	n, convErr := strconv.Atoi(p)
	if convErr != nil {
		return 0, false, errorf(http.StatusUnprocessableEntity, "Query parameter \"page\" must be an integer")
	}
	return max(n, 1), true, nil
}

// queryBool reads a boolean query parameter the way FastAPI does.
func queryBool(r *http.Request, name string) (bool, error) {
	switch strings.ToLower(r.URL.Query().Get(name)) {
	case "":
		return false, nil
	case "1", "true", "t", "yes", "y", "on":
		return true, nil
	case "0", "false", "f", "no", "n", "off":
		return false, nil
	}
	return false, errorf(http.StatusUnprocessableEntity, "Query parameter %q must be a boolean", name)
}

// chatQuery reads ?page=&query=&order_by=&direction= of the archived, shared
// and per-user lists (page defaults to 1; 60 per page).
func chatQuery(r *http.Request) (store.ChatQuery, error) {
	page, _, err := queryPage(r)
	if err != nil {
		return store.ChatQuery{}, err
	}
	q := r.URL.Query()
	return store.ChatQuery{Query: q.Get("query"), OrderBy: q.Get("order_by"), Direction: q.Get("direction"),
		Limit: chatsPerPage, Offset: (page - 1) * chatsPerPage}, nil
}

// chatForm is Open WebUI's ChatForm: {chat: object, folder_id?: str}.
type chatForm struct {
	Chat     json.RawMessage `json:"chat"`
	FolderID *string         `json:"folder_id"`
}

// parseChatField checks the chat member and splits it. A missing or null
// chat, or one that is not an object, is a 422; so are the bad shapes
// store.ParseChat refuses. Nothing is written before this succeeds.
func parseChatField(raw json.RawMessage, field string) (*store.ChatPatch, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q is required", field)
	}
	if raw[0] != '{' {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q must be an object", field)
	}
	p, err := store.ParseChat(raw)
	if err != nil {
		return nil, chatErr(err)
	}
	return p, nil
}

// handleCreateChat is POST /api/v1/chats/new: a new chat of the caller.
// Mirrors Open WebUI: id is a new uuid, title is chat.title or "New Chat",
// the chat object is stored as sent; a folder that is not the caller's is 404.
func (s *Server) handleCreateChat(w http.ResponseWriter, r *http.Request) error {
	var f chatForm
	if err := decode(r, &f); err != nil {
		return err
	}
	p, err := parseChatField(f.Chat, "chat")
	if err != nil {
		return err
	}
	nc := store.NewChat{Chat: p}
	if f.FolderID != nil {
		nc.FolderID = *f.FolderID
	}
	id, err := s.store.CreateChat(r.Context(), actor(r), nc)
	if err != nil {
		return chatErr(err)
	}
	return s.respondStoredChat(w, r, id, false)
}

// handleListChats is GET /api/v1/chats/ and /list.
func (s *Server) handleListChats(w http.ResponseWriter, r *http.Request) error {
	page, paged, err := queryPage(r)
	if err != nil {
		return err
	}
	f := store.ChatListFilter{}
	if f.IncludePinned, err = queryBool(r, "include_pinned"); err != nil {
		return err
	}
	if f.IncludeFolders, err = queryBool(r, "include_folders"); err != nil {
		return err
	}
	if paged {
		f.Limit, f.Offset = chatsPerPage, (page-1)*chatsPerPage
	}
	items, err := s.store.ListChats(r.Context(), actor(r), f)
	if err != nil {
		return err
	}
	return respondList(w, items)
}

// handleListPinnedChats is GET /api/v1/chats/pinned.
func (s *Server) handleListPinnedChats(w http.ResponseWriter, r *http.Request) error {
	items, err := s.store.ListPinnedChats(r.Context(), actor(r))
	if err != nil {
		return err
	}
	return respondList(w, items)
}

// handleListArchivedChats is GET /api/v1/chats/archived.
func (s *Server) handleListArchivedChats(w http.ResponseWriter, r *http.Request) error {
	q, err := chatQuery(r)
	if err != nil {
		return err
	}
	items, err := s.store.ListArchivedChats(r.Context(), actor(r), q)
	if err != nil {
		return err
	}
	return respondList(w, items)
}

// handleCountArchivedChats is GET /api/v1/chats/archived/count → int.
func (s *Server) handleCountArchivedChats(w http.ResponseWriter, r *http.Request) error {
	n, err := s.store.CountArchivedChats(r.Context(), actor(r))
	if err != nil {
		return err
	}
	return ok(w, n)
}

// sharedChatResponse is Open WebUI's SharedChatResponse (id = the chat id).
type sharedChatResponse struct {
	ID        string `json:"id"`
	ChatID    string `json:"chat_id"`
	Title     string `json:"title"`
	ShareID   string `json:"share_id"`
	UpdatedAt int64  `json:"updated_at"`
	CreatedAt int64  `json:"created_at"`
}

// handleListSharedChats is GET /api/v1/chats/shared.
func (s *Server) handleListSharedChats(w http.ResponseWriter, r *http.Request) error {
	q, err := chatQuery(r)
	if err != nil {
		return err
	}
	items, err := s.store.ListSharedChats(r.Context(), actor(r), q)
	if err != nil {
		return err
	}
	out := make([]sharedChatResponse, 0, len(items))
	for _, it := range items {
		out = append(out, sharedChatResponse{ID: it.ChatID, ChatID: it.ChatID, Title: it.Title, ShareID: it.ShareID,
			UpdatedAt: it.UpdatedAt, CreatedAt: it.CreatedAt})
	}
	return ok(w, out)
}

// handleSearchChats is GET /api/v1/chats/search?text=&page= (text is
// required, as in FastAPI). Unlike upstream, a tag:x search that finds
// nothing does not delete tag x; orphan tags are removed when chats are.
func (s *Server) handleSearchChats(w http.ResponseWriter, r *http.Request) error {
	if !r.URL.Query().Has("text") {
		return errorf(http.StatusUnprocessableEntity, "Query parameter \"text\" is required")
	}
	page, _, err := queryPage(r)
	if err != nil {
		return err
	}
	items, err := s.store.SearchChats(r.Context(), actor(r), r.URL.Query().Get("text"), chatsPerPage, (page-1)*chatsPerPage)
	if err != nil {
		return err
	}
	return respondList(w, items)
}

// handleExportMyChats is GET /api/v1/chats/all: every chat of the caller as
// NDJSON, streamed.
func (s *Server) handleExportMyChats(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	return s.streamChats(w, r, true, func(fn func(*store.ChatRecord) error) error {
		return s.store.EachChat(r.Context(), a, store.MyChats, fn)
	})
}

// handleExportMyArchivedChats is GET /api/v1/chats/all/archived: the
// caller's archived chats as a JSON array (streamed).
func (s *Server) handleExportMyArchivedChats(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	return s.streamChats(w, r, false, func(fn func(*store.ChatRecord) error) error {
		return s.store.EachChat(r.Context(), a, store.MyArchivedChats, fn)
	})
}

// handleExportAllChats is GET /api/v1/chats/all/db (admin): every chat of
// the database as a JSON array (streamed); 401 when ENABLE_ADMIN_EXPORT is off.
func (s *Server) handleExportAllChats(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg().EnableAdminExport {
		return errorf(http.StatusUnauthorized, msgAccessProhibited)
	}
	a := actor(r)
	return s.streamChats(w, r, false, func(fn func(*store.ChatRecord) error) error {
		return s.store.EachChat(r.Context(), a, store.AllUsersChats, fn)
	})
}

// handleListUserChats is GET /api/v1/chats/list/user/{user_id} (admin):
// 401 when ENABLE_ADMIN_CHAT_ACCESS is off.
func (s *Server) handleListUserChats(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg().EnableAdminChatAccess {
		return errorf(http.StatusUnauthorized, msgAccessProhibited)
	}
	q, err := chatQuery(r)
	if err != nil {
		return err
	}
	items, err := s.store.ListUserChats(r.Context(), actor(r), r.PathValue("user_id"), q)
	if err != nil {
		return err
	}
	return respondList(w, items)
}

// importForm is Open WebUI's ChatsImportForm.
type importForm struct {
	Chats []struct {
		Chat      json.RawMessage `json:"chat"`
		FolderID  *string         `json:"folder_id"`
		Meta      json.RawMessage `json:"meta"`
		Pinned    *bool           `json:"pinned"`
		Archived  *bool           `json:"archived"`
		CreatedAt *int64          `json:"created_at"`
		UpdatedAt *int64          `json:"updated_at"`
	} `json:"chats"`
}

// mayImport: chat.import, or admin (clone and import; 403 as upstream's clone).
func (s *Server) mayImport(r *http.Request) error {
	if id := ident(r); !id.actor.IsAdmin() && !s.allowed(id, "chat.import") {
		return errorf(http.StatusForbidden, msgAccessProhibited)
	}
	return nil
}

// handleImportChats is POST /api/v1/chats/import: all chats or none (one
// transaction; every chat is checked before anything is written). A
// folder_id that is not the caller's is cleared. Answers ChatResponse[] of
// the new chats (new ids), streamed.
func (s *Server) handleImportChats(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayImport(r); err != nil {
		return err
	}
	var f importForm
	if err := decode(r, &f); err != nil {
		return err
	}
	if f.Chats == nil {
		return errorf(http.StatusUnprocessableEntity, "Field \"chats\" is required")
	}
	ncs := make([]store.NewChat, 0, len(f.Chats))
	for i, c := range f.Chats {
		p, err := parseChatField(c.Chat, "chats["+strconv.Itoa(i)+"].chat")
		if err != nil {
			return err
		}
		nc := store.NewChat{Chat: p, Meta: c.Meta}
		if c.FolderID != nil {
			nc.FolderID = *c.FolderID
		}
		if c.Pinned != nil {
			nc.Pinned = *c.Pinned
		}
		if c.Archived != nil {
			nc.Archived = *c.Archived
		}
		if c.CreatedAt != nil {
			nc.CreatedAt = *c.CreatedAt
		}
		if c.UpdatedAt != nil {
			nc.UpdatedAt = *c.UpdatedAt
		}
		ncs = append(ncs, nc)
	}
	f.Chats = nil
	a := actor(r)
	ids, err := s.store.ImportChats(r.Context(), a, ncs)
	if err != nil {
		return chatErr(err)
	}
	ncs = nil
	return s.streamChats(w, r, false, func(fn func(*store.ChatRecord) error) error {
		for _, id := range ids {
			rec, err := s.store.GetChat(r.Context(), a, id, false)
			if errors.Is(err, store.ErrNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				return err
			}
			if err := fn(&rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// mayDelete: chat.delete for users; admins always may (Open WebUI checks
// the permission for role user only).
func (s *Server) mayDelete(r *http.Request) error {
	if id := ident(r); !id.actor.IsAdmin() && !s.allowed(id, "chat.delete") {
		return errorf(http.StatusUnauthorized, msgAccessProhibited)
	}
	return nil
}

// handleDeleteAllChats is DELETE /api/v1/chats/: every chat of the caller.
func (s *Server) handleDeleteAllChats(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayDelete(r); err != nil {
		return err
	}
	if err := s.store.DeleteAllChats(r.Context(), actor(r)); err != nil {
		return err
	}
	return ok(w, true)
}

// handleArchiveAllChats is POST /api/v1/chats/archive/all → true.
func (s *Server) handleArchiveAllChats(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.SetAllArchived(r.Context(), actor(r), true); err != nil {
		return err
	}
	return ok(w, true)
}

// handleUnarchiveAllChats is POST /api/v1/chats/unarchive/all → true.
func (s *Server) handleUnarchiveAllChats(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.SetAllArchived(r.Context(), actor(r), false); err != nil {
		return err
	}
	return ok(w, true)
}

// handleDeleteAllShares is DELETE /api/v1/chats/share/all → true.
func (s *Server) handleDeleteAllShares(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteAllShares(r.Context(), actor(r)); err != nil {
		return err
	}
	return ok(w, true)
}

// handleGetSharedChat is GET /api/v1/chats/share/{share_id}: the snapshot
// as a ChatResponse (id and share_id = the token, user_id = the owner). The
// token is the capability: any verified user holding it may read. As
// upstream, an admin (with ENABLE_ADMIN_CHAT_ACCESS) may pass a chat id.
func (s *Server) handleGetSharedChat(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("share_id")
	rec, err := s.store.GetSharedChat(r.Context(), token)
	if errors.Is(err, store.ErrNotFound) && actor(r).IsAdmin() && s.cfg().EnableAdminChatAccess {
		rec, err = s.store.GetChat(r.Context(), actor(r), token, true)
	}
	if err != nil {
		return err
	}
	return respondChat(w, rec)
}

// handleGetChat is GET /api/v1/chats/{id}: the caller's chat, or any chat
// for an admin when ENABLE_ADMIN_CHAT_ACCESS is on.
func (s *Server) handleGetChat(w http.ResponseWriter, r *http.Request) error {
	return s.respondStoredChat(w, r, r.PathValue("id"), s.cfg().EnableAdminChatAccess)
}

// handleUpdateChat is POST /api/v1/chats/{id}: merges a partial chat into
// the caller's chat (store.UpdateChat has the rules); owner only. Answers
// the whole chat, as upstream (that answer is most of the cost of a turn on
// a long chat; the write itself touches only the messages sent).
func (s *Server) handleUpdateChat(w http.ResponseWriter, r *http.Request) error {
	var f chatForm
	if err := decode(r, &f); err != nil {
		return err
	}
	p, err := parseChatField(f.Chat, "chat")
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := s.store.UpdateChat(r.Context(), actor(r), id, p); err != nil {
		return chatErr(err)
	}
	return s.respondStoredChat(w, r, id, false)
}

// handleDeleteChat is DELETE /api/v1/chats/{id} → true. Users need
// chat.delete (else 401); admins may delete any chat.
func (s *Server) handleDeleteChat(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayDelete(r); err != nil {
		return err
	}
	if err := s.store.DeleteChat(r.Context(), actor(r), r.PathValue("id")); err != nil {
		return err
	}
	return ok(w, true)
}

// handleArchiveChat is POST /api/v1/chats/{id}/archive: toggles archived
// (and takes the chat out of its folder).
func (s *Server) handleArchiveChat(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := s.store.ArchiveChat(r.Context(), actor(r), id); err != nil {
		return err
	}
	return s.respondStoredChat(w, r, id, false)
}

// handlePinChat is POST /api/v1/chats/{id}/pin: toggles pinned.
func (s *Server) handlePinChat(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := s.store.PinChat(r.Context(), actor(r), id); err != nil {
		return err
	}
	return s.respondStoredChat(w, r, id, false)
}

// handleChatPinned is GET /api/v1/chats/{id}/pinned → bool.
func (s *Server) handleChatPinned(w http.ResponseWriter, r *http.Request) error {
	pinned, err := s.store.ChatPinned(r.Context(), actor(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(w, pinned)
}

// optionalBody decodes a JSON object body into v; an empty body counts as
// {} (clients send none for "no options").
func optionalBody(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "Request body too large (limit %d bytes)", mbe.Limit)
		}
		return errorf(http.StatusBadRequest, "Could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return decodeBytes(body, v)
}

// handleCloneChat is POST /api/v1/chats/{id}/clone {title?}: a copy of the
// caller's chat. Needs chat.import unless admin (403, as upstream).
func (s *Server) handleCloneChat(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayImport(r); err != nil {
		return err
	}
	var f struct {
		Title *string `json:"title"`
	}
	if err := optionalBody(r, &f); err != nil {
		return err
	}
	title := ""
	if f.Title != nil {
		title = *f.Title
	}
	id, err := s.store.CloneChat(r.Context(), actor(r), r.PathValue("id"), title, false)
	if err != nil {
		return err
	}
	return s.respondStoredChat(w, r, id, false)
}

// handleCloneSharedChat is POST /api/v1/chats/{id}/clone/shared: a copy of
// a share snapshot ({id} is the share token) for the caller. Hearth asks
// for chat.import here too (it creates a chat like clone and import do). As
// upstream, an admin with ENABLE_ADMIN_CHAT_ACCESS may pass a chat id.
func (s *Server) handleCloneSharedChat(w http.ResponseWriter, r *http.Request) error {
	if err := s.mayImport(r); err != nil {
		return err
	}
	token := r.PathValue("id")
	id, err := s.store.CloneSharedChat(r.Context(), actor(r), token)
	if errors.Is(err, store.ErrNotFound) && actor(r).IsAdmin() && s.cfg().EnableAdminChatAccess {
		id, err = s.store.CloneChat(r.Context(), actor(r), token, "", true)
	}
	if err != nil {
		return chatErr(err)
	}
	return s.respondStoredChat(w, r, id, false)
}

// handleShareChat is POST /api/v1/chats/{id}/share: snapshots the caller's
// chat (re-sharing refreshes the snapshot) and answers the chat with its
// share_id. Needs chat.share unless admin (401, as upstream).
func (s *Server) handleShareChat(w http.ResponseWriter, r *http.Request) error {
	if id := ident(r); !id.actor.IsAdmin() && !s.allowed(id, "chat.share") {
		return errorf(http.StatusUnauthorized, msgAccessProhibited)
	}
	id := r.PathValue("id")
	if err := s.store.ShareChat(r.Context(), actor(r), id); err != nil {
		return err
	}
	return s.respondStoredChat(w, r, id, false)
}

// handleUnshareChat is DELETE /api/v1/chats/{id}/share → true, or false
// when the chat was not shared.
func (s *Server) handleUnshareChat(w http.ResponseWriter, r *http.Request) error {
	shared, err := s.store.UnshareChat(r.Context(), actor(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(w, shared)
}

// handleUpsertMessageContent is POST /api/v1/chats/{id}/messages/{message_id}
// {content: str}: owner or admin (any chat, as upstream).
func (s *Server) handleUpsertMessageContent(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Content *string `json:"content"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	if f.Content == nil {
		return errorf(http.StatusUnprocessableEntity, "Field \"content\" is required")
	}
	id, msgID := r.PathValue("id"), r.PathValue("message_id")
	if err := s.store.UpsertMessageContent(r.Context(), actor(r), id, msgID, *f.Content); err != nil {
		return chatErr(err)
	}
	rec, err := s.store.GetChat(r.Context(), actor(r), id, true)
	if err != nil {
		return err
	}
	// The chat's owner (also when an admin edits it) sees the new text live
	// (COMPAT §3.7: chat:message {chat_id, message_id, content}).
	s.hub.Emit(rec.UserID, realtime.Event{ChatID: id, MessageID: msgID, Data: realtime.Data{Type: "chat:message",
		Data: map[string]string{"chat_id": id, "message_id": msgID, "content": *f.Content}}})
	return respondChat(w, rec)
}

// handleDeleteMessage is DELETE /api/v1/chats/{id}/messages/{message_id}:
// owner or admin; answers the chat.
func (s *Server) handleDeleteMessage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := s.store.DeleteMessage(r.Context(), actor(r), id, r.PathValue("message_id")); err != nil {
		return err
	}
	return s.respondStoredChat(w, r, id, true)
}

// handleMoveChatToFolder is POST /api/v1/chats/{id}/folder {folder_id|null}.
// A folder that is not the caller's is 404.
func (s *Server) handleMoveChatToFolder(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		FolderID *string `json:"folder_id"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	folder := ""
	if f.FolderID != nil {
		folder = *f.FolderID
	}
	id := r.PathValue("id")
	if err := s.store.MoveChatToFolder(r.Context(), actor(r), id, folder); err != nil {
		return err
	}
	return s.respondStoredChat(w, r, id, false)
}

// handleFolderChats is GET /api/v1/chats/folder/{folder_id}: ChatResponse[]
// of the caller's chats in the folder and its sub-folders (pinned and
// archived ones left out, as upstream). A folder that is not the caller's is
// 404 (upstream answers []).
func (s *Server) handleFolderChats(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	folder := r.PathValue("folder_id")
	return s.streamChats(w, r, false, func(fn func(*store.ChatRecord) error) error {
		return s.store.EachFolderChat(r.Context(), a, folder, fn)
	})
}
