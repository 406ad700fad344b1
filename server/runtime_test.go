package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"hearth/store"
)

// runtimePrefixes are the two mounts of the proxy; every behaviour test runs
// under both.
var runtimePrefixes = []string{"/ollama", "/runtime"}

// replay is one recorded Ollama answer (llm/testdata/fixtures/ollama-0.17.4).
type replay struct {
	status int
	header http.Header
	body   []byte
}

func loadReplay(t testing.TB, name string) replay {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "llm", "testdata", "fixtures", "ollama-0.17.4", name))
	if err != nil {
		t.Fatal(err)
	}
	_, resp, ok := strings.Cut(string(b), "### response\n")
	if !ok {
		t.Fatalf("%s: no response", name)
	}
	head, body, _ := strings.Cut(resp, "\n\n")
	lines := strings.Split(head, "\n")
	fields := strings.Fields(lines[0])
	status, _ := strconv.Atoi(fields[1])
	h := http.Header{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok {
			switch k {
			case "Content-Length", "Date", "Transfer-Encoding":
			default:
				h.Add(k, v)
			}
		}
	}
	return replay{status, h, []byte(body)}
}

func (rp replay) write(w http.ResponseWriter) {
	for k, vs := range rp.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(rp.status)
	w.Write(rp.body)
}

// rtUpstream is a fake Ollama 0.17.4 replaying the recorded bytes; it keeps
// the last request body per path.
type rtUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	last map[string]string
	fail bool // answer every model call with the recorded 404
}

func newRTUpstream(t *testing.T) *rtUpstream {
	u := &rtUpstream{last: map[string]string{}}
	fx := map[string]replay{}
	for _, n := range []string{"01-version", "02-tags", "03-show", "04-chat-stream", "05-chat-nostream", "06-generate-stream",
		"07-generate-nostream", "08-embed", "09-embeddings-legacy", "10-v1-chat-stream", "11-v1-chat-nostream",
		"15-v1-responses-nostream", "16-v1-responses-stream", "17-v1-messages-nostream", "18-v1-messages-stream",
		"19-error-unknown-model", "23-ps"} {
		fx[n] = loadReplay(t, n+".http")
	}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.last[r.Method+" "+r.URL.Path] = string(b)
		fail := u.fail
		u.mu.Unlock()
		stream := !strings.Contains(string(b), `"stream":false`)
		pick := func(s, ns string) string {
			if stream {
				return s
			}
			return ns
		}
		var name string
		switch r.URL.Path {
		case "/api/version":
			name = "01-version"
		case "/api/tags":
			name = "02-tags"
		case "/api/ps":
			name = "23-ps"
		}
		if name == "" && fail {
			name = "19-error-unknown-model"
		}
		if name == "" {
			switch r.URL.Path {
			case "/api/show":
				name = "03-show"
			case "/api/chat":
				name = pick("04-chat-stream", "05-chat-nostream")
			case "/api/generate":
				name = pick("06-generate-stream", "07-generate-nostream")
			case "/api/embed":
				name = "08-embed"
			case "/api/embeddings":
				name = "09-embeddings-legacy"
			case "/v1/chat/completions", "/v1/completions":
				name = "11-v1-chat-nostream"
			case "/v1/responses":
				name = "15-v1-responses-nostream"
			case "/v1/messages":
				name = "17-v1-messages-nostream"
			default:
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"status":"success"}`))
				return
			}
		}
		fx[name].write(w)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *rtUpstream) lastBody(key string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last[key]
}

func rtEnv(urls string, configs string) map[string]string {
	env := map[string]string{"OLLAMA_BASE_URLS": urls, "ENABLE_OPENAI_API": "false"}
	if configs != "" {
		env["OLLAMA_API_CONFIGS"] = configs
	}
	return env
}

// grantModel gives everyone read access to a provider model through a
// record with its id (an override record, no base model).
func grantModel(t *testing.T, f *fixture, id string) {
	t.Helper()
	if _, err := f.store.CreateModel(context.Background(), actorOf(f.admin), store.Model{ID: id, Name: id, IsActive: true,
		Meta: json.RawMessage(`{}`), Params: json.RawMessage(`{}`),
		Grants: []store.Grant{{PrincipalType: "user", PrincipalID: "*", Permission: "read"}}}); err != nil {
		t.Fatal(err)
	}
	f.srv.models.InvalidateRecords()
}

func TestRuntimeDisabled(t *testing.T) {
	f := newFixture(t, map[string]string{"ENABLE_OLLAMA_API": "false"})
	for _, p := range runtimePrefixes {
		expect(t, f.do("GET", p+"/", "", ""), 503, msgOllamaDisabled)
		w := f.do("GET", p+"/api/version", "", "")
		expect(t, w, 200, "")
		if strings.TrimSpace(w.Body.String()) != `{"version":false}` {
			t.Errorf("%s version: %s", p, w.Body)
		}
		expect(t, f.do("GET", p+"/api/tags", f.adminTok, ""), 503, msgOllamaDisabled)
		expect(t, f.do("POST", p+"/api/chat", f.adminTok, `{"model":"tiny:latest","messages":[]}`), 503, msgOllamaDisabled)
		expect(t, f.do("POST", p+"/api/pull", f.adminTok, `{"model":"x"}`), 503, msgOllamaDisabled)
	}
}

func TestRuntimeVersionAndRoot(t *testing.T) {
	u := newRTUpstream(t)
	f := newFixture(t, rtEnv(u.URL, ""))
	for _, p := range runtimePrefixes {
		expect(t, f.do("GET", p+"/", "", ""), 200, "")
		for _, path := range []string{p + "/api/version", p + "/api/version/0"} {
			w := f.do("GET", path, "", "")
			expect(t, w, 200, "")
			if !strings.Contains(w.Body.String(), `"version":"0.0.0"`) {
				t.Errorf("%s: %s", path, w.Body)
			}
		}
	}
	f = newFixture(t, rtEnv("http://127.0.0.1:1", ""))
	expect(t, f.do("GET", "/runtime/api/version", "", ""), 500, msgOllamaNoConnect)
	if compareVersions("0.9.10", "0.9.2") <= 0 || compareVersions("0.1.0", "0.1.0") != 0 || compareVersions("0.1", "0.2.1") >= 0 {
		t.Error("compareVersions")
	}
}

func tagIDs(t *testing.T, w *httptest.ResponseRecorder) []string {
	t.Helper()
	var out struct {
		Models []struct {
			Model string `json:"model"`
			URLs  []int  `json:"urls"`
		} `json:"models"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	var ids []string
	for _, m := range out.Models {
		if len(m.URLs) == 0 {
			t.Errorf("%s without urls", m.Model)
		}
		ids = append(ids, m.Model)
	}
	return ids
}

func TestRuntimeTagsFiltered(t *testing.T) {
	u := newRTUpstream(t)
	for _, p := range runtimePrefixes {
		f := newFixture(t, rtEnv(u.URL, ""))
		w := f.do("GET", p+"/api/tags", f.adminTok, "")
		expect(t, w, 200, "")
		if got := strings.Join(tagIDs(t, w), ","); got != "tiny:latest,tiny-embed:latest" && got != "tiny-embed:latest,tiny:latest" {
			t.Errorf("%s admin tags: %s", p, got)
		}
		w = f.do("GET", p+"/api/tags", f.userTok, "")
		expect(t, w, 200, "")
		if got := tagIDs(t, w); len(got) != 0 {
			t.Errorf("%s user without grants sees %v", p, got)
		}
		w = f.do("GET", p+"/v1/models", f.userTok, "")
		if strings.Contains(w.Body.String(), "tiny") {
			t.Errorf("%s user v1/models: %s", p, w.Body)
		}
		grantModel(t, f, "tiny:latest")
		w = f.do("GET", p+"/api/tags/0", f.userTok, "")
		if got := strings.Join(tagIDs(t, w), ","); got != "tiny:latest" {
			t.Errorf("%s user with grant: %s", p, got)
		}
		w = f.do("GET", p+"/v1/models", f.userTok, "")
		expect(t, w, 200, "")
		if !strings.Contains(w.Body.String(), `"id":"tiny:latest","object":"model"`) || !strings.Contains(w.Body.String(), `"owned_by":"openai"`) || strings.Contains(w.Body.String(), "tiny-embed") {
			t.Errorf("%s v1/models: %s", p, w.Body)
		}
		expect(t, f.do("GET", p+"/api/ps", f.adminTok, ""), 200, "")
	}
}

// The CVE of COMPAT.md §5.4: every route naming a model checks access.
func TestRuntimeModelAccess(t *testing.T) {
	u := newRTUpstream(t)
	routes := []struct{ path, body string }{
		{"/api/show", `{"model":"%s"}`},
		{"/api/generate", `{"model":"%s","prompt":"hi","stream":false}`},
		{"/api/chat", `{"model":"%s","messages":[{"role":"user","content":"hi"}],"stream":false}`},
		{"/api/embed", `{"model":"%s","input":["hello"]}`},
		{"/api/embeddings", `{"model":"%s","prompt":"hello"}`},
		{"/v1/chat/completions", `{"model":"%s","messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/completions", `{"model":"%s","prompt":"hi"}`},
		{"/v1/messages", `{"model":"%s","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses", `{"model":"%s","input":"hi"}`},
	}
	for _, p := range runtimePrefixes {
		f := newFixture(t, rtEnv(u.URL, ""))
		for _, rt := range routes {
			body := strings.Replace(rt.body, "%s", "tiny:latest", 1)
			expect(t, f.do("POST", p+rt.path, f.userTok, body), 400, "Model 'tiny:latest' was not found")
			expect(t, f.do("POST", p+rt.path, f.userTok, strings.Replace(rt.body, "%s", "nope", 1)), 400, "Model 'nope' was not found")
			expect(t, f.do("POST", p+rt.path, f.adminTok, body), 200, "")
		}
		grantModel(t, f, "tiny:latest")
		for _, rt := range routes {
			body := strings.Replace(rt.body, "%s", "tiny:latest", 1)
			expect(t, f.do("POST", p+rt.path, f.userTok, body), 200, "")
			if got := u.lastBody("POST " + rt.path); got != body {
				t.Errorf("%s%s forwarded %s, want %s", p, rt.path, got, body)
			}
		}
	}
}

func TestRuntimeURLIdx(t *testing.T) {
	u0, u1 := newRTUpstream(t), newRTUpstream(t)
	for _, p := range runtimePrefixes {
		f := newFixture(t, rtEnv(u0.URL+";"+u1.URL, `{"1":{"model_ids":["tiny-embed:latest"]}}`))
		grantModel(t, f, "tiny:latest")
		body := `{"model":"tiny:latest","messages":[],"stream":false}`
		expect(t, f.do("POST", p+"/api/chat/1", f.userTok, body), 403, msgAccessProhibited)
		expect(t, f.do("POST", p+"/api/chat/0", f.userTok, body), 200, "")
		expect(t, f.do("POST", p+"/api/chat/7", f.userTok, body), 403, msgAccessProhibited)
		expect(t, f.do("POST", p+"/api/chat/x", f.userTok, body), 422, "")
		expect(t, f.do("POST", p+"/api/chat/1", f.adminTok, body), 200, "")
		if u1.lastBody("POST /api/chat") != body {
			t.Errorf("admin url_idx 1 not used")
		}
		w := f.do("GET", p+"/api/tags/1", f.adminTok, "")
		if got := strings.Join(tagIDs(t, w), ","); got != "tiny-embed:latest" {
			t.Errorf("tags/1: %s", got)
		}
	}
}

func TestRuntimePrefixAndRecord(t *testing.T) {
	u := newRTUpstream(t)
	for _, p := range runtimePrefixes {
		f := newFixture(t, rtEnv(u.URL, `{"0":{"prefix_id":"loc"}}`))
		body := `{"model":"loc.tiny:latest","messages":[{"role":"user","content":"hi"}],"options":{"seed":42},"stream":false,"keep_alive":"5m"}`
		expect(t, f.do("POST", p+"/api/chat", f.adminTok, body), 200, "")
		want := strings.Replace(body, "loc.tiny:latest", "tiny:latest", 1)
		if got := u.lastBody("POST /api/chat"); got != want {
			t.Errorf("forwarded %s, want %s", got, want)
		}
		// A preset: params → options, system → a system message.
		if _, err := f.store.CreateModel(context.Background(), actorOf(f.admin), store.Model{ID: "helper", Name: "Helper",
			BaseModelID: "loc.tiny:latest", IsActive: true, Meta: json.RawMessage(`{}`),
			Params: json.RawMessage(`{"temperature":0.5,"max_tokens":16,"system":"Be brief"}`),
			Grants: []store.Grant{{PrincipalType: "user", PrincipalID: "*", Permission: "read"}}}); err != nil {
			t.Fatal(err)
		}
		f.srv.models.InvalidateRecords()
		expect(t, f.do("POST", p+"/api/chat", f.userTok, `{"model":"helper","messages":[{"role":"user","content":"hi"}],"options":{"seed":42},"stream":false}`), 200, "")
		want = `{"model":"tiny:latest","messages":[{"role":"system","content":"Be brief"},{"role":"user","content":"hi"}],"options":{"seed":42,"temperature":0.5,"num_predict":16},"stream":false}`
		if got := u.lastBody("POST /api/chat"); got != want {
			t.Errorf("record applied: %s, want %s", got, want)
		}
		// The user may use the preset, not the base model itself.
		expect(t, f.do("POST", p+"/api/embed", f.userTok, `{"model":"loc.tiny:latest","input":"x"}`), 400, "Model 'loc.tiny:latest' was not found")
	}
}

func TestRuntimeBodyChecks(t *testing.T) {
	u := newRTUpstream(t)
	f := newFixture(t, rtEnv(u.URL, ""))
	for _, p := range runtimePrefixes {
		w := f.doH("POST", p+"/api/chat", `{"model":"tiny:latest"}`, map[string]string{"Authorization": bearer(f.adminTok), "Content-Type": "text/plain"})
		expect(t, w, 422, "Content-Type must be application/json")
		expect(t, f.do("POST", p+"/api/chat", f.adminTok, `["model"]`), 422, "Request body must be a JSON object")
		expect(t, f.do("POST", p+"/api/chat", f.adminTok, `{"model":`), 422, "")
		expect(t, f.do("POST", p+"/api/chat", f.adminTok, `{"messages":[]}`), 422, `Field "model" is required`)
	}
}

func TestRuntimeUpstreamError(t *testing.T) {
	u := newRTUpstream(t)
	u.fail = true
	f := newFixture(t, rtEnv(u.URL, ""))
	for _, p := range runtimePrefixes {
		expect(t, f.do("POST", p+"/api/chat", f.adminTok, `{"model":"tiny:latest","messages":[]}`), 404, "model 'nope' not found")
	}
	// A dead backend: 500 "Ollama: ...".
	f = newFixture(t, rtEnv(u.URL, ""))
	expect(t, f.do("GET", "/runtime/api/tags", f.adminTok, ""), 200, "")
	u.Close()
	w := f.do("POST", "/runtime/api/embed", f.adminTok, `{"model":"tiny:latest","input":"x"}`)
	if w.Code != 500 || !strings.Contains(w.Body.String(), `"detail":"Ollama: `) {
		t.Errorf("dead backend: %d %s", w.Code, w.Body)
	}
}

func TestRuntimeResponsesStateless(t *testing.T) {
	u := newRTUpstream(t)
	for _, stateful := range []string{"false", "true"} {
		env := rtEnv(u.URL, "")
		env["ENABLE_RESPONSES_API_STATEFUL"] = stateful
		f := newFixture(t, env)
		expect(t, f.do("POST", "/ollama/v1/responses", f.adminTok, `{"model":"tiny:latest","input":"hi","previous_response_id":"resp_1"}`), 200, "")
		got := strings.Contains(u.lastBody("POST /v1/responses"), "previous_response_id")
		if got != (stateful == "true") {
			t.Errorf("stateful=%s: forwarded %s", stateful, u.lastBody("POST /v1/responses"))
		}
	}
}

func TestRuntimeManage(t *testing.T) {
	u := newRTUpstream(t)
	f := newFixture(t, rtEnv(u.URL, ""))
	for _, p := range runtimePrefixes {
		expect(t, f.do("POST", p+"/api/pull", f.adminTok, `{"model":"tiny","stream":false}`), 200, "")
		if got := u.lastBody("POST /api/pull"); got != `{"model":"tiny","stream":false}` {
			t.Errorf("pull forwarded %q", got)
		}
		expect(t, f.do("DELETE", p+"/api/delete/0", f.adminTok, `{"model":"tiny"}`), 200, "")
		if got := u.lastBody("DELETE /api/delete"); got != `{"model":"tiny"}` {
			t.Errorf("delete forwarded %q", got)
		}
		expect(t, f.do("POST", p+"/api/copy/3", f.adminTok, `{"source":"a","destination":"b"}`), 404, "")
		expect(t, f.do("POST", p+"/api/unload", f.adminTok, `{"model":"tiny:latest"}`), 200, "")
		if got := u.lastBody("POST /api/generate"); got != `{"model":"tiny:latest","keep_alive":0,"stream":false}` {
			t.Errorf("unload sent %q", got)
		}
	}
}

// The first streamed line reaches the client before the upstream has
// finished: the upstream waits for the test to have read it.
func TestRuntimeStreaming(t *testing.T) {
	tags := loadReplay(t, "02-tags.http")
	gates := make(chan chan struct{}, 1) // the gate of the next stream
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/tags" {
			tags.write(w)
			return
		}
		gate := <-gates
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		w.Write([]byte(`{"model":"tiny","response":"a","done":false}` + "\n"))
		w.(http.Flusher).Flush()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		w.Write([]byte(`{"model":"tiny","response":"","done":true}` + "\n"))
	}))
	defer up.Close()
	for _, p := range runtimePrefixes {
		f := newFixture(t, rtEnv(up.URL, ""))
		hs := httptest.NewServer(f.srv)
		for _, path := range []string{"/api/generate", "/api/chat", "/v1/chat/completions"} {
			gate := make(chan struct{})
			gates <- gate
			req, _ := http.NewRequest("POST", hs.URL+p+path, strings.NewReader(`{"model":"tiny:latest","prompt":"hi","messages":[]}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+f.adminTok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				close(gate)
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" || resp.ContentLength != -1 {
				t.Errorf("%s%s: %d %v", p, path, resp.StatusCode, resp.Header)
			}
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			close(gate) // only now may the upstream finish
			if err != nil || !strings.Contains(line, `"response":"a"`) {
				t.Fatalf("%s%s first line %q %v", p, path, line, err)
			}
			rest, _ := io.ReadAll(br)
			if !strings.Contains(string(rest), `"done":true`) {
				t.Errorf("%s%s rest %q", p, path, rest)
			}
			resp.Body.Close()
		}
		hs.Close()
	}
}
