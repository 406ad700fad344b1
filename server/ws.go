package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"hearth/auth"
	"hearth/chat"
	"hearth/realtime"
)

// realtimeState is the live-connection hub's state on Server.
type realtimeState struct {
	hub *realtime.Hub
}

// initRealtime builds the hub. It is closed (every connection gets close
// code 1001) when ctx ends — serve's context ends at SIGINT/SIGTERM, before
// the HTTP server drains, and http.Server.Shutdown does not wait for
// hijacked websocket connections. CloseRealtime does the same on demand.
func (s *Server) initRealtime(ctx context.Context, d Deps) error {
	s.hub = realtime.New(realtime.Options{
		Log:        s.log.With("component", "realtime"),
		Store:      d.Store,
		Auth:       wsAuth{s},
		OnActivity: func(userID string) { s.touch(userID, s.store.TouchUser) },
	})
	context.AfterFunc(ctx, func() { s.hub.Close() })
	return nil
}

// CloseRealtime closes every live connection and stops the hub.
func (s *Server) CloseRealtime() { s.hub.Close() }

// emitter sends live events to users' browsers (emit only; the hub's
// PersistAndEmit also writes the short-named types).
func (s *Server) emitter() chat.Emitter { return s.hub }

// handleWS is GET /ws: the live connection (realtime/doc.go has the frame
// format). The route is public because a browser cannot set headers on a
// websocket: the handshake's own credential (the token cookie of a
// same-origin page, or a Bearer JWT) is honoured when valid, otherwise the
// client authenticates with its first frame. Open WebUI answers a
// non-upgrade request to its socket path with this 400.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) error {
	if !realtime.ValidUpgrade(r) {
		return errorf(http.StatusBadRequest, "Invalid WebSocket upgrade request")
	}
	var userID, token string
	if id := ident(r); id != nil && !id.viaKey && (id.actor.Role == "user" || id.actor.Role == "admin") && sameOrigin(r) {
		userID, token = id.user.ID, s.credential(r)
	}
	err := s.hub.ServeWS(w, r, userID, token)
	if errors.Is(err, realtime.ErrClosed) {
		return errorf(http.StatusServiceUnavailable, "Server is shutting down")
	}
	// An upgrade failure has been answered by the upgrader; after a
	// hijack nothing can be written.
	return nil
}

// sameOrigin: no Origin (not a browser) or the page's host is ours. A
// cookie sent along by another site's page must not authenticate.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// wsAuth verifies a token sent on a live connection exactly as the HTTP
// middleware verifies a Bearer JWT (signature, expiry, revocation, user
// exists and is active, trusted e-mail header of the handshake).
type wsAuth struct{ s *Server }

func (a wsAuth) Authenticate(ctx context.Context, r *http.Request, token string) (string, error) {
	token = strings.TrimSpace(token)
	if token == "" || auth.IsAPIKey(token) {
		return "", realtime.ErrUnauthenticated
	}
	r2 := r.Clone(ctx)
	if h := a.s.cfg().CustomAPIKeyHeader; h != "" {
		r2.Header.Del(h)
	}
	r2.Header.Del("Cookie")
	r2.Header.Set("Authorization", "Bearer "+token)
	id, err := a.s.authenticate(r2)
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return "", realtime.ErrUnauthenticated
	case err != nil:
		return "", err
	case id == nil:
		return "", realtime.ErrUnauthenticated
	case id.actor.Role != "user" && id.actor.Role != "admin":
		return "", realtime.ErrForbidden
	}
	return id.user.ID, nil
}
