package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sse builds an upstream SSE body from data payloads (each a JSON text or a raw line
// prefixed with "RAW:"), ending with [DONE] unless the last item is "CUT".
func sse(items ...string) string {
	var b strings.Builder
	cut := false
	for _, it := range items {
		switch {
		case it == "CUT":
			cut = true
		case strings.HasPrefix(it, "RAW:"):
			b.WriteString(it[4:])
		default:
			b.WriteString("data: " + it + "\n\n")
		}
	}
	if !cut {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.String()
}

// chunk builds a chat.completion.chunk with the given delta JSON and finish reason.
func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1795315986,"model":"up","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func toolOpen(index int, id, name string) string {
	return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, index, id, name), "")
}

func toolArgs(index int, piece string) string {
	p, _ := json.Marshal(piece)
	return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, index, p), "")
}

func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func messagesOpts() MessagesStreamOptions {
	return MessagesStreamOptions{ID: "msg_test", Model: "tiny", NewToolUseID: seq("toolu_")}
}

// convertToMessages relays body (served with mode) through the OpenAI client, the SSE
// reader and StreamChatAsMessages.
func convertToMessages(t *testing.T, body string, mode writeMode, opts MessagesStreamOptions) ([]byte, error) {
	t.Helper()
	srv := streamServer(t, "text/event-stream", []byte(body), mode)
	c := NewOpenAIClient(srv.URL+"/v1/", "sk-test", srv.Client())
	res, err := c.ChatCompletion(t.Context(), json.RawMessage(`{"model":"tiny","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var out bytes.Buffer
	err = StreamChatAsMessages(&out, NewSSEReader(res.Stream, SSEOptions{}), opts)
	return out.Bytes(), err
}

const toolArgsFlat = `{"query": "quarterly revenue", "limit": 25, "verbose": true}`

func TestMessagesStreamGolden(t *testing.T) {
	f10 := loadFixture(t, "10-v1-chat-stream.http")
	f12 := loadFixture(t, "12-v1-chat-stream-usage.http")

	split := []string{chunk(`{"role":"assistant","content":"Let me look."}`, ""), toolOpen(0, "call_1", "search")}
	for _, p := range splitEvery(toolArgsFlat, 1) {
		split = append(split, toolArgs(0, p))
	}
	split = append(split, toolArgs(0, " late"), chunk(`{}`, "tool_calls"),
		`{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"up","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`)

	parallel := []string{toolOpen(0, "call_a", "alpha"), toolOpen(1, "call_b", "beta")}
	pa, pb := splitEvery(`{"a": 1}`, 3), splitEvery(`{"b": 2}`, 3)
	for i := range pa {
		parallel = append(parallel, toolArgs(0, pa[i]), toolArgs(1, pb[i]))
	}
	parallel = append(parallel, chunk(`{}`, "tool_calls"))

	cases := []struct {
		golden string
		body   string
		err    string
	}{
		{"messages_fixture10", string(f10.RespBody), ""},
		{"messages_fixture12", string(f12.RespBody), ""},
		{"messages_tool_split", sse(split...), ""},
		{"messages_parallel_tools", sse(parallel...), ""},
		{"messages_empty_deltas", sse(
			chunk(`{"role":"assistant"}`, ""),
			chunk(`{"content":""}`, ""),
			`{}`,
			chunk(`{}`, ""),
			chunk(`{"content":null,"reasoning_content":"thinking..."}`, ""),
			`{"id":"x","choices":[]}`,
			chunk(`{"content":"Hi"}`, ""),
			chunk(`{"content":""}`, "stop"),
		), ""},
		{"messages_error_midstream", sse(
			chunk(`{"role":"assistant","content":"Hel"}`, ""),
			chunk(`{"content":"lo"}`, ""),
			`{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`,
			chunk(`{"content":"never"}`, ""),
		), "Rate limit reached"},
		{"messages_garbage_lines", sse(
			"RAW:: ping\n\n",
			chunk(`{"role":"assistant","content":"A"}`, ""),
			"RAW:this is not SSE\n",
			"RAW:data: <html>502 Bad Gateway</html>\n\n",
			"RAW:data: {\"truncated\":\n\n",
			chunk(`{"content":"B"}`, ""),
			"RAW:event: keepalive\n\n",
			chunk(`{}`, "stop"),
		), ""},
		{"messages_cut", sse(
			chunk(`{"role":"assistant","content":"Once upon"}`, ""),
			toolOpen(0, "call_9", "lookup"),
			toolArgs(0, `{"q": "un`),
			"CUT",
		), "ended early"},
	}
	for _, tc := range cases {
		var first []byte
		for _, mode := range allModes {
			t.Run(tc.golden+"/"+mode.String(), func(t *testing.T) {
				got, err := convertToMessages(t, tc.body, mode, messagesOpts())
				if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				checkMessagesEvents(t, got)
				if first == nil {
					first = got
					golden(t, tc.golden, got)
				} else if !bytes.Equal(got, first) {
					t.Errorf("output depends on how the upstream body was split")
				}
			})
		}
	}
}

// checkMessagesEvents checks the framing every event must have: "event: <name>\ndata:
// <json whose type is name>\n\n", and the block lifecycle (start before delta before stop,
// each block stopped exactly once).
func checkMessagesEvents(t *testing.T, b []byte) {
	t.Helper()
	started := map[int]bool{}
	stopped := map[int]bool{}
	for _, ev := range parseNamedEvents(t, b) {
		switch ev.name {
		case "content_block_start":
			if started[ev.index] {
				t.Errorf("block %d started twice", ev.index)
			}
			started[ev.index] = true
		case "content_block_delta":
			if !started[ev.index] || stopped[ev.index] {
				t.Errorf("delta for block %d outside its lifetime", ev.index)
			}
		case "content_block_stop":
			if !started[ev.index] || stopped[ev.index] {
				t.Errorf("bad stop for block %d", ev.index)
			}
			stopped[ev.index] = true
		}
	}
	for i := range started {
		if !stopped[i] {
			t.Errorf("block %d never stopped", i)
		}
	}
}

type namedEvent struct {
	name  string
	index int
	data  map[string]any
}

func parseNamedEvents(t *testing.T, b []byte) []namedEvent {
	t.Helper()
	var out []namedEvent
	for _, raw := range strings.SplitAfter(string(b), "\n\n") {
		if raw == "" {
			continue
		}
		name, rest, ok := strings.Cut(raw, "\n")
		data, ok2 := strings.CutPrefix(rest, "data: ")
		if !ok || !ok2 || !strings.HasPrefix(name, "event: ") || !strings.HasSuffix(data, "\n\n") || strings.Count(data, "\n") != 2 {
			t.Fatalf("bad event framing %q", raw)
		}
		name = name[len("event: "):]
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event data not JSON: %q", data)
		}
		if m["type"] != name {
			t.Errorf("event %s has type %v", name, m["type"])
		}
		if !strings.HasPrefix(data, `{"type":"`+name+`"`) {
			t.Errorf("type is not the first member: %s", data)
		}
		idx := -1
		if f, ok := m["index"].(float64); ok {
			idx = int(f)
		}
		out = append(out, namedEvent{name, idx, m})
	}
	return out
}

// streamEvents runs a messages conversion of the given upstream items in memory.
func streamEvents(t *testing.T, items ...string) []namedEvent {
	t.Helper()
	var out bytes.Buffer
	StreamChatAsMessages(&out, NewSSEReader(strings.NewReader(sse(items...)), SSEOptions{}), messagesOpts())
	checkMessagesEvents(t, out.Bytes())
	return parseNamedEvents(t, out.Bytes())
}

func argumentsByBlock(evs []namedEvent) map[int]string {
	m := map[int]string{}
	for _, ev := range evs {
		if ev.name == "content_block_delta" {
			d := ev.data["delta"].(map[string]any)
			if d["type"] == "input_json_delta" {
				m[ev.index] += d["partial_json"].(string)
			}
		}
	}
	return m
}

func stopsByBlock(evs []namedEvent) []int {
	var s []int
	for _, ev := range evs {
		if ev.name == "content_block_stop" {
			s = append(s, ev.index)
		}
	}
	return s
}

// The cases of open-webui/tests integration/chat/test_anthropic_tool_call_streaming.py.
func TestMessagesStreamToolArguments(t *testing.T) {
	single := func(pieces []string, name string) []string {
		items := []string{toolOpen(0, "call_1", name)}
		for _, p := range pieces {
			items = append(items, toolArgs(0, p))
		}
		return append(items, chunk(`{}`, "tool_calls"))
	}
	for name, pieces := range map[string][]string{
		"one-character-pieces":    splitEvery(toolArgsFlat, 1),
		"split-inside-a-string":   {`{"query": "quar`, "terly rev", `enue", "limit"`, ": 25, ", `"verbose": true}`},
		"whole-json-in-one-piece": {toolArgsFlat},
	} {
		evs := streamEvents(t, single(pieces, "search")...)
		if got := argumentsByBlock(evs); !maps(got, map[int]string{0: toolArgsFlat}) {
			t.Errorf("%s: arguments %v", name, got)
		}
		if s := stopsByBlock(evs); !slices.Equal(s, []int{0}) {
			t.Errorf("%s: stops %v", name, s)
		}
	}

	// Parallel calls keep their own arguments.
	items := []string{toolOpen(0, "call_a", "alpha"), toolOpen(1, "call_b", "beta")}
	for i, args := range []string{`{"a": 1}`, `{"b": 2}`} {
		for _, p := range splitEvery(args, 3) {
			items = append(items, toolArgs(i, p))
		}
	}
	evs := streamEvents(t, append(items, chunk(`{}`, "tool_calls"))...)
	args := argumentsByBlock(evs)
	if !maps(args, map[int]string{0: `{"a": 1}`, 1: `{"b": 2}`}) {
		t.Errorf("parallel: %v", args)
	}

	// A call without arguments still opens its block.
	evs = streamEvents(t, single(nil, "ping")...)
	var starts []string
	for _, ev := range evs {
		if ev.name == "content_block_start" {
			cb := ev.data["content_block"].(map[string]any)
			starts = append(starts, cb["type"].(string)+":"+cb["name"].(string))
		}
	}
	if !slices.Equal(starts, []string{"tool_use:ping"}) || len(argumentsByBlock(evs)) != 0 {
		t.Errorf("no-args: starts %v args %v", starts, argumentsByBlock(evs))
	}

	// A complete value closes its block inline; later fragments are dropped.
	for name, c := range map[string]struct {
		pieces []string
		want   string
	}{
		"empty-object":          {[]string{"{", "}"}, "{}"},
		"brace-then-whitespace": {[]string{`{"a": 1`, "}\n", "late"}, "{\"a\": 1}\n"},
		"non-object":            {[]string{"[1,", " 2]", "late"}, "[1, 2]"},
		"braces-in-strings":     {[]string{`{"s": "}`, `{", "t": "\"}"`, `}`, "late"}, `{"s": "}{", "t": "\"}"}`},
	} {
		evs := streamEvents(t, single(c.pieces, "f")...)
		if got := argumentsByBlock(evs); got[0] != c.want {
			t.Errorf("%s: arguments %q want %q", name, got[0], c.want)
		}
		if s := stopsByBlock(evs); !slices.Equal(s, []int{0}) {
			t.Errorf("%s: stops %v", name, s)
		}
	}

	// Arguments before the name (some providers) are sent once the block starts (upstream
	// drops them, so the client's JSON would not parse); a
	// call that never gets a name never appears; text after a tool call is dropped.
	evs = streamEvents(t,
		chunk(`{"content":"Hi"}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"name":"late_name","arguments":":1}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}`, ""),
		chunk(`{"content":"dropped"}`, ""),
		chunk(`{}`, "stop"),
	)
	var names []string
	for _, ev := range evs {
		names = append(names, ev.name)
		if ev.name == "content_block_delta" {
			if d := ev.data["delta"].(map[string]any); d["text"] == "dropped" {
				t.Error("text after a tool call was sent")
			}
		}
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !slices.Equal(names, want) {
		t.Errorf("events %v", names)
	}
	if got := argumentsByBlock(evs); got[1] != `{"x":1}` {
		t.Errorf("late name args %q", got[1])
	}
	md := evs[len(evs)-2].data["delta"].(map[string]any)
	if md["stop_reason"] != "tool_use" {
		t.Errorf("stop_reason %v (tool calls finished with stop)", md["stop_reason"])
	}
}

func maps(a, b map[int]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestMessagesStreamUsage(t *testing.T) {
	// The usage cases of open-webui/tests test_anthropic_usage_reporting.py, streamed.
	for name, c := range usageCases {
		evs := streamEvents(t, chunk(`{"content":"hi"}`, ""), chunk(`{}`, "stop"),
			`{"id":"x","choices":[],"usage":`+c.provider+`}`)
		got, _ := json.Marshal(evs[len(evs)-2].data["usage"])
		if !jsonEqual(string(got), c.want) {
			t.Errorf("%s: usage %s want %s", name, got, c.want)
		}
	}
	// A counted input fills the start event and a missing prompt count.
	var out bytes.Buffer
	opts := messagesOpts()
	opts.InputTokens = 1234
	StreamChatAsMessages(&out, NewSSEReader(strings.NewReader(sse(
		chunk(`{"role":"assistant","content":"hi"}`, ""),
		`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"completion_tokens":9}}`)), SSEOptions{}), opts)
	evs := parseNamedEvents(t, out.Bytes())
	start, _ := json.Marshal(evs[0].data["message"].(map[string]any)["usage"])
	end, _ := json.Marshal(evs[len(evs)-2].data["usage"])
	if string(start) != `{"input_tokens":1234,"output_tokens":0}` || string(end) != `{"input_tokens":1234,"output_tokens":9}` {
		t.Errorf("start %s end %s", start, end)
	}
}

var usageCases = map[string]struct{ provider, want string }{
	"cache-read-subtracted":     {`{"prompt_tokens":1000,"completion_tokens":50,"cache_read_input_tokens":800}`, `{"input_tokens":200,"output_tokens":50,"cache_read_input_tokens":800}`},
	"cache-creation-subtracted": {`{"prompt_tokens":1000,"completion_tokens":7,"cache_creation_input_tokens":300,"cache_read_input_tokens":200}`, `{"input_tokens":500,"output_tokens":7,"cache_creation_input_tokens":300,"cache_read_input_tokens":200}`},
	"anthropic-native-keys":     {`{"input_tokens":321,"output_tokens":45}`, `{"input_tokens":321,"output_tokens":45}`},
	"cached-tokens-promoted":    {`{"prompt_tokens":1000,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":600}}`, `{"input_tokens":400,"output_tokens":10,"cache_read_input_tokens":600}`},
	"explicit-cache-read-wins":  {`{"prompt_tokens":1000,"completion_tokens":10,"cache_read_input_tokens":700,"prompt_tokens_details":{"cached_tokens":600}}`, `{"input_tokens":300,"output_tokens":10,"cache_read_input_tokens":700}`},
	"detail-fields-kept":        {`{"prompt_tokens":12,"completion_tokens":3,"output_tokens_details":{"reasoning_tokens":2},"server_tool_use":{"web_search_requests":4},"service_tier":"standard"}`, `{"input_tokens":12,"output_tokens":3,"output_tokens_details":{"reasoning_tokens":2},"server_tool_use":{"web_search_requests":4},"service_tier":"standard"}`},
	"uncached":                  {`{"prompt_tokens":87,"completion_tokens":12}`, `{"input_tokens":87,"output_tokens":12}`},
	"malformed-details-omitted": {`{"prompt_tokens":10,"completion_tokens":2,"service_tier":null,"server_tool_use":"not-a-dict","output_tokens_details":5}`, `{"input_tokens":10,"output_tokens":2}`},
	"ollama-normalized":         {`{"input_tokens":23,"output_tokens":8,"total_tokens":31,"prompt_tokens":23,"completion_tokens":8,"response_token/s":125.93}`, `{"input_tokens":23,"output_tokens":8}`},
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestChatToMessagesResponse(t *testing.T) {
	ex := loadFixture(t, "11-v1-chat-nostream.http")
	got, err := ChatToMessagesResponse(ex.RespBody, MessagesResponseOptions{Model: "tiny", NewID: seq("msg_test")})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "messages_fixture11", append(got, '\n'))

	// Tool calls with parsed input, unparsable arguments → {}, missing id → toolu_.
	body := `{"id":"chatcmpl-9","object":"chat.completion","created":1.795315986e9,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[
		{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\": \"x\", \"n\": 2}"}},
		{"type":"function","function":{"name":"broken","arguments":"{oops"}},
		{"id":"call_3","type":"function","function":{"name":"objargs","arguments":{"already":"object"}}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}}`
	got, err = ChatToMessagesResponse([]byte(body), MessagesResponseOptions{Model: "my-model", NewID: seq("msg_x"), NewToolUseID: seq("toolu_")})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "messages_tools_response", append(got, '\n'))

	// Usage cases, and no usage at all.
	for name, c := range usageCases {
		b := `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":` + c.provider + `}`
		got, _ := ChatToMessagesResponse([]byte(b), MessagesResponseOptions{NewID: seq("msg_")})
		var r struct{ Usage json.RawMessage }
		json.Unmarshal(got, &r)
		if !jsonEqual(string(r.Usage), c.want) {
			t.Errorf("%s: %s want %s", name, r.Usage, c.want)
		}
	}
	for _, u := range []string{`,"usage":null`, ``} {
		got, _ := ChatToMessagesResponse([]byte(`{"choices":[{"message":{"content":"hi"},"finish_reason":"length"}]`+u+`}`), MessagesResponseOptions{NewID: seq("msg_")})
		if !strings.Contains(string(got), `"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}`) {
			t.Errorf("no usage: %s", got)
		}
	}
	if _, err := ChatToMessagesResponse([]byte(`not json`), MessagesResponseOptions{}); err == nil {
		t.Error("garbage accepted")
	}
}

func TestStopReason(t *testing.T) {
	for in, want := range map[string]string{"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "end_turn", "": "end_turn", "weird": "end_turn"} {
		if got := StopReason(in); got != want {
			t.Errorf("StopReason(%q) = %q want %q", in, got, want)
		}
	}
}

func TestMessagesToChat(t *testing.T) {
	body := `{
	  "model": "gpt-4o",
	  "max_tokens": 1024,
	  "system": [{"type": "text", "text": "You are terse."}, {"type": "text", "text": "Cache me.", "cache_control": {"type": "ephemeral"}}],
	  "messages": [
	    {"role": "user", "content": "Hello"},
	    {"role": "user", "content": [{"type": "text", "text": "Single block collapses"}]},
	    {"role": "user", "content": [
	      {"type": "text", "text": "Look:"},
	      {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
	      {"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}},
	      {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}, "cache_control": {"type": "ephemeral"}}
	    ]},
	    {"role": "assistant", "content": [
	      {"type": "text", "text": "Let me check."},
	      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
	      {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C <sunny>"},
	      {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [{"type": "text", "text": "clock"}, {"type": "text", "text": "broken"}]},
	      {"type": "tool_result", "tool_use_id": "toolu_3", "content": [
	        {"type": "text", "text": "see image"},
	        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
	      ]},
	      {"type": "tool_result", "tool_use_id": "toolu_4", "content": [
	        {"type": "document", "title": "Spec", "context": "ctx", "source": {"type": "text", "data": "body text"}},
	        {"type": "search_result", "title": "Result", "source": "https://example.com", "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]}
	      ]},
	      {"type": "text", "text": "Thanks, and?"}
	    ]},
	    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_5", "name": "noop"}]}
	  ],
	  "stop_sequences": ["\n\nHuman:"],
	  "temperature": 0.5,
	  "top_p": 0.9,
	  "top_k": 40,
	  "stream": true,
	  "metadata": {"user_id": "u1"},
	  "service_tier": "auto",
	  "thinking": {"type": "enabled", "budget_tokens": 1000},
	  "tools": [
	    {"name": "get_weather", "description": "Weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
	    {"name": "get_time", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}},
	    {"name": "bare"}
	  ],
	  "tool_choice": {"type": "any"}
	}`
	req, err := MessagesToChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	got := append(req.AppendJSON(nil), '\n')
	if !json.Valid(got) {
		t.Fatalf("invalid JSON: %s", got)
	}
	golden(t, "messages_to_chat", got)

	// The fixture request (17) and tool_choice variants.
	ex := loadFixture(t, "17-v1-messages-nostream.http")
	req, err = MessagesToChat(ex.ReqBody)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(req.AppendJSON(nil)); s != `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":8,"temperature":0}` {
		t.Errorf("fixture 17: %s", s)
	}
	for tc, want := range map[string]string{
		`{"type":"auto"}`:               `"auto"`,
		`{"type":"any"}`:                `"required"`,
		`{"type":"tool","name":"x"}`:    `{"type":"function","function":{"name":"x"}}`,
		`{"type":"none"}`:               ``,
		`"auto"`:                        ``,
		`{"disable_parallel_use":true}`: `"auto"`,
	} {
		req, err := MessagesToChat([]byte(`{"model":"m","messages":[],"tool_choice":` + tc + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(req.Get("tool_choice")); got != want {
			t.Errorf("tool_choice %s → %q want %q", tc, got, want)
		}
	}
	for _, bad := range []string{`[]`, `{"messages":"hi"}`, `{"messages":[1]}`, `{"messages":[{"role":"user","content":[1]}]}`, `{"tools":{}}`, `nope`} {
		if _, err := MessagesToChat([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
