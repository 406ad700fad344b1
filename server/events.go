package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"hearth/realtime"
	"hearth/store"
)

// eventTypes is SPEC.md §6 "External tools": the only types the event
// endpoint takes (Hearth decision 9; Open WebUI forwards any type).
var eventTypes = []string{"status", "notification", "chat:message:delta", "message", "chat:message", "replace",
	"files", "chat:message:files", "embeds", "chat:message:embeds", "source", "citation"}

// handleChatEvent is POST /api/v1/chats/{id}/messages/{message_id}/event
// (COMPAT.md §9.4): an external tool server sends one event for a message.
// The short-named types are persisted as the chat owner, then the event is
// emitted to the owner's connections. The chat must be the caller's
// (admins: any); otherwise 404 with the same body (Hearth decision 28).
// The message id is not checked, as upstream: an event for a missing
// message is only emitted. The answer is true, or false when the write
// failed (Open WebUI answers false when its emitter raises).
func (s *Server) handleChatEvent(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Type *string         `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	if body.Type == nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "type")
	}
	if d := bytes.TrimSpace(body.Data); len(d) == 0 {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "data")
	} else if d[0] != '{' {
		return errorf(http.StatusUnprocessableEntity, "Field %q must be an object", "data")
	}
	if !slices.Contains(eventTypes, *body.Type) {
		return errorf(http.StatusBadRequest, "Event type %q is not accepted here", *body.Type)
	}
	chatID, msgID := r.PathValue("id"), r.PathValue("message_id")
	owner, err := s.chatOwner(r, chatID)
	if err != nil {
		return err
	}
	ev := realtime.Event{ChatID: chatID, MessageID: msgID, Data: realtime.Data{Type: *body.Type, Data: body.Data}}
	if err := s.hub.PersistAndEmit(r.Context(), owner, ev); err != nil {
		s.log.ErrorContext(r.Context(), "persisting a chat event failed", slog.String("request_id", requestID(r)),
			slog.String("type", *body.Type), slog.Any("err", err))
		return ok(w, false)
	}
	return ok(w, true)
}

// chatOwner returns the owner of a chat the caller may post events to: its
// own, or any for an admin. Otherwise 404 (same answer for both).
func (s *Server) chatOwner(r *http.Request, chatID string) (string, error) {
	a := actor(r)
	ctx := r.Context()
	_, err := s.store.ChatPinned(ctx, a, chatID) // one indexed row: is it the caller's?
	if err == nil {
		return a.UserID, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	if a.IsAdmin() {
		rec, err := s.store.GetChat(ctx, a, chatID, true)
		if err == nil {
			return rec.UserID, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	return "", errorf(http.StatusNotFound, msgNotFound)
}
