package chat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"hearth/realtime"
	"hearth/store"
)

// Mode 2, streaming, Ollama: the server consumes the stream, stores the
// answer once (done, plain content, output, normalized usage, model), keeps
// the placeholder's parentId (decision 26), and answers JSON null.
func TestStoredStreamingOllama(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "04-chat-stream.http"))
	h.addModel("llama", ollamaTarget(up))
	chatID := h.mkChat()
	res, body := h.mustComplete(`{"model":"llama","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[{"role":"user","content":"Tell me about Go"}]}`)
	if res.Status != 200 || body != "null" {
		t.Fatalf("answer %d %q, want 200 null", res.Status, body)
	}
	m := h.message(chatID, "a1")
	if m["content"] != ";tq" || m["done"] != true || m["parentId"] != "u1" || m["model"] != "llama" || m["modelName"] != "M" {
		t.Errorf("stored %v", m)
	}
	usage, _ := m["usage"].(map[string]any)
	if usage["input_tokens"] != 23.0 || usage["output_tokens"] != 8.0 || usage["total_tokens"] != 31.0 || usage["prompt_eval_count"] != 23.0 {
		t.Errorf("usage %v", usage)
	}
	out, _ := m["output"].([]any)
	if len(out) != 1 {
		t.Fatalf("output %v", m["output"])
	}
	item := out[0].(map[string]any)
	if item["type"] != "message" || item["status"] != "completed" || item["content"].([]any)[0].(map[string]any)["text"] != ";tq" {
		t.Errorf("output item %v", item)
	}
	if n := h.st.edits.Load(); n != 1 {
		t.Errorf("%d message writes, want exactly 1 (ENABLE_REALTIME_CHAT_SAVE off)", n)
	}
	// Events still reach the owner's browsers: cumulative chat:completion
	// states, then the final one.
	evs := h.em.ofType("chat:completion")
	if len(evs) != 4 {
		t.Fatalf("chat:completion events %v", evs)
	}
	for i, want := range []string{";", ";t", ";tq"} {
		if c := evs[i].(map[string]any)["content"]; c != want {
			t.Errorf("event %d content %q, want %q (cumulative)", i, c, want)
		}
	}
	last := evs[3].(map[string]any)
	if last["done"] != true || last["content"] != ";tq" || last["title"] != "New Chat" || last["usage"] == nil {
		t.Errorf("final event %v", last)
	}
	for _, ev := range h.em.snapshot() {
		if ev.ChatID != chatID || ev.MessageID != "a1" {
			t.Errorf("event routed to %s/%s", ev.ChatID, ev.MessageID)
		}
	}
	if len(h.em.ofType("chat:active")) != 0 {
		t.Errorf("chat:active is for async mode only")
	}
}

// Mode 2, non-streaming, OpenAI: the completion JSON is the answer, after
// the message was stored.
func TestStoredNonStreamingOpenAI(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","chat_id":"` + chatID + `","id":"a1","messages":[{"role":"user","content":"hi"}]}`)
	_, want := fixtureResponse(t, "11-v1-chat-nostream.http")
	if body != string(want) {
		t.Fatalf("answer %s", body)
	}
	m := h.message(chatID, "a1")
	if m["content"] != ";tq" || m["done"] != true || m["parentId"] != "u1" {
		t.Errorf("stored %v", m)
	}
	if u, _ := m["usage"].(map[string]any); u["input_tokens"] != 23.0 || u["prompt_tokens"] != 23.0 {
		t.Errorf("usage %v", m["usage"])
	}
	if sent := up.body(t, 0); sent["chat_id"] != nil || sent["id"] != nil {
		t.Errorf("pipeline fields forwarded: %v", sent)
	}
}

// Reasoning: tags in content become a reasoning item; content is the
// answer only (COMPAT §4.7: `<think>x</think>ok` → "ok").
func TestStoredReasoningSeparated(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveBody("text/event-stream", sseBody("<th", "ink>let me ", "see</thi", "nk>\n\nThe ", "answer")))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[]}`)
	m := h.message(chatID, "a1")
	if m["content"] != "The answer" {
		t.Errorf("content %q", m["content"])
	}
	out := m["output"].([]any)
	if len(out) != 2 || out[0].(map[string]any)["type"] != "reasoning" || out[1].(map[string]any)["type"] != "message" {
		t.Fatalf("output %v", out)
	}
	r := out[0].(map[string]any)
	if r["content"].([]any)[0].(map[string]any)["text"] != "let me see" || r["start_tag"] != "<think>" || r["duration"] == nil {
		t.Errorf("reasoning item %v", r)
	}

	// reasoning_content deltas (and Ollama thinking) are reasoning too.
	body := `data: {"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}` + "\n\ndata: [DONE]\n\n"
	up.set(serveBody("text/event-stream", []byte(body)))
	chatID = h.mkChat()
	h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[]}`)
	if m := h.message(chatID, "a1"); m["content"] != "ok" || len(m["output"].([]any)) != 2 {
		t.Errorf("stored %v", m)
	}
}

// A chat that is not the caller's is 404 like a missing one (decision 28),
// and nothing happens: no upstream call, no write, no event.
func TestStoredChatNotOwned(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	for _, body := range []string{
		`{"model":"gpt","chat_id":"` + chatID + `","id":"a1","messages":[]}`,
		`{"model":"gpt","chat_id":"` + chatID + `","id":"a1","session_id":"s1","messages":[]}`,
		`{"model":"gpt","chat_id":"no-such-chat","id":"a1","messages":[]}`,
	} {
		_, err := h.p.Complete(context.Background(), Request{Actor: actorOf(h.other), Body: []byte(body)})
		var e *Error
		if !errors.As(err, &e) || e.Status != 404 || e.Detail != "Something went wrong :/" {
			t.Errorf("%s: %v", body, err)
		}
	}
	if up.calls() != 0 || h.st.edits.Load() != 0 || h.st.updates.Load() != 0 || len(h.em.snapshot()) != 0 {
		t.Errorf("something happened: %d calls, %d writes, %d events", up.calls(), h.st.edits.Load(), len(h.em.snapshot()))
	}
	if m := h.message(chatID, "a1"); m["done"] != false || m["content"] != "" {
		t.Errorf("message changed: %v", m)
	}
}

// A placeholder that does not exist yet is created under the message that
// lists it as a child; a finished one is reset before a regeneration.
func TestStoredPlaceholderCreatedOrReset(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChatOf(h.user, `{"title":"t","history":{"currentId":"u1","messages":{`+
		`"u1":{"id":"u1","parentId":null,"childrenIds":["a9"],"role":"user","content":"hi","timestamp":1}}}}`)
	h.mustComplete(`{"model":"gpt","chat_id":"` + chatID + `","id":"a9","messages":[]}`)
	m := h.message(chatID, "a9")
	if m["parentId"] != "u1" || m["role"] != "assistant" || m["content"] != ";tq" || m["done"] != true {
		t.Errorf("created message %v", m)
	}
	var doc map[string]any
	jsonDecode(t, h.chatRecord(chatID).Chat, &doc)
	if doc["history"].(map[string]any)["currentId"] != "a9" {
		t.Errorf("currentId not moved: %v", doc["history"].(map[string]any)["currentId"])
	}
	// Regenerate into the finished message: reset, then written again.
	up.set(serveBody("text/event-stream", sseBody("second")))
	h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a9","messages":[]}`)
	if m := h.message(chatID, "a9"); m["content"] != "second" || m["done"] != true || m["error"] != nil {
		t.Errorf("regenerated %v", m)
	}
}

// Mode 1: the answer is at once {status, task_ids, task_id, chat_id}; the
// task emits chat:active true/false around the generation.
func TestAsyncTaskMode(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "12-v1-chat-stream-usage.http"))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","session_id":"sid-1","messages":[]}`)
	ans := jsonOf(t, body)
	ids, _ := ans["task_ids"].([]any)
	if ans["status"] != true || len(ids) != 1 || ans["task_id"] != ids[0] || ans["chat_id"] != chatID {
		t.Fatalf("answer %s", body)
	}
	h.waitTask(ids[0].(string))
	h.em.waitType(t, "chat:active", 2)
	types := h.em.types()
	if types[0] != "chat:active" || types[len(types)-1] != "chat:active" {
		t.Errorf("events %v", types)
	}
	act := h.em.ofType("chat:active")
	if act[0].(map[string]any)["active"] != true || act[1].(map[string]any)["active"] != false {
		t.Errorf("chat:active %v", act)
	}
	if m := h.message(chatID, "a1"); m["content"] != ";t" || m["done"] != true {
		t.Errorf("stored %v", m)
	}
	for _, u := range h.em.users {
		if u != h.user.ID {
			t.Errorf("event sent to %s, want the owner", u)
		}
	}
}

// slowUpstream streams parts one at a time: each next part is sent when
// the test sends on step; it stops when the request's context ends.
func slowUpstream(parts []string, step <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for _, p := range parts {
			select {
			case <-step:
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", p)
			w.(http.Flusher).Flush()
		}
		select {
		case <-step:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// The async task does not depend on the request: the request's context is
// cancelled right after the answer, and the generation still completes.
func TestAsyncSurvivesRequestCancel(t *testing.T) {
	h := newHarness(t)
	step := make(chan struct{})
	up := newUpstream(t, slowUpstream([]string{"one ", "two"}, step))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	ctx, cancel := context.WithCancel(context.Background())
	res, err := h.complete(ctx, `{"model":"gpt","stream":true,"chat_id":"`+chatID+`","id":"a1","session_id":"s","messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the client went away
	step <- struct{}{}
	h.em.waitType(t, "chat:completion", 1)
	step <- struct{}{}
	step <- struct{}{}
	id := jsonOf(t, string(res.Body))["task_id"].(string)
	h.waitTask(id)
	if m := h.message(chatID, "a1"); m["content"] != "one two" || m["done"] != true || m["error"] != nil {
		t.Errorf("stored %v", m)
	}
}

// Stop keeps what was generated: done=true with the partial text, and
// chat:tasks:cancel.
func TestStopKeepsPartialAnswer(t *testing.T) {
	h := newHarness(t)
	step := make(chan struct{}, 8)
	up := newUpstream(t, slowUpstream([]string{"half ", "of it", " never"}, step))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","session_id":"s","messages":[]}`)
	id := jsonOf(t, body)["task_id"].(string)
	if got := h.p.Tasks().ChatTasks(chatID, h.user.ID, false); len(got) != 1 || got[0] != id {
		t.Fatalf("chat tasks %v", got)
	}
	if got := h.p.Tasks().ChatTasks(chatID, h.other.ID, false); len(got) != 0 {
		t.Fatalf("another user sees %v", got)
	}
	step <- struct{}{}
	step <- struct{}{}
	h.em.waitType(t, "chat:completion", 2)
	if n := h.p.Tasks().StopChat(context.Background(), chatID, h.user.ID, false); n != 1 {
		t.Fatalf("stopped %d", n)
	}
	m := h.message(chatID, "a1")
	if m["content"] != "half of it" || m["done"] != true || m["error"] != nil {
		t.Errorf("stored %v", m)
	}
	if len(h.em.ofType("chat:tasks:cancel")) != 1 {
		t.Errorf("events %v", h.em.types())
	}
	if _, ok := h.p.Tasks().Get(id); ok || len(h.p.Tasks().List()) != 0 {
		t.Errorf("task still registered")
	}
	if h.p.Tasks().Stop(context.Background(), id) {
		t.Errorf("stopping a finished task reported success")
	}
}

// Stopping by task id (the admin route) works the same.
func TestStopByTaskID(t *testing.T) {
	h := newHarness(t)
	step := make(chan struct{}, 8)
	up := newUpstream(t, slowUpstream([]string{"x", "y"}, step))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","session_id":"s","messages":[]}`)
	id := jsonOf(t, body)["task_id"].(string)
	step <- struct{}{}
	h.em.waitType(t, "chat:completion", 1)
	if l := h.p.Tasks().List(); len(l) != 1 || l[0] != id {
		t.Fatalf("list %v", l)
	}
	if !h.p.Tasks().Stop(context.Background(), id) {
		t.Fatal("stop failed")
	}
	if m := h.message(chatID, "a1"); m["content"] != "x" || m["done"] != true {
		t.Errorf("stored %v", m)
	}
}

// Chunk batching (COMPAT §4.8): with N = max(global, model, chat) every
// N-th delta emits, a switch between text and tool calls flushes, and the
// end flushes what is pending; then the final event.
func TestDeltaChunkBatching(t *testing.T) {
	parts := make([]string, 10)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	cases := []struct {
		name             string
		global, model    int
		chatParam        string
		wantIntermediate int
	}{
		{"global 1", 1, 0, "", 10},
		{"global 3", 3, 0, "", 4}, // 3, 6, 9, end flush
		{"model 4", 1, 4, "", 3},  // 4, 8, end
		{"chat 5", 2, 0, `,"params":{"stream_delta_chunk_size":5}`, 2},
		{"highest wins", 5, 2, `,"params":{"stream_delta_chunk_size":3}`, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.set(func(s *Settings) { s.DeltaChunkSize = c.global })
			up := newUpstream(t, serveBody("text/event-stream", sseBody(parts...)))
			tg := openAITarget(up)
			if c.model > 0 {
				tg.Params.SetValue("stream_delta_chunk_size", c.model)
			}
			h.addModel("gpt", tg)
			chatID := h.mkChat()
			h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[]` + c.chatParam + `}`)
			evs := h.em.ofType("chat:completion")
			if len(evs) != c.wantIntermediate+1 {
				t.Fatalf("%d chat:completion events, want %d + final", len(evs), c.wantIntermediate)
			}
			if h.st.edits.Load() != 1 {
				t.Errorf("%d writes", h.st.edits.Load())
			}
			if last := evs[len(evs)-2].(map[string]any); last["content"] != "0123456789" {
				t.Errorf("end flush carries %v", last["content"])
			}
		})
	}

	t.Run("switch to tool calls flushes", func(t *testing.T) {
		h := newHarness(t)
		h.set(func(s *Settings) { s.DeltaChunkSize = 10 })
		body := `data: {"choices":[{"index":0,"delta":{"content":"let me call"}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"a\""}}]}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
		up := newUpstream(t, serveBody("text/event-stream", []byte(body)))
		h.addModel("gpt", openAITarget(up))
		chatID := h.mkChat()
		h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[]}`)
		evs := h.em.ofType("chat:completion")
		// text batch flushed at the switch, tool batch at the end, final.
		if len(evs) != 3 {
			t.Fatalf("events %v", evs)
		}
		if out := evs[0].(map[string]any)["output"].([]any); len(out) != 1 {
			t.Errorf("switch flush %v", out)
		}
		m := h.message(chatID, "a1")
		out := m["output"].([]any)
		fc := out[1].(map[string]any)
		if m["content"] != "let me call" || fc["type"] != "function_call" || fc["name"] != "get" || fc["arguments"] != `{"a":1}` || fc["call_id"] != "call_1" {
			t.Errorf("stored %v", m)
		}
	})
}

// ENABLE_REALTIME_CHAT_SAVE: on, every emitted batch is also written, then
// the final write; off, one write at the end.
func TestRealtimeSaveWriteCounts(t *testing.T) {
	for _, c := range []struct {
		save  bool
		delta int
		want  int32
	}{{false, 1, 1}, {true, 1, 6}, {true, 2, 4}} {
		t.Run(fmt.Sprintf("save=%v,N=%d", c.save, c.delta), func(t *testing.T) {
			h := newHarness(t)
			h.set(func(s *Settings) { s.RealtimeSave, s.DeltaChunkSize = c.save, c.delta })
			up := newUpstream(t, serveBody("text/event-stream", sseBody("a", "b", "c", "d", "e")))
			h.addModel("gpt", openAITarget(up))
			chatID := h.mkChat()
			h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[]}`)
			if n := h.st.edits.Load(); n != c.want {
				t.Errorf("%d writes, want %d", n, c.want)
			}
			if m := h.message(chatID, "a1"); m["content"] != "abcde" || m["done"] != true {
				t.Errorf("stored %v", m)
			}
		})
	}

	// With realtime save the partial text is in the database mid-stream.
	h := newHarness(t)
	h.set(func(s *Settings) { s.RealtimeSave = true })
	step := make(chan struct{}, 8)
	up := newUpstream(t, slowUpstream([]string{"so ", "far"}, step))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","session_id":"s","messages":[]}`)
	step <- struct{}{}
	h.em.waitType(t, "chat:completion", 1)
	if m := h.message(chatID, "a1"); m["content"] != "so" || m["done"] != false {
		t.Errorf("mid-stream %v", m)
	}
	step <- struct{}{}
	step <- struct{}{}
	h.waitTask(jsonOf(t, body)["task_id"].(string))
}

// Every way a generation can break ends with done=true: the error is
// stored ({content}) with what was generated, and chat:message:error then
// chat:tasks:cancel are emitted.
func TestFailuresEndDone(t *testing.T) {
	chunk := `data: {"choices":[{"index":0,"delta":{"content":"partial"}}]}` + "\n\n"
	cases := []struct {
		name       string
		ctype      string
		status     int
		body       string
		ollama     bool
		wantStatus int
		wantErr    string
		wantText   string
	}{
		{"upstream 500 at start", "application/json", 500, `{"error":{"message":"exploded"}}`, false, 500, "exploded", ""},
		{"error event mid-stream", "text/event-stream", 200, chunk + `data: {"error":{"message":"overloaded"}}` + "\n\n", false, 400, "overloaded", "partial"},
		{"stream cut", "text/event-stream", 200, chunk, false, 400, "The model's answer ended early", "partial"},
		{"garbage only", "text/event-stream", 200, "junk\n\nmore junk\n", false, 400, "The model's answer ended early", ""},
		{"ollama error line", "application/x-ndjson", 200, `{"model":"tiny","message":{"role":"assistant","content":"par"},"done":false}` + "\n" + `{"error":"out of memory"}` + "\n", true, 400, "out of memory", "par"},
		{"ollama cut", "application/x-ndjson", 200, `{"model":"tiny","message":{"role":"assistant","content":"par"},"done":false}` + "\n", true, 400, "The model's answer ended early", "par"},
		{"200 error object", "application/json", 200, `{"error":{"message":"quota"}}`, false, 400, "quota", ""},
	}
	for _, c := range cases {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", c.name, async), func(t *testing.T) {
				h := newHarness(t)
				up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", c.ctype)
					w.WriteHeader(c.status)
					w.Write([]byte(c.body))
				})
				tg := openAITarget(up)
				if c.ollama {
					tg = ollamaTarget(up)
				}
				h.addModel("m", tg)
				chatID := h.mkChat()
				req := `{"model":"m","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[]`
				if async {
					req += `,"session_id":"s"`
				}
				res, err := h.complete(context.Background(), req+"}")
				if async {
					if err != nil {
						t.Fatal(err)
					}
					h.waitTask(jsonOf(t, string(res.Body))["task_id"].(string))
				} else {
					var e *Error
					if !errors.As(err, &e) || e.Status != c.wantStatus || !strings.HasPrefix(e.Detail, c.wantErr) {
						t.Fatalf("got %v, want %d %q", err, c.wantStatus, c.wantErr)
					}
				}
				m := h.message(chatID, "a1")
				errObj, _ := m["error"].(map[string]any)
				if m["done"] != true || m["content"] != c.wantText || errObj == nil || !strings.HasPrefix(errObj["content"].(string), c.wantErr) {
					t.Errorf("stored %v", m)
				}
				types := strings.Join(h.em.types(), ",")
				if !strings.Contains(types, "chat:message:error,chat:tasks:cancel") {
					t.Errorf("events %s", types)
				}
				me := h.em.ofType("chat:message:error")[0].(map[string]any)
				if !strings.HasPrefix(me["error"].(map[string]any)["content"].(string), c.wantErr) {
					t.Errorf("chat:message:error %v", me)
				}
			})
		}
	}
}

// A panic inside the task is recovered and still ends with done=true.
func TestPanicInTaskEndsDone(t *testing.T) {
	h := newHarness(t)
	h.em.panicOn = "chat:completion"
	up := newUpstream(t, serveBody("text/event-stream", sseBody("a", "b")))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","session_id":"s","messages":[]}`)
	h.waitTask(jsonOf(t, body)["task_id"].(string))
	m := h.message(chatID, "a1")
	if m["done"] != true || m["error"] == nil {
		t.Errorf("stored %v", m)
	}
	if act := h.em.ofType("chat:active"); len(act) != 2 {
		t.Errorf("chat:active %v", act)
	}
}

// Server shutdown (the base context ends) stops running tasks with their
// partial answers stored.
func TestShutdownStopsTasks(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	h.p = New(Options{Store: h.st, Resolver: h.res, Emitter: h.em, Settings: func() Settings { return *h.settings.Load() }, Context: ctx})
	step := make(chan struct{}, 4)
	up := newUpstream(t, slowUpstream([]string{"before ", "after"}, step))
	h.addModel("gpt", openAITarget(up))
	chatID := h.mkChat()
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"` + chatID + `","id":"a1","session_id":"s","messages":[]}`)
	step <- struct{}{}
	h.em.waitType(t, "chat:completion", 1)
	cancel()
	h.waitTask(jsonOf(t, body)["task_id"].(string))
	if m := h.message(chatID, "a1"); m["content"] != "before" || m["done"] != true {
		t.Errorf("stored %v", m)
	}
}

// Temporary chats (local:...) are never stored; events still flow.
func TestTemporaryChatNotStored(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveBody("text/event-stream", sseBody("hey")))
	h.addModel("gpt", openAITarget(up))
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"chat_id":"local:abc","id":"a1","session_id":"s","background_tasks":{"title_generation":true},"messages":[]}`)
	h.waitTask(jsonOf(t, body)["task_id"].(string))
	h.em.waitType(t, "chat:active", 2)
	if h.st.edits.Load() != 0 || h.st.updates.Load() != 0 || up.calls() != 1 {
		t.Errorf("writes %d/%d, calls %d", h.st.edits.Load(), h.st.updates.Load(), up.calls())
	}
	evs := h.em.ofType("chat:completion")
	if last := evs[len(evs)-1].(map[string]any); last["done"] != true || last["content"] != "hey" {
		t.Errorf("final event %v", last)
	}
}

// RELEASE_CHANNEL (SPEC §9): dev runs the (no-op) outlet inline after a
// non-streaming stored completion and emits chat:outlet; stable never does,
// nor does dev for a streaming request.
func TestReleaseChannelOutlet(t *testing.T) {
	for _, c := range []struct {
		channel string
		stream  bool
		want    int
	}{{"stable", false, 0}, {"dev", false, 1}, {"dev", true, 0}} {
		t.Run(fmt.Sprintf("%s/stream=%v", c.channel, c.stream), func(t *testing.T) {
			h := newHarness(t)
			h.set(func(s *Settings) { s.ReleaseChannel = c.channel })
			up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
			if c.stream {
				up.set(serveFixture(t, "10-v1-chat-stream.http"))
			}
			h.addModel("gpt", openAITarget(up))
			chatID := h.mkChat()
			h.mustComplete(fmt.Sprintf(`{"model":"gpt","stream":%v,"chat_id":"%s","id":"a1","messages":[{"id":"u1","role":"user","content":"hi"}]}`, c.stream, chatID))
			outs := h.em.ofType("chat:outlet")
			if len(outs) != c.want {
				t.Fatalf("chat:outlet events %v", outs)
			}
			if c.want == 1 {
				msgs := outs[0].(map[string]any)["messages"].([]any)
				last := msgs[len(msgs)-1].(map[string]any)
				if len(msgs) != 2 || last["id"] != "a1" || last["role"] != "assistant" || last["content"] != ";tq" {
					t.Errorf("outlet messages %v", msgs)
				}
			}
		})
	}
	// API-only requests never get the inline outlet.
	h := newHarness(t)
	h.set(func(s *Settings) { s.ReleaseChannel = "dev" })
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	h.mustComplete(`{"model":"gpt","messages":[]}`)
	if len(h.em.snapshot()) != 0 {
		t.Errorf("events in API-only mode: %v", h.em.types())
	}
}

var _ = realtime.Event{}

// `parent_id: null` without a chat_id creates a new chat (SPEC §7, COMPAT
// §4.3) holding the user message and the answer.
func TestNewChatFromParentIDNull(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveBody("text/event-stream", sseBody("fresh")))
	h.addModel("gpt", openAITarget(up))
	_, body := h.mustComplete(`{"model":"gpt","stream":true,"parent_id":null,"session_id":"s","id":"a-new",` +
		`"user_message":{"id":"u-new","role":"user","content":"Start here","timestamp":5},` +
		`"messages":[{"role":"user","content":"Start here"}],"background_tasks":{"title_generation":false}}`)
	ans := jsonOf(t, body)
	chatID, _ := ans["chat_id"].(string)
	if chatID == "" {
		t.Fatalf("answer %s", body)
	}
	h.waitTask(ans["task_id"].(string))
	a := h.message(chatID, "a-new")
	u := h.message(chatID, "u-new")
	if a["content"] != "fresh" || a["done"] != true || a["parentId"] != "u-new" || u["content"] != "Start here" ||
		fmt.Sprint(u["childrenIds"]) != "[a-new]" {
		t.Errorf("user %v\nassistant %v", u, a)
	}
	if rec := h.chatRecord(chatID); rec.Title != "Start here" {
		t.Errorf("title %q", rec.Title)
	}

	// Without user_message and id: the last user message, a new id (mode 2).
	before := h.p.Tasks().List()
	res, err := h.complete(context.Background(), `{"model":"gpt","parent_id":null,"messages":[{"role":"user","content":"Second"}]}`)
	if err != nil || len(before) != 0 {
		t.Fatal(err, before)
	}
	if string(res.Body) != "null" && !strings.Contains(string(res.Body), "chat.completion") {
		t.Errorf("answer %s", res.Body)
	}
	chats, _ := h.st.Store.ListChats(context.Background(), actorOf(h.user), store.ChatListFilter{})
	if len(chats) != 2 {
		t.Errorf("%d chats", len(chats))
	}
}
