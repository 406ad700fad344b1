package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"hearth/ingest"
	"hearth/store"
)

// mkFile stores a file of u with extracted text; status "completed" sets
// the text, anything else leaves the file in that state.
func (h *harness) mkFile(u store.User, id, name, text, status string) {
	h.t.Helper()
	ctx := context.Background()
	a := actorOf(u)
	up, err := h.st.Store.NewFileUpload(ctx, a, id, name, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := up.Write(ctx, strings.NewReader(text)); err != nil {
		h.t.Fatal(err)
	}
	if _, err := up.Commit(ctx, nil, store.FilePending); err != nil {
		h.t.Fatal(err)
	}
	switch status {
	case store.FileCompleted:
		err = h.st.Store.SetFileResult(ctx, a, id, text, "")
	case store.FileFailed:
		err = h.st.Store.SetFileResult(ctx, a, id, "", "boom")
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// mkCollection creates a collection of u holding files, shared for reading
// with the given user ids.
func (h *harness) mkCollection(u store.User, name string, readers []string, fileIDs ...string) string {
	h.t.Helper()
	ctx := context.Background()
	var grants []store.Grant
	for _, r := range readers {
		grants = append(grants, store.Grant{PrincipalType: store.PrincipalUser, PrincipalID: r, Permission: store.PermRead})
	}
	k, err := h.st.Store.CreateKnowledge(ctx, actorOf(u), store.Knowledge{Name: name, Grants: grants})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range fileIDs {
		if _, err := h.st.Store.AddKnowledgeFile(ctx, actorOf(u), k.ID, f); err != nil {
			h.t.Fatal(err)
		}
	}
	return k.ID
}

// ragUserContent is what the default template makes of a context and the
// user's text: the rendered template, a newline, the original content.
func ragUserContent(context, query string) string {
	return strings.Replace(DefaultRAGTemplate, "{{CONTEXT}}", context, 1) + "\n" + query
}

// canonJSON re-encodes s through any (sorted keys), as the recorded events
// and stored messages are.
func canonJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	jsonDecode(t, []byte(s), &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// sentMessages is the messages member of the i-th upstream request.
func sentMessages(t *testing.T, u *upstream, i int) []map[string]any {
	t.Helper()
	raw, _ := json.Marshal(u.body(t, i)["messages"])
	var msgs []map[string]any
	jsonDecode(t, raw, &msgs)
	return msgs
}

const notesSource = `{"source":{"type":"file","id":"f1","name":"Notes"},"document":["Hearth keeps everything in one SQLite file."],` +
	`"metadata":[{"file_id":"f1","name":"notes.md","source":"notes.md"}]}`

// API mode, non-streaming: the file's whole text goes into the prompt
// exactly as Open WebUI builds it, and the answer carries top-level sources.
func TestRetrievalAPINonStreaming(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	h.mkFile(h.user, "f1", "notes.md", "Hearth keeps everything in one SQLite file.", store.FileCompleted)

	_, body := h.mustComplete(`{"model":"gpt","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Where is the data?"}],` +
		`"files":[{"type":"file","id":"f1","name":"Notes"}]}`)

	// Byte for byte: the raw request body the upstream got.
	up.mu.Lock()
	raw := string(up.bodies[0])
	up.mu.Unlock()
	wantUser, _ := json.Marshal(ragUserContent(`<source id="1" name="Notes">Hearth keeps everything in one SQLite file.</source>`+"\n", "Where is the data?"))
	if !strings.Contains(raw, `{"role":"user","content":`+string(wantUser)+`}`) {
		t.Fatalf("upstream body %s\nwant user message content %s", raw, wantUser)
	}
	if strings.Contains(raw, `"files"`) {
		t.Errorf("files forwarded upstream: %s", raw)
	}
	msgs := sentMessages(t, up, 0)
	if len(msgs) != 2 || msgs[0]["content"] != "Be brief." {
		t.Errorf("messages %v", msgs)
	}
	var ans struct {
		Choices []any           `json:"choices"`
		Sources json.RawMessage `json:"sources"`
	}
	jsonDecode(t, []byte(body), &ans)
	if string(ans.Sources) != "["+notesSource+"]" || len(ans.Choices) != 1 {
		t.Errorf("answer sources %s\nwant [%s]", ans.Sources, notesSource)
	}
}

// API mode, streaming: the first SSE event is the sources, then the
// upstream's events.
func TestRetrievalAPIStreaming(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveBody("text/event-stream", sseBody("It is ", "one file.")))
	h.addModel("gpt", openAITarget(up))
	h.mkFile(h.user, "f1", "notes.md", "Hearth keeps everything in one SQLite file.", store.FileCompleted)
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"messages":[{"role":"user","content":"Where?"}],"files":[{"type":"file","id":"f1","name":"Notes"}]}`)
	first, rest, _ := strings.Cut(body, "\n\n")
	if first != `data: {"sources":[`+notesSource+`]}` {
		t.Fatalf("first event %q", first)
	}
	if !strings.HasPrefix(rest, `data: {"id":"chatcmpl-1"`) || !strings.HasSuffix(rest, "data: [DONE]\n\n") {
		t.Errorf("rest of the stream %q", rest)
	}
}

// Stored modes: status sources_retrieved, chat:completion {sources} before
// the answer, and message.sources stored; the non-streaming answer JSON
// carries them too.
func TestRetrievalStoredModes(t *testing.T) {
	for _, stream := range []bool{false, true} {
		h := newHarness(t)
		up := newUpstream(t, serveBody("text/event-stream", sseBody("ok")))
		h.addModel("gpt", openAITarget(up))
		h.mkFile(h.user, "f1", "notes.md", "Hearth keeps everything in one SQLite file.", store.FileCompleted)
		chatID := h.mkChat()
		s := "false"
		if stream {
			s = "true"
		}
		_, body := h.mustComplete(`{"model":"gpt","stream":` + s + `,"chat_id":"` + chatID + `","id":"a1","messages":[{"role":"user","content":"Tell me about Go"}],` +
			`"files":[{"type":"file","id":"f1","name":"Notes"}]}`)
		if stream && body != "null" {
			t.Fatalf("stream answer %q", body)
		}
		if !stream && !strings.Contains(body, `"sources":[`+notesSource+`]`) {
			t.Errorf("non-streaming stored answer lacks sources: %s", body)
		}
		st := h.em.ofType("status")
		if len(st) != 1 {
			t.Fatalf("status events %v", st)
		}
		if b, _ := json.Marshal(st[0]); string(b) != `{"action":"sources_retrieved","count":1,"done":true}` {
			t.Errorf("status %s", b)
		}
		evs := h.em.ofType("chat:completion")
		b, _ := json.Marshal(evs[0])
		if string(b) != canonJSON(t, `{"sources":[`+notesSource+`]}`) {
			t.Errorf("first chat:completion %s", b)
		}
		m := h.message(chatID, "a1")
		got, _ := json.Marshal(m["sources"])
		if string(got) != canonJSON(t, "["+notesSource+"]") || m["done"] != true || m["content"] != "ok" {
			t.Errorf("stored message %v", m)
		}
		if !strings.HasPrefix(sentMessages(t, up, 0)[0]["content"].(string), "### Task:") {
			t.Errorf("prompt not injected in stored mode")
		}
	}
}

// Another user's file, a file still processing, a failed one and an
// unknown id are skipped: nothing is injected and there are no sources.
func TestRetrievalSkipsWhatIsNotUsable(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	h.mkFile(h.other, "bobs", "secret.txt", "Bob's secret", store.FileCompleted)
	h.mkFile(h.user, "pending", "p.txt", "not yet", store.FilePending)
	h.mkFile(h.user, "failed", "f.txt", "", store.FileFailed)
	_, body := h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"hi"}],"files":[` +
		`{"type":"file","id":"bobs"},{"type":"file","id":"pending"},{"type":"file","id":"failed"},{"type":"file","id":"nope"},"junk",{"type":"collection","id":"nope"}]}`)
	if msgs := sentMessages(t, up, 0); len(msgs) != 1 || msgs[0]["content"] != "hi" {
		t.Errorf("prompt changed: %v", msgs)
	}
	if strings.Contains(body, `"sources"`) {
		t.Errorf("sources in %s", body)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if strings.Contains(string(up.bodies[0]), "secret") {
		t.Errorf("another user's file reached the upstream")
	}
}

// Collections: a readable one gives each processed file as a document
// (citation ids per file name); an unshared one is skipped; the legacy
// collection_names form works too.
func TestRetrievalCollections(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	h.mkFile(h.other, "b1", "a.txt", "alpha", store.FileCompleted)
	h.mkFile(h.other, "b2", "b.txt", "beta", store.FileCompleted)
	h.mkFile(h.other, "b3", "c.txt", "gamma", store.FileCompleted)
	shared := h.mkCollection(h.other, "Shared", []string{h.user.ID}, "b1", "b2")
	private := h.mkCollection(h.other, "Private", nil, "b3")

	_, body := h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"q"}],"files":[` +
		`{"type":"collection","id":"` + shared + `","name":"Shared"},{"type":"collection","id":"` + private + `","name":"Private"}]}`)
	want := ragUserContent(`<source id="1" name="Shared">alpha</source>`+"\n"+`<source id="2" name="Shared">beta</source>`+"\n", "q")
	if got := sentMessages(t, up, 0)[0]["content"]; got != want {
		t.Errorf("prompt\n%q\nwant\n%q", got, want)
	}
	var ans struct {
		Sources []Source `json:"sources"`
	}
	jsonDecode(t, []byte(body), &ans)
	if len(ans.Sources) != 1 || len(ans.Sources[0].Document) != 2 || ans.Sources[0].Metadata[1].FileID != "b2" {
		t.Errorf("sources %+v", ans.Sources)
	}

	// Legacy: collection_names with a knowledge id and a file collection.
	h.mkFile(h.user, "mine", "m.txt", "mine", store.FileCompleted)
	h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"q"}],"files":[` +
		`{"type":"doc","collection_names":["` + shared + `","file-mine","` + private + `"]}]}`)
	want = ragUserContent(`<source id="1">alpha</source>`+"\n"+`<source id="2">beta</source>`+"\n"+`<source id="3">mine</source>`+"\n", "q")
	if got := sentMessages(t, up, 1)[0]["content"]; got != want {
		t.Errorf("legacy prompt\n%q\nwant\n%q", got, want)
	}
}

// The context budget cuts the document that crosses it, notes what was
// left out, and drops the rest.
func TestRetrievalBudget(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	h.set(func(s *Settings) { s.RAGContextMaxChars = 10 })
	h.mkFile(h.user, "f1", "one.txt", "123456", store.FileCompleted)
	h.mkFile(h.user, "f2", "two.txt", "abcdéfgh", store.FileCompleted)
	h.mkFile(h.user, "f3", "three.txt", "dropped", store.FileCompleted)
	_, body := h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"q"}],"files":[` +
		`{"type":"file","id":"f1"},{"type":"file","id":"f2"},{"type":"file","id":"f3"}]}`)
	note := "\n[Hearth: 11 more characters of the sources were left out (RAG_CONTEXT_MAX_CHARS is 10).]"
	want := ragUserContent(`<source id="1">123456</source>`+"\n"+`<source id="2">abcd`+note+`</source>`+"\n", "q")
	if got := sentMessages(t, up, 0)[0]["content"]; got != want {
		t.Errorf("prompt\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(body, "dropped") || !strings.Contains(body, `"document":["abcd\n[Hearth: 11 more`) {
		t.Errorf("sources do not match what was sent: %s", body)
	}
}

// RAG_SYSTEM_CONTEXT puts the sources after the system message; a custom
// RAG_TEMPLATE gets {{QUERY}} too; parts content takes the prompt in its
// first text part.
func TestRetrievalTemplateAndPlacement(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	h.mkFile(h.user, "f1", "n.txt", "text {{QUERY}}", store.FileCompleted)
	h.set(func(s *Settings) { s.RAGSystemContext = true; s.RAGTemplate = "Q=[query] C={{CONTEXT}}" })
	h.mustComplete(`{"model":"gpt","messages":[{"role":"system","content":"sys"},{"role":"user","content":"why?"}],"files":[{"type":"file","id":"f1"}]}`)
	msgs := sentMessages(t, up, 0)
	if msgs[0]["content"] != "sys\nQ=why? C=<source id=\"1\">text {{QUERY}}</source>\n" || msgs[1]["content"] != "why?" {
		t.Errorf("system placement %v", msgs)
	}
	h.set(func(s *Settings) { s.RAGSystemContext = false })
	h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"look"}]}],"files":[{"type":"file","id":"f1"}]}`)
	parts := sentMessages(t, up, 1)[0]["content"].([]any)
	if parts[1].(map[string]any)["text"] != "Q=look C=<source id=\"1\">text {{QUERY}}</source>\n\nlook" {
		t.Errorf("parts %v", parts)
	}
}

// A model whose capabilities.file_context is false gets no sources.
func TestRetrievalFileContextOff(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	tg := openAITarget(up)
	tg.Meta = json.RawMessage(`{"capabilities":{"file_context":false}}`)
	h.addModel("gpt", tg)
	h.mkFile(h.user, "f1", "n.txt", "text", store.FileCompleted)
	h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"q"}],"files":[{"type":"file","id":"f1"}]}`)
	if msgs := sentMessages(t, up, 0); msgs[0]["content"] != "q" {
		t.Errorf("prompt changed: %v", msgs)
	}
}

// fakeSearcher returns fixed hits for f1 and reports f1 as the only
// indexed file; err makes it fail.
type fakeSearcher struct {
	err   error
	query string
}

func (f *fakeSearcher) Search(_ context.Context, _ store.Actor, query string, ids []string, k int) ([]ingest.Hit, map[string]bool, error) {
	f.query = query
	if f.err != nil {
		return nil, nil, f.err
	}
	return []ingest.Hit{{FileID: "f1", Start: 7, Text: "chunk", Score: 0.75}}, map[string]bool{"f1": true}, nil
}

// Search mode: the item gets its chunks with distances and start_index; a
// file without vectors is used whole; a failed search falls back to whole
// documents.
func TestRetrievalSearch(t *testing.T) {
	h := newHarness(t)
	fs := &fakeSearcher{}
	h.p.o.Searcher = fs
	h.set(func(s *Settings) { s.RAGSearch = true; s.RAGTopK = 3 })
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	h.mkFile(h.user, "f1", "one.txt", "the whole first file", store.FileCompleted)
	h.mkFile(h.user, "f2", "two.txt", "older file", store.FileCompleted)
	k := h.mkCollection(h.user, "K", nil, "f1", "f2")
	_, body := h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"find it"}],"files":[{"type":"collection","id":"` + k + `"}]}`)
	if fs.query != "find it" {
		t.Errorf("query %q", fs.query)
	}
	want := ragUserContent(`<source id="1">chunk</source>`+"\n"+`<source id="2">older file</source>`+"\n", "find it")
	if got := sentMessages(t, up, 0)[0]["content"]; got != want {
		t.Errorf("prompt %q", got)
	}
	if !strings.Contains(body, `"metadata":[{"file_id":"f1","name":"one.txt","source":"one.txt","start_index":7},{"file_id":"f2","name":"two.txt","source":"two.txt"}],"distances":[0.75,1]`) {
		t.Errorf("sources %s", body)
	}
	fs.err = errors.New("embedding server down")
	h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"find it"}],"files":[{"type":"file","id":"f1"}]}`)
	if got := sentMessages(t, up, 1)[0]["content"].(string); !strings.Contains(got, `<source id="1">the whole first file</source>`) {
		t.Errorf("fallback prompt %q", got)
	}
}
