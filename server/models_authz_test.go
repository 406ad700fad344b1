package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"

	"hearth/store"
)

// authzUpstreamURL is a fake Ollama shared by the authz rows (the rows'
// bodies are fixed strings, so its address must be known when they are
// built). It answers /api/version, /api/tags and /v1/models like Ollama
// 0.17.4 and lives until the test binary exits.
var authzUpstreamURL = sync.OnceValue(func() string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/version":
			w.Write([]byte(`{"version":"0.0.0"}`))
		case "/api/tags":
			w.Write([]byte(`{"models":[{"name":"tiny:latest","model":"tiny:latest","size":471593}]}`))
		case "/v1/models":
			w.Write([]byte(`{"object":"list","data":[{"id":"tiny:latest","object":"model","created":1795315975,"owned_by":"library"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	return s.URL
})

// withUserModel gives the fixture's user a private preset "users-model".
func withUserModel(f *fixture) {
	_, err := f.store.CreateModel(context.Background(), actorOf(f.user), store.Model{ID: "users-model", Name: "User's",
		BaseModelID: "tiny:latest", IsActive: true, Meta: json.RawMessage(`{}`), Params: json.RawMessage(`{}`)})
	if err != nil {
		f.t.Fatal(err)
	}
}

// withPublicUserModel is withUserModel, readable by everyone.
func withPublicUserModel(f *fixture) {
	withUserModel(f)
	if _, err := f.store.SetModelGrants(context.Background(), actorOf(f.user), "users-model",
		[]store.Grant{{PrincipalType: "user", PrincipalID: "*", Permission: "read"}}); err != nil {
		f.t.Fatal(err)
	}
}

func withFakeOllama(f *fixture) {
	if err := f.settings.Set(context.Background(), map[string]any{"OLLAMA_BASE_URLS": []string{authzUpstreamURL()}}); err != nil {
		f.t.Fatal(err)
	}
}

func fixedPath(p string) func(*fixture) string { return func(*fixture) string { return p } }

func authzModelsRows() []authzRow {
	up := authzUpstreamURL()
	// Owner-only writes: the owner (user) and admin pass; other is refused
	// with the route's own status (COMPAT.md §5.2).
	ownerWrite := func(otherStatus int) [5]int { return [5]int{401, 401, 200, otherStatus, 200} }
	return []authzRow{
		{pattern: "GET /api/models", setup: withFakeOllama, want: wantVerified},
		{pattern: "GET /api/v1/models", setup: withFakeOllama, want: wantVerified},
		{pattern: "GET /api/models/base", setup: withFakeOllama, want: wantAdmin},
		{pattern: "GET /api/v1/models/model", setup: withPublicUserModel, path: fixedPath("/api/v1/models/model?id=users-model"), want: wantVerified},
		{pattern: "GET /api/v1/models/list", setup: withPublicUserModel, want: wantVerified},
		// Plain users lack workspace.models by default.
		{pattern: "POST /api/v1/models/create", body: `{"id":"new-model","name":"New","base_model_id":"tiny:latest","meta":{},"params":{}}`, want: wantAdmin},
		{pattern: "POST /api/v1/models/model/update", setup: withUserModel,
			body: `{"id":"users-model","name":"Renamed","base_model_id":"tiny:latest","meta":{},"params":{}}`, want: ownerWrite(400)},
		{pattern: "POST /api/v1/models/model/toggle", setup: withUserModel, path: fixedPath("/api/v1/models/model/toggle?id=users-model"), want: ownerWrite(401)},
		{pattern: "POST /api/v1/models/model/delete", setup: withUserModel, body: `{"id":"users-model"}`, want: ownerWrite(401)},
		{pattern: "POST /api/v1/models/model/access/update", setup: withUserModel,
			body: `{"id":"users-model","access_grants":[{"principal_type":"group","principal_id":"g","permission":"read"}]}`, want: ownerWrite(400)},
		{pattern: "GET /api/v1/configs/models", want: wantAdmin},
		{pattern: "POST /api/v1/configs/models", body: `{"DEFAULT_MODELS":"tiny:latest"}`, want: wantAdmin},
		{pattern: "GET /ollama/config", want: wantAdmin},
		{pattern: "GET /runtime/config", want: wantAdmin},
		{pattern: "POST /ollama/config/update", body: `{"ENABLE_OLLAMA_API":true,"OLLAMA_BASE_URLS":["` + up + `"],"OLLAMA_API_CONFIGS":{}}`, want: wantAdmin},
		{pattern: "POST /runtime/config/update", body: `{"OLLAMA_BASE_URLS":["` + up + `"]}`, want: wantAdmin},
		{pattern: "POST /ollama/verify", body: `{"url":"` + up + `"}`, want: wantAdmin},
		{pattern: "POST /runtime/verify", body: `{"url":"` + up + `","key":""}`, want: wantAdmin},
		{pattern: "GET /openai/config", want: wantAdmin},
		{pattern: "POST /openai/config/update", body: `{"ENABLE_OPENAI_API":true,"OPENAI_API_BASE_URLS":["` + up + `/v1"],"OPENAI_API_KEYS":["k"],"OPENAI_API_CONFIGS":{}}`, want: wantAdmin},
		{pattern: "POST /openai/verify", body: `{"url":"` + up + `/v1","key":"k"}`, want: wantAdmin},
	}
}
