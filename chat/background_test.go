package chat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// taskUpstream answers task prompts (non-streaming, "### Task" prompts)
// with JSON wrapped in reasoning and chatter, and anything else with the
// main answer.
func taskUpstream(main http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(b, &req)
		if req.Stream || len(req.Messages) != 1 || !strings.Contains(req.Messages[0].Content, "### Task") {
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			main(w, r)
			return
		}
		p := req.Messages[0].Content
		var answer string
		switch {
		case strings.Contains(p, `"title"`):
			answer = `<think>a {brace} inside</think>Sure! {"title": "🚀 Go Basics"}`
		case strings.Contains(p, `"tags"`):
			answer = `{"tags": ["Technology", "Programming Languages", "None"]}`
		case strings.Contains(p, `"follow_ups"`):
			answer = "```json\n{\"follow_ups\": [\"What are goroutines?\", \" \", \"How do I install Go?\"]}\n```"
		}
		c, _ := json.Marshal(answer)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"t","object":"chat.completion","created":1,"model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":` + string(c) + `},"finish_reason":"stop"}]}`))
	}
}

func TestBackgroundTasksStoredAndEmitted(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, taskUpstream(serveBody("text/event-stream", sseBody("Go is ", "a language."))))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[],` +
		`"background_tasks":{"title_generation":true,"tags_generation":true,"follow_up_generation":true}}`)
	if up.calls() != 4 {
		t.Fatalf("%d upstream calls, want answer + 3 tasks", up.calls())
	}
	task := up.body(t, 1)
	prompt := task["messages"].([]any)[0].(map[string]any)["content"].(string)
	if task["stream"] != false || task["max_tokens"] != 1000.0 || task["model"] != "tiny" ||
		!strings.Contains(prompt, "USER: Tell me about Go\nASSISTANT: Go is a language.") {
		t.Errorf("title task request %v", task)
	}
	rec := h.chatRecord(chatID)
	if rec.Title != "🚀 Go Basics" {
		t.Errorf("title %q", rec.Title)
	}
	var doc map[string]any
	jsonDecode(t, rec.Chat, &doc)
	if doc["title"] != "🚀 Go Basics" {
		t.Errorf("chat.title %v", doc["title"])
	}
	tags, err := h.st.Store.ChatTags(context.Background(), actorOf(h.user), chatID)
	if err != nil || len(tags) != 2 || tags[0].ID != "programming_languages" && tags[1].ID != "programming_languages" {
		t.Errorf("tags %v %v", tags, err)
	}
	m := h.message(chatID, "a1")
	fu, _ := m["followUps"].([]any)
	if len(fu) != 2 || fu[0] != "What are goroutines?" || m["content"] != "Go is a language." {
		t.Errorf("message %v", m)
	}
	if got := h.em.ofType("chat:title"); len(got) != 1 || got[0] != "🚀 Go Basics" {
		t.Errorf("chat:title %v", got)
	}
	if got := h.em.ofType("chat:tags"); len(got) != 1 || len(got[0].([]any)) != 2 {
		t.Errorf("chat:tags %v", got)
	}
	if got := h.em.ofType("chat:message:follow_ups"); len(got) != 1 || len(got[0].(map[string]any)["follow_ups"].([]any)) != 2 {
		t.Errorf("follow-ups event %v", got)
	}
	// The tasks run after the answer is stored and announced.
	types := strings.Join(h.em.types(), ",")
	if !strings.Contains(types, "chat:completion,chat:title,chat:tags,chat:message:follow_ups") {
		t.Errorf("order %s", types)
	}
}

// The ENABLE_*_GENERATION toggles win over the request; with title
// generation off a first exchange is named after the user's message.
func TestBackgroundTogglesAndTitleFallback(t *testing.T) {
	h := newHarness(t)
	h.set(func(s *Settings) { s.EnableTitle, s.EnableTags, s.EnableFollowUps = false, false, false })
	up := newUpstream(t, taskUpstream(serveFixture(t, "11-v1-chat-nostream.http")))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	h.mustComplete(`{"model":"gpt","chat_id":"` + chatID + `","id":"a1","messages":[],` +
		`"background_tasks":{"title_generation":true,"tags_generation":true,"follow_up_generation":true}}`)
	if up.calls() != 1 {
		t.Errorf("%d calls: disabled tasks ran", up.calls())
	}
	if rec := h.chatRecord(chatID); rec.Title != "Tell me about Go" {
		t.Errorf("title %q", rec.Title)
	}
	if got := h.em.ofType("chat:title"); len(got) != 1 || got[0] != "Tell me about Go" {
		t.Errorf("chat:title %v", got)
	}

	// Key present but false: the same fallback (COMPAT §16 row 27) ...
	h = newHarness(t)
	up = newUpstream(t, taskUpstream(serveFixture(t, "11-v1-chat-nostream.http")))
	h.addModel("gpt", openAITarget(up))
	chatID = h.mkChat()
	h.mustComplete(`{"model":"gpt","chat_id":"` + chatID + `","id":"a1","messages":[],"background_tasks":{"title_generation":false}}`)
	if rec := h.chatRecord(chatID); rec.Title != "Tell me about Go" || up.calls() != 1 {
		t.Errorf("title %q, %d calls", rec.Title, up.calls())
	}
	// ... but only for a chat's first exchange.
	chatID = h.mkChatOf(h.user, `{"title":"Kept","history":{"currentId":"a2","messages":{`+
		`"u1":{"id":"u1","parentId":null,"childrenIds":["a1"],"role":"user","content":"one","timestamp":1},`+
		`"a1":{"id":"a1","parentId":"u1","childrenIds":["u2"],"role":"assistant","content":"two","timestamp":2,"done":true},`+
		`"u2":{"id":"u2","parentId":"a1","childrenIds":["a2"],"role":"user","content":"three","timestamp":3},`+
		`"a2":{"id":"a2","parentId":"u2","childrenIds":[],"role":"assistant","content":"","timestamp":4}}}}`)
	h.mustComplete(`{"model":"gpt","chat_id":"` + chatID + `","id":"a2","messages":[],"background_tasks":{"title_generation":false}}`)
	if rec := h.chatRecord(chatID); rec.Title != "Kept" {
		t.Errorf("title changed to %q", rec.Title)
	}
	// No background_tasks: nothing runs.
	chatID = h.mkChat()
	before := up.calls()
	h.mustComplete(`{"model":"gpt","chat_id":"` + chatID + `","id":"a1","messages":[]}`)
	if up.calls() != before+1 || h.chatRecord(chatID).Title != "New Chat" {
		t.Errorf("tasks ran without background_tasks")
	}
}

// Task model (COMPAT §4.6): TASK_MODEL for local chat models,
// TASK_MODEL_EXTERNAL for others, when set and resolvable; else the chat
// model.
func TestTaskModelSelection(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	local, external := ollamaTarget(up), openAITarget(up)
	h.addModel("local", local)
	h.addModel("external", external)
	tl, te := openAITarget(up), openAITarget(up)
	tl.UpstreamID, te.UpstreamID = "task-local", "task-external"
	h.addModel("tl", tl)
	h.addModel("te", te)
	ctx := context.Background()
	a := actorOf(h.user)
	cases := []struct {
		chat          *Target
		model, modelX string
		want          string
	}{
		{local, "tl", "te", "tl"},
		{external, "tl", "te", "te"},
		{local, "", "te", "local"},
		{external, "tl", "", "external"},
		{external, "tl", "missing", "external"},
	}
	for _, c := range cases {
		got := h.p.taskTarget(ctx, a, c.chat, Settings{TaskModel: c.model, TaskModelExternal: c.modelX})
		if got.ModelID != c.want {
			t.Errorf("chat %s, TASK_MODEL %q, TASK_MODEL_EXTERNAL %q: %s, want %s", c.chat.ModelID, c.model, c.modelX, got.ModelID, c.want)
		}
	}
}

// Async mode: background events come before chat:active false.
func TestBackgroundInAsyncMode(t *testing.T) {
	h := newHarness(t)
	h.set(func(s *Settings) { s.TaskModelExternal = "tasker" })
	up := newUpstream(t, taskUpstream(serveBody("text/event-stream", sseBody("hi"))))
	h.addModel("gpt", openAITarget(up))
	tasker := openAITarget(up)
	tasker.UpstreamID = "small"
	tasker.Params.SetValue("max_tokens", 64)
	h.addModel("tasker", tasker)
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","session_id":"s","messages":[],"background_tasks":{"title_generation":true}}`)
	h.waitTask(jsonOf(t, body)["task_id"].(string))
	types := h.em.types()
	if types[len(types)-2] != "chat:title" || types[len(types)-1] != "chat:active" {
		t.Errorf("events %v", types)
	}
	if task := up.body(t, 1); task["model"] != "small" || task["max_tokens"] != 64.0 {
		t.Errorf("task request %v", task)
	}
}

func TestRenderTemplate(t *testing.T) {
	conv := []convMessage{{"user", "a"}, {"assistant", "b"}, {"user", "c"}, {"assistant", "d"}}
	cases := map[string]string{
		"{{MESSAGES:END:2}}":            "USER: c\nASSISTANT: d",
		"{{MESSAGES:START:1}}":          "USER: a",
		"{{MESSAGES}}":                  "USER: a\nASSISTANT: b\nUSER: c\nASSISTANT: d",
		"{{MESSAGES:MIDDLETRUNCATE:2}}": "USER: a\nASSISTANT: d",
		"q={{prompt}}":                  "q=c",
		"{{MESSAGES:END:9}}|":           "USER: a\nASSISTANT: b\nUSER: c\nASSISTANT: d|",
	}
	for tmpl, want := range cases {
		if got := renderTemplate(tmpl, conv); got != want {
			t.Errorf("%q → %q, want %q", tmpl, got, want)
		}
	}
	if got := cleanText("see <details type=\"reasoning\">\nx\n</details> this ![img](data:x) ok"); got != "see  this  ok" {
		t.Errorf("cleanText %q", got)
	}
}

func TestParseTaskJSON(t *testing.T) {
	for in, ok := range map[string]bool{
		`{"title":"x"}`:                 true,
		"noise {\"a\": {\"b\": 1}} end": true,
		"no json":                       false,
		"} backwards {":                 false,
		"{broken":                       false,
	} {
		if _, got := parseTaskJSON(in); got != ok {
			t.Errorf("%q: %v", in, got)
		}
	}
}
