package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// seq returns a deterministic id maker: prefix1, prefix2, ...
func seq(prefix string) func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("%s%d", prefix, n) }
}

func ollamaOpts() OllamaToOpenAIOptions {
	return OllamaToOpenAIOptions{ID: "chatcmpl-test", Created: 1795315986, NewCallID: seq("call_")}
}

// convertOllamaStream runs StreamOllamaAsOpenAI over a body served by an httptest server
// with the given write mode, returning the SSE bytes and the error.
func convertOllamaStream(t *testing.T, body []byte, mode writeMode) ([]byte, error) {
	t.Helper()
	srv := streamServer(t, "application/x-ndjson", body, mode)
	c := NewOllamaClient(srv.URL, "", srv.Client())
	res, err := c.Chat(t.Context(), json.RawMessage(`{"model":"tiny","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if !res.Streaming() {
		t.Fatal("not a stream")
	}
	var out bytes.Buffer
	err = StreamOllamaAsOpenAI(&out, res.Stream, ollamaOpts(), NDJSONOptions{})
	return out.Bytes(), err
}

const ollamaToolStream = `{"model":"qwen3","created_at":"2026-11-22T02:53:06Z","message":{"role":"assistant","content":"","thinking":"The user wants"},"done":false}
{"model":"qwen3","created_at":"2026-11-22T02:53:06Z","message":{"role":"assistant","content":"","thinking":" the weather."},"done":false}
{"model":"qwen3","created_at":"2026-11-22T02:53:06Z","message":{"role":"assistant","content":""},"done":false}
not json at all
{"model":"qwen3","created_at":"2026-11-22T02:53:06Z","message":{"role":"assistant","content":"Checking <both> \"cities\"…\n"},"done":false}
{"model":"qwen3","created_at":"2026-11-22T02:53:07Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris","units":"C"}}},{"id":"call_given","function":{"index":1,"name":"get_weather","arguments":{"city":"Tōkyō"}}}]},"done":false}
{"model":"qwen3","created_at":"2026-11-22T02:53:07Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":4200000000,"load_duration":100,"prompt_eval_count":120,"prompt_eval_duration":1000000,"eval_count":40,"eval_duration":2000000000}
`

func TestOllamaToOpenAIStream(t *testing.T) {
	ex := loadFixture(t, "04-chat-stream.http")
	cases := []struct {
		golden string
		body   string
		err    string
	}{
		{"ollama_chat_stream", string(ex.RespBody), ""},
		{"ollama_tools_thinking_stream", ollamaToolStream, ""},
		{"ollama_error_stream", ollamaToolStream[:strings.Index(ollamaToolStream, "not json")] + `{"error":"an error was encountered while running the model: out of memory"}` + "\n", "out of memory"},
		{"ollama_cut_stream", ollamaToolStream[:strings.Index(ollamaToolStream, "not json")], "ended early"},
	}
	for _, tc := range cases {
		var first []byte
		for _, mode := range allModes {
			t.Run(tc.golden+"/"+mode.String(), func(t *testing.T) {
				got, err := convertOllamaStream(t, []byte(tc.body), mode)
				if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if first == nil {
					first = got
					golden(t, tc.golden, got)
				} else if !bytes.Equal(got, first) {
					t.Errorf("output depends on how the upstream body was split:\n%s\nvs\n%s", got, first)
				}
			})
		}
	}
}

func TestOllamaToOpenAIStreamErrorIsTyped(t *testing.T) {
	var out bytes.Buffer
	err := StreamOllamaAsOpenAI(&out, strings.NewReader(`{"error":"boom"}`), ollamaOpts(), NDJSONOptions{})
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Message != "boom" || ue.Status != 0 {
		t.Fatalf("err = %#v", err)
	}
	if out.String() != `data: {"error":{"message":"boom","type":"api_error","param":null,"code":null}}`+"\n\n" {
		t.Errorf("out = %q", out.String())
	}
}

func TestOllamaChatToOpenAI(t *testing.T) {
	ex := loadFixture(t, "05-chat-nostream.http")
	var r OllamaChatResponse
	if err := json.Unmarshal(ex.RespBody, &r); err != nil {
		t.Fatal(err)
	}
	got := OllamaChatToOpenAI(&r, OllamaToOpenAIOptions{ID: "tiny-0000", Created: 1795315986})
	if !json.Valid(got) {
		t.Fatalf("invalid JSON %s", got)
	}
	golden(t, "ollama_chat_nostream", append(got, '\n'))

	// Tool calls and thinking in a non-streamed answer.
	var last OllamaChatResponse
	lines := strings.Split(strings.TrimSpace(ollamaToolStream), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	var tools OllamaChatResponse
	json.Unmarshal([]byte(lines[5]), &tools)
	last.Message = tools.Message
	last.Message.Thinking = "The user wants the weather."
	last.Message.Content = "Checking."
	got = OllamaChatToOpenAI(&last, OllamaToOpenAIOptions{ID: "qwen3-0000", Created: 1795315986, NewCallID: seq("call_")})
	if !json.Valid(got) {
		t.Fatalf("invalid JSON %s", got)
	}
	golden(t, "ollama_tools_nostream", append(got, '\n'))
}

func TestOllamaUsageRates(t *testing.T) {
	cases := []struct {
		count, dur int64
		want       string
	}{
		{8, 63526511, "125.93"},
		{23, 10963845, "2097.8"},
		{10, 1e9, "10.0"},
		{5, 0, `"N/A"`},
	}
	for _, c := range cases {
		if got := string(appendRate(nil, c.count, c.dur)); got != c.want {
			t.Errorf("rate(%d,%d) = %s want %s", c.count, c.dur, got, c.want)
		}
	}
}

func TestChatToOllama(t *testing.T) {
	body := `{
	  "model": "llama3:latest",
	  "stream": true,
	  "chat_id": "ignored-by-ollama",
	  "metadata": {"x": 1},
	  "messages": [
	    {"role": "system", "content": "Be brief."},
	    {"role": "user", "content": [
	      {"type": "text", "text": "  What is in "},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
	      {"type": "text", "text": "this picture?  "},
	      {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
	    ]},
	    {"role": "assistant", "content": null, "tool_calls": [
	      {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"cat\"}"}},
	      {"id": "call_2", "type": "function", "function": {"name": "broken", "arguments": "{not json"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
	    {"role": "assistant", "content": "It is a cat.", "thinking": "easy"},
	    {"role": "user", "content": "Thanks <3"}
	  ],
	  "max_tokens": 64,
	  "temperature": 0.2,
	  "top_p": 0.9,
	  "seed": 42,
	  "frequency_penalty": 0.5,
	  "stop": "###",
	  "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
	  "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}},
	  "keep_alive": "5m",
	  "options": {"temperature": 0.7, "num_ctx": 4096, "format": "{\"type\":\"object\"}", "think": true, "system": "From params.", "max_tokens": 32},
	  "frequency": "unknown fields are dropped for Ollama"
	}`
	req, err := ParseChatRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	out, err := ChatToOllama(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalCompact(out)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "chat_to_ollama", append(got, '\n'))

	// The fixture request (04) converted back from its OpenAI equivalent (fixture 10).
	ex := loadFixture(t, "10-v1-chat-stream.http")
	req, _ = ParseChatRequest(ex.ReqBody)
	out, _ = ChatToOllama(req)
	got, _ = marshalCompact(out)
	want := `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"stream":true,"options":{"num_predict":8,"temperature":0,"seed":42}}`
	if string(got) != want {
		t.Errorf("fixture 10 request:\n got %s\nwant %s", got, want)
	}

	// json_object, a string stop list kept, no max_tokens → no num_predict anywhere.
	req, _ = ParseChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b"],"response_format":{"type":"json_object"}}`))
	out, _ = ChatToOllama(req)
	got, _ = marshalCompact(out)
	want = `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":false,"format":"json","options":{"stop":["a","b"]}}`
	if string(got) != want {
		t.Errorf("json_object:\n got %s\nwant %s", got, want)
	}

	// Bad content type is an error, not a panic.
	req, _ = ParseChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":5}]}`))
	if _, err := ChatToOllama(req); err == nil {
		t.Error("numeric content accepted")
	}
}

func TestOllamaEmbedToOpenAI(t *testing.T) {
	embed := loadFixture(t, "08-embed.http")
	openai := loadFixture(t, "13-v1-embeddings.http")
	got, err := OllamaEmbedToOpenAI(embed.RespBody)
	if err != nil {
		t.Fatal(err)
	}
	// Ollama's own OpenAI endpoint gives the same document for the same input.
	if want := bytes.TrimSpace(openai.RespBody); !bytes.Equal(got, want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	legacy := loadFixture(t, "09-embeddings-legacy.http")
	got, err = OllamaEmbedToOpenAI(legacy.RespBody)
	if err != nil {
		t.Fatal(err)
	}
	var list EmbeddingsResponse
	if err := json.Unmarshal(got, &list); err != nil || len(list.Data) != 1 || list.Object != "list" {
		t.Fatalf("legacy: %s %v", got, err)
	}
	vec, err := DecodeVector(list.Data[0].Embedding)
	if err != nil || len(vec) != 64 || vec[0] != float32(1.5815129280090332) {
		t.Errorf("vector %v %v", len(vec), err)
	}
	if _, err := OllamaEmbedToOpenAI([]byte(`{"model":"x"}`)); err == nil {
		t.Error("no embeddings accepted")
	}
	req := EmbeddingsToOllama(&EmbeddingsRequest{Model: "tiny-embed", Input: json.RawMessage(`["hello","world"]`)})
	b, _ := marshalCompact(req)
	if want := bytes.TrimSpace(embed.ReqBody); !bytes.Equal(b, want) {
		t.Errorf("embed request %s want %s", b, want)
	}
}

func TestOllamaModelEntries(t *testing.T) {
	ex := loadFixture(t, "02-tags.http")
	var tags OllamaTags
	if err := json.Unmarshal(ex.RespBody, &tags); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, tag := range tags.Models {
		b = OllamaModelEntry(tag, 0).AppendJSON(b)
		b = append(b, '\n')
	}
	list := OllamaTagsToOpenAIModels(&tags, 1795315975)
	lb, _ := marshalCompact(list)
	b = append(append(b, lb...), '\n')
	golden(t, "ollama_model_entries", b)
	// The raw entry is kept byte for byte.
	e := OllamaModelEntry(tags.Models[0], 0)
	if !bytes.Contains(ex.RespBody, e.Get("ollama")) {
		t.Errorf("ollama member is not the raw entry: %s", e.Get("ollama"))
	}
}
