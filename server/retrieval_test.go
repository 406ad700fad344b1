package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"hearth/chat"
	"hearth/store"
)

// Retrieval through the real route (COMPAT §8.8): a file uploaded and
// processed through the API is injected with the RAG template, and its
// source reaches the client in each mode; another user's file, a file
// still processing and an unshared collection are skipped.
func TestCompletionsRetrieval(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	f, em := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		bodies = append(bodies, req)
		mu.Unlock()
		name := "11-v1-chat-nostream.http"
		if req["stream"] == true {
			name = "10-v1-chat-stream.http"
		}
		fixtureHandler(t, name)(w, r)
	}), nil)
	lastUser := func() string {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		msgs := bodies[len(bodies)-1]["messages"].([]any)
		return msgs[len(msgs)-1].(map[string]any)["content"].(string)
	}
	up := f.mkFile(f.userTok, "notes.md", "text/markdown", "Hearth is one binary.")
	if up.Data.Status != "completed" {
		t.Fatalf("upload %+v", up)
	}
	f.storeFile(f.other, "secret", "top secret")
	ctx := context.Background()
	pu, _ := f.store.NewFileUpload(ctx, actorOf(f.user), "pending", "p.txt", 0)
	pu.Write(ctx, strings.NewReader("not yet"))
	pu.Commit(ctx, nil, store.FilePending)

	files := `"files":[{"type":"file","id":"` + up.ID + `","name":"notes.md"},{"type":"file","id":"secret"},{"type":"file","id":"pending"}]`
	wantPrompt := strings.Replace(chat.DefaultRAGTemplate, "{{CONTEXT}}", `<source id="1" name="notes.md">Hearth is one binary.</source>`+"\n", 1) + "\nWhat is it?"
	wantSources := `[{"source":{"type":"file","id":"` + up.ID + `","name":"notes.md"},"document":["Hearth is one binary."],` +
		`"metadata":[{"file_id":"` + up.ID + `","name":"notes.md","source":"notes.md"}]}]`

	// API mode, non-streaming: top-level sources.
	w := f.do("POST", "/api/chat/completions", f.userKey, `{"model":"gpt","messages":[{"role":"user","content":"What is it?"}],`+files+`}`)
	expect(t, w, 200, "")
	var ans struct {
		Object  string          `json:"object"`
		Sources json.RawMessage `json:"sources"`
	}
	json.Unmarshal(w.Body.Bytes(), &ans)
	if ans.Object != "chat.completion" || string(ans.Sources) != wantSources {
		t.Errorf("answer %s", w.Body.String())
	}
	if got := lastUser(); got != wantPrompt {
		t.Errorf("prompt sent\n%q\nwant\n%q", got, wantPrompt)
	}

	// API mode, streaming: the first event is the sources.
	w = f.do("POST", "/api/chat/completions", f.userKey, `{"model":"gpt","stream":true,"messages":[{"role":"user","content":"What is it?"}],`+files+`}`)
	if first, _, _ := strings.Cut(w.Body.String(), "\n\n"); first != `data: {"sources":`+wantSources+`}` || !strings.HasSuffix(w.Body.String(), "data: [DONE]\n\n") {
		t.Errorf("stream %q", w.Body.String())
	}

	// Stored mode: events and message.sources.
	chatID := mkChat(f, f.user, completionChat)
	w = f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","stream":true,"chat_id":"`+chatID+`","id":"a1","messages":[{"role":"user","content":"What is it?"}],`+files+`}`)
	if w.Code != 200 || w.Body.String() != "null" {
		t.Fatalf("stored: %d %s", w.Code, w.Body.String())
	}
	m := storedAnswer(t, f, chatID)
	got, _ := json.Marshal(m["sources"])
	var want any
	json.Unmarshal([]byte(wantSources), &want)
	wantB, _ := json.Marshal(want)
	if string(got) != string(wantB) || m["done"] != true {
		t.Errorf("stored message %v", m)
	}
	if em.count("status") != 1 {
		t.Errorf("%d status events, want sources_retrieved", em.count("status"))
	}

	// Only skipped items: the prompt is untouched, no sources.
	k, err := f.store.CreateKnowledge(ctx, actorOf(f.other), store.Knowledge{Name: "Other's"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.AddKnowledgeFile(ctx, actorOf(f.other), k.ID, "secret"); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"gpt","messages":[{"role":"user","content":"hi"}],"files":[{"type":"file","id":"secret"},{"type":"file","id":"pending"},{"type":"collection","id":"` + k.ID + `"}]}`
	w = f.do("POST", "/api/chat/completions", f.userTok, body)
	if strings.Contains(w.Body.String(), "sources") || lastUser() != "hi" {
		t.Errorf("skipped items were used: %s / %q", w.Body.String(), lastUser())
	}
	// Shared with the user, the collection (and so its file) is used.
	if _, err := f.store.UpdateKnowledge(ctx, actorOf(f.other), k.ID, store.KnowledgePatch{Grants: &[]store.Grant{
		{PrincipalType: store.PrincipalUser, PrincipalID: f.user.ID, Permission: store.PermRead}}}); err != nil {
		t.Fatal(err)
	}
	w = f.do("POST", "/api/chat/completions", f.userTok, body)
	if !strings.Contains(w.Body.String(), `"document":["top secret"]`) || !strings.Contains(lastUser(), `<source id="1">top secret</source>`) {
		t.Errorf("shared collection not used: %s", w.Body.String())
	}
	// A file in a collection the user may read is readable (Open WebUI's
	// has_access_to_file), so the file item now counts too; both documents
	// share citation id 1 (same source name).
	if strings.Count(lastUser(), `<source id="1">top secret</source>`) != 2 {
		t.Errorf("file readable through the collection: %q", lastUser())
	}
}

// With an embedding engine (an OpenAI-compatible embeddings server faked
// here), an uploaded file is chunked and embedded, and a completion gets
// the RAG_TOP_K chunks nearest to the question, with their scores; an item
// with context "full" still gets the whole text.
func TestCompletionsRetrievalTopK(t *testing.T) {
	keywords := []string{"apple", "banana", "cherry"}
	embed := func(s string) []float32 {
		v := []float32{0.1}
		for _, k := range keywords {
			v = append(v, float32(strings.Count(strings.ToLower(s), k)))
		}
		return v
	}
	emb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if r.URL.Path != "/v1/embeddings" || req.Model != "fruity" || r.Header.Get("Authorization") != "Bearer emb-key" {
			http.Error(w, `{"error":{"message":"unexpected request"}}`, 400)
			return
		}
		var data []map[string]any
		for i, in := range req.Input {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": embed(in)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(emb.Close)
	var mu sync.Mutex
	var prompts []string
	f, _ := completionFixture(t, map[string]string{
		"RAG_EMBEDDING_ENGINE": "openai", "RAG_EMBEDDING_MODEL": "fruity", "RAG_TOP_K": "1",
		"RAG_OPENAI_API_BASE_URL": emb.URL + "/v1", "RAG_OPENAI_API_KEY": "emb-key",
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		prompts = append(prompts, req.Messages[len(req.Messages)-1].Content)
		mu.Unlock()
		fixtureHandler(t, "11-v1-chat-nostream.http")(w, r)
	}), nil)
	doc := "# Apples\nAn apple a day.\n\n# Bananas\nA banana is yellow.\n\n# Cherries\nCherry jam."
	up := f.mkFile(f.userTok, "fruit.md", "text/markdown", doc)
	if up.Data.Status != "completed" {
		t.Fatalf("upload %+v", up)
	}
	w := f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","messages":[{"role":"user","content":"Which fruit is yellow? The banana?"}],`+
		`"files":[{"type":"file","id":"`+up.ID+`","name":"fruit.md"}]}`)
	expect(t, w, 200, "")
	var ans struct {
		Sources []struct {
			Document  []string         `json:"document"`
			Metadata  []map[string]any `json:"metadata"`
			Distances []float64        `json:"distances"`
		} `json:"sources"`
	}
	json.Unmarshal(w.Body.Bytes(), &ans)
	if len(ans.Sources) != 1 || len(ans.Sources[0].Document) != 1 || ans.Sources[0].Document[0] != "# Bananas\nA banana is yellow." ||
		len(ans.Sources[0].Distances) != 1 || ans.Sources[0].Distances[0] < 0.5 || ans.Sources[0].Metadata[0]["start_index"] != 0.0 {
		t.Fatalf("sources %s", w.Body.String())
	}
	mu.Lock()
	last := prompts[len(prompts)-1]
	mu.Unlock()
	if !strings.Contains(last, `<source id="1" name="fruit.md"># Bananas`+"\nA banana is yellow.</source>\n") || strings.Contains(last, "apple a day") {
		t.Errorf("prompt %q", last)
	}

	// context: "full" sends the whole document.
	f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","messages":[{"role":"user","content":"banana?"}],`+
		`"files":[{"type":"file","id":"`+up.ID+`","context":"full"}]}`)
	mu.Lock()
	last = prompts[len(prompts)-1]
	mu.Unlock()
	if !strings.Contains(last, `<source id="1">`+doc+`</source>`) {
		t.Errorf("full context prompt %q", last)
	}
}
