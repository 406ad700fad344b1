package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hearth/realtime"
	"hearth/store"
)

// fixtureResponse returns the recorded response (content type, body) of a
// wire fixture (llm/testdata/fixtures: real Ollama 0.17.4 exchanges).
func fixtureResponse(t testing.TB, name string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "llm", "testdata", "fixtures", "ollama-0.17.4", name))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("\n\n### response\n"))
	if i < 0 {
		t.Fatalf("%s: no response", name)
	}
	resp := data[i+len("\n\n### response\n"):]
	j := bytes.Index(resp, []byte("\n\n"))
	head, body := resp[:j], resp[j+2:]
	ctype := ""
	for _, line := range strings.Split(string(head), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Type") {
			ctype = strings.TrimSpace(v)
		}
	}
	return ctype, body
}

// serveBody answers every request with a fixed body.
func serveBody(ctype string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	}
}

func serveFixture(t testing.TB, name string) http.HandlerFunc {
	ctype, body := fixtureResponse(t, name)
	return serveBody(ctype, body)
}

// upstream is a fake provider recording what it was sent.
type upstream struct {
	srv     *httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	paths   []string
	handler atomic.Pointer[http.HandlerFunc]
}

func newUpstream(t testing.TB, h http.HandlerFunc) *upstream {
	u := &upstream{}
	u.set(h)
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, b)
		u.paths = append(u.paths, r.URL.Path)
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		(*u.handler.Load())(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) set(h http.HandlerFunc) { u.handler.Store(&h) }

func (u *upstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

// body returns the i-th request body decoded (i < 0 counts from the end).
func (u *upstream) body(t testing.TB, i int) map[string]any {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if i < 0 {
		i += len(u.bodies)
	}
	if i < 0 || i >= len(u.bodies) {
		t.Fatalf("upstream got %d requests, want #%d", len(u.bodies), i)
	}
	var m map[string]any
	if err := json.Unmarshal(u.bodies[i], &m); err != nil {
		t.Fatalf("upstream body %q: %v", u.bodies[i], err)
	}
	return m
}

// fakeResolver maps model ids to targets.
type fakeResolver struct {
	mu      sync.Mutex
	targets map[string]*Target
}

func (f *fakeResolver) Resolve(_ context.Context, _ store.Actor, id string) (*Target, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.targets[id]
	if !ok {
		return nil, ErrModelNotFound
	}
	c := *t
	return &c, nil
}

// recEmitter records events; waiters are woken on each one.
type recEmitter struct {
	mu      sync.Mutex
	events  []realtime.Event
	users   []string
	wake    chan struct{}
	panicOn string // panic once on the first event of this type
}

func newRecEmitter() *recEmitter { return &recEmitter{wake: make(chan struct{}, 1)} }

func (e *recEmitter) Emit(userID string, ev realtime.Event) {
	e.mu.Lock()
	if e.panicOn != "" && ev.Data.Type == e.panicOn {
		e.panicOn = ""
		e.mu.Unlock()
		panic("emitter exploded")
	}
	// Round-trip through JSON: proves the data is encodable, and freezes it.
	b, err := json.Marshal(ev.Data.Data)
	if err != nil {
		e.mu.Unlock()
		panic(err)
	}
	var frozen any
	json.Unmarshal(b, &frozen)
	ev.Data.Data = frozen
	e.events = append(e.events, ev)
	e.users = append(e.users, userID)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// snapshot returns the events so far.
func (e *recEmitter) snapshot() []realtime.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]realtime.Event(nil), e.events...)
}

// ofType returns the data of the events of a type.
func (e *recEmitter) ofType(typ string) []any {
	var out []any
	for _, ev := range e.snapshot() {
		if ev.Data.Type == typ {
			out = append(out, ev.Data.Data)
		}
	}
	return out
}

func (e *recEmitter) types() []string {
	var out []string
	for _, ev := range e.snapshot() {
		out = append(out, ev.Data.Type)
	}
	return out
}

// waitFor blocks until pred holds for the recorded events (10 s at most).
func (e *recEmitter) waitFor(t testing.TB, what string, pred func([]realtime.Event) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if pred(e.snapshot()) {
			return
		}
		select {
		case <-e.wake:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; events: %v", what, e.types())
		}
	}
}

// waitType waits until n events of typ were emitted.
func (e *recEmitter) waitType(t testing.TB, typ string, n int) {
	t.Helper()
	e.waitFor(t, typ, func(evs []realtime.Event) bool {
		c := 0
		for _, ev := range evs {
			if ev.Data.Type == typ {
				c++
			}
		}
		return c >= n
	})
}

// countingStore counts writes.
type countingStore struct {
	*store.Store
	edits   atomic.Int32
	updates atomic.Int32
	tags    atomic.Int32
}

func (c *countingStore) EditMessage(ctx context.Context, a store.Actor, chatID, msgID string, e store.MessageEdit) error {
	c.edits.Add(1)
	return c.Store.EditMessage(ctx, a, chatID, msgID, e)
}

func (c *countingStore) UpdateChat(ctx context.Context, a store.Actor, id string, p *store.ChatPatch) error {
	c.updates.Add(1)
	return c.Store.UpdateChat(ctx, a, id, p)
}

func (c *countingStore) AddChatTag(ctx context.Context, a store.Actor, chatID, name string) ([]store.Tag, error) {
	c.tags.Add(1)
	return c.Store.AddChatTag(ctx, a, chatID, name)
}

// harness is a pipeline on a real store with a fake resolver and emitter.
type harness struct {
	t        *testing.T
	st       *countingStore
	em       *recEmitter
	res      *fakeResolver
	p        *Pipeline
	admin    store.User
	user     store.User
	other    store.User
	settings atomic.Pointer[Settings]
	now      time.Time
}

func defaultSettings() Settings {
	return Settings{DeltaChunkSize: 1, ReleaseChannel: "stable", EnableTitle: true, EnableTags: true, EnableFollowUps: true}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, st: &countingStore{Store: st}, em: newRecEmitter(), res: &fakeResolver{targets: map[string]*Target{}},
		now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	s := defaultSettings()
	h.settings.Store(&s)
	h.admin, err = st.CreateUser(ctx, store.NewUser{Email: "admin@example.com", Name: "Admin", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	h.user, err = st.CreateUser(ctx, store.NewUser{Email: "ann@example.com", Name: "Ann", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	h.other, err = st.CreateUser(ctx, store.NewUser{Email: "bob@example.com", Name: "Bob", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithCancel(ctx)
	h.p = New(Options{Store: h.st, Files: h.st, Resolver: h.res, Emitter: h.em, Settings: func() Settings { return *h.settings.Load() },
		Context: pctx, Now: func() time.Time { return h.now }})
	t.Cleanup(func() {
		cancel()
		wctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		if err := h.p.Tasks().Wait(wctx); err != nil {
			t.Errorf("tasks still running at the end: %v", h.p.Tasks().List())
		}
	})
	return h
}

func (h *harness) set(f func(*Settings)) {
	s := *h.settings.Load()
	f(&s)
	h.settings.Store(&s)
}

func (h *harness) addModel(id string, t *Target) {
	h.res.mu.Lock()
	defer h.res.mu.Unlock()
	t.ModelID = id
	h.res.targets[id] = t
}

func openAITarget(u *upstream) *Target {
	return &Target{UpstreamID: "tiny", Conn: Connection{Kind: KindOpenAI, BaseURL: u.srv.URL + "/v1", ConnectionType: "external", Enabled: true}, OwnedBy: "openai"}
}

func ollamaTarget(u *upstream) *Target {
	return &Target{UpstreamID: "tiny", Conn: Connection{Kind: KindOllama, BaseURL: u.srv.URL, ConnectionType: "local", Enabled: true}, OwnedBy: "ollama"}
}

func actorOf(u store.User) store.Actor { return store.Actor{UserID: u.ID, Role: u.Role} }

// mkChat creates a chat of the harness user: user message u1 ("hi") and an
// empty assistant placeholder a1 under it.
func (h *harness) mkChat() string {
	h.t.Helper()
	return h.mkChatOf(h.user, `{"title":"New Chat","models":["m"],"history":{"currentId":"a1","messages":{`+
		`"u1":{"id":"u1","parentId":null,"childrenIds":["a1"],"role":"user","content":"Tell me about Go","timestamp":1,"models":["m"]},`+
		`"a1":{"id":"a1","parentId":"u1","childrenIds":[],"role":"assistant","content":"","model":"m","modelName":"M","modelIdx":0,"timestamp":2,"done":false}}},`+
		`"messages":[{"id":"u1","role":"user","content":"Tell me about Go"},{"id":"a1","role":"assistant","content":""}]}`)
}

func (h *harness) mkChatOf(u store.User, chat string) string {
	h.t.Helper()
	p, err := store.ParseChat([]byte(chat))
	if err != nil {
		h.t.Fatal(err)
	}
	id, err := h.st.Store.CreateChat(context.Background(), actorOf(u), store.NewChat{Chat: p})
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// message returns a stored message of the user's chat.
func (h *harness) message(chatID, msgID string) map[string]any {
	h.t.Helper()
	rec, err := h.st.Store.GetChat(context.Background(), actorOf(h.user), chatID, false)
	if err != nil {
		h.t.Fatal(err)
	}
	var doc struct {
		History struct {
			Messages map[string]map[string]any `json:"messages"`
		} `json:"history"`
	}
	if err := json.Unmarshal(rec.Chat, &doc); err != nil {
		h.t.Fatal(err)
	}
	m, ok := doc.History.Messages[msgID]
	if !ok {
		h.t.Fatalf("message %s not stored", msgID)
	}
	return m
}

func (h *harness) chatRecord(chatID string) store.ChatRecord {
	h.t.Helper()
	rec, err := h.st.Store.GetChat(context.Background(), actorOf(h.user), chatID, false)
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

// complete runs a request as the harness user.
func (h *harness) complete(ctx context.Context, body string) (*Response, error) {
	return h.p.Complete(ctx, Request{Actor: actorOf(h.user), User: UserInfo{Name: "Ann"}, Body: []byte(body)})
}

// mustComplete runs a request that must succeed; a stream is read whole.
func (h *harness) mustComplete(body string) (*Response, string) {
	h.t.Helper()
	res, err := h.complete(context.Background(), body)
	if err != nil {
		h.t.Fatalf("Complete: %v", err)
	}
	if res.Stream != nil {
		var b bytes.Buffer
		if err := res.Stream(&b); err != nil {
			h.t.Logf("stream ended with %v", err)
		}
		return res, b.String()
	}
	return res, string(res.Body)
}

// waitTask waits until the task with id (if still registered) is done.
func (h *harness) waitTask(id string) {
	h.t.Helper()
	if t, ok := h.p.Tasks().Get(id); ok {
		select {
		case <-t.Done():
		case <-time.After(10 * time.Second):
			h.t.Fatalf("task %s did not finish", id)
		}
	}
}

// sseBody builds an OpenAI SSE stream of content deltas, with [DONE].
func sseBody(parts ...string) []byte {
	var b bytes.Buffer
	for i, p := range parts {
		role := ""
		if i == 0 {
			role = `"role":"assistant",`
		}
		c, _ := json.Marshal(p)
		b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{` + role + `"content":` + string(c) + `},"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// jsonOf decodes s, failing the test on error.
func jsonOf(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON %q: %v", s, err)
	}
	return m
}

func jsonDecode(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
