package server

import (
	"net/http"
	"strings"
)

// access is a route's authorization level.
type access int

const (
	public   access = iota // no credential needed (one is still read when present)
	anyRole                // signed in, pending included
	verified               // user or admin
	admin                  // admin only
	// scimToken is the SCIM provisioning API: SCIM_ENABLED and the
	// SCIM_TOKEN bearer; user credentials (JWT, API key) do not count.
	scimToken
	// scimOpen is SCIM discovery: SCIM_ENABLED, no credential (Open
	// WebUI serves these documents without one).
	scimOpen
)

func (a access) String() string {
	return [...]string{"public", "any", "verified", "admin", "scim", "scim-open"}[a]
}

// handlerFunc is the shape of every handler: it returns an error to the one
// error exit instead of writing error bodies itself.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one row of the route table.
type route struct {
	pattern string // ServeMux pattern with method: "GET /api/v1/chats/{id}"
	access  access
	h       handlerFunc
	body    int64 // request body limit in bytes; 0 = defaultBodyLimit, -1 = none
}

// apiPrefixes never fall through to the web client: an unknown path under
// them is a JSON 404 (COMPAT.md decision "SPA fallback").
var apiPrefixes = []string{"/api/", "/ollama/", "/runtime/", "/oauth/", "/ws", "/health", "/docs", "/openapi.json"}

// buildMux registers the route table. ServeMux refuses two patterns that
// overlap with neither more specific, e.g. "GET /api/v1/chats/share/{share_id}"
// and "GET /api/v1/chats/{id}/pinned" (both match /api/v1/chats/share/pinned).
// Open WebUI (FastAPI) resolves such overlaps by declaration order, so Hearth
// does the same: a route that overlaps an earlier one goes into a second
// layer, consulted only when no earlier layer matches. Exact duplicates are a
// programming error and panic.
func (s *Server) buildMux() http.Handler {
	var layers []*http.ServeMux
	seen := map[string]bool{}
	for _, rt := range s.routes {
		if seen[rt.pattern] {
			panic("duplicate route " + rt.pattern)
		}
		seen[rt.pattern] = true
		h := s.wrap(rt)
		// A pattern ending in "/" would match every path below it
		// ("GET /api/v1/chats/" would swallow /api/v1/chats/x/tags); Open
		// WebUI's routes are exact, so anchor them.
		pattern := rt.pattern
		if strings.HasSuffix(pattern, "/") {
			pattern += "{$}"
		}
		placed := false
		for _, m := range layers {
			if tryHandle(m, pattern, h) {
				placed = true
				break
			}
		}
		if !placed {
			m := http.NewServeMux()
			m.Handle(pattern, h)
			layers = append(layers, m)
		}
	}
	fallback := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status := unmatched(layers, r); status != 0 {
			// Through the one error exit, so a wrong path under the SCIM
			// base gets the SCIM envelope (COMPAT.md decisions 3, 6).
			s.writeError(w, r, &apiError{status: status, detail: http.StatusText(status)})
			return
		}
		s.serveUI(w, r)
	})
	next := http.Handler(fallback)
	for i := len(layers) - 1; i >= 0; i-- {
		layers[i].Handle("/", next)
		next = layers[i]
	}
	return s.outer(next)
}

// tryHandle registers pattern on m unless it overlaps a pattern already there.
func tryHandle(m *http.ServeMux, pattern string, h http.Handler) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	m.Handle(pattern, h)
	return true
}

// unmatched decides what an unrouted request gets: 405 when the path exists
// for another method, 404 under the API prefixes, 0 to hand it to the web
// client.
func unmatched(layers []*http.ServeMux, r *http.Request) int {
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		for _, l := range layers {
			if _, pat := l.Handler(probe); pat != "/" && pat != "" {
				return http.StatusMethodNotAllowed
			}
		}
	}
	for _, p := range apiPrefixes {
		if strings.HasPrefix(r.URL.Path, p) {
			return http.StatusNotFound
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return http.StatusNotFound
	}
	return 0
}
