package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hearth/store"
)

// recordedResponse is the response half of a recorded .http fixture
// (llm/testdata/fixtures: the bytes a real Ollama 0.17.4 sent).
type recordedResponse struct {
	status int
	header http.Header
	body   []byte
}

func loadResponse(t testing.TB, name string) recordedResponse {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "llm", "testdata", "fixtures", "ollama-0.17.4", name))
	if err != nil {
		t.Fatal(err)
	}
	_, resp, ok := bytes.Cut(data, []byte("\n\n### response\n"))
	if !ok {
		t.Fatalf("%s: no response section", name)
	}
	head, body, _ := bytes.Cut(resp, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	f := strings.Fields(lines[0])
	st, _ := strconv.Atoi(f[1])
	h := http.Header{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.EqualFold(k, "Content-Length") && !strings.EqualFold(k, "Date") {
			h.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return recordedResponse{st, h, body}
}

// ollamaServer is a fake Ollama speaking the recorded wire format: native
// /api/tags and the OpenAI-compatible /v1/models. It counts list requests.
type ollamaServer struct {
	*httptest.Server
	hits atomic.Int64
	auth atomic.Value // last Authorization header
}

func newOllamaServer(t testing.TB) *ollamaServer {
	t.Helper()
	tags, models := loadResponse(t, "02-tags.http"), loadResponse(t, "14-v1-models.http")
	o := &ollamaServer{}
	o.auth.Store("")
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		o.auth.Store(r.Header.Get("Authorization"))
		var rr recordedResponse
		switch r.URL.Path {
		case "/api/tags":
			rr = tags
		case "/v1/models":
			rr = models
		default:
			http.NotFound(w, r)
			return
		}
		for k, v := range rr.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rr.status)
		w.Write(rr.body)
	}))
	t.Cleanup(o.Close)
	return o
}

// hangingServer accepts requests and never answers until the test ends;
// arrived receives one value per request.
func hangingServer(t testing.TB) (*httptest.Server, chan struct{}) {
	t.Helper()
	arrived, release := make(chan struct{}, 16), make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); s.Close() })
	return s, arrived
}

// closedURL is an address nobody listens on.
func closedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

type fakeRecords struct {
	mu    sync.Mutex
	list  []store.Model
	loads int
}

func (f *fakeRecords) AllModels(ctx context.Context) ([]store.Model, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	return append([]store.Model(nil), f.list...), nil
}

func (f *fakeRecords) set(list ...store.Model) {
	f.mu.Lock()
	f.list = list
	f.mu.Unlock()
}

func newTestRegistry(cfg *RegistryConfig, recs *fakeRecords) *Registry {
	return NewRegistry(RegistryOptions{Config: func() *RegistryConfig { return cfg }, Records: recs, FetchTimeout: 2 * time.Second})
}

func modelEntries(t *testing.T, ms []*Model) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, m := range ms {
		var e map[string]any
		if err := json.Unmarshal(m.JSON, &e); err != nil {
			t.Fatalf("%s: %v in %s", m.ID, err, m.JSON)
		}
		out[m.ID] = e
	}
	return out
}

func modelIDList(ms []*Model) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

var (
	regAdmin = store.Actor{UserID: "admin", Role: "admin"}
	regAlice = store.Actor{UserID: "alice", Role: "user", Groups: []string{"staff"}}
	regBob   = store.Actor{UserID: "bob", Role: "user"}
)

func TestRegistryMergesProviderLists(t *testing.T) {
	o1, o2 := newOllamaServer(t), newOllamaServer(t)
	conns := BuildConnections(ConnectionSettings{
		EnableOllama: true, OllamaURLs: []string{o1.URL, o2.URL + "/"},
		OllamaConfigs: map[string]any{"1": map[string]any{"key": "ollama-key"}},
		EnableOpenAI:  true, OpenAIURLs: []string{o1.URL + "/v1"}, OpenAIKeys: []string{"sk-test"},
		OpenAIConfigs: map[string]any{"0": map[string]any{"prefix_id": "oai", "tags": []any{map[string]any{"name": "remote"}}}},
	})
	r := newTestRegistry(&RegistryConfig{Connections: conns, BypassAdminAccess: true}, &fakeRecords{})
	v, err := r.View(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	got := modelEntries(t, v.Visible(regAdmin))
	if len(got) != 4 {
		t.Fatalf("entries: %v", modelIDList(v.All()))
	}
	tiny := got["tiny:latest"]
	if tiny["owned_by"] != "ollama" || tiny["object"] != "model" || tiny["created"] != 0.0 || tiny["name"] != "tiny:latest" ||
		tiny["connection_type"] != "local" || tiny["loaded"] != false {
		t.Errorf("ollama entry: %v", tiny)
	}
	raw := tiny["ollama"].(map[string]any)
	if u := raw["urls"].([]any); len(u) != 2 || u[0] != 0.0 || u[1] != 1.0 {
		t.Errorf("one tag on two URLs must merge into one entry with both indexes: %v", raw["urls"])
	}
	if raw["digest"] != "b8b4a81447f30ae31567d1378bc3fde0e87103ebe1e01c50efb788ffa8e76333" {
		t.Errorf("raw tag entry not kept: %v", raw)
	}
	oai := got["oai.tiny:latest"]
	if oai["owned_by"] != "openai" || oai["urlIdx"] != 0.0 || oai["connection_type"] != "external" || oai["created"] != 1795315975.0 ||
		oai["name"] != "oai.tiny:latest" || oai["object"] != "model" {
		t.Errorf("openai entry: %v", oai)
	}
	if up := oai["openai"].(map[string]any); up["id"] != "tiny:latest" || up["owned_by"] != "library" {
		t.Errorf("raw openai entry: %v", up)
	}
	if tags, _ := json.Marshal(oai["tags"]); string(tags) != `[{"name":"remote"}]` {
		t.Errorf("connection tags: %s", tags)
	}
	for _, e := range got {
		if a, _ := json.Marshal(e["actions"]); string(a) != "[]" {
			t.Errorf("actions: %s", a)
		}
		if _, ok := e["info"]; ok {
			t.Errorf("info without a record or default metadata: %v", e)
		}
	}
	if o2.auth.Load() != "Bearer ollama-key" {
		t.Errorf("Ollama connection key not sent: %v", o2.auth.Load())
	}
	// Base list: the provider entries without access filtering.
	if n := len(v.BaseJSON()); n != 4 {
		t.Errorf("base: %d", n)
	}
}

func TestRegistryModelIDsAllowList(t *testing.T) {
	o := newOllamaServer(t)
	conns := BuildConnections(ConnectionSettings{
		EnableOllama: true, OllamaURLs: []string{o.URL},
		OllamaConfigs: map[string]any{"0": map[string]any{"model_ids": []any{"tiny-embed:latest"}}},
		EnableOpenAI:  true, OpenAIURLs: []string{o.URL + "/v1"},
		OpenAIConfigs: map[string]any{"0": map[string]any{"model_ids": []any{"gpt-x"}, "prefix_id": "p"}},
	})
	r := newTestRegistry(&RegistryConfig{Connections: conns, BypassAdminAccess: true}, &fakeRecords{})
	v, err := r.View(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(modelIDList(v.All()), ","); got != "p.gpt-x,tiny-embed:latest" {
		t.Fatalf("allow-lists: %s", got)
	}
	if o.hits.Load() != 1 { // only /api/tags; the OpenAI allow-list is not fetched
		t.Fatalf("%d upstream calls", o.hits.Load())
	}
}

func TestRegistryDeadUpstreams(t *testing.T) {
	good := newOllamaServer(t)
	hang, arrived := hangingServer(t)
	conns := BuildConnections(ConnectionSettings{
		EnableOllama: true, OllamaURLs: []string{closedURL(t), hang.URL, good.URL},
		EnableOpenAI: true, OpenAIURLs: []string{hang.URL + "/v1", closedURL(t) + "/v1"},
	})
	r := newTestRegistry(&RegistryConfig{Connections: conns, BypassAdminAccess: true}, &fakeRecords{})
	r.SetFetchTimeout(200 * time.Millisecond)
	start := time.Now()
	v, err := r.View(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a dead upstream stalled the list for %v", d)
	}
	<-arrived // the hanging server was asked (and then given up on)
	got := v.All()
	if len(got) != 2 {
		t.Fatalf("the live upstream's models only: %v", modelIDList(got))
	}
	tiny := modelEntries(t, got)["tiny:latest"]
	if u := tiny["ollama"].(map[string]any)["urls"].([]any); len(u) != 1 || u[0] != 2.0 {
		t.Errorf("urls: %v", u)
	}
}

func TestRegistrySharesOneFetchAndCaches(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{}, 64)
	var hits atomic.Int64
	tags := loadResponse(t, "02-tags.http")
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		w.Write(tags.body)
	}))
	defer s.Close()
	cfg := &RegistryConfig{Connections: BuildConnections(ConnectionSettings{EnableOllama: true, OllamaURLs: []string{s.URL}}), BypassAdminAccess: true}
	r := newTestRegistry(cfg, &fakeRecords{})
	var wg sync.WaitGroup
	results := make([]int, 8)
	wg.Go(func() {
		v, _ := r.View(context.Background(), false)
		results[0] = len(v.All())
	})
	<-arrived // the first caller's fetch is in flight; the others join it
	for i := 1; i < len(results); i++ {
		wg.Go(func() {
			v, _ := r.View(context.Background(), false)
			results[i] = len(v.All())
		})
	}
	close(release)
	wg.Wait()
	for i, n := range results {
		if n != 2 {
			t.Fatalf("caller %d saw %d models", i, n)
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("%d fetches for concurrent callers, want 1", hits.Load())
	}
	// Cached: no new fetch.
	r.View(context.Background(), false)
	if hits.Load() != 1 {
		t.Fatal("cache not used")
	}
	// Forced refresh fetches again.
	r.View(context.Background(), true)
	if hits.Load() != 2 {
		t.Fatalf("refresh: %d fetches", hits.Load())
	}
	// After the TTL the old list is answered at once and renewed behind it.
	now := time.Now()
	r.now = func() time.Time { return now.Add(time.Hour) }
	if v, _ := r.View(context.Background(), false); len(v.All()) != 2 {
		t.Fatal("stale list not served")
	}
	r.mu.Lock()
	c := r.inflight
	r.mu.Unlock()
	if c != nil {
		<-c.done
	}
	if hits.Load() != 3 {
		t.Fatalf("expired list not renewed: %d fetches", hits.Load())
	}
	// A change of connections waits for a fetch of the new ones.
	o := newOllamaServer(t)
	cfg2 := &RegistryConfig{Connections: BuildConnections(ConnectionSettings{EnableOllama: true, OllamaURLs: []string{o.URL}, EnableOpenAI: true, OpenAIURLs: []string{o.URL + "/v1"},
		OpenAIConfigs: map[string]any{"0": map[string]any{"prefix_id": "o"}}}), BypassAdminAccess: true}
	r.config = func() *RegistryConfig { return cfg2 }
	if v, _ := r.View(context.Background(), false); len(v.All()) != 4 {
		t.Fatalf("new connections not fetched: %v", modelIDList(v.All()))
	}
}

func TestRegistryRecordsCache(t *testing.T) {
	o := newOllamaServer(t)
	recs := &fakeRecords{}
	cfg := &RegistryConfig{Connections: BuildConnections(ConnectionSettings{EnableOllama: true, OllamaURLs: []string{o.URL}}), BypassAdminAccess: true}
	r := newTestRegistry(cfg, recs)
	ctx := context.Background()
	v1, _ := r.View(ctx, false)
	v2, _ := r.View(ctx, false)
	if v1 != v2 || recs.loads != 1 {
		t.Fatalf("view rebuilt or records reloaded: %v %d", v1 == v2, recs.loads)
	}
	recs.set(store.Model{ID: "p", Name: "P", BaseModelID: "tiny:latest", IsActive: true, UserID: "admin"})
	if v, _ := r.View(ctx, false); v.Get("p") != nil {
		t.Fatal("records reloaded without invalidation")
	}
	r.InvalidateRecords()
	if v, _ := r.View(ctx, false); v.Get("p") == nil {
		t.Fatal("record not seen after invalidation")
	}
}

func presetsFixture(t *testing.T) (*Registry, *fakeRecords, *RegistryConfig) {
	t.Helper()
	o1, o2 := newOllamaServer(t), newOllamaServer(t)
	cfg := &RegistryConfig{
		Connections: BuildConnections(ConnectionSettings{
			EnableOllama: true, OllamaURLs: []string{o1.URL, o2.URL},
			EnableOpenAI: true, OpenAIURLs: []string{o1.URL + "/v1"}, OpenAIKeys: []string{"sk-1"},
			OpenAIConfigs: map[string]any{"0": map[string]any{"prefix_id": "oai"}},
		}),
		DefaultParams:     map[string]any{"temperature": 0.7, "top_p": 0.9},
		DefaultMetadata:   map[string]any{"description": "default description", "capabilities": map[string]any{"vision": false, "usage": true}},
		BypassAdminAccess: true,
	}
	pub := []store.Grant{{PrincipalType: "user", PrincipalID: "*", Permission: "read"}}
	recs := &fakeRecords{list: []store.Model{
		// A public preset on the OpenAI connection's tiny model.
		{ID: "helper", Name: "Helper", UserID: "admin", BaseModelID: "oai.tiny:latest", IsActive: true, CreatedAt: 100,
			Params: json.RawMessage(`{"temperature":0.2,"system":"Be brief."}`),
			Meta:   json.RawMessage(`{"description":"helps","profile_image_url":"/x.png","tags":[{"name":"work"}],"capabilities":{"vision":true}}`), Grants: pub},
		// A private preset of admin's, wrapped by a public one.
		{ID: "inner", Name: "Inner", UserID: "admin", BaseModelID: "tiny", IsActive: true, CreatedAt: 101,
			Params: json.RawMessage(`{"temperature":0.1,"top_k":5,"system":"inner prompt"}`), Meta: json.RawMessage(`{}`)},
		{ID: "outer", Name: "Outer", UserID: "admin", BaseModelID: "inner", IsActive: true, CreatedAt: 102,
			Params: json.RawMessage(`{"temperature":0.3}`), Meta: json.RawMessage(`{}`), Grants: pub},
		// Alice's own preset, and one shared with her group.
		{ID: "alices", Name: "alice's", UserID: "alice", BaseModelID: "tiny-embed:latest", IsActive: true, CreatedAt: 103, Params: json.RawMessage(`{}`), Meta: json.RawMessage(`{}`)},
		{ID: "staff-only", Name: "Staff", UserID: "admin", BaseModelID: "tiny:latest", IsActive: true, CreatedAt: 104, Params: json.RawMessage(`{}`), Meta: json.RawMessage(`{}`),
			Grants: []store.Grant{{PrincipalType: "group", PrincipalID: "staff", Permission: "read"}}},
		// Broken chains: a missing base, a cycle, an inactive preset.
		{ID: "orphan", Name: "Orphan", UserID: "alice", BaseModelID: "gone", IsActive: true, CreatedAt: 105, Params: json.RawMessage(`{}`), Meta: json.RawMessage(`{}`), Grants: pub},
		{ID: "loop-a", Name: "A", UserID: "admin", BaseModelID: "loop-b", IsActive: true, CreatedAt: 106, Params: json.RawMessage(`{}`), Meta: json.RawMessage(`{}`), Grants: pub},
		{ID: "loop-b", Name: "B", UserID: "admin", BaseModelID: "loop-a", IsActive: true, CreatedAt: 107, Params: json.RawMessage(`{}`), Meta: json.RawMessage(`{}`), Grants: pub},
		{ID: "off", Name: "Off", UserID: "admin", BaseModelID: "tiny:latest", IsActive: false, CreatedAt: 108, Params: json.RawMessage(`{}`), Meta: json.RawMessage(`{}`), Grants: pub},
	}}
	return newTestRegistry(cfg, recs), recs, cfg
}

func TestResolve(t *testing.T) {
	r, recs, cfg := presetsFixture(t)
	ctx := context.Background()
	resolve := func(a store.Actor, id string) (*Target, error) { return r.Resolve(ctx, a, id) }

	// A plain provider model: admins only.
	tg, err := resolve(regAdmin, "tiny:latest")
	if err != nil || tg.UpstreamID != "tiny:latest" || tg.Conn.Kind != KindOllama || tg.OwnedBy != "ollama" || tg.System != "" {
		t.Fatalf("admin on provider model: %+v %v", tg, err)
	}
	if _, err := resolve(regAlice, "tiny:latest"); !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("user on a provider model without a record: %v", err)
	}
	if _, err := resolve(regAlice, "no-such-model"); !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("unknown: %v", err)
	}

	// A public preset: prefix stripped, params merged over the defaults,
	// system taken out.
	tg, err = resolve(regBob, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if tg.ModelID != "helper" || tg.UpstreamID != "tiny:latest" || tg.Conn.Kind != KindOpenAI || tg.Conn.Key != "sk-1" ||
		tg.System != "Be brief." || tg.Name != "Helper" || tg.OwnedBy != "openai" {
		t.Errorf("helper: %+v", tg)
	}
	if p := string(tg.Params.AppendJSON(nil)); p != `{"temperature":0.2,"top_p":0.9}` {
		t.Errorf("helper params: %s", p)
	}
	if !strings.Contains(string(tg.Meta), `"helps"`) {
		t.Errorf("meta: %s", tg.Meta)
	}

	// A public wrapper around a private preset: the wrapper does not open it.
	if _, err := resolve(regBob, "outer"); !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("wrapper opened a private base: %v", err)
	}
	if _, err := resolve(regBob, "inner"); !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("private preset: %v", err)
	}
	// The owner (regAdmin) goes through; the outer record's params win, the
	// inner's fill in, "tiny" means "tiny:latest".
	tg, err = resolve(regAdmin, "outer")
	if err != nil {
		t.Fatal(err)
	}
	if p := string(tg.Params.AppendJSON(nil)); p != `{"temperature":0.3,"top_p":0.9,"top_k":5}` || tg.System != "inner prompt" || tg.UpstreamID != "tiny:latest" {
		t.Errorf("outer: %s %q %+v", p, tg.System, tg)
	}
	// Granting bob read on the inner preset opens the wrapper.
	recs.mu.Lock()
	recs.list[1].Grants = []store.Grant{{PrincipalType: "user", PrincipalID: "bob", Permission: "read"}}
	recs.mu.Unlock()
	r.InvalidateRecords()
	if _, err := resolve(regBob, "outer"); err != nil {
		t.Fatalf("after the grant: %v", err)
	}

	// Own records and group grants.
	if _, err := resolve(regAlice, "alices"); err != nil {
		t.Errorf("own preset: %v", err)
	}
	if _, err := resolve(regBob, "alices"); !errors.Is(err, ErrModelNotFound) {
		t.Errorf("someone else's private preset: %v", err)
	}
	if _, err := resolve(regAlice, "staff-only"); err != nil {
		t.Errorf("group grant: %v", err)
	}
	if _, err := resolve(regBob, "staff-only"); !errors.Is(err, ErrModelNotFound) {
		t.Errorf("outside the group: %v", err)
	}

	// Broken chains.
	for _, id := range []string{"orphan", "loop-a", "off"} {
		if _, err := resolve(regAdmin, id); !errors.Is(err, ErrModelNotFound) {
			t.Errorf("%s: %v", id, err)
		}
	}

	// Ollama served by two URLs: either connection.
	seen := map[int]bool{}
	for range 64 {
		tg, _ := resolve(regAdmin, "tiny:latest")
		seen[tg.Conn.Index] = true
	}
	if !seen[0] || !seen[1] {
		t.Errorf("one URL never chosen: %v", seen)
	}

	// Admins without BYPASS_ADMIN_ACCESS_CONTROL are checked like users
	// on records, but keep provider models.
	cfg2 := *cfg
	cfg2.BypassAdminAccess = false
	r.config = func() *RegistryConfig { return &cfg2 }
	if _, err := resolve(regAdmin, "alices"); !errors.Is(err, ErrModelNotFound) {
		t.Errorf("admin without bypass on a private record: %v", err)
	}
	if _, err := resolve(regAdmin, "tiny:latest"); err != nil {
		t.Errorf("admin without bypass on a provider model: %v", err)
	}
}

func TestResolveFallbackAndBypass(t *testing.T) {
	r, _, cfg := presetsFixture(t)
	ctx := context.Background()
	fb := *cfg
	fb.CustomModelFallback, fb.DefaultModels = true, []string{"helper", "tiny:latest"}
	r.config = func() *RegistryConfig { return &fb }
	tg, err := r.Resolve(ctx, regBob, "orphan")
	if err != nil || tg.ModelID != "helper" || tg.UpstreamID != "tiny:latest" {
		t.Fatalf("fallback: %+v %v", tg, err)
	}
	// The fallback must be usable by the caller.
	fb2 := fb
	fb2.DefaultModels = []string{"inner"}
	r.config = func() *RegistryConfig { return &fb2 }
	if _, err := r.Resolve(ctx, regBob, "orphan"); !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("fallback to a private model: %v", err)
	}
	// BYPASS_MODEL_ACCESS_CONTROL: everyone may use everything.
	by := *cfg
	by.BypassModelAccess = true
	r.config = func() *RegistryConfig { return &by }
	for _, id := range []string{"tiny:latest", "inner", "outer", "alices"} {
		if _, err := r.Resolve(ctx, regBob, id); err != nil {
			t.Errorf("bypass %s: %v", id, err)
		}
	}
}

func TestViewEntriesAndVisibility(t *testing.T) {
	r, recs, cfg := presetsFixture(t)
	// An override of a provider model: renamed, restricted to staff; and an
	// inactive override that removes a provider model.
	recs.mu.Lock()
	recs.list = append(recs.list,
		store.Model{ID: "oai.tiny:latest", Name: "Remote Tiny", UserID: "admin", IsActive: true, CreatedAt: 200,
			Params: json.RawMessage(`{"system":"secret"}`), Meta: json.RawMessage(`{"tags":["x"]}`),
			Grants: []store.Grant{{PrincipalType: "group", PrincipalID: "staff", Permission: "read"}}},
		store.Model{ID: "oai.tiny-embed:latest", Name: "gone", UserID: "admin", IsActive: false, CreatedAt: 201, Params: json.RawMessage(`{}`), Meta: json.RawMessage(`{}`)},
	)
	recs.mu.Unlock()
	v, err := r.View(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	all := modelIDList(v.All())
	if v.Get("oai.tiny-embed:latest") != nil || v.Get("off") != nil {
		t.Errorf("inactive records must hide their model: %v", all)
	}
	// Sorted by name.
	for i := 1; i < len(v.All()); i++ {
		if strings.ToLower(v.All()[i-1].Name) > strings.ToLower(v.All()[i].Name) {
			t.Errorf("not sorted: %v", all)
		}
	}
	e := modelEntries(t, v.All())
	helper := e["helper"]
	if helper["preset"] != true || helper["owned_by"] != "openai" || helper["connection_type"] != "external" || helper["created"] != 100.0 {
		t.Errorf("preset entry: %v", helper)
	}
	info := helper["info"].(map[string]any)
	if _, leaked := info["params"]; leaked {
		t.Errorf("params leaked into info: %v", info)
	}
	meta := info["meta"].(map[string]any)
	if meta["description"] != "helps" || meta["profile_image_url"] != nil {
		t.Errorf("meta: %v", meta)
	}
	if caps := meta["capabilities"].(map[string]any); caps["vision"] != true || caps["usage"] != true {
		t.Errorf("capabilities not merged: %v", caps)
	}
	if tags, _ := json.Marshal(helper["tags"]); string(tags) != `[{"name":"work"}]` {
		t.Errorf("tags: %s", tags)
	}
	// A provider model without a record gets the default metadata.
	if m := e["tiny:latest"]["info"].(map[string]any)["meta"].(map[string]any); m["description"] != "default description" {
		t.Errorf("default metadata: %v", m)
	}
	over := e["oai.tiny:latest"]
	if over["name"] != "Remote Tiny" || over["owned_by"] != "openai" || over["urlIdx"] != 0.0 {
		t.Errorf("override: %v", over)
	}
	if strings.Contains(string(v.Get("oai.tiny:latest").JSON), "secret") {
		t.Error("override params leaked")
	}
	if orphan := e["orphan"]; orphan["owned_by"] != "openai" || orphan["connection_type"] != nil {
		t.Errorf("preset with a missing base: %v", orphan)
	}

	vis := func(a store.Actor) string { return strings.Join(modelIDList(v.Visible(a)), ",") }
	// bob: the public records only.
	if got := vis(regBob); got != "loop-a,loop-b,helper,orphan,outer" {
		t.Errorf("bob sees %s", got)
	}
	// alice: public, her own, her group's (the staff preset and the override).
	got := vis(regAlice)
	for _, want := range []string{"alices", "staff-only", "oai.tiny:latest", "helper", "outer"} {
		if !strings.Contains(got, want) {
			t.Errorf("alice does not see %s: %s", want, got)
		}
	}
	if strings.Contains(got, "inner") || strings.Contains(got, "tiny-embed") || strings.Contains(got, ",tiny:latest") {
		t.Errorf("alice sees too much: %s", got)
	}
	if len(v.Visible(regAdmin)) != len(v.All()) {
		t.Errorf("admin with bypass sees %s", vis(regAdmin))
	}
	// Admin without BYPASS_ADMIN_ACCESS_CONTROL: provider models and own or
	// shared records, not alice's private one.
	cfg2 := *cfg
	cfg2.BypassAdminAccess = false
	r.config = func() *RegistryConfig { return &cfg2 }
	v2, _ := r.View(context.Background(), false)
	got = vis2(v2, regAdmin)
	if strings.Contains(got, "alices") || !strings.Contains(got, "tiny:latest") || !strings.Contains(got, "inner") {
		t.Errorf("admin without bypass sees %s", got)
	}
}

func vis2(v *View, a store.Actor) string { return strings.Join(modelIDList(v.Visible(a)), ",") }

// countHandler counts log records.
type countHandler struct{ n atomic.Int64 }

func (h *countHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (h *countHandler) Handle(context.Context, slog.Record) error { h.n.Add(1); return nil }
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler        { return h }
func (h *countHandler) WithGroup(string) slog.Handler             { return h }

func TestRegistryLogsDeadUpstreamOncePerMinute(t *testing.T) {
	h := &countHandler{}
	cfg := &RegistryConfig{Connections: BuildConnections(ConnectionSettings{EnableOllama: true, OllamaURLs: []string{closedURL(t)}})}
	r := NewRegistry(RegistryOptions{Config: func() *RegistryConfig { return cfg }, Records: &fakeRecords{}, Log: slog.New(h)})
	now := time.Now()
	r.now = func() time.Time { return now }
	for range 3 {
		if _, err := r.View(context.Background(), true); err != nil {
			t.Fatal(err)
		}
	}
	if h.n.Load() != 1 {
		t.Fatalf("%d log records for three failed fetches within a minute", h.n.Load())
	}
	now = now.Add(61 * time.Second)
	r.View(context.Background(), true)
	if h.n.Load() != 2 {
		t.Fatalf("%d log records after a minute", h.n.Load())
	}
}

// BenchmarkResolve is the pipeline's per-request cost of resolving a
// preset through a two-record chain with a warm cache.
func BenchmarkResolve(b *testing.B) {
	o := newOllamaServer(b)
	cfg := &RegistryConfig{Connections: BuildConnections(ConnectionSettings{EnableOllama: true, OllamaURLs: []string{o.URL}}),
		DefaultParams: map[string]any{"temperature": 0.7}}
	pub := []store.Grant{{PrincipalType: "user", PrincipalID: "*", Permission: "read"}}
	recs := &fakeRecords{list: []store.Model{
		{ID: "inner", Name: "Inner", UserID: "admin", BaseModelID: "tiny:latest", IsActive: true, Params: json.RawMessage(`{"top_k":5,"system":"s"}`), Meta: json.RawMessage(`{}`), Grants: pub},
		{ID: "outer", Name: "Outer", UserID: "admin", BaseModelID: "inner", IsActive: true, Params: json.RawMessage(`{"temperature":0.3}`), Meta: json.RawMessage(`{}`), Grants: pub},
	}}
	r := newTestRegistry(cfg, recs)
	ctx := context.Background()
	if _, err := r.Resolve(ctx, regBob, "outer"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Resolve(ctx, regBob, "outer"); err != nil {
			b.Fatal(err)
		}
	}
}
