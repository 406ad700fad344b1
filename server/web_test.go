package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"hearth/netguard"
)

// webPDF builds a valid one-page-per-text PDF (as ingest's tests do).
func webPDF(pages ...string) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(s string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), s)
	}
	b.WriteString("%PDF-1.4\n")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, text := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		stream := fmt.Sprintf("BT /F1 24 Tf 72 720 Td (%s) Tj ET", text)
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// webSite is a site on 127.0.0.1 and an "internal" server next to it that
// nothing may reach.
type webSite struct {
	srv, internal *httptest.Server
	internalHit   atomic.Bool
	version       atomic.Int32 // changes /page's text
}

func newWebSite(t *testing.T) *webSite {
	ws := &webSite{}
	ws.internal = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws.internalHit.Store(true)
		w.Write([]byte("internal secret"))
	}))
	t.Cleanup(ws.internal.Close)
	ws.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><head><title>T</title><script>var x = 1;</script></head><body><h1>Hello</h1><p>World page v%d</p></body></html>", ws.version.Load())
		case "/untyped":
			w.Header()["Content-Type"] = nil
			w.Write([]byte("<p>No type</p>"))
		case "/notes.txt":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("<b>plain</b> text"))
		case "/doc":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write(webPDF("Hello PDF", "Second page"))
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		case "/redirect":
			http.Redirect(w, r, "/page", http.StatusFound)
		case "/to-internal":
			http.Redirect(w, r, ws.internal.URL+"/", http.StatusFound)
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bytes.Repeat([]byte("a"), 1<<20+10))
		case "/empty":
			w.Header().Set("Content-Type", "text/html")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ws.srv.Close)
	return ws
}

// allow exempts the site (only it) from netguard's loopback block.
func (ws *webSite) allow(t *testing.T, f *fixture) {
	u, _ := url.Parse(ws.srv.URL)
	f.srv.webGuardOpts = []netguard.Option{netguard.ExemptForTest(t, netip.MustParseAddrPort(u.Host))}
}

func webBody(u string) string { return `{"url":` + string(must(json.Marshal(u))) + `}` }

func TestProcessWebContent(t *testing.T) {
	ws := newWebSite(t)
	f := newFixture(t, nil)
	ws.allow(t, f)
	for path, want := range map[string]string{
		"/page":      "T\nHello\nWorld page v0",
		"/untyped":   "No type",
		"/notes.txt": "<b>plain</b> text",
		"/doc":       "Hello PDF Second page",
	} {
		w := f.do("POST", "/api/v1/retrieval/process/web?process=false", f.userTok, webBody(ws.srv.URL+path))
		expect(t, w, 200, "")
		var out map[string]any
		json.Unmarshal(w.Body.Bytes(), &out)
		if len(out) != 2 || out["status"] != true || out["content"] != want {
			t.Errorf("%s: %s, want content %q", path, w.Body.String(), want)
		}
	}
	// Nothing was stored.
	if ids, _ := f.store.WebCollectionFiles(context.Background(), actorOf(f.user), webCollectionName(ws.srv.URL+"/page")); len(ids) != 0 {
		t.Fatalf("process=false stored %v", ids)
	}
}

func TestProcessWebRefused(t *testing.T) {
	ws := newWebSite(t)
	f := newFixture(t, map[string]string{"RAG_FILE_MAX_SIZE": "1"})
	// Without the test exemption the real server on 127.0.0.1 is refused.
	for _, u := range []string{ws.srv.URL + "/page", ws.internal.URL, "http://localhost:" + ws.srv.URL[strings.LastIndex(ws.srv.URL, ":")+1:] + "/page"} {
		expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, webBody(u)), 400, msgWebFailed)
	}
	ws.allow(t, f)
	for _, u := range []string{
		"ftp://example.com/", "file:///etc/passwd", "example.com", "http://exa\\mple.com/", "http://example.com/a\tb",
		"http://example.com/\r\n", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]/",
		"http://metadata.google.internal/", "http://10.0.0.1/",
		ws.srv.URL + "/redirect",    // redirects are not followed by default
		ws.srv.URL + "/to-internal", // nor this one
		ws.srv.URL + "/big",         // over RAG_FILE_MAX_SIZE
		ws.srv.URL + "/missing",     // 404
		ws.srv.URL + "/image",       // binary, not extractable
		ws.internal.URL,             // another port on 127.0.0.1
	} {
		w := f.do("POST", "/api/v1/retrieval/process/web?process=false", f.userTok, webBody(u))
		if w.Code != 400 || !strings.Contains(w.Body.String(), jsonString(msgWebFailed)) {
			t.Errorf("%q: %d %s", u, w.Code, w.Body.String())
		}
	}
	if ws.internalHit.Load() {
		t.Fatal("the internal server was reached")
	}
	// No url at all is a validation error.
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, `{}`), 422, "")
}

func TestProcessWebRedirects(t *testing.T) {
	ws := newWebSite(t)
	f := newFixture(t, map[string]string{"AIOHTTP_CLIENT_ALLOW_REDIRECTS": "true"})
	ws.allow(t, f)
	w := f.do("POST", "/api/v1/retrieval/process/web?process=false", f.userTok, webBody(ws.srv.URL+"/redirect"))
	expect(t, w, 200, "")
	if !strings.Contains(w.Body.String(), "World page") {
		t.Fatalf("followed redirect: %s", w.Body.String())
	}
	// A redirect to another (internal) address is checked again and refused.
	expect(t, f.do("POST", "/api/v1/retrieval/process/web?process=false", f.userTok, webBody(ws.srv.URL+"/to-internal")), 400, msgWebFailed)
	if ws.internalHit.Load() {
		t.Fatal("a redirect reached the internal server")
	}
}

type webResult struct {
	Status         bool    `json:"status"`
	CollectionName *string `json:"collection_name"`
	Filename       string  `json:"filename"`
	File           struct {
		Data map[string]any    `json:"data"`
		Meta map[string]string `json:"meta"`
	} `json:"file"`
}

func TestProcessWebStore(t *testing.T) {
	ws := newWebSite(t)
	f := newFixture(t, nil)
	ws.allow(t, f)
	ctx := context.Background()
	page := ws.srv.URL + "/page"
	name := webCollectionName(page)
	if len(name) != 63 {
		t.Fatalf("collection name %q", name)
	}

	w := f.do("POST", "/api/v1/retrieval/process/web", f.userTok, webBody(page))
	expect(t, w, 200, "")
	var raw map[string]any
	json.Unmarshal(w.Body.Bytes(), &raw)
	want := map[string]any{"status": true, "collection_name": name, "filename": page,
		"file": map[string]any{"data": map[string]any{"content": "T\nHello\nWorld page v0"}, "meta": map[string]any{"name": page, "source": page}}}
	if got, _ := json.Marshal(raw); string(got) != string(must(json.Marshal(want))) {
		t.Fatalf("response %s\nwant %s", got, must(json.Marshal(want)))
	}
	ids, err := f.store.WebCollectionFiles(ctx, actorOf(f.user), name)
	if err != nil || len(ids) != 1 {
		t.Fatalf("stored %v %v", ids, err)
	}
	file, err := f.store.GetFile(ctx, actorOf(f.user), ids[0], true)
	if err != nil || file.Status != "completed" || file.Content == nil || *file.Content != "T\nHello\nWorld page v0" || file.Filename != page {
		t.Fatalf("file %+v %v", file, err)
	}
	// Another user neither sees nor shares the collection.
	if ids, _ := f.store.WebCollectionFiles(ctx, actorOf(f.other), name); len(ids) != 0 {
		t.Fatalf("other sees %v", ids)
	}

	// overwrite=true (default) replaces the collection's page.
	ws.version.Store(1)
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, webBody(page)), 200, "")
	ids2, _ := f.store.WebCollectionFiles(ctx, actorOf(f.user), name)
	if len(ids2) != 1 || ids2[0] == ids[0] {
		t.Fatalf("after overwrite %v (before %v)", ids2, ids)
	}
	// overwrite=false appends.
	ws.version.Store(2)
	expect(t, f.do("POST", "/api/v1/retrieval/process/web?overwrite=false", f.userTok, webBody(page)), 200, "")
	ids3, _ := f.store.WebCollectionFiles(ctx, actorOf(f.user), name)
	if len(ids3) != 2 || ids3[0] != ids2[0] && ids3[1] != ids2[0] {
		t.Fatalf("after append %v (before %v)", ids3, ids2)
	}
	// A failed fetch keeps the collection as it was.
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, `{"url":`+jsonString(ws.srv.URL+"/missing")+`,"collection_name":"`+name+`"}`), 400, msgWebFailed)
	if ids4, _ := f.store.WebCollectionFiles(ctx, actorOf(f.user), name); len(ids4) != 2 {
		t.Fatalf("after a failure %v", ids4)
	}

	// A named collection.
	w = f.do("POST", "/api/v1/retrieval/process/web", f.userTok, `{"url":`+jsonString(ws.srv.URL+"/doc")+`,"collection_name":"my-docs"}`)
	expect(t, w, 200, "")
	var res webResult
	json.Unmarshal(w.Body.Bytes(), &res)
	if res.CollectionName == nil || *res.CollectionName != "my-docs" || res.File.Data["content"] != "Hello PDF Second page" {
		t.Fatalf("named %s", w.Body.String())
	}

	// A knowledge collection: its owner adds the page to it; a user
	// without write access is refused and nothing is stored.
	kb := f.userKnowledge()
	body := `{"url":` + jsonString(page) + `,"collection_name":"` + kb.ID + `"}`
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.otherTok, body), 400, msgWebFailed)
	if ids, _ := f.store.WebCollectionFiles(ctx, actorOf(f.other), kb.ID); len(ids) != 0 {
		t.Fatalf("refused caller stored %v", ids)
	}
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, body), 200, "")
	k, err := f.store.RetrievalKnowledge(ctx, actorOf(f.user), kb.ID)
	if err != nil || len(k.Files) != 1 || k.Files[0].Content == nil || *k.Files[0].Content != "T\nHello\nWorld page v2" {
		t.Fatalf("knowledge %+v %v", k, err)
	}

	// An empty page cannot be stored.
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, webBody(ws.srv.URL+"/empty")), 400, msgWebFailed)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func authzWebRows() []authzRow {
	// A URL netguard refuses: the route's authorization is what is tested
	// here; fetching is covered by the tests above.
	return []authzRow{
		{pattern: "POST /api/v1/retrieval/process/web", body: `{"url":"http://127.0.0.1:1/"}`, want: [5]int{401, 401, 400, 400, 400}},
	}
}

// A web collection is usable in a chat: a `web_search` or `url` item that
// names it injects the page; another user's item with the same name gets
// nothing.
func TestProcessWebInChat(t *testing.T) {
	ws := newWebSite(t)
	var prompts []string
	var mu sync.Mutex
	f, _ := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		prompts = append(prompts, req.Messages[len(req.Messages)-1].Content)
		mu.Unlock()
		fixtureHandler(t, "11-v1-chat-nostream.http")(w, r)
	}), nil)
	ws.allow(t, f)
	page := ws.srv.URL + "/page"
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, webBody(page)), 200, "")
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		return prompts[len(prompts)-1]
	}
	for _, typ := range []string{"web_search", "url"} {
		files := `"files":[{"type":"` + typ + `","collection_name":"` + webCollectionName(page) + `","name":"` + page + `"}]`
		expect(t, f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","messages":[{"role":"user","content":"What?"}],`+files+`}`), 200, "")
		if !strings.Contains(last(), "World page v0</source>") {
			t.Errorf("%s: prompt %q", typ, last())
		}
		expect(t, f.do("POST", "/api/chat/completions", f.otherTok, `{"model":"gpt","messages":[{"role":"user","content":"What?"}],`+files+`}`), 200, "")
		if strings.Contains(last(), "World page") {
			t.Errorf("%s: another user got the page: %q", typ, last())
		}
	}
}

// With an embedding engine the page is chunked and embedded like a file.
func TestProcessWebEmbeds(t *testing.T) {
	ws := newWebSite(t)
	calls := atomic.Int32{}
	emb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		var data []map[string]any
		for i := range req.Input {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{1, 0.5}})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	t.Cleanup(emb.Close)
	f := newFixture(t, map[string]string{"RAG_EMBEDDING_ENGINE": "openai", "RAG_EMBEDDING_MODEL": "m", "RAG_OPENAI_API_BASE_URL": emb.URL + "/v1"})
	ws.allow(t, f)
	page := ws.srv.URL + "/page"
	expect(t, f.do("POST", "/api/v1/retrieval/process/web", f.userTok, webBody(page)), 200, "")
	ctx := context.Background()
	ids, _ := f.store.WebCollectionFiles(ctx, actorOf(f.user), webCollectionName(page))
	if len(ids) != 1 || calls.Load() == 0 {
		t.Fatalf("ids %v, embedding calls %d", ids, calls.Load())
	}
	cs, err := f.store.FileChunks(ctx, actorOf(f.user), ids[0], "openai:m", true)
	if err != nil || len(cs) == 0 || len(cs[0].Vector) == 0 {
		t.Fatalf("chunks %+v %v", cs, err)
	}
	// An engine failure fails the request and stores nothing.
	emb.Close()
	expect(t, f.do("POST", "/api/v1/retrieval/process/web?overwrite=false", f.userTok, webBody(page)), 400, msgWebFailed)
	if ids2, _ := f.store.WebCollectionFiles(ctx, actorOf(f.user), webCollectionName(page)); len(ids2) != 1 {
		t.Fatalf("after a failed embedding %v", ids2)
	}
}
