package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestOllamaConfigEndpoints(t *testing.T) {
	o1, o2 := newFakeOllama(t), newFakeOllama(t)
	f := newFixture(t, nil)
	var cfg map[string]any
	w := f.do("GET", "/ollama/config", f.adminTok, "")
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if cfg["ENABLE_OLLAMA_API"] != true || fmt.Sprint(cfg["OLLAMA_BASE_URLS"]) != "[http://localhost:11434]" || fmt.Sprint(cfg["OLLAMA_API_CONFIGS"]) != "map[]" {
		t.Fatalf("defaults: %v", cfg)
	}
	// Two runtimes; configs beyond the URL count (and legacy URL keys) dropped.
	body := fmt.Sprintf(`{"ENABLE_OLLAMA_API":true,"OLLAMA_BASE_URLS":[%q,%q],
		"OLLAMA_API_CONFIGS":{"0":{"prefix_id":"a"},"1":{"tags":[{"name":"gpu"}]},"2":{"prefix_id":"gone"},"http://x":{}}}`, o1.URL+"/", o2.URL)
	w = f.do("POST", "/ollama/config/update", f.adminTok, body)
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if fmt.Sprint(cfg["OLLAMA_BASE_URLS"]) != fmt.Sprintf("[%s %s]", o1.URL, o2.URL) || modelIDs(toEntries(cfg["OLLAMA_API_CONFIGS"])) != "0,1" {
		t.Fatalf("after update: %v", cfg)
	}
	// /runtime/config is the same setting.
	w = f.do("GET", "/runtime/config", f.adminTok, "")
	if !strings.Contains(w.Body.String(), o2.URL) {
		t.Fatalf("/runtime/config: %s", w.Body)
	}
	// The model list follows the new connections at once.
	got := modelList(t, f.do("GET", "/api/models", f.adminTok, ""))
	if modelIDs(got) != "a.tiny-embed:latest,a.tiny:latest,tiny-embed:latest,tiny:latest" {
		t.Fatalf("models: %s", modelIDs(got))
	}
	if fmt.Sprint(got["tiny:latest"]["tags"]) != "[map[name:gpu]]" || fmt.Sprint(got["tiny:latest"]["ollama"].(map[string]any)["urls"]) != "[1]" {
		t.Errorf("second runtime's entry: %v", got["tiny:latest"])
	}
	// Without OLLAMA_API_CONFIGS the configs stay; without URLs: 422.
	expect(t, f.do("POST", "/runtime/config/update", f.adminTok, fmt.Sprintf(`{"OLLAMA_BASE_URLS":[%q]}`, o1.URL)), 200, "")
	if c := f.srv.cfg().OllamaAPIConfigs; modelIDs(toEntries(c)) != "0" {
		t.Errorf("kept configs: %v", c)
	}
	expect(t, f.do("POST", "/ollama/config/update", f.adminTok, `{"ENABLE_OLLAMA_API":false}`), 422, "")
	// Switching the API off empties its models.
	expect(t, f.do("POST", "/ollama/config/update", f.adminTok, fmt.Sprintf(`{"ENABLE_OLLAMA_API":false,"OLLAMA_BASE_URLS":[%q]}`, o1.URL)), 200, "")
	if got := modelList(t, f.do("GET", "/api/models", f.adminTok, "")); len(got) != 0 {
		t.Errorf("disabled API still lists %s", modelIDs(got))
	}
}

func toEntries(v any) map[string]map[string]any {
	out := map[string]map[string]any{}
	m, _ := v.(map[string]any)
	for k := range m {
		out[k] = nil
	}
	return out
}

func TestOpenAIConfigEndpoints(t *testing.T) {
	o := newFakeOllama(t)
	f := newFixture(t, map[string]string{"ENABLE_OLLAMA_API": "false"})
	var cfg map[string]any
	w := f.do("GET", "/openai/config", f.adminTok, "")
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if fmt.Sprint(cfg["OPENAI_API_BASE_URLS"]) != "[https://api.openai.com/v1]" || fmt.Sprint(cfg["OPENAI_API_KEYS"]) != "[]" {
		t.Fatalf("defaults: %v", cfg)
	}
	// Fewer keys than URLs: padded; configs of other indexes dropped.
	w = f.do("POST", "/openai/config/update", f.adminTok, fmt.Sprintf(`{"ENABLE_OPENAI_API":true,"OPENAI_API_BASE_URLS":[%q,%q],
		"OPENAI_API_KEYS":["sk-one"],"OPENAI_API_CONFIGS":{"1":{"prefix_id":"two"},"2":{"prefix_id":"gone"}}}`, o.URL+"/v1/", o.URL+"/v1"))
	expect(t, w, 200, "")
	json.Unmarshal(w.Body.Bytes(), &cfg)
	keys, _ := json.Marshal(cfg["OPENAI_API_KEYS"])
	if string(keys) != `["sk-one",""]` || fmt.Sprint(cfg["OPENAI_API_BASE_URLS"]) != fmt.Sprintf("[%s/v1 %s/v1]", o.URL, o.URL) ||
		modelIDs(toEntries(cfg["OPENAI_API_CONFIGS"])) != "1" {
		t.Fatalf("after update: %v", cfg)
	}
	got := modelList(t, f.do("GET", "/api/models", f.adminTok, ""))
	if modelIDs(got) != "tiny-embed:latest,tiny:latest,two.tiny-embed:latest,two.tiny:latest" || got["two.tiny:latest"]["urlIdx"] != 1.0 {
		t.Fatalf("models: %s", modelIDs(got))
	}
	// More keys than URLs: cut.
	w = f.do("POST", "/openai/config/update", f.adminTok, fmt.Sprintf(`{"OPENAI_API_BASE_URLS":[%q],"OPENAI_API_KEYS":["a","b","c"]}`, o.URL+"/v1"))
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if keys, _ := json.Marshal(cfg["OPENAI_API_KEYS"]); string(keys) != `["a"]` {
		t.Errorf("keys cut: %s", keys)
	}
	// Keys never show in config explain.
	for _, row := range f.settings.Explain() {
		if row.Name == "OPENAI_API_KEYS" && strings.Contains(row.Value, "a") && row.Value != "<redacted>" {
			t.Errorf("explain shows keys: %q", row.Value)
		}
	}
}

func TestVerifyConnections(t *testing.T) {
	o := newFakeOllama(t)
	f := newFixture(t, nil)
	f.srv.verifyWait = 300 * time.Millisecond

	w := f.do("POST", "/ollama/verify", f.adminTok, fmt.Sprintf(`{"url":%q}`, o.URL+"/"))
	if w.Code != 200 || w.Body.String() != `{"version":"0.0.0"}` {
		t.Fatalf("ollama verify: %d %s", w.Code, w.Body)
	}
	w = f.do("POST", "/runtime/verify", f.adminTok, fmt.Sprintf(`{"url":%q,"key":"rk"}`, o.URL))
	if w.Code != 200 || o.authFor("/api/version") != "Bearer rk" {
		t.Fatalf("runtime verify with key: %d %s %v", w.Code, w.Body, o.authFor("/api/version"))
	}
	w = f.do("POST", "/openai/verify", f.adminTok, fmt.Sprintf(`{"url":%q,"key":"sk-v"}`, o.URL+"/v1"))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"tiny-embed:latest"`) || o.authFor("/v1/models") != "Bearer sk-v" {
		t.Fatalf("openai verify: %d %s", w.Code, w.Body)
	}
	w = f.do("POST", "/openai/verify", f.adminTok, fmt.Sprintf(`{"url":%q,"key":"sk-v","config":{"auth_type":"none"}}`, o.URL+"/v1"))
	if w.Code != 200 || o.authFor("/v1/models") != "" {
		t.Fatalf("auth_type none still sends the key: %v", o.authFor("/v1/models"))
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`))
			return
		}
		w.WriteHeader(503)
		w.Write([]byte("down for maintenance"))
	}))
	defer bad.Close()
	expect(t, f.do("POST", "/openai/verify", f.adminTok, fmt.Sprintf(`{"url":%q,"key":"x"}`, bad.URL)), 500, "External Error: Incorrect API key provided")
	expect(t, f.do("POST", "/ollama/verify", f.adminTok, fmt.Sprintf(`{"url":%q}`, bad.URL)), 500, "HTTP Error: 503")

	w = f.do("POST", "/ollama/verify", f.adminTok, fmt.Sprintf(`{"url":%q}`, closedAddr(t)))
	if w.Code != 500 || !strings.Contains(w.Body.String(), "Server Connection Error: ") || !strings.Contains(w.Body.String(), "refused") {
		t.Errorf("closed port: %d %s", w.Code, w.Body)
	}
	hang, arrived := hangingUpstream(t)
	start := time.Now()
	w = f.do("POST", "/ollama/verify", f.adminTok, fmt.Sprintf(`{"url":%q}`, hang))
	<-arrived
	if d := time.Since(start); w.Code != 500 || d > 5*time.Second || !strings.Contains(w.Body.String(), "no answer within") {
		t.Errorf("hanging upstream: %d %s after %v", w.Code, w.Body, d)
	}
	for _, u := range []string{"ftp://x", "not a url", ""} {
		expect(t, f.do("POST", "/ollama/verify", f.adminTok, fmt.Sprintf(`{"url":%q}`, u)), 400, msgInvalidURL)
	}
}
