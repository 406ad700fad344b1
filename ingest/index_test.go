package ingest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"hearth/store"
	"hearth/vector"
)

// fruitVector embeds a text by counting a few keywords (plus a constant, so
// no vector is zero): near texts share keywords.
func fruitVector(text string) []float32 {
	words := []string{"apple", "banana", "cherry", "date"}
	v := make([]float32, len(words)+1)
	low := strings.ToLower(text)
	for i, w := range words {
		v[i] = float32(strings.Count(low, w))
	}
	v[len(words)] = 0.1
	return v
}

// fakeEmbedder serves OpenAI /v1/embeddings and Ollama /api/embed with
// fruitVector, recording the inputs.
type fakeEmbedder struct {
	srv    *httptest.Server
	mu     sync.Mutex
	inputs [][]string
}

func newFakeEmbedder(t *testing.T) *fakeEmbedder {
	f := &fakeEmbedder{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		f.mu.Lock()
		f.inputs = append(f.inputs, req.Input)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/embeddings":
			var data []map[string]any
			for i, in := range req.Input {
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": fruitVector(in)})
			}
			json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
		case "/api/embed":
			var embs [][]float32
			for _, in := range req.Input {
				embs = append(embs, fruitVector(in))
			}
			json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": embs})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

const fruitDoc = "# Apples\nAn apple a day. Apple pie.\n\n# Bananas\nA banana is yellow. Banana bread.\n\n# Cherries\nCherry blossoms and cherry jam.\n"

func TestVectorIndexOpenAIAndOllama(t *testing.T) {
	for _, engine := range []string{"openai", "ollama"} {
		st, a := openStore(t)
		emb := newFakeEmbedder(t)
		base := emb.srv.URL
		if engine == "openai" {
			base += "/v1"
		}
		cfg := EmbedConfig{Engine: engine, Model: "fruity", BaseURL: base, BatchSize: 2, ChunkSize: 1000, ChunkOverlap: 100, MarkdownHeaders: true}
		vi := &VectorIndex{Store: st, Index: vector.New(), Config: func() EmbedConfig { return cfg }}
		q := New(Options{Store: st, Indexer: vi, Context: context.Background()})
		pendingFile(t, st, a, "f1", "fruit.md", fruitDoc)
		if err := q.Process(context.Background(), Job{FileID: "f1", Owner: a}); err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		f, _ := st.GetFile(context.Background(), a, "f1", false)
		if f.Status != store.FileCompleted {
			t.Fatalf("%s: status %s %s", engine, f.Status, f.Error)
		}
		// Three sections, two texts per request, newlines flattened.
		emb.mu.Lock()
		if len(emb.inputs) != 2 || len(emb.inputs[0]) != 2 || emb.inputs[0][0] != "# Apples An apple a day. Apple pie." {
			t.Errorf("%s: embedding requests %q", engine, emb.inputs)
		}
		emb.mu.Unlock()

		hits, indexed, err := vi.Search(context.Background(), a, "Tell me about bananas", []string{"f1", "missing"}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || !strings.HasPrefix(hits[0].Text, "# Bananas\nA banana is yellow.") || hits[0].Score <= 0.5 {
			t.Errorf("%s: hits %+v", engine, hits)
		}
		if !indexed["f1"] || indexed["missing"] {
			t.Errorf("%s: indexed %v", engine, indexed)
		}
		// Another user cannot search the file's chunks.
		if hits, _, _ := vi.Search(context.Background(), store.Actor{UserID: "someone", Role: "user"}, "banana", []string{"f1"}, 3); len(hits) != 0 {
			t.Errorf("%s: a stranger found %+v", engine, hits)
		}
	}
}

// Without a usable engine a file is extracted only; with one, an empty
// text fails the file with Open WebUI's EMPTY_CONTENT message.
func TestVectorIndexNoEngineAndEmpty(t *testing.T) {
	st, a := openStore(t)
	emb := newFakeEmbedder(t)
	cfg := EmbedConfig{Engine: "", Model: "m", BaseURL: emb.srv.URL + "/v1"}
	vi := &VectorIndex{Store: st, Index: vector.New(), Config: func() EmbedConfig { return cfg }}
	q := New(Options{Store: st, Indexer: vi, Context: context.Background()})
	pendingFile(t, st, a, "f1", "a.txt", "apple")
	q.Process(context.Background(), Job{FileID: "f1", Owner: a})
	if f, _ := st.GetFile(context.Background(), a, "f1", false); f.Status != store.FileCompleted || len(emb.inputs) != 0 {
		t.Fatalf("no engine: %s, %d embedding calls", f.Status, len(emb.inputs))
	}
	cfg.Engine = "openai"
	pendingFile(t, st, a, "f2", "b.txt", "  \n ")
	q.Process(context.Background(), Job{FileID: "f2", Owner: a})
	if f, _ := st.GetFile(context.Background(), a, "f2", false); f.Status != store.FileFailed || f.Error != ErrEmptyContent.Error() {
		t.Fatalf("empty: %s %q", f.Status, f.Error)
	}
}
