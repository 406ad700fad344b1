package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"hearth/llm"
)

// Mode 3 (API-only) — what the OpenAI SDK does: no `stream` key for a
// non-streaming call; the answer is the provider's JSON, byte for byte.
func TestDirectOpenAINonStreamRelaysBody(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	h.addModel("gpt", openAITarget(up))
	res, body := h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0}`)
	_, want := fixtureResponse(t, "11-v1-chat-nostream.http")
	if res.Status != 200 || body != string(want) {
		t.Fatalf("status %d body %s, want the upstream's %s", res.Status, body, want)
	}
	sent := up.body(t, 0)
	if sent["model"] != "tiny" || sent["temperature"] != 0.0 {
		t.Errorf("upstream got %v", sent)
	}
	if up.paths[0] != "/v1/chat/completions" {
		t.Errorf("path %s", up.paths[0])
	}
}

// Streaming relay: the upstream's SSE reaches the client byte for byte,
// ending with [DONE]; nothing is stored and no events are sent.
func TestDirectOpenAIStreamRelaysSSE(t *testing.T) {
	for _, name := range []string{"10-v1-chat-stream.http", "12-v1-chat-stream-usage.http"} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			up := newUpstream(t, serveFixture(t, name))
			h.addModel("gpt", openAITarget(up))
			res, body := h.mustComplete(`{"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			_, want := fixtureResponse(t, name)
			if body != string(want) {
				t.Fatalf("relayed\n%q\nwant\n%q", body, want)
			}
			if res.Header.Get("Content-Type") != "text/event-stream" {
				t.Errorf("content type %q", res.Header.Get("Content-Type"))
			}
			if n := len(h.em.snapshot()); n != 0 || h.st.edits.Load() != 0 {
				t.Errorf("API-only mode emitted %d events, wrote %d times", n, h.st.edits.Load())
			}
		})
	}
}

// Ollama upstream, streaming: the request is converted to /api/chat and the
// NDJSON answer to OpenAI SSE (COMPAT §6.4, §6.5).
func TestDirectOllamaStreamConverted(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "04-chat-stream.http"))
	h.addModel("llama", ollamaTarget(up))
	_, body := h.mustComplete(`{"model":"llama","stream":true,"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"seed":42}`)
	if up.paths[0] != "/api/chat" {
		t.Fatalf("path %s", up.paths[0])
	}
	sent := up.body(t, 0)
	opts, _ := sent["options"].(map[string]any)
	if sent["model"] != "tiny" || sent["stream"] != true || opts["num_predict"] != 8.0 || opts["seed"] != 42.0 {
		t.Errorf("ollama request %v", sent)
	}
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	if len(events) != 5 || events[4] != "data: [DONE]" {
		t.Fatalf("events %q", events)
	}
	var text strings.Builder
	for i, ev := range events[:4] {
		var c llm.ChatChunk
		if err := llm.DecodeChunk([]byte(strings.TrimPrefix(ev, "data: ")), &c); err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Choices[0].Delta.Content)
		if i == 0 && c.Choices[0].Delta.Role != "assistant" {
			t.Errorf("first chunk without role: %s", ev)
		}
		if i == 3 && (c.Choices[0].FinishReason != "length" || len(c.Usage) == 0) {
			t.Errorf("last chunk %s", ev)
		}
	}
	if text.String() != ";tq" {
		t.Errorf("text %q", text.String())
	}
}

func TestDirectOllamaNonStreamConverted(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "05-chat-nostream.http"))
	h.addModel("llama", ollamaTarget(up))
	_, body := h.mustComplete(`{"model":"llama","messages":[{"role":"user","content":"hi"}]}`)
	if sent := up.body(t, 0); sent["stream"] != false {
		t.Errorf("Ollama must be told stream:false, got %v", sent["stream"])
	}
	var c llm.ChatCompletion
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || c.Choices[0].Message.Text() != ";tq" || !strings.Contains(string(c.Usage), `"prompt_tokens":23`) {
		t.Errorf("converted %s", body)
	}
}

func TestModelNotFound(t *testing.T) {
	h := newHarness(t)
	for _, body := range []string{`{"model":"nope","messages":[]}`, `{"messages":[]}`} {
		_, err := h.complete(context.Background(), body)
		var e *Error
		if !errors.As(err, &e) || e.Status != 400 || e.Detail != "Model not found" {
			t.Errorf("%s: %v", body, err)
		}
	}
	_, err := h.complete(context.Background(), `[1]`)
	var e *Error
	if !errors.As(err, &e) || e.Status != 422 {
		t.Errorf("non-object body: %v", err)
	}
}

// Params precedence (COMPAT §4.1): the model's params (DEFAULT_MODEL_PARAMS
// < records, in Target.Params) < the request's non-null `params`; for
// OpenAI they overwrite top-level members; Open WebUI-only fields and
// pipeline params never reach the provider; custom_params deep-merge.
func TestParamsPrecedenceOpenAI(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	tg := openAITarget(up)
	tg.Params.SetValue("temperature", 0.1)
	tg.Params.SetValue("top_p", 0.5)
	tg.Params.SetValue("max_tokens", 100)
	tg.Params.SetValue("stream_delta_chunk_size", 4)
	h.addModel("gpt", tg)
	h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.9,"top_p":0.9,"frequency_penalty":0.3,` +
		`"params":{"top_p":0.7,"max_tokens":null,"seed":7,"function_calling":"native","reasoning_tags":false,"custom_params":"{\"extra_body\":{\"a\":1}}"},` +
		`"chat_id":"","session_id":"s","background_tasks":{"title_generation":true},"features":{"web_search":true},"variables":{},` +
		`"filter_ids":[],"files":[],"tool_ids":[],"model_item":{},"metadata":{"x":1},"parent_id":"p1","stream_options":{"include_usage":true}}`)
	sent := up.body(t, 0)
	want := map[string]any{"temperature": 0.1, "top_p": 0.7, "max_tokens": 100.0, "seed": 7.0, "frequency_penalty": 0.3, "model": "tiny"}
	for k, v := range want {
		if sent[k] != v {
			t.Errorf("%s = %v, want %v", k, sent[k], v)
		}
	}
	if eb, _ := sent["extra_body"].(map[string]any); eb["a"] != 1.0 {
		t.Errorf("custom_params not merged: %v", sent["extra_body"])
	}
	if _, ok := sent["stream_options"]; !ok {
		t.Errorf("stream_options must be forwarded")
	}
	for _, k := range []string{"chat_id", "session_id", "background_tasks", "features", "variables", "filter_ids", "files",
		"tool_ids", "model_item", "metadata", "parent_id", "params", "function_calling", "reasoning_tags",
		"stream_delta_chunk_size", "custom_params"} {
		if _, ok := sent[k]; ok {
			t.Errorf("%s reached the provider", k)
		}
	}
}

func TestParamsOllamaGoToOptions(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "05-chat-nostream.http"))
	tg := ollamaTarget(up)
	tg.Params.SetValue("temperature", 0.1)
	tg.Params.SetValue("num_ctx", 4096)
	tg.Params.SetValue("max_tokens", 50)
	h.addModel("llama", tg)
	h.mustComplete(`{"model":"llama","messages":[{"role":"user","content":"hi"}],"temperature":0.9,"top_k":3,"options":{"num_gpu":1},"params":{"num_ctx":8192}}`)
	sent := up.body(t, 0)
	opts, _ := sent["options"].(map[string]any)
	want := map[string]any{"temperature": 0.1, "num_ctx": 8192.0, "num_predict": 50.0, "top_k": 3.0, "num_gpu": 1.0}
	for k, v := range want {
		if opts[k] != v {
			t.Errorf("options.%s = %v, want %v (options %v)", k, opts[k], v, opts)
		}
	}
	if _, ok := sent["temperature"]; ok {
		t.Errorf("temperature left at the top level: %v", sent)
	}
}

// stream_response (a model param) overrides the request's stream flag.
func TestStreamResponseParamOverrides(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	tg := openAITarget(up)
	tg.Params.SetValue("stream_response", false)
	h.addModel("gpt", tg)
	res, _ := h.mustComplete(`{"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if sent := up.body(t, 0); sent["stream"] != false || res.Stream != nil {
		t.Errorf("stream_response false ignored: sent %v, streaming answer %v", sent["stream"], res.Stream != nil)
	}
}

// The record's system prompt goes before the request's system message;
// variables (given and built-in) are substituted in both.
func TestSystemPromptAndVariables(t *testing.T) {
	h := newHarness(t)
	up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
	tg := openAITarget(up)
	tg.System = "You help {{USER_NAME}} on {{CURRENT_DATE}} ({{CURRENT_TIMEZONE}})."
	h.addModel("gpt", tg)
	h.addModel("plain", openAITarget(up))
	h.mustComplete(`{"model":"gpt","variables":{"{{USER_NAME}}":"Ann B.","{{USER_LANGUAGE}}":"fr-FR","{{CURRENT_TIMEZONE}}":"Europe/Paris"},` +
		`"messages":[{"role":"system","content":"Answer in {{USER_LANGUAGE}}."},{"role":"user","content":"keep {{USER_NAME}}"}]}`)
	msgs := up.body(t, 0)["messages"].([]any)
	first := msgs[0].(map[string]any)
	if first["role"] != "system" || first["content"] != "You help Ann B. on 2026-03-04 (Europe/Paris).\nAnswer in fr-FR." {
		t.Errorf("system message %v", first)
	}
	if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "keep {{USER_NAME}}" {
		t.Errorf("user messages must not be templated: %v", msgs)
	}

	// No system message in the request: one is inserted; built-ins fill in.
	h.mustComplete(`{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`)
	msgs = up.body(t, 1)["messages"].([]any)
	if first := msgs[0].(map[string]any); first["role"] != "system" || first["content"] != "You help Ann on 2026-03-04 (UTC)." {
		t.Errorf("inserted system message %v", first)
	}

	// Request params.system replaces the record's; a model without one
	// leaves the messages alone.
	h.mustComplete(`{"model":"gpt","params":{"system":"Be {{USER_NAME}}."},"messages":[{"role":"user","content":"hi"}]}`)
	if first := up.body(t, 2)["messages"].([]any)[0].(map[string]any); first["content"] != "Be Ann." {
		t.Errorf("params.system: %v", first)
	}
	h.mustComplete(`{"model":"plain","messages":[{"role":"user","content":"hi"}]}`)
	if msgs := up.body(t, 3)["messages"].([]any); len(msgs) != 1 {
		t.Errorf("messages changed without a system prompt: %v", msgs)
	}
}

// Upstream refusals reach the caller as {"detail": <provider message>}.
func TestDirectUpstreamErrors(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		body       string
		wantStatus int
		wantDetail string
	}{
		{"unknown model", 404, `{"error":{"message":"model 'nope' not found","type":"api_error","param":null,"code":null}}`, 404, "model 'nope' not found"},
		{"bad key", 401, `{"error":{"message":"Incorrect API key"}}`, 400, "Incorrect API key"},
		{"rate limit", 429, `{"error":{"message":"slow down"}}`, 429, "slow down"},
		{"server error", 500, `{"detail":"exploded"}`, 500, "exploded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			})
			h.addModel("gpt", openAITarget(up))
			_, err := h.complete(context.Background(), `{"model":"gpt","stream":true,"messages":[]}`)
			var e *Error
			if !errors.As(err, &e) || e.Status != c.wantStatus || e.Detail != c.wantDetail {
				t.Fatalf("got %v, want %d %q", err, c.wantStatus, c.wantDetail)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		h := newHarness(t)
		up := newUpstream(t, serveFixture(t, "11-v1-chat-nostream.http"))
		tg := openAITarget(up)
		up.srv.Close()
		h.addModel("gpt", tg)
		_, err := h.complete(context.Background(), `{"model":"gpt","messages":[]}`)
		var e *Error
		if !errors.As(err, &e) || e.Status != 502 || e.Detail != "Open WebUI: Server Connection Error" {
			t.Fatalf("got %v", err)
		}
	})
}

// An error after the stream started ends it with an error event, no [DONE].
func TestDirectStreamErrorMidway(t *testing.T) {
	h := newHarness(t)
	body := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"content":"par"},"finish_reason":null}]}` + "\n\n" +
		`data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\n"
	up := newUpstream(t, serveBody("text/event-stream", []byte(body)))
	h.addModel("gpt", openAITarget(up))
	_, out := h.mustComplete(`{"model":"gpt","stream":true,"messages":[]}`)
	if !strings.Contains(out, `"content":"par"`) || !strings.HasSuffix(out, `data: {"error":{"message":"overloaded","type":"api_error","param":null,"code":null}}`+"\n\n") || strings.Contains(out, "[DONE]") {
		t.Fatalf("stream %q", out)
	}

	// A stream cut before [DONE] ends the same way.
	up.set(serveBody("text/event-stream", []byte(body[:strings.Index(body, "\n\n")+2])))
	_, out = h.mustComplete(`{"model":"gpt","stream":true,"messages":[]}`)
	if !strings.Contains(out, `"error":{"message":"The model's answer ended early`) || strings.Contains(out, "[DONE]") {
		t.Fatalf("cut stream %q", out)
	}
}

// CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE (SPEC §8, COMPAT §4.5): an
// oversized line becomes `data: {}`, later oversized lines too, and the next
// normal line passes.
func TestDirectStreamMaxLineSize(t *testing.T) {
	h := newHarness(t)
	h.set(func(s *Settings) { s.MaxLineSize = 300 })
	big := strings.Repeat("x", 400)
	body := sseBody("a", big, big, "b")
	up := newUpstream(t, serveBody("text/event-stream", body))
	h.addModel("gpt", openAITarget(up))
	_, out := h.mustComplete(`{"model":"gpt","stream":true,"messages":[]}`)
	if strings.Count(out, "data: {}\n\n") != 2 || strings.Contains(out, "xxx") || !strings.Contains(out, `"content":"b"`) || !strings.HasSuffix(out, "data: [DONE]\n\n") {
		t.Fatalf("stream %q", out)
	}
	h.set(func(s *Settings) { s.MaxLineSize = 0 })
	_, out = h.mustComplete(`{"model":"gpt","stream":true,"messages":[]}`)
	if !bytes.Equal([]byte(out), body) {
		t.Fatalf("without a limit the stream must pass whole")
	}
}

// Garbage lines in an upstream stream are skipped.
func TestDirectStreamGarbageLines(t *testing.T) {
	h := newHarness(t)
	body := "this is not sse\n: ping\n\ndata: not json\n\n" + string(sseBody("ok"))
	up := newUpstream(t, serveBody("text/event-stream", []byte(body)))
	h.addModel("gpt", openAITarget(up))
	_, out := h.mustComplete(`{"model":"gpt","stream":true,"messages":[]}`)
	if strings.Contains(out, "not") || !strings.Contains(out, `"content":"ok"`) || !strings.HasSuffix(out, "data: [DONE]\n\n") {
		t.Fatalf("stream %q", out)
	}
}
