package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Messages-format tests: the real router, the real pipeline (API-only
// mode) and fake OpenAI-compatible / Ollama upstreams.

var msgIDRe = regexp.MustCompile(`"msg_[0-9a-f]{24}"`)

// normMsgID replaces the random message id.
func normMsgID(s string) string { return msgIDRe.ReplaceAllString(s, `"msg_X"`) }

// sseUpstream answers every request with the given SSE chunks (each a data
// payload), then [DONE], recording the last request body.
type sseUpstream struct {
	mu     sync.Mutex
	body   map[string]any
	chunks []string
}

func (u *sseUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	u.mu.Lock()
	u.body = req
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range u.chunks {
		io.WriteString(w, "data: "+c+"\n\n")
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func (u *sseUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.body
}

// sseEvents splits a messages-format stream into (name, data) pairs,
// failing on anything that is not `event: <name>\ndata: <json>\n\n`.
func sseEvents(t *testing.T, body string) (names []string, datas []map[string]any) {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", body)
	}
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		lines := strings.Split(ev, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("bad event %q", ev)
		}
		name := strings.TrimPrefix(lines[0], "event: ")
		var d map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &d); err != nil || d["type"] != name {
			t.Fatalf("bad event data %q: %v", ev, err)
		}
		names = append(names, name)
		datas = append(datas, d)
	}
	return names, datas
}

// toolInputs concatenates the input_json_delta pieces per block index.
func toolInputs(datas []map[string]any) map[int]string {
	out := map[int]string{}
	for _, d := range datas {
		if d["type"] != "content_block_delta" {
			continue
		}
		delta := d["delta"].(map[string]any)
		if delta["type"] == "input_json_delta" {
			out[int(d["index"].(float64))] += delta["partial_json"].(string)
		}
	}
	return out
}

func anthropicHeaders(key string, v0 bool) map[string]string {
	h := map[string]string{"anthropic-version": "2023-06-01", "Content-Type": "application/json", "X-Stainless-Lang": "js"}
	if v0 {
		h["x-api-key"] = key
	} else {
		h["Authorization"] = "Bearer " + key
	}
	return h
}

func TestMessagesNonStreaming(t *testing.T) {
	var got map[string]any
	f, em := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		fixtureHandler(t, "11-v1-chat-nostream.http")(w, r)
	}), nil)
	req := `{"model":"gpt","max_tokens":8,"system":"be brief","stop_sequences":["END"],"thinking":{"type":"enabled"},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	want := `{"id":"msg_X","type":"message","role":"assistant","content":[{"type":"text","text":";tq"}],"model":"gpt","stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":23,"output_tokens":8}}`
	for _, path := range []string{"/api/v1/messages", "/api/message"} {
		for _, v0 := range []bool{true, false} {
			w := f.doH("POST", path, req, anthropicHeaders(f.userKey, v0))
			if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || normMsgID(w.Body.String()) != want {
				t.Fatalf("%s v0=%v: %d %s\n got %s\nwant %s", path, v0, w.Code, w.Header().Get("Content-Type"), normMsgID(w.Body.String()), want)
			}
		}
	}
	// The converted request reached the provider (upstream id, system first,
	// stop, thinking dropped, no stream).
	b, _ := json.Marshal(got)
	if want := `{"max_tokens":8,"messages":[{"content":"be brief","role":"system"},{"content":"hi","role":"user"}],"model":"tiny","stop":["END"]}`; string(b) != want {
		t.Errorf("upstream got %s\nwant %s", b, want)
	}
	if len(em.events) != 0 {
		t.Errorf("API-only calls emitted %d events", len(em.events))
	}
}

func TestMessagesNonStreamingToolUse(t *testing.T) {
	f, _ := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[`+
			`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\": \"Paris\"}"}},`+
			`{"id":"call_2","type":"function","function":{"name":"bad","arguments":"{not json"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`)
	}), nil)
	w := f.doH("POST", "/api/v1/messages", `{"model":"gpt","max_tokens":100,"tools":[{"name":"get_weather","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},"messages":[{"role":"user","content":"weather?"}]}`, anthropicHeaders(f.userKey, false))
	want := `{"id":"msg_X","type":"message","role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"get_weather","input":{"location":"Paris"}},{"type":"tool_use","id":"call_2","name":"bad","input":{}}],"model":"gpt","stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}`
	if w.Code != 200 || normMsgID(w.Body.String()) != want {
		t.Fatalf("%d\n got %s\nwant %s", w.Code, normMsgID(w.Body.String()), want)
	}
}

func TestMessagesStreamingFixture(t *testing.T) {
	for _, fx := range []struct {
		name, want string
	}{
		{"10-v1-chat-stream.http", `event: message_start
data: {"type":"message_start","message":{"id":"msg_X","type":"message","role":"assistant","content":[],"model":"gpt","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":";"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"t"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"q"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":0,"output_tokens":0}}

event: message_stop
data: {"type":"message_stop"}

`},
		{"12-v1-chat-stream-usage.http", ``},
	} {
		f, _ := completionFixture(t, nil, fixtureHandler(t, fx.name), nil)
		w := f.doH("POST", "/api/v1/messages", `{"model":"gpt","max_tokens":4,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders(f.userKey, true))
		body := normMsgID(w.Body.String())
		if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" || w.Header().Get("Cache-Control") != "no-cache" {
			t.Fatalf("%s: %d %v %q", fx.name, w.Code, w.Header(), body)
		}
		if fx.want != "" && body != fx.want {
			t.Fatalf("%s:\n got %s\nwant %s", fx.name, body, fx.want)
		}
		names, datas := sseEvents(t, body)
		if strings.Join(names, " ") != "message_start content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop" && fx.want == "" {
			t.Fatalf("%s: %v", fx.name, names)
		}
		if fx.want == "" {
			u := datas[len(datas)-2]["usage"].(map[string]any)
			if u["output_tokens"] != 4.0 || u["input_tokens"] != 23.0 {
				t.Errorf("%s usage %v", fx.name, u)
			}
		}
	}
}

func chunk(delta string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fr + `}]}`
}

func toolDelta(index int, id, name, args string) string {
	fn := map[string]any{"arguments": args}
	if name != "" {
		fn["name"] = name
	}
	tc := map[string]any{"index": index, "function": fn}
	if id != "" {
		tc["id"], tc["type"] = id, "function"
	}
	b, _ := json.Marshal(map[string]any{"tool_calls": []any{tc}})
	return chunk(string(b), "")
}

func TestMessagesStreamingToolCall(t *testing.T) {
	args := `{"location": "Paris, France", "unit": "celsius"}`
	up := &sseUpstream{chunks: []string{chunk(`{"role":"assistant","content":"Let me check."}`, "")}}
	up.chunks = append(up.chunks, toolDelta(0, "call_1", "get_weather", ""))
	for i := 0; i < len(args); i += 5 {
		up.chunks = append(up.chunks, toolDelta(0, "", "", args[i:min(i+5, len(args))]))
	}
	up.chunks = append(up.chunks, chunk(`{"content":"ignored after a tool"}`, ""), chunk(`{}`, "tool_calls"),
		`{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":22,"total_tokens":33}}`)
	f, _ := completionFixture(t, nil, up, nil)
	w := f.doH("POST", "/api/v1/messages", `{"model":"gpt","max_tokens":100,"stream":true,"tools":[{"name":"get_weather","description":"w","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"weather?"}]}`, anthropicHeaders(f.userKey, false))
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	names, datas := sseEvents(t, w.Body.String())
	wantNames := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "content_block_start"}
	for range (len(args) + 4) / 5 {
		wantNames = append(wantNames, "content_block_delta")
	}
	wantNames = append(wantNames, "content_block_stop", "message_delta", "message_stop")
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Fatalf("events\n got %v\nwant %v", names, wantNames)
	}
	start := datas[4]["content_block"].(map[string]any)
	if datas[4]["index"] != 1.0 || start["type"] != "tool_use" || start["id"] != "call_1" || start["name"] != "get_weather" {
		t.Errorf("tool block start %v", datas[4])
	}
	if in := toolInputs(datas); in[1] != args || len(in) != 1 {
		t.Errorf("tool input %v", in)
	}
	md := datas[len(datas)-2]
	if md["delta"].(map[string]any)["stop_reason"] != "tool_use" || md["usage"].(map[string]any)["output_tokens"] != 22.0 {
		t.Errorf("message_delta %v", md)
	}
	// The provider got function tools and the stream flag.
	sent := up.last()
	tools, _ := sent["tools"].([]any)
	if sent["stream"] != true || len(tools) != 1 || tools[0].(map[string]any)["type"] != "function" {
		t.Errorf("upstream got %v", sent)
	}
}

func TestMessagesStreamingParallelToolCalls(t *testing.T) {
	a, b := `{"q": "alpha beta"}`, `{"n": [1, 2, 3]}`
	up := &sseUpstream{chunks: []string{
		toolDelta(0, "call_a", "search", ""),
		toolDelta(1, "call_b", "count", ""),
	}}
	for i := 0; i < max(len(a), len(b)); i += 3 {
		if i < len(a) {
			up.chunks = append(up.chunks, toolDelta(0, "", "", a[i:min(i+3, len(a))]))
		}
		if i < len(b) {
			up.chunks = append(up.chunks, toolDelta(1, "", "", b[i:min(i+3, len(b))]))
		}
	}
	up.chunks = append(up.chunks, chunk(`{}`, "tool_calls"))
	f, _ := completionFixture(t, nil, up, nil)
	w := f.doH("POST", "/api/v1/messages", `{"model":"gpt","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"go"}]}`, anthropicHeaders(f.userKey, true))
	names, datas := sseEvents(t, w.Body.String())
	if names[0] != "message_start" || names[len(names)-1] != "message_stop" || names[len(names)-2] != "message_delta" {
		t.Fatalf("events %v", names)
	}
	ids := map[int]string{}
	stops := 0
	for _, d := range datas {
		switch d["type"] {
		case "content_block_start":
			ids[int(d["index"].(float64))] = d["content_block"].(map[string]any)["id"].(string)
		case "content_block_stop":
			stops++
		}
	}
	if ids[0] != "call_a" || ids[1] != "call_b" || stops != 2 {
		t.Fatalf("blocks %v stops %d: %v", ids, stops, names)
	}
	if in := toolInputs(datas); in[0] != a || in[1] != b {
		t.Errorf("inputs %v", in)
	}
}

func TestMessagesStreamingOllama(t *testing.T) {
	f, _ := completionFixture(t, nil, nil, fixtureHandler(t, "04-chat-stream.http"))
	w := f.doH("POST", "/api/message", `{"model":"llama","max_tokens":4,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders(f.userKey, true))
	names, _ := sseEvents(t, w.Body.String())
	if w.Code != 200 || names[0] != "message_start" || names[len(names)-1] != "message_stop" || !strings.Contains(w.Body.String(), `"text_delta"`) {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
}

func TestMessagesErrors(t *testing.T) {
	f, _ := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		io.WriteString(w, `{"error":{"message":"model 'nope' not found","type":"api_error","param":null,"code":null}}`)
	}), nil)
	h := anthropicHeaders(f.userKey, true)
	expect(t, f.doH("POST", "/api/v1/messages", `{"model":"missing","max_tokens":1,"messages":[]}`, h), 400, "Model not found")
	expect(t, f.doH("POST", "/api/v1/messages", `{"model":"gpt","max_tokens":1,"stream":true,"messages":[]}`, h), 404, "model 'nope' not found")
	expect(t, f.doH("POST", "/api/v1/messages", `[1]`, h), 400, "")
	expect(t, f.doH("POST", "/api/v1/messages", `{"model":"gpt","messages":"x"}`, h), 400, "")
	expect(t, f.doH("POST", "/api/v1/messages", `{"model":"gpt","messages":[]}`, map[string]string{"anthropic-version": "2023-06-01"}), 401, "")
}

// A stream the provider cuts before [DONE] ends with an error event.
func TestMessagesStreamCut(t *testing.T) {
	f, _ := completionFixture(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+chunk(`{"content":"partial"}`, "")+"\n\n")
	}), nil)
	w := f.doH("POST", "/api/v1/messages", `{"model":"gpt","max_tokens":1,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders(f.userKey, true))
	names, _ := sseEvents(t, w.Body.String())
	if w.Code != 200 || names[len(names)-1] != "error" {
		t.Fatalf("%d %v", w.Code, names)
	}
}

// CVE-2026-45339: an API key's endpoint restriction applies whichever
// header carries the key.
func TestMessagesAPIKeyRestriction(t *testing.T) {
	req := `{"model":"gpt","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		allowed string
		status  int
	}{
		{"/api/v1/auths, /api/v1/chats", http.StatusForbidden},
		{"/api/v1/auths, /api/v1/messages", http.StatusOK},
	} {
		f, _ := completionFixture(t, map[string]string{"ENABLE_API_KEYS_ENDPOINT_RESTRICTIONS": "true", "API_KEYS_ALLOWED_ENDPOINTS": tc.allowed},
			fixtureHandler(t, "11-v1-chat-nostream.http"), nil)
		for _, v0 := range []bool{true, false} {
			w := f.doH("POST", "/api/v1/messages", req, anthropicHeaders(f.userKey, v0))
			if w.Code != tc.status {
				t.Errorf("allowed %q x-api-key=%v: %d %s", tc.allowed, v0, w.Code, w.Body.String())
			}
		}
		// The custom header wins over a proxy's Authorization (decision 30).
		h := anthropicHeaders(f.userKey, true)
		h["Authorization"] = "Basic cHJveHk6cHc="
		if w := f.doH("POST", "/api/v1/messages", req, h); w.Code != tc.status {
			t.Errorf("allowed %q behind proxy: %d %s", tc.allowed, w.Code, w.Body.String())
		}
	}
}

// Events reach the client as the provider produces them: the first text
// delta arrives while the provider is still waiting to send the rest.
func TestMessagesStreamIsIncremental(t *testing.T) {
	step := make(chan struct{}, 4)
	f, _ := completionFixture(t, nil, stepUpstream([]string{"Hel", "lo"}, step), nil)
	srv := httptest.NewServer(f.srv)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/messages", strings.NewReader(`{"model":"gpt","max_tokens":4,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-api-key", f.userKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readEvent := func() string {
		t.Helper()
		var sb strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v (%q)", err, sb.String())
			}
			if line == "\n" {
				return sb.String()
			}
			sb.WriteString(line)
		}
	}
	if ev := readEvent(); !strings.HasPrefix(ev, "event: message_start\n") {
		t.Fatalf("first event %q", ev)
	}
	step <- struct{}{}
	if ev := readEvent(); !strings.HasPrefix(ev, "event: content_block_start\n") {
		t.Fatalf("second event %q", ev)
	}
	if ev := readEvent(); !strings.Contains(ev, `"text":"Hel"`) {
		t.Fatalf("third event %q", ev)
	}
	step <- struct{}{}
	step <- struct{}{}
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), `"text":"lo"`) || !strings.HasSuffix(string(rest), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
		t.Fatalf("rest %q", rest)
	}
}
