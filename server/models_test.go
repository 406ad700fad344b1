package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hearth/chat"
	"hearth/store"
)

// recorded is the response half of a recorded Ollama 0.17.4 exchange
// (llm/testdata/fixtures): status, content type and body, byte for byte.
type recorded struct {
	status      int
	contentType string
	body        []byte
}

func loadRecorded(t testing.TB, name string) recorded {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "llm", "testdata", "fixtures", "ollama-0.17.4", name))
	if err != nil {
		t.Fatal(err)
	}
	_, resp, ok := bytes.Cut(data, []byte("\n\n### response\n"))
	if !ok {
		t.Fatalf("%s: no response", name)
	}
	head, body, _ := bytes.Cut(resp, []byte("\n\n"))
	rec := recorded{body: body}
	for i, l := range strings.Split(string(head), "\n") {
		if i == 0 {
			fmt.Sscanf(strings.Fields(l)[1], "%d", &rec.status)
		} else if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Type") {
			rec.contentType = strings.TrimSpace(v)
		}
	}
	return rec
}

// fakeOllama serves /api/tags, /v1/models and /api/version with the
// recorded bytes and counts requests; it keeps the last Authorization
// header per path.
type fakeOllama struct {
	*httptest.Server
	hits atomic.Int64
	auth sync.Map // path → Authorization
}

func (o *fakeOllama) authFor(path string) string {
	v, _ := o.auth.Load(path)
	s, _ := v.(string)
	return s
}

func newFakeOllama(t testing.TB) *fakeOllama {
	t.Helper()
	byPath := map[string]recorded{
		"/api/tags":    loadRecorded(t, "02-tags.http"),
		"/v1/models":   loadRecorded(t, "14-v1-models.http"),
		"/api/version": loadRecorded(t, "01-version.http"),
	}
	o := &fakeOllama{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		o.auth.Store(r.URL.Path, r.Header.Get("Authorization"))
		rec, ok := byPath[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", rec.contentType)
		w.WriteHeader(rec.status)
		w.Write(rec.body)
	}))
	t.Cleanup(o.Close)
	return o
}

// hangingUpstream never answers until the test ends; arrived gets one
// value per request.
func hangingUpstream(t testing.TB) (string, chan struct{}) {
	t.Helper()
	arrived, release := make(chan struct{}, 64), make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); s.Close() })
	return s.URL, arrived
}

func closedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

// modelList decodes {"data": [...]} into id → entry.
func modelList(t *testing.T, w *httptest.ResponseRecorder) map[string]map[string]any {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var body map[string][]map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if len(body) != 1 || body["data"] == nil {
		t.Fatalf("want exactly {\"data\": [...]}: %s", w.Body)
	}
	out := map[string]map[string]any{}
	for _, e := range body["data"] {
		out[e["id"].(string)] = e
	}
	return out
}

// modelIDs lists a model list's ids, sorted, comma-separated.
func modelIDs(m map[string]map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func upstreamEnv(o *fakeOllama) map[string]string {
	return map[string]string{
		"OLLAMA_BASE_URLS":     o.URL,
		"OPENAI_API_BASE_URLS": o.URL + "/v1",
		"OPENAI_API_KEYS":      "sk-test",
		"OPENAI_API_CONFIGS":   `{"0":{"prefix_id":"oai","tags":[{"name":"remote"}]}}`,
	}
}

func TestModelsListFromUpstreams(t *testing.T) {
	o := newFakeOllama(t)
	f := newFixture(t, upstreamEnv(o))
	if o.hits.Load() != 0 {
		t.Fatal("models fetched at start-up")
	}
	all := modelList(t, f.do("GET", "/api/models", f.adminTok, ""))
	if modelIDs(all) != "oai.tiny-embed:latest,oai.tiny:latest,tiny-embed:latest,tiny:latest" {
		t.Fatalf("admin sees %s", modelIDs(all))
	}
	if e := all["tiny:latest"]; e["owned_by"] != "ollama" || e["connection_type"] != "local" ||
		fmt.Sprint(e["ollama"].(map[string]any)["urls"]) != "[0]" {
		t.Errorf("ollama entry: %v", e)
	}
	if e := all["oai.tiny:latest"]; e["owned_by"] != "openai" || e["urlIdx"] != 0.0 || fmt.Sprint(e["tags"]) != "[map[name:remote]]" {
		t.Errorf("openai entry: %v", e)
	}
	if got := o.authFor("/v1/models"); got != "Bearer sk-test" {
		t.Errorf("OpenAI connection key not sent: %q", got)
	}
	if got := modelIDs(modelList(t, f.do("GET", "/api/v1/models", f.adminTok, ""))); got != modelIDs(all) {
		t.Errorf("/api/v1/models: %s", got)
	}
	if got := modelList(t, f.do("GET", "/api/models/base", f.adminTok, "")); len(got) != 4 {
		t.Errorf("base: %s", modelIDs(got))
	}
	// A plain user sees no provider model without a record.
	if got := modelList(t, f.do("GET", "/api/models", f.userTok, "")); len(got) != 0 {
		t.Fatalf("user sees %s", modelIDs(got))
	}

	// The admin publishes a preset; the user sees it, without its params.
	w := f.do("POST", "/api/v1/models/create", f.adminTok, `{"id":"helper","name":"Helper","base_model_id":"oai.tiny:latest",
		"meta":{"description":"helps","tags":["work"]},"params":{"system":"Be brief.","temperature":0.2},
		"access_grants":[{"principal_type":"user","principal_id":"*","permission":"read"}]}`)
	expect(t, w, 200, "")
	got := modelList(t, f.do("GET", "/api/models", f.userTok, ""))
	if modelIDs(got) != "helper" {
		t.Fatalf("user sees %s", modelIDs(got))
	}
	h := got["helper"]
	if h["preset"] != true || h["owned_by"] != "openai" || h["connection_type"] != "external" || fmt.Sprint(h["tags"]) != "[map[name:work]]" {
		t.Errorf("preset entry: %v", h)
	}
	if info := h["info"].(map[string]any); info["params"] != nil || info["meta"].(map[string]any)["description"] != "helps" {
		t.Errorf("info: %v", info)
	}
	if strings.Contains(f.do("GET", "/api/models", f.userTok, "").Body.String(), "Be brief") {
		t.Error("a preset's system prompt leaked into the model list")
	}

	// The resolver serves the pipeline: prefix stripped, params and system.
	tg, err := f.srv.resolver().Resolve(context.Background(), actorOf(f.user), "helper")
	if err != nil {
		t.Fatal(err)
	}
	if tg.UpstreamID != "tiny:latest" || tg.Conn.BaseURL != o.URL+"/v1" || tg.Conn.Key != "sk-test" || tg.System != "Be brief." ||
		string(tg.Params.AppendJSON(nil)) != `{"temperature":0.2}` {
		t.Errorf("target: %+v %s", tg, tg.Params.AppendJSON(nil))
	}
	if _, err := f.srv.resolver().Resolve(context.Background(), actorOf(f.user), "tiny:latest"); !errors.Is(err, chat.ErrModelNotFound) {
		t.Errorf("user on a provider model: %v", err)
	}
}

// A user must not reach a model they may not use through a public wrapper.
func TestModelsWrapperDoesNotOpenPrivateBase(t *testing.T) {
	o := newFakeOllama(t)
	f := newFixture(t, upstreamEnv(o))
	expect(t, f.do("POST", "/api/v1/models/create", f.adminTok, `{"id":"inner","name":"Inner","base_model_id":"tiny:latest","meta":{},"params":{"system":"secret"}}`), 200, "")
	expect(t, f.do("POST", "/api/v1/models/create", f.adminTok, `{"id":"outer","name":"Outer","base_model_id":"inner","meta":{},"params":{},
		"access_grants":[{"principal_type":"user","principal_id":"*","permission":"read"}]}`), 200, "")
	if got := modelIDs(modelList(t, f.do("GET", "/api/models", f.userTok, ""))); got != "outer" {
		t.Fatalf("user sees %s", got)
	}
	res := f.srv.resolver()
	if _, err := res.Resolve(context.Background(), actorOf(f.user), "outer"); !errors.Is(err, chat.ErrModelNotFound) {
		t.Fatalf("the wrapper opened the private base: %v", err)
	}
	if tg, err := res.Resolve(context.Background(), actorOf(f.admin), "outer"); err != nil || tg.UpstreamID != "tiny:latest" || tg.System != "secret" {
		t.Fatalf("admin: %+v %v", tg, err)
	}
	// Sharing the base with the user opens the wrapper.
	expect(t, f.do("POST", "/api/v1/models/model/access/update", f.adminTok,
		fmt.Sprintf(`{"id":"inner","access_grants":[{"principal_type":"user","principal_id":%q,"permission":"read"}]}`, f.user.ID)), 200, "")
	if _, err := res.Resolve(context.Background(), actorOf(f.user), "outer"); err != nil {
		t.Fatalf("after sharing: %v", err)
	}
}

func TestModelsDeadUpstreamDoesNotStall(t *testing.T) {
	good := newFakeOllama(t)
	hang, arrived := hangingUpstream(t)
	f := newFixture(t, map[string]string{
		"OLLAMA_BASE_URLS":     closedAddr(t) + ";" + hang + ";" + good.URL,
		"OPENAI_API_BASE_URLS": hang + "/v1;" + closedAddr(t) + "/v1",
		"OPENAI_API_KEYS":      "k1;k2",
	})
	f.srv.models.SetFetchTimeout(300 * time.Millisecond)
	for _, path := range []string{"/api/models", "/api/models?refresh=true"} {
		start := time.Now()
		got := modelList(t, f.do("GET", path, f.adminTok, ""))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s took %v", path, d)
		}
		if modelIDs(got) != "tiny-embed:latest,tiny:latest" {
			t.Fatalf("%s: %s", path, modelIDs(got))
		}
		<-arrived // the hanging upstream was asked, and given up on
	}
}

func TestModelRecordEndpoints(t *testing.T) {
	o := newFakeOllama(t)
	env := upstreamEnv(o)
	env["USER_PERMISSIONS_WORKSPACE_MODELS"] = "true"
	f := newFixture(t, env)
	noPerm := newFixture(t, nil)
	expect(t, noPerm.do("POST", "/api/v1/models/create", noPerm.userTok, `{"id":"x","name":"X","meta":{},"params":{}}`), 401, msgUnauthorized)

	// The user creates a preset; sharing with everyone is dropped
	// (no sharing.public_models), with a single user kept.
	body := fmt.Sprintf(`{"id":"mine","name":"Mine","base_model_id":"tiny:latest","meta":{"tags":["a"]},"params":{"system":"s","temperature":0.1},
		"access_grants":[{"principal_type":"user","principal_id":"*","permission":"read"},{"principal_type":"user","principal_id":%q,"permission":"read"}]}`, f.other.ID)
	w := f.do("POST", "/api/v1/models/create", f.userTok, body)
	expect(t, w, 200, "")
	var rec map[string]any
	json.Unmarshal(w.Body.Bytes(), &rec)
	if rec["user_id"] != f.user.ID || rec["base_model_id"] != "tiny:latest" || rec["is_active"] != true || rec["created_at"] == nil {
		t.Errorf("created: %v", rec)
	}
	if gs := rec["access_grants"].([]any); len(gs) != 1 || gs[0].(map[string]any)["principal_id"] != f.other.ID {
		t.Errorf("grants not filtered: %v", gs)
	}
	meta := rec["meta"].(map[string]any)
	if meta["profile_image_url"] != "/static/favicon.png" || fmt.Sprint(meta["tags"]) != "[map[name:a]]" {
		t.Errorf("meta not normalized: %v", meta)
	}
	expect(t, f.do("POST", "/api/v1/models/create", f.otherTok, `{"id":"mine","name":"Again","base_model_id":"b","meta":{},"params":{}}`), 401, msgModelIDTaken)
	expect(t, f.do("POST", "/api/v1/models/create", f.userTok, `{"id":"`+strings.Repeat("x", 256)+`","name":"L","base_model_id":"b","meta":{},"params":{}}`), 400, msgModelIDTooLong)
	expect(t, f.do("POST", "/api/v1/models/create", f.userTok, `{"id":"`+strings.Repeat("x", 255)+`","name":"L","base_model_id":"b","meta":{},"params":{}}`), 200, "")
	// Overriding (or hiding) a provider model for everyone is for admins.
	expect(t, f.do("POST", "/api/v1/models/create", f.userTok, `{"id":"tiny:latest","name":"Mine now","is_active":false,"meta":{},"params":{}}`), 403, msgOverrideAdmin)
	expect(t, f.do("POST", "/api/v1/models/model/update", f.userTok, `{"id":"mine","base_model_id":null}`), 403, msgOverrideAdmin)
	expect(t, f.do("POST", "/api/v1/models/create", f.userTok, `{"id":"noname","meta":{},"params":{}}`), 422, "")
	expect(t, f.do("POST", "/api/v1/models/create", f.userTok, `{"id":"badmeta","name":"B","meta":[1],"params":{}}`), 422, "")

	// Reading: the shared reader gets params {} and no write access.
	w = f.do("GET", "/api/v1/models/model?id=mine", f.otherTok, "")
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &rec)
	if rec["write_access"] != false || fmt.Sprint(rec["params"]) != "map[]" || rec["user"] != nil {
		t.Errorf("reader view: %v", rec)
	}
	w = f.do("GET", "/api/v1/models/model?id=mine", f.userTok, "")
	json.Unmarshal(w.Body.Bytes(), &rec)
	if rec["write_access"] != true || rec["params"].(map[string]any)["system"] != "s" {
		t.Errorf("owner view: %v", rec)
	}
	expect(t, f.do("GET", "/api/v1/models/model?id=nope", f.userTok, ""), 404, msgNotFound)
	expect(t, f.do("GET", "/api/v1/models/model?id=tiny:latest", f.adminTok, ""), 404, msgNotFound) // no record
	expect(t, f.do("POST", "/api/v1/models/create", f.otherTok, `{"id":"others","name":"O","base_model_id":"tiny:latest","meta":{},"params":{}}`), 200, "")
	expect(t, f.do("GET", "/api/v1/models/model?id=others", f.userTok, ""), 401, msgAccessProhibited)
	expect(t, f.do("GET", "/api/v1/models/model?id=others", f.adminTok, ""), 200, "")

	// Visible in /api/models to the owner and the shared reader only.
	if got := modelIDs(modelList(t, f.do("GET", "/api/models", f.otherTok, ""))); got != "mine,others" {
		t.Errorf("other sees %s", got)
	}

	// Updates: the reader is refused, a missing id is NOT_FOUND, the owner
	// changes what is given and keeps the rest.
	expect(t, f.do("POST", "/api/v1/models/model/update", f.otherTok, `{"id":"mine","name":"Hijack","meta":{},"params":{}}`), 400, msgAccessProhibited)
	expect(t, f.do("POST", "/api/v1/models/model/update", f.userTok, `{"id":"nope","name":"N","meta":{},"params":{}}`), 401, msgNotFound)
	w = f.do("POST", "/api/v1/models/model/update", f.userTok, `{"id":"mine","name":"Renamed","params":{"temperature":0.9}}`)
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &rec)
	if rec["name"] != "Renamed" || rec["base_model_id"] != "tiny:latest" || fmt.Sprint(rec["params"]) != "map[temperature:0.9]" ||
		fmt.Sprint(rec["meta"].(map[string]any)["tags"]) != "[map[name:a]]" || len(rec["access_grants"].([]any)) != 1 {
		t.Errorf("updated: %v", rec)
	}

	// Toggle: reader refused 401; owner turns it off and it leaves the list.
	expect(t, f.do("POST", "/api/v1/models/model/toggle?id=mine", f.otherTok, ""), 401, msgUnauthorized)
	expect(t, f.do("POST", "/api/v1/models/model/toggle?id=nope", f.userTok, ""), 401, msgNotFound)
	w = f.do("POST", "/api/v1/models/model/toggle?id=mine", f.userTok, "")
	expect(t, w, 200, "")
	if strings.Contains(f.do("GET", "/api/models", f.otherTok, "").Body.String(), `"mine"`) {
		t.Error("inactive preset still listed")
	}
	expect(t, f.do("POST", "/api/v1/models/model/toggle?id=mine", f.userTok, ""), 200, "")

	// Access: a non-admin on a missing id is 403; an admin's call on a
	// provider model creates the record that carries the grant.
	expect(t, f.do("POST", "/api/v1/models/model/access/update", f.otherTok, `{"id":"mine","access_grants":[]}`), 400, msgAccessProhibited)
	expect(t, f.do("POST", "/api/v1/models/model/access/update", f.userTok, `{"id":"tiny:latest","access_grants":[]}`), 403, msgAccessProhibited)
	expect(t, f.do("POST", "/api/v1/models/model/access/update", f.adminTok,
		`{"id":"tiny:latest","name":"Tiny","access_grants":[{"principal_type":"user","principal_id":"*","permission":"read"}]}`), 200, "")
	got := modelList(t, f.do("GET", "/api/models", f.userTok, ""))
	if got["tiny:latest"] == nil || got["tiny:latest"]["name"] != "Tiny" {
		t.Errorf("provider model shared by a record not visible: %s", modelIDs(got))
	}
	if _, err := f.srv.resolver().Resolve(context.Background(), actorOf(f.user), "tiny:latest"); err != nil {
		t.Errorf("user on the shared provider model: %v", err)
	}

	// List: the owner's presets with the owner card; 30 per page.
	for i := range 31 {
		expect(t, f.do("POST", "/api/v1/models/create", f.userTok, fmt.Sprintf(`{"id":"bulk-%02d","name":"Bulk %02d","base_model_id":"tiny:latest","meta":{},"params":{}}`, i, i)), 200, "")
	}
	var list struct {
		Items []map[string]any `json:"items"`
		Total int              `json:"total"`
	}
	w = f.do("GET", "/api/v1/models/list?view_option=created&order_by=name&direction=asc", f.userTok, "")
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &list)
	if list.Total != 33 || len(list.Items) != 30 || list.Items[0]["user"].(map[string]any)["id"] != f.user.ID || list.Items[0]["write_access"] != true {
		t.Fatalf("list: total %d, %d items, first %v", list.Total, len(list.Items), list.Items[0])
	}
	if _, has := list.Items[0]["meta"].(map[string]any)["profile_image_url"]; has {
		t.Error("profile_image_url in the list")
	}
	w = f.do("GET", "/api/v1/models/list?view_option=created&page=2", f.userTok, "")
	json.Unmarshal(w.Body.Bytes(), &list)
	if len(list.Items) != 3 {
		t.Errorf("page 2: %d", len(list.Items))
	}
	w = f.do("GET", "/api/v1/models/list?query=renamed", f.otherTok, "")
	json.Unmarshal(w.Body.Bytes(), &list)
	if list.Total != 1 || list.Items[0]["write_access"] != false || fmt.Sprint(list.Items[0]["params"]) != "map[]" {
		t.Errorf("reader's list: %+v", list)
	}

	// Delete: reader refused 401, owner true, then gone.
	expect(t, f.do("POST", "/api/v1/models/model/delete", f.otherTok, `{"id":"mine"}`), 401, msgUnauthorized)
	w = f.do("POST", "/api/v1/models/model/delete", f.userTok, `{"id":"mine"}`)
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != "true" {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	expect(t, f.do("POST", "/api/v1/models/model/delete", f.userTok, `{"id":"mine"}`), 401, msgNotFound)
	expect(t, f.do("GET", "/api/v1/models/model?id=mine", f.userTok, ""), 404, msgNotFound)
	if _, err := f.srv.resolver().Resolve(context.Background(), actorOf(f.other), "mine"); !errors.Is(err, chat.ErrModelNotFound) {
		t.Errorf("deleted record still resolves: %v", err)
	}
}

func TestModelsAccessControlSettings(t *testing.T) {
	o := newFakeOllama(t)
	env := upstreamEnv(o)
	env["BYPASS_MODEL_ACCESS_CONTROL"] = "true"
	f := newFixture(t, env)
	if got := modelList(t, f.do("GET", "/api/models", f.userTok, "")); len(got) != 4 {
		t.Errorf("bypass: user sees %s", modelIDs(got))
	}
	env = upstreamEnv(o)
	env["BYPASS_ADMIN_ACCESS_CONTROL"] = "false"
	f = newFixture(t, env)
	expect(t, f.do("POST", "/api/v1/models/create", f.adminTok, `{"id":"u","name":"U","base_model_id":"tiny:latest","meta":{},"params":{}}`), 200, "")
	if _, err := f.store.CreateModel(context.Background(), actorOf(f.user), store.Model{ID: "users", Name: "Users", BaseModelID: "tiny:latest", IsActive: true}); err != nil {
		t.Fatal(err)
	}
	f.srv.models.InvalidateRecords()
	got := modelList(t, f.do("GET", "/api/models", f.adminTok, ""))
	if got["users"] != nil || got["u"] == nil || got["tiny:latest"] == nil {
		t.Errorf("admin without bypass sees %s", modelIDs(got))
	}
	expect(t, f.do("GET", "/api/v1/models/model?id=users", f.adminTok, ""), 401, msgAccessProhibited)
	// Direct writes are not restricted by it.
	expect(t, f.do("POST", "/api/v1/models/model/toggle?id=users", f.adminTok, ""), 200, "")
}

func TestModelsConfigEndpoint(t *testing.T) {
	o := newFakeOllama(t)
	f := newFixture(t, upstreamEnv(o))
	var cfg map[string]any
	w := f.do("GET", "/api/v1/configs/models", f.adminTok, "")
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if cfg["DEFAULT_MODELS"] != "" || fmt.Sprint(cfg["MODEL_ORDER_LIST"]) != "[]" || fmt.Sprint(cfg["DEFAULT_MODEL_PARAMS"]) != "map[]" {
		t.Errorf("defaults: %v", cfg)
	}
	w = f.do("POST", "/api/v1/configs/models", f.adminTok, `{"DEFAULT_MODELS":"helper,tiny:latest","DEFAULT_PINNED_MODELS":"tiny:latest",
		"MODEL_ORDER_LIST":["x"],"DEFAULT_MODEL_METADATA":{"description":"house model","capabilities":{"vision":true}},"DEFAULT_MODEL_PARAMS":{"temperature":0.4}}`)
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if cfg["DEFAULT_MODELS"] != "helper,tiny:latest" || cfg["DEFAULT_PINNED_MODELS"] != "tiny:latest" || fmt.Sprint(cfg["DEFAULT_MODEL_PARAMS"]) != "map[temperature:0.4]" {
		t.Errorf("after POST: %v", cfg)
	}
	// All or nothing: one bad value changes nothing.
	expect(t, f.do("POST", "/api/v1/configs/models", f.adminTok, `{"DEFAULT_MODELS":"other","DEFAULT_MODEL_PARAMS":[1]}`), 422, "")
	expect(t, f.do("POST", "/api/v1/configs/models", f.adminTok, `{"DEFAULT_MODELS":"other","SOMETHING":1}`), 400, "")
	if f.srv.cfg().DefaultModels != "helper,tiny:latest" {
		t.Errorf("partial write: %q", f.srv.cfg().DefaultModels)
	}
	// The defaults reach the list and the resolver.
	e := modelList(t, f.do("GET", "/api/models", f.adminTok, ""))["tiny:latest"]
	if meta := e["info"].(map[string]any)["meta"].(map[string]any); meta["description"] != "house model" {
		t.Errorf("default metadata: %v", meta)
	}
	tg, err := f.srv.resolver().Resolve(context.Background(), actorOf(f.admin), "tiny:latest")
	if err != nil || string(tg.Params.AppendJSON(nil)) != `{"temperature":0.4}` {
		t.Errorf("default params: %v %v", tg, err)
	}
	// ENABLE_CUSTOM_MODEL_FALLBACK uses the first default model.
	expect(t, f.do("POST", "/api/v1/models/create", f.adminTok, `{"id":"orphan","name":"O","base_model_id":"gone","meta":{},"params":{}}`), 200, "")
	if _, err := f.srv.resolver().Resolve(context.Background(), actorOf(f.admin), "orphan"); !errors.Is(err, chat.ErrModelNotFound) {
		t.Errorf("missing base without fallback: %v", err)
	}
	if err := f.settings.Set(context.Background(), map[string]any{"ENABLE_CUSTOM_MODEL_FALLBACK": true, "DEFAULT_MODELS": "tiny:latest"}); err != nil {
		t.Fatal(err)
	}
	if tg, err := f.srv.resolver().Resolve(context.Background(), actorOf(f.admin), "orphan"); err != nil || tg.ModelID != "tiny:latest" {
		t.Errorf("fallback: %+v %v", tg, err)
	}
}

// BenchmarkModelsList measures GET /api/models with a warm cache: two
// connections (4 provider models) and 50 public presets, for an admin
// (no filtering) and a plain user (filtered by grants).
func BenchmarkModelsList(b *testing.B) {
	o := newFakeOllama(b)
	f := newFixture(b, upstreamEnv(o))
	ctx := context.Background()
	for i := range 50 {
		if _, err := f.store.CreateModel(ctx, actorOf(f.admin), store.Model{ID: fmt.Sprintf("preset-%02d", i), Name: fmt.Sprintf("Preset %02d", i),
			BaseModelID: "tiny:latest", IsActive: true, Meta: json.RawMessage(`{"description":"d","tags":[{"name":"t"}]}`),
			Grants: []store.Grant{{PrincipalType: "user", PrincipalID: "*", Permission: "read"}}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, tok string
		n         int
	}{{"admin", f.adminTok, 54}, {"user", f.userTok, 50}} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/api/models", nil)
			req.Header.Set("Authorization", "Bearer "+tc.tok)
			w := httptest.NewRecorder()
			f.srv.ServeHTTP(w, req)
			var body struct{ Data []json.RawMessage }
			if json.Unmarshal(w.Body.Bytes(), &body); len(body.Data) != tc.n {
				b.Fatalf("%d models: %s", len(body.Data), w.Body.String()[:min(200, w.Body.Len())])
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				f.srv.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing (to time a handler
// without a recorder's buffer growth).
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkModelsHandler times the handler alone (no authentication, no
// recorder): the warm-cache cost of the list itself.
func BenchmarkModelsHandler(b *testing.B) {
	o := newFakeOllama(b)
	f := newFixture(b, upstreamEnv(o))
	ctx := context.Background()
	for i := range 50 {
		if _, err := f.store.CreateModel(ctx, actorOf(f.admin), store.Model{ID: fmt.Sprintf("preset-%02d", i), Name: fmt.Sprintf("Preset %02d", i),
			BaseModelID: "tiny:latest", IsActive: true, Grants: []store.Grant{{PrincipalType: "user", PrincipalID: "*", Permission: "read"}}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, who := range []store.User{f.admin, f.user} {
		b.Run(who.Role, func(b *testing.B) {
			id := &identity{user: who, actor: actorOf(who)}
			r := httptest.NewRequest("GET", "/api/models", nil)
			r = r.WithContext(context.WithValue(r.Context(), ctxIdentity, id))
			w := &discardWriter{h: http.Header{}}
			if err := f.srv.handleModels(w, r); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				f.srv.handleModels(w, r)
			}
		})
	}
}
