package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hearth/chat"
	"hearth/realtime"
	"hearth/store"
)

// Completion tests run the real router with fake upstreams speaking the
// recorded wire formats (llm/testdata/fixtures). The model registry is
// replaced through the pipelineState test hook (testResolver) so these
// tests do not depend on connection configuration, and events are recorded
// through testEmitter.

// wireFixture returns the recorded response (content type, body) of a
// fixture exchange.
func wireFixture(t testing.TB, name string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "llm", "testdata", "fixtures", "ollama-0.17.4", name))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("\n\n### response\n"))
	resp := data[i+len("\n\n### response\n"):]
	j := bytes.Index(resp, []byte("\n\n"))
	ctype := ""
	for _, line := range strings.Split(string(resp[:j]), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Type") {
			ctype = strings.TrimSpace(v)
		}
	}
	return ctype, resp[j+2:]
}

func fixtureHandler(t testing.TB, name string) http.HandlerFunc {
	ctype, body := wireFixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	}
}

type testResolver map[string]*chat.Target

func (m testResolver) Resolve(_ context.Context, _ store.Actor, id string) (*chat.Target, error) {
	t, ok := m[id]
	if !ok {
		return nil, chat.ErrModelNotFound
	}
	c := *t
	c.ModelID = id
	return &c, nil
}

type testEmitter struct {
	mu     sync.Mutex
	events []realtime.Event
	users  []string
	wake   chan struct{}
}

func (e *testEmitter) Emit(userID string, ev realtime.Event) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.users = append(e.users, userID)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *testEmitter) count(typ string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if ev.Data.Type == typ {
			n++
		}
	}
	return n
}

func (e *testEmitter) waitCount(t testing.TB, typ string, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for e.count(typ) < n {
		select {
		case <-e.wake:
		case <-deadline:
			t.Fatalf("timed out waiting for %d %s events", n, typ)
		}
	}
}

// completionFixture is a server fixture whose models "gpt" (OpenAI) and
// "llama" (Ollama) point at the given upstream servers.
func completionFixture(t *testing.T, env map[string]string, openai, ollama http.Handler) (*fixture, *testEmitter) {
	t.Helper()
	f := newFixture(t, env)
	res := testResolver{}
	if openai != nil {
		up := httptest.NewServer(openai)
		t.Cleanup(up.Close)
		res["gpt"] = &chat.Target{UpstreamID: "tiny", Conn: chat.Connection{Kind: chat.KindOpenAI, BaseURL: up.URL + "/v1", ConnectionType: "external", Enabled: true}, OwnedBy: "openai"}
	}
	if ollama != nil {
		up := httptest.NewServer(ollama)
		t.Cleanup(up.Close)
		res["llama"] = &chat.Target{UpstreamID: "tiny", Conn: chat.Connection{Kind: chat.KindOllama, BaseURL: up.URL, ConnectionType: "local", Enabled: true}, OwnedBy: "ollama"}
	}
	em := &testEmitter{wake: make(chan struct{}, 1)}
	f.srv.testResolver, f.srv.testEmitter = res, em
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.srv.pipeline.Tasks().Wait(ctx); err != nil {
			t.Errorf("tasks still running: %v", f.srv.pipeline.Tasks().List())
		}
	})
	return f, em
}

// sdkHeaders are what the OpenAI Node SDK sends (CLIENTS.md): Accept:
// application/json even on stream requests.
func sdkHeaders(key string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key, "Accept": "application/json", "X-Stainless-Lang": "js"}
}

func TestCompletionsOpenAISDK(t *testing.T) {
	f, em := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		name := "11-v1-chat-nostream.http"
		if req["stream"] == true {
			name = "10-v1-chat-stream.http"
		}
		fixtureHandler(t, name)(w, r)
	}), nil)
	for _, path := range []string{"/api/chat/completions", "/api/v1/chat/completions"} {
		// Non-streaming: no "stream" key at all.
		w := f.doH("POST", path, `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`, sdkHeaders(f.userKey))
		_, want := wireFixture(t, "11-v1-chat-nostream.http")
		if w.Code != 200 || w.Body.String() != string(want) || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s non-stream: %d %s %q", path, w.Code, w.Header().Get("Content-Type"), w.Body.String())
		}
		// Streaming with Accept: application/json: SSE anyway, ending [DONE].
		w = f.doH("POST", path, `{"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}`, sdkHeaders(f.userKey))
		_, want = wireFixture(t, "10-v1-chat-stream.http")
		if w.Code != 200 || w.Body.String() != string(want) || w.Header().Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s stream: %d %s %q", path, w.Code, w.Header().Get("Content-Type"), w.Body.String())
		}
	}
	if len(em.events) != 0 {
		t.Errorf("API-only calls emitted %d events", len(em.events))
	}
}

func TestCompletionsOllamaViaHTTP(t *testing.T) {
	f, _ := completionFixture(t, nil, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		name := "05-chat-nostream.http"
		if req["stream"] == true {
			name = "04-chat-stream.http"
		}
		fixtureHandler(t, name)(w, r)
	}))
	w := f.do("POST", "/api/chat/completions", f.userTok, `{"model":"llama","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	body := w.Body.String()
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" || strings.Count(body, "data: ") != 5 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("%d %q", w.Code, body)
	}
	w = f.do("POST", "/api/chat/completions", f.userTok, `{"model":"llama","messages":[{"role":"user","content":"hi"}]}`)
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil || c.Object != "chat.completion" || c.Choices[0].Message.Content != ";tq" {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
}

func TestCompletionsErrors(t *testing.T) {
	f, _ := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		w.Write([]byte(`{"error":{"message":"model 'nope' not found","type":"api_error","param":null,"code":null}}`))
	}), nil)
	expect(t, f.do("POST", "/api/chat/completions", f.userTok, `{"model":"missing","messages":[]}`), 400, "Model not found")
	expect(t, f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","stream":true,"messages":[]}`), 404, "model 'nope' not found")
	expect(t, f.do("POST", "/api/chat/completions", f.userTok, `not json`), 422, "")
}

const completionChat = `{"title":"New Chat","models":["gpt"],"history":{"currentId":"a1","messages":{` +
	`"u1":{"id":"u1","parentId":null,"childrenIds":["a1"],"role":"user","content":"hi","timestamp":1,"models":["gpt"]},` +
	`"a1":{"id":"a1","parentId":"u1","childrenIds":[],"role":"assistant","content":"","model":"gpt","modelName":"GPT","modelIdx":0,"timestamp":2,"done":false}}},` +
	`"messages":[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","content":""}]}`

// storedAnswer reads message a1 of a chat as its owner.
func storedAnswer(t *testing.T, f *fixture, chatID string) map[string]any {
	t.Helper()
	w := f.do("GET", "/api/v1/chats/"+chatID, f.userTok, "")
	expect(t, w, 200, "")
	var body struct {
		Chat struct {
			History struct {
				Messages map[string]map[string]any `json:"messages"`
			} `json:"history"`
		} `json:"chat"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	return body.Chat.History.Messages["a1"]
}

// The orchestration flow of SPEC §4: create the chat with a placeholder,
// complete with chat_id + id (no session_id), read the chat.
func TestCompletionsStoredSynchronous(t *testing.T) {
	f, em := completionFixture(t, nil, fixtureHandler(t, "10-v1-chat-stream.http"), nil)
	chatID := mkChat(f, f.user, completionChat)
	w := f.do("POST", "/api/chat/completions", f.userKey, `{"model":"gpt","stream":true,"chat_id":"`+chatID+`","id":"a1","messages":[{"role":"user","content":"hi"}]}`)
	if w.Code != 200 || w.Body.String() != "null" {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
	m := storedAnswer(t, f, chatID)
	if m["content"] != ";tq" || m["done"] != true || m["parentId"] != "u1" {
		t.Errorf("stored %v", m)
	}
	if em.count("chat:completion") == 0 {
		t.Errorf("no live events for the owner")
	}

	// Someone else's chat: 404, nothing happens.
	other := mkChat(f, f.other, completionChat)
	expect(t, f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","chat_id":"`+other+`","id":"a1","messages":[]}`), 404, "Something went wrong :/")
	expect(t, f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","chat_id":"nope","id":"a1","messages":[]}`), 404, "Something went wrong :/")
}

// stepUpstream streams one content delta per value received on step, and
// [DONE] after the last.
func stepUpstream(parts []string, step <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for i := 0; i <= len(parts); i++ {
			select {
			case <-step:
			case <-r.Context().Done():
				return
			}
			if i == len(parts) {
				fmt.Fprint(w, "data: [DONE]\n\n")
				return
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", parts[i])
			w.(http.Flusher).Flush()
		}
	}
}

// Async mode and the task endpoints: the answer is at once, the task is
// listed for its owner and admins, the owner stops it, the partial answer
// is kept.
func TestCompletionsAsyncAndTasks(t *testing.T) {
	step := make(chan struct{}, 8)
	f, em := completionFixture(t, nil, stepUpstream([]string{"Hello", " world", " never"}, step), nil)
	chatID := mkChat(f, f.user, completionChat)
	w := f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","stream":true,"chat_id":"`+chatID+`","id":"a1","session_id":"sid","messages":[],"background_tasks":{"title_generation":true}}`)
	expect(t, w, 200, "")
	var ans struct {
		Status  bool     `json:"status"`
		TaskIDs []string `json:"task_ids"`
		TaskID  string   `json:"task_id"`
		ChatID  string   `json:"chat_id"`
	}
	json.Unmarshal(w.Body.Bytes(), &ans)
	if !ans.Status || len(ans.TaskIDs) != 1 || ans.TaskID != ans.TaskIDs[0] || ans.ChatID != chatID {
		t.Fatalf("answer %s", w.Body.String())
	}
	step <- struct{}{}
	step <- struct{}{}
	em.waitCount(t, "chat:completion", 2)

	want := `{"task_ids":["` + ans.TaskID + `"]}`
	if w := f.do("GET", "/api/tasks/chat/"+chatID, f.userTok, ""); w.Body.String() != want {
		t.Errorf("owner sees %s", w.Body.String())
	}
	if w := f.do("GET", "/api/tasks/chat/"+chatID, f.adminTok, ""); w.Body.String() != want {
		t.Errorf("admin sees %s", w.Body.String())
	}
	if w := f.do("GET", "/api/tasks/chat/"+chatID, f.otherTok, ""); w.Body.String() != `{"task_ids":[]}` {
		t.Errorf("other sees %s", w.Body.String())
	}
	if w := f.do("GET", "/api/tasks", f.adminTok, ""); w.Body.String() != `{"tasks":["`+ans.TaskID+`"]}` {
		t.Errorf("admin list %s", w.Body.String())
	}
	expect(t, f.do("POST", "/api/tasks/chat/"+chatID+"/stop", f.otherTok, ""), 404, "")
	w = f.do("POST", "/api/tasks/chat/"+chatID+"/stop", f.userTok, "")
	if w.Code != 200 || w.Body.String() != `{"message":"All tasks for item `+chatID+` stopped.","status":true}` {
		t.Fatalf("stop: %d %s", w.Code, w.Body.String())
	}
	m := storedAnswer(t, f, chatID)
	if m["content"] != "Hello world" || m["done"] != true {
		t.Errorf("stored %v", m)
	}
	if em.count("chat:tasks:cancel") != 1 {
		t.Errorf("no chat:tasks:cancel")
	}
	if w := f.do("GET", "/api/tasks/chat/"+chatID, f.userTok, ""); w.Body.String() != `{"task_ids":[]}` {
		t.Errorf("after stop %s", w.Body.String())
	}
	w = f.do("POST", "/api/tasks/chat/"+chatID+"/stop", f.userTok, "")
	if w.Body.String() != `{"message":"No tasks found for item `+chatID+`.","status":true}` {
		t.Errorf("second stop %s", w.Body.String())
	}
}

func TestStopTaskByID(t *testing.T) {
	step := make(chan struct{}, 8)
	f, em := completionFixture(t, nil, stepUpstream([]string{"x", "y"}, step), nil)
	chatID := mkChat(f, f.user, completionChat)
	w := f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","stream":true,"chat_id":"`+chatID+`","id":"a1","session_id":"s","messages":[]}`)
	var ans struct {
		TaskID string `json:"task_id"`
	}
	json.Unmarshal(w.Body.Bytes(), &ans)
	step <- struct{}{}
	em.waitCount(t, "chat:completion", 1)
	w = f.do("POST", "/api/tasks/stop/"+ans.TaskID, f.adminTok, "")
	if w.Body.String() != `{"message":"Task `+ans.TaskID+` successfully stopped.","status":true}` {
		t.Fatalf("stop %s", w.Body.String())
	}
	if m := storedAnswer(t, f, chatID); m["content"] != "x" || m["done"] != true {
		t.Errorf("stored %v", m)
	}
	w = f.do("POST", "/api/tasks/stop/"+ans.TaskID, f.adminTok, "")
	if w.Code != 200 || w.Body.String() != `{"message":"Task with ID `+ans.TaskID+` not found.","status":false}` {
		t.Errorf("unknown %d %s", w.Code, w.Body.String())
	}
}

// The async task survives the client: the HTTP request is over (and its
// context cancelled) long before the answer is complete.
func TestCompletionsAsyncSurvivesClient(t *testing.T) {
	step := make(chan struct{}, 8)
	f, em := completionFixture(t, nil, stepUpstream([]string{"a", "b"}, step), nil)
	chatID := mkChat(f, f.user, completionChat)
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, "POST", "/api/chat/completions",
		strings.NewReader(`{"model":"gpt","stream":true,"chat_id":"`+chatID+`","id":"a1","session_id":"s","messages":[]}`))
	req.Header.Set("Authorization", "Bearer "+f.userTok)
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	cancel()
	expect(t, w, 200, "")
	for range 3 {
		step <- struct{}{}
	}
	em.waitCount(t, "chat:active", 2)
	if m := storedAnswer(t, f, chatID); m["content"] != "ab" || m["done"] != true {
		t.Errorf("stored %v", m)
	}
}

// POST /api/chat/completed: lenient, answers the payload unchanged; on the
// dev channel it is marked deprecated.
func TestChatCompleted(t *testing.T) {
	f, _ := completionFixture(t, map[string]string{"RELEASE_CHANNEL": "dev"}, fixtureHandler(t, "11-v1-chat-nostream.http"), nil)
	body := `{"model":"gpt","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}],"chat_id":"c","x":[1,2]}`
	w := f.do("POST", "/api/chat/completed", f.userTok, body)
	if w.Code != 200 || w.Body.String() != body || w.Header().Get("Deprecation") != "true" {
		t.Fatalf("%d %q %v", w.Code, w.Body.String(), w.Header())
	}
	expect(t, f.do("POST", "/api/chat/completed", f.userTok, `{"messages":[]}`), 200, "")
	expect(t, f.do("POST", "/api/chat/completed", f.userTok, `{"model":"nope","messages":[]}`), 400, "Model not found")

	f2, _ := completionFixture(t, nil, fixtureHandler(t, "11-v1-chat-nostream.http"), nil)
	if w := f2.do("POST", "/api/chat/completed", f2.userTok, body); w.Header().Get("Deprecation") != "" {
		t.Errorf("stable marks /api/chat/completed deprecated")
	}
}

// RELEASE_CHANNEL=dev runs the inline outlet for non-streaming stored
// completions (chat:outlet); stable does not.
func TestReleaseChannelSwitch(t *testing.T) {
	for _, ch := range []string{"stable", "dev"} {
		f, em := completionFixture(t, map[string]string{"RELEASE_CHANNEL": ch}, fixtureHandler(t, "11-v1-chat-nostream.http"), nil)
		chatID := mkChat(f, f.user, completionChat)
		w := f.do("POST", "/api/chat/completions", f.userTok, `{"model":"gpt","chat_id":"`+chatID+`","id":"a1","messages":[{"role":"user","content":"hi"}]}`)
		_, want := wireFixture(t, "11-v1-chat-nostream.http")
		if w.Body.String() != string(want) {
			t.Errorf("%s: the body must not change: %s", ch, w.Body.String())
		}
		if n, wantN := em.count("chat:outlet"), map[string]int{"stable": 0, "dev": 1}[ch]; n != wantN {
			t.Errorf("%s: %d chat:outlet events", ch, n)
		}
	}
}

func TestTaskConfig(t *testing.T) {
	f := newFixture(t, map[string]string{"TASK_MODEL": "small"})
	w := f.do("GET", "/api/v1/tasks/config", f.adminTok, "")
	var cfg map[string]any
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if cfg["TASK_MODEL"] != "small" || cfg["ENABLE_TITLE_GENERATION"] != true || cfg["TITLE_GENERATION_PROMPT_TEMPLATE"] != "" || len(cfg) != len(taskConfigKeys) {
		t.Fatalf("config %s", w.Body.String())
	}
	// The UI posts the whole form back.
	cfg["ENABLE_TITLE_GENERATION"] = false
	cfg["TASK_MODEL_EXTERNAL"] = "ext"
	b, _ := json.Marshal(cfg)
	w = f.do("POST", "/api/v1/tasks/config/update", f.adminTok, string(b))
	expect(t, w, 200, "")
	if c := f.srv.cfg(); c.EnableTitleGeneration || c.TaskModelExternal != "ext" {
		t.Errorf("not applied: %v %q", c.EnableTitleGeneration, c.TaskModelExternal)
	}
	json.Unmarshal(w.Body.Bytes(), &cfg)
	if cfg["ENABLE_TITLE_GENERATION"] != false {
		t.Errorf("answer %s", w.Body.String())
	}
	expect(t, f.do("POST", "/api/v1/tasks/config/update", f.adminTok, `{"TITLE_GENERATION_PROMPT_TEMPLATE":"Name it: {{MESSAGES:END:2}}"}`), 400, "Not supported by this server: TITLE_GENERATION_PROMPT_TEMPLATE")
	expect(t, f.do("POST", "/api/v1/tasks/config/update", f.adminTok, `{"NOPE":1}`), 400, "Unknown setting(s): NOPE")
	expect(t, f.do("POST", "/api/v1/tasks/config/update", f.adminTok, `{"ENABLE_TAGS_GENERATION":"maybe"}`), 400, "")
}

// ttfb returns the time from sending a streaming request to reading the
// first body byte.
func ttfb(b *testing.B, client *http.Client, url, auth, body string) time.Duration {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadByte(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	io.Copy(io.Discard, br)
	resp.Body.Close()
	return d
}

// BenchmarkTTFB measures the time to the first streamed byte from the
// upstream directly and through Hearth (mode 3, real TCP, keep-alive);
// hearth-added-µs is the difference of the medians.
func BenchmarkTTFB(b *testing.B) {
	_, chunkBody := wireFixture(b, "10-v1-chat-stream.http")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(chunkBody)
	}))
	defer up.Close()
	f := newFixture(b, nil)
	f.srv.testResolver = testResolver{"gpt": &chat.Target{UpstreamID: "tiny", Conn: chat.Connection{Kind: chat.KindOpenAI, BaseURL: up.URL + "/v1"}}}
	hearth := httptest.NewServer(f.srv)
	defer hearth.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	body := `{"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	var direct, through []time.Duration
	for i := 0; i < b.N; i++ {
		direct = append(direct, ttfb(b, client, up.URL+"/v1/chat/completions", "", body))
		through = append(through, ttfb(b, client, hearth.URL+"/api/chat/completions", f.userKey, body))
	}
	med := func(d []time.Duration) time.Duration {
		s := append([]time.Duration(nil), d...)
		for i := range s {
			for j := i + 1; j < len(s); j++ {
				if s[j] < s[i] {
					s[i], s[j] = s[j], s[i]
				}
			}
		}
		return s[len(s)/2]
	}
	b.ReportMetric(float64(med(direct).Microseconds()), "upstream-ttfb-µs")
	b.ReportMetric(float64(med(through).Microseconds()), "hearth-ttfb-µs")
	b.ReportMetric(float64((med(through) - med(direct)).Microseconds()), "hearth-added-µs")
}
