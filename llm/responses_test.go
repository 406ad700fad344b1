package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestResponsesToChat(t *testing.T) {
	// The fixture request (15): a string input.
	ex := loadFixture(t, "15-v1-responses-nostream.http")
	req, err := ResponsesToChat(ex.ReqBody)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(req.AppendJSON(nil)); s != `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":8,"temperature":0}` {
		t.Errorf("fixture 15: %s", s)
	}

	body := `{
	  "model": "gpt-4.1",
	  "instructions": "Be kind.",
	  "input": [
	    {"role": "developer", "content": "Use metric units."},
	    {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}, {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"}]},
	    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking", "annotations": []}, {"type": "output_text", "text": "..."}]},
	    {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
	    {"type": "function_call", "call_id": "call_2", "name": "time", "arguments": "{}"},
	    {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
	    {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "noon"}]},
	    {"type": "reasoning", "id": "rs_1", "summary": []},
	    {"type": "function_call", "call_id": "call_3", "name": "again", "arguments": "{}"}
	  ],
	  "max_output_tokens": 256,
	  "temperature": 0.3,
	  "top_p": 1,
	  "stream": true,
	  "store": false,
	  "parallel_tool_calls": false,
	  "tools": [
	    {"type": "function", "name": "weather", "description": "Get weather", "parameters": {"type": "object"}, "strict": true},
	    {"type": "web_search_preview"}
	  ],
	  "tool_choice": {"type": "function", "name": "weather"},
	  "text": {"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": true}},
	  "reasoning": {"effort": "low", "summary": "auto"}
	}`
	req, err = ResponsesToChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "responses_to_chat", append(req.AppendJSON(nil), '\n'))

	for _, bad := range []string{`[]`, `{"input": 5}`, `{"input": [1]}`, `{"input": [{"type": {}}]}`} {
		if _, err := ResponsesToChat([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestChatToResponse(t *testing.T) {
	ex := loadFixture(t, "11-v1-chat-nostream.http")
	req, _ := ParseObject(loadFixture(t, "15-v1-responses-nostream.http").ReqBody)
	ids := map[string]func() string{"msg": seq("msg_"), "fc": seq("fc_"), "rs": seq("rs_")}
	opts := ResponseOptions{ID: "resp_test", Created: 1795315986, NewItemID: func(p string) string { return ids[p]() }, Request: req}
	got, err := ChatToResponse(ex.RespBody, opts)
	if err != nil {
		t.Fatal(err)
	}
	var withTools []byte
	withTools, err = ChatToResponse([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"thought","tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}`),
		ResponseOptions{ID: "resp_2", Created: 1795315986, Model: "my-model", NewItemID: func(p string) string { return ids[p]() }})
	if err != nil {
		t.Fatal(err)
	}
	out := append(append(got, '\n'), append(withTools, '\n')...)
	golden(t, "chat_to_response", out)
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("invalid JSON %s", l)
		}
	}
	// The fixture response's output and usage shapes (Ollama's own /v1/responses; its
	// status says "completed" although the answer hit max_output_tokens, where OpenAI
	// says "incomplete" — Hearth follows OpenAI).
	var mine, theirs struct {
		Object string
		Output []struct {
			Type    string
			Role    string
			Content []struct{ Type, Text string }
		}
		Usage map[string]any
	}
	json.Unmarshal(got, &mine)
	json.Unmarshal(loadFixture(t, "15-v1-responses-nostream.http").RespBody, &theirs)
	a, _ := json.Marshal(mine)
	b, _ := json.Marshal(theirs)
	if string(a) != string(b) {
		t.Errorf("shape differs from Ollama's:\n%s\n%s", a, b)
	}
}
