package server

import (
	"net/http"
	"testing"
)

// Overlapping patterns resolve by table order, as FastAPI's do.
func TestOverlappingRoutesResolveByOrder(t *testing.T) {
	f := newFixture(t, nil)
	hit := func(name string) handlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			return ok(w, map[string]string{"route": name, "a": r.PathValue("sid") + r.PathValue("id")})
		}
	}
	f.srv.routes = append(f.srv.routes,
		route{pattern: "GET /api/v1/x/share/{sid}", access: public, h: hit("share")},
		route{pattern: "GET /api/v1/x/{id}/pinned", access: public, h: hit("pinned")},
		route{pattern: "GET /api/v1/x/{id}", access: public, h: hit("get")},
	)
	f.srv.handler = f.srv.buildMux()
	for path, want := range map[string]string{
		"/api/v1/x/share/pinned": `{"a":"pinned","route":"share"}`,
		"/api/v1/x/abc/pinned":   `{"a":"abc","route":"pinned"}`,
		"/api/v1/x/share":        `{"a":"share","route":"get"}`,
	} {
		w := f.do("GET", path, "", "")
		if w.Code != 200 || w.Body.String() != want {
			t.Errorf("GET %s: %d %s, want %s", path, w.Code, w.Body.String(), want)
		}
	}
	// A method that exists only on the second layer's pattern is still a 405.
	expect(t, f.do("POST", "/api/v1/x/abc/pinned", "", ""), 405, "Method Not Allowed")
	expect(t, f.do("GET", "/api/v1/x/a/b/c", "", ""), 404, "Not Found")
}

// A route ending in "/" matches only itself, not the paths below it.
func TestTrailingSlashRoutesAreExact(t *testing.T) {
	f := newFixture(t, nil)
	expect(t, f.do("GET", "/api/v1/groups/", f.userTok, ""), 200, "")
	expect(t, f.do("GET", "/api/v1/groups/x/y", f.userTok, ""), 404, "Not Found")
}
