package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// runtimeAuthzUpstreamURL is a fake Ollama for the runtime rows: version,
// tags and ps like Ollama 0.17.4, {"status":"success"} for anything else.
var runtimeAuthzUpstreamURL = sync.OnceValue(func() string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/version":
			w.Write([]byte(`{"version":"0.0.0"}`))
		case "/api/tags":
			w.Write([]byte(`{"models":[{"name":"tiny:latest","model":"tiny:latest","size":471593}]}`))
		case "/api/ps":
			w.Write([]byte(`{"models":[]}`))
		default:
			w.Write([]byte(`{"status":"success"}`))
		}
	}))
	return s.URL
})

func withRuntimeOllama(f *fixture) {
	if err := f.settings.Set(context.Background(), map[string]any{"OLLAMA_BASE_URLS": []string{runtimeAuthzUpstreamURL()}}); err != nil {
		f.t.Fatal(err)
	}
}

// authzRuntimeRows covers every route of runtimeRoutes under both
// prefixes. Model routes name a provider model nobody has a grant for:
// plain users get the 400 "not found" of the access check.
func authzRuntimeRows() []authzRow {
	modelRoute := [5]int{401, 401, 400, 400, 200}
	type spec struct {
		pattern string // without the prefix
		body    string
		want    [5]int
		idx     bool
	}
	specs := []spec{
		{"GET /", "", wantPublic, false},
		{"GET /api/ps", "", wantAdmin, false},
		{"POST /api/show", `{"model":"tiny:latest"}`, modelRoute, false},
		{"POST /api/unload", `{"model":"tiny:latest"}`, wantAdmin, false},
		{"GET /api/version", "", wantPublic, true},
		{"GET /api/tags", "", wantVerified, true},
		{"POST /api/generate", `{"model":"tiny:latest","prompt":"hi"}`, modelRoute, true},
		{"POST /api/chat", `{"model":"tiny:latest","messages":[]}`, modelRoute, true},
		{"POST /api/embed", `{"model":"tiny:latest","input":"hi"}`, modelRoute, true},
		{"POST /api/embeddings", `{"model":"tiny:latest","prompt":"hi"}`, modelRoute, true},
		{"POST /v1/chat/completions", `{"model":"tiny:latest","messages":[]}`, modelRoute, true},
		{"POST /v1/completions", `{"model":"tiny:latest","prompt":"hi"}`, modelRoute, true},
		{"POST /v1/messages", `{"model":"tiny:latest","messages":[]}`, modelRoute, true},
		{"POST /v1/responses", `{"model":"tiny:latest","input":"hi"}`, modelRoute, true},
		{"GET /v1/models", "", wantVerified, true},
		{"POST /api/pull", `{"model":"tiny"}`, wantAdmin, true},
		{"POST /api/push", `{"model":"tiny"}`, wantAdmin, true},
		{"POST /api/create", `{"model":"tiny2","from":"tiny"}`, wantAdmin, true},
		{"POST /api/copy", `{"source":"tiny","destination":"tiny2"}`, wantAdmin, true},
		{"DELETE /api/delete", `{"model":"tiny"}`, wantAdmin, true},
	}
	var rows []authzRow
	for _, p := range runtimePrefixes {
		for _, sp := range specs {
			method, path, _ := strings.Cut(sp.pattern, " ")
			rows = append(rows, authzRow{pattern: method + " " + p + path, body: sp.body, setup: withRuntimeOllama, want: sp.want})
			if sp.idx {
				rows = append(rows, authzRow{pattern: method + " " + p + path + "/{url_idx}", path: fixedPath(p + path + "/0"),
					body: sp.body, setup: withRuntimeOllama, want: sp.want})
			}
		}
	}
	return rows
}
