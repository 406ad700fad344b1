package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"

	"hearth/auth"
	"hearth/store"
)

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxIdentity
)

// identity is the authenticated caller of a request.
type identity struct {
	user       store.User
	actor      store.Actor
	groupPerms []json.RawMessage
	viaKey     bool        // authenticated with an sk- API key
	claims     auth.Claims // set when authenticated with a JWT
}

// ident returns the caller, or nil for an anonymous request.
func ident(r *http.Request) *identity {
	id, _ := r.Context().Value(ctxIdentity).(*identity)
	return id
}

// actor returns the caller's Actor (the zero Actor when anonymous).
func actor(r *http.Request) store.Actor {
	if id := ident(r); id != nil {
		return id.actor
	}
	return store.Actor{}
}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(ctxRequestID).(string)
	return id
}

// outer wraps the whole mux: request id, timing header and panic recovery.
func (s *Server) outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := r.Header.Get("X-Request-Id")
		if rid == "" || len(rid) > 64 {
			var b [8]byte
			rand.Read(b[:])
			rid = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", rid)
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.String("request_id", rid), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				// If the handler already started the answer this is best effort.
				writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": msgInternal})
			}
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxRequestID, rid)))
	})
}

// wrap turns a route into an http.Handler: authenticate, enforce the access
// level, bound the body, run the handler, send its error to writeError.
func (s *Server) wrap(rt route) http.Handler {
	limit := rt.body
	if limit == 0 {
		limit = defaultBodyLimit
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.access == scimToken || rt.access == scimOpen {
			// SCIM never looks at user credentials: the provider's token is
			// the only way in, and no identity is attached (handlers act as
			// scimActor).
			if err := s.scimAuth(r, rt.access == scimToken); err != nil {
				s.writeError(w, r, err)
				return
			}
			if limit > 0 {
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
			if err := rt.h(w, r); err != nil {
				s.writeError(w, r, err)
			}
			return
		}
		id, err := s.authenticate(r)
		if err != nil && rt.access != public {
			s.writeError(w, r, err)
			return
		}
		if err := checkAccess(rt.access, id, err); err != nil {
			s.writeError(w, r, err)
			return
		}
		if id != nil {
			if err := s.checkKeyUse(r, id); err != nil {
				s.writeError(w, r, err)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), ctxIdentity, id))
		}
		if limit > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		if err := rt.h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// checkAccess applies the route's access level (COMPAT.md §1.2 statuses).
func checkAccess(a access, id *identity, authErr error) error {
	switch a {
	case public:
		return nil
	}
	if id == nil {
		if authErr != nil {
			return authErr
		}
		return errorf(http.StatusUnauthorized, msgNotAuthenticated)
	}
	switch a {
	case verified:
		if id.actor.Role != "user" && id.actor.Role != "admin" {
			return errorf(http.StatusUnauthorized, msgAccessProhibited)
		}
	case admin:
		if id.actor.Role != "admin" {
			return errorf(http.StatusUnauthorized, msgAccessProhibited)
		}
	}
	return nil
}

// credential picks the token of a request. Hearth's decision (COMPAT.md
// decision 30): the custom API-key header, when present, wins even over an
// Authorization header a reverse proxy uses for itself; then a Bearer
// Authorization header; then the `token` cookie.
func (s *Server) credential(r *http.Request) string {
	if h := s.cfg().CustomAPIKeyHeader; h != "" {
		if v := strings.TrimSpace(r.Header.Get(h)); v != "" {
			return v
		}
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, found := strings.Cut(strings.TrimSpace(h), " ")
		if found && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	if c, err := r.Cookie("token"); err == nil {
		return c.Value
	}
	return ""
}

// authenticate resolves the request's credential. No credential → (nil, nil).
func (s *Server) authenticate(r *http.Request) (*identity, error) {
	tok := s.credential(r)
	if tok == "" {
		return nil, nil
	}
	ctx := r.Context()
	id := &identity{}
	if auth.IsAPIKey(tok) {
		u, k, err := s.store.UserForAPIKey(ctx, auth.HashAPIKey(tok))
		if errors.Is(err, store.ErrNotFound) {
			return nil, errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		if err != nil {
			return nil, err
		}
		id.user, id.viaKey = u, true
		s.touch(k.ID, s.store.TouchAPIKey)
	} else {
		c, err := s.tokens.Verify(tok)
		if err != nil {
			return nil, errorf(http.StatusUnauthorized, msgUnauthorized)
		}
		if s.isRevoked(c.JTI) {
			return nil, errorf(http.StatusUnauthorized, "Invalid token")
		}
		u, err := s.store.UserByID(ctx, c.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		if err != nil {
			return nil, err
		}
		id.user, id.claims = u, c
		// A trusted proxy vouches for one e-mail; a token for anyone else is
		// refused (COMPAT.md §2.8).
		if h := s.cfg().TrustedEmailHeader; h != "" {
			if v := r.Header.Get(h); v != "" && !strings.EqualFold(strings.TrimSpace(v), u.Email) {
				return nil, errorf(http.StatusUnauthorized, msgUserMismatch)
			}
		}
	}
	// The account is read fresh on every request, so deactivating it (SCIM
	// DELETE or active=false, users.active = 0) ends its JWTs and API keys
	// at once, without a revocation list; live websockets re-run this
	// check (realtime recheck) and close. Reactivation makes the same
	// credentials work again, as the provider restoring access expects.
	if !id.user.Active {
		return nil, errorf(http.StatusUnauthorized, msgInvalidToken)
	}
	groups, perms, err := s.store.UserGroups(ctx, id.user.ID)
	if err != nil {
		return nil, err
	}
	id.groupPerms = perms
	id.actor = store.Actor{UserID: id.user.ID, Role: id.user.Role, Groups: groups}
	s.touch(id.user.ID, s.store.TouchUser)
	return id, nil
}

// checkKeyUse applies the API-key rules: keys must be enabled and the owner
// must hold features.api_keys (admins always do); with endpoint restrictions
// on, a key reaches only the allowed path prefixes. The same rule applies
// whichever header carried the key.
func (s *Server) checkKeyUse(r *http.Request, id *identity) error {
	if !id.viaKey {
		return nil
	}
	c := s.cfg()
	if !c.EnableAPIKeys || (!id.actor.IsAdmin() && !s.permissions(id)["features"]["api_keys"]) {
		return errorf(http.StatusForbidden, msgAPIKeyNotAllowed)
	}
	if c.EnableAPIKeysEndpointRestrictions {
		allowed := false
		for _, p := range strings.Split(c.APIKeysAllowedEndpoints, ",") {
			p = strings.TrimRight(strings.TrimSpace(p), "/")
			if p != "" && (r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/")) {
				allowed = true
				break
			}
		}
		if !allowed {
			return errorf(http.StatusForbidden, msgAccessProhibited)
		}
	}
	return nil
}

func (s *Server) isRevoked(jti string) bool {
	s.revokedMu.RLock()
	defer s.revokedMu.RUnlock()
	_, ok := s.revoked[jti]
	return ok
}

// clientIP is the peer address (proxies are not trusted for this).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
