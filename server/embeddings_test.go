package server

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"hearth/chat"
	"hearth/llm"
)

// recordingUpstream serves a fixture, recording the request path, body and
// Authorization header.
type recordingUpstream struct {
	mu                 sync.Mutex
	path, body, header string
	h                  http.HandlerFunc
}

func (u *recordingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.path, u.body, u.header = r.URL.Path, string(b), r.Header.Get("Authorization")
	u.mu.Unlock()
	u.h(w, r)
}

// embeddingsFixture: "ollama.tiny-embed" (Ollama) and "tiny-embed"
// (OpenAI-compatible, key sk-up) point at the given upstreams.
func embeddingsFixture(t *testing.T, ollama, openai http.Handler) *fixture {
	t.Helper()
	f := newFixture(t, nil)
	res := testResolver{}
	if ollama != nil {
		up := httptest.NewServer(ollama)
		t.Cleanup(up.Close)
		res["ollama.tiny-embed"] = &chat.Target{UpstreamID: "tiny-embed", Conn: chat.Connection{Kind: chat.KindOllama, BaseURL: up.URL, Enabled: true}}
	}
	if openai != nil {
		up := httptest.NewServer(openai)
		t.Cleanup(up.Close)
		res["tiny-embed"] = &chat.Target{UpstreamID: "tiny-embed", Conn: chat.Connection{Kind: chat.KindOpenAI, BaseURL: up.URL + "/v1", Key: "sk-up", Enabled: true}}
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	res["dead"] = &chat.Target{UpstreamID: "x", Conn: chat.Connection{Kind: chat.KindOpenAI, BaseURL: dead.URL}}
	f.srv.testResolver = res
	return f
}

func TestEmbeddingsOllama(t *testing.T) {
	up := &recordingUpstream{h: fixtureHandler(t, "08-embed.http")}
	f := embeddingsFixture(t, up, nil)
	_, raw := wireFixture(t, "08-embed.http")
	var ollama struct {
		Model      string            `json:"model"`
		Embeddings []json.RawMessage `json:"embeddings"`
	}
	if err := json.Unmarshal(raw, &ollama); err != nil || len(ollama.Embeddings) != 2 {
		t.Fatalf("fixture: %v", err)
	}
	for _, path := range []string{"/api/embeddings", "/api/v1/embeddings"} {
		w := f.do("POST", path, f.userKey, `{"model":"ollama.tiny-embed","input":["hello","world"],"encoding_format":"float"}`)
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
		}
		want := `{"object":"list","data":[{"object":"embedding","embedding":` + string(ollama.Embeddings[0]) + `,"index":0},{"object":"embedding","embedding":` + string(ollama.Embeddings[1]) + `,"index":1}],"model":"tiny-embed"`
		got := w.Body.String()
		if len(got) < len(want) || got[:len(want)] != want {
			t.Fatalf("%s:\n got %s\nwant prefix %s", path, got, want)
		}
		var v map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if up.path != "/api/embed" || up.body != `{"model":"tiny-embed","input":["hello","world"]}` {
			t.Errorf("upstream got %s %s", up.path, up.body)
		}
	}
	// encoding_format base64 (the SDKs' default): little-endian float32s.
	w := f.do("POST", "/api/embeddings", f.userTok, `{"model":"ollama.tiny-embed","input":["hello","world"],"encoding_format":"base64"}`)
	var b64 struct {
		Object string `json:"object"`
		Data   []struct {
			Embedding string `json:"embedding"`
			Index     int    `json:"index"`
		} `json:"data"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &b64); err != nil || w.Code != 200 || len(b64.Data) != 2 || b64.Data[1].Index != 1 {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	for i, d := range b64.Data {
		buf, err := base64.StdEncoding.DecodeString(d.Embedding)
		want, _ := llm.DecodeVector(ollama.Embeddings[i])
		if err != nil || len(buf) != 4*len(want) {
			t.Fatalf("vector %d: %v", i, err)
		}
		for j, x := range want {
			if math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:])) != x {
				t.Fatalf("vector %d[%d] differs", i, j)
			}
		}
	}
	// A single string input is passed as is.
	f.do("POST", "/api/embeddings", f.userTok, `{"model":"ollama.tiny-embed","input":"hello"}`)
	if up.body != `{"model":"tiny-embed","input":"hello"}` {
		t.Errorf("upstream got %s", up.body)
	}
}

func TestEmbeddingsOpenAI(t *testing.T) {
	up := &recordingUpstream{h: fixtureHandler(t, "13-v1-embeddings.http")}
	f := embeddingsFixture(t, nil, up)
	_, want := wireFixture(t, "13-v1-embeddings.http")
	w := f.doH("POST", "/api/v1/embeddings", `{"model":"tiny-embed","input":["hello","world"],"dimensions":8}`, map[string]string{"x-api-key": f.userKey})
	if w.Code != 200 || w.Body.String() != string(want) {
		t.Fatalf("%d\n got %s\nwant %s", w.Code, w.Body.String(), want)
	}
	if up.path != "/v1/embeddings" || up.header != "Bearer sk-up" || up.body != `{"model":"tiny-embed","input":["hello","world"],"dimensions":8}` {
		t.Errorf("upstream got %s %q %s", up.path, up.header, up.body)
	}
}

func TestEmbeddingsErrors(t *testing.T) {
	f := embeddingsFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		io.WriteString(w, `{"error":"\"tiny-embed\" does not support embeddings"}`)
	}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
	}))
	// Unknown or not accessible: the same answer.
	expect(t, f.do("POST", "/api/embeddings", f.userTok, `{"model":"secret-model","input":"x"}`), 400, "Model not found")
	expect(t, f.do("POST", "/api/embeddings", f.userTok, `{"input":"x"}`), 400, "Model not found")
	expect(t, f.do("POST", "/api/embeddings", "", `{"model":"tiny-embed","input":"x"}`), 401, "")
	expect(t, f.do("POST", "/api/embeddings", f.userTok, `[]`), 422, "")
	expect(t, f.do("POST", "/api/embeddings", f.userTok, `{"model":"tiny-embed"}`), 400, "input is required")
	// Provider refusals: {"detail": <its message>}; its 401 is not the caller's.
	expect(t, f.do("POST", "/api/embeddings", f.userTok, `{"model":"ollama.tiny-embed","input":"x"}`), 400, `"tiny-embed" does not support embeddings`)
	expect(t, f.do("POST", "/api/embeddings", f.userTok, `{"model":"tiny-embed","input":"x"}`), 400, "Incorrect API key provided")
	expect(t, f.do("POST", "/api/embeddings", f.userTok, `{"model":"dead","input":"x"}`), 502, "Open WebUI: Server Connection Error")
}
