package server

import (
	"context"
	"net/http"

	"hearth/chat"
)

// Temporary placeholders until the real code lands; delete this file then.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}
func (s *Server) handleChatEvent(w http.ResponseWriter, r *http.Request) error {
	return errorf(501, "pending")
}

// realtimeState is the live-connection hub's state on Server (ws.go).
type realtimeState struct{}

func (s *Server) initRealtime(ctx context.Context, d Deps) error { return nil }

// emitter sends live events to users' browsers.
func (s *Server) emitter() chat.Emitter { return nil }
