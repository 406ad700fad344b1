package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestObjectRoundTripKeepsUnknownFields(t *testing.T) {
	in := `{"model":"m", "messages":[{"role":"user","content":"hi","x_custom":{"a":[1, 2]}}],
	  "logit_bias": {"50256": -100}, "user": "u", "n": 1, "zzz_provider_flag": true, "model": "m2"}`
	req, err := ParseChatRequest([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m2","messages":[{"role":"user","content":"hi","x_custom":{"a":[1,2]}}],"logit_bias":{"50256":-100},"user":"u","n":1,"zzz_provider_flag":true}`
	if got := string(req.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Pipeline-style edits: pop own fields, set model, keep the rest in order.
	req.Delete("user")
	req.SetString("model", "base-model")
	req.SetBool("stream", true)
	if got := string(req.AppendJSON(nil)); got != `{"model":"base-model","messages":[{"role":"user","content":"hi","x_custom":{"a":[1,2]}}],"logit_bias":{"50256":-100},"n":1,"zzz_provider_flag":true,"stream":true}` {
		t.Errorf("after edits %s", got)
	}
	if req.Model() != "base-model" || !req.Stream() {
		t.Error("accessors")
	}
	msgs, err := req.Messages()
	if err != nil || len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("messages %v %v", msgs, err)
	}
	if s, ok := msgs[0].ContentString(); !ok || s != "hi" {
		t.Error("content string")
	}
	// json.Marshal of a struct holding an Object uses MarshalJSON.
	b, _ := json.Marshal(struct{ R *ChatRequest }{req})
	if !bytes.Contains(b, []byte(`"zzz_provider_flag":true`)) {
		t.Errorf("marshal %s", b)
	}
	var back ChatRequest
	if err := json.Unmarshal(req.AppendJSON(nil), &back); err != nil || back.Len() != req.Len() {
		t.Errorf("unmarshal %v", err)
	}
	c := req.Clone()
	c.Delete("n")
	if !req.Has("n") || c.Has("n") {
		t.Error("clone shares members")
	}
	for _, bad := range []string{`[]`, `"x"`, `{"a":}`, `{} {}`, ``} {
		if _, err := ParseObject([]byte(bad)); err == nil {
			t.Errorf("ParseObject(%q) accepted", bad)
		}
	}
}

func TestObjectGetters(t *testing.T) {
	o, _ := ParseObject([]byte(`{"s":"x","b":true,"i":3,"f":3.0,"g":3.5,"n":null,"z":0,"e":"","a":[]}`))
	if s, ok := o.GetString("s"); !ok || s != "x" {
		t.Error("GetString")
	}
	if _, ok := o.GetString("b"); ok {
		t.Error("GetString on bool")
	}
	if b, ok := o.GetBool("b"); !ok || !b {
		t.Error("GetBool")
	}
	if i, ok := o.GetInt("f"); !ok || i != 3 {
		t.Error("GetInt float")
	}
	if _, ok := o.GetInt("g"); ok {
		t.Error("GetInt fraction")
	}
	for k, want := range map[string]bool{"s": true, "b": true, "i": true, "n": false, "z": false, "e": false, "a": false, "missing": false} {
		if o.Truthy(k) != want {
			t.Errorf("Truthy(%s) != %v", k, want)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\ slash", "ctl \x00\x01\x1f\t\n\r\b\f", "<>&", "é ☃ 😀", "\u2028\u2029", "bad \xff\xfe utf8", "\xed\xa0\x80"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q → %s invalid: %v", s, got, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if !utf8.ValidString(s) {
			// encoding/json replaces each invalid byte; compare with it.
			b, _ := json.Marshal(s)
			json.Unmarshal(b, &want)
		}
		if back != want {
			t.Errorf("%q round-trips to %q", s, back)
		}
		if got2 := appendStringBytes(nil, []byte(s)); !bytes.Equal(got, got2) {
			t.Errorf("appendStringBytes differs for %q", s)
		}
	}
}

func TestIntLenient(t *testing.T) {
	for in, want := range map[string]int64{`1`: 1, `1.7e9`: 1700000000, `"42"`: 42, `null`: 0, `-3.9`: -3} {
		var n Int
		if err := json.Unmarshal([]byte(in), &n); err != nil || int64(n) != want {
			t.Errorf("%s → %d %v", in, n, err)
		}
	}
	var n Int
	if json.Unmarshal([]byte(`"x"`), &n) == nil || json.Unmarshal([]byte(`{}`), &n) == nil {
		t.Error("non-numbers accepted")
	}
}

func TestNormalizeUsage(t *testing.T) {
	cases := map[string]string{
		`{"prompt_tokens":23,"completion_tokens":8,"total_tokens":31}`: `{"prompt_tokens":23,"completion_tokens":8,"total_tokens":31,"input_tokens":23,"output_tokens":8}`,
		`{"prompt_eval_count":5,"eval_count":7}`:                       `{"prompt_eval_count":5,"eval_count":7,"input_tokens":5,"output_tokens":7,"total_tokens":12}`,
		`{"prompt_n":3,"predicted_n":4,"extra":{"k":1}}`:               `{"prompt_n":3,"predicted_n":4,"extra":{"k":1},"input_tokens":3,"output_tokens":4,"total_tokens":7}`,
		`{"input_tokens":0,"prompt_tokens":9,"output_tokens":2}`:       `{"input_tokens":9,"prompt_tokens":9,"output_tokens":2,"total_tokens":11}`,
		`{}`:   `{}`,
		`null`: `{}`,
		`[1]`:  `{}`,
		``:     `{}`,
	}
	for in, want := range cases {
		if got := string(NormalizeUsage(json.RawMessage(in)).AppendJSON(nil)); got != want {
			t.Errorf("NormalizeUsage(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestIDs(t *testing.T) {
	u := NewUUID()
	if len(u) != 36 || u[14] != '4' || strings.Count(u, "-") != 4 || !strings.ContainsRune("89ab", rune(u[19])) {
		t.Errorf("uuid %s", u)
	}
	for _, c := range []struct {
		id     string
		prefix string
		n      int
	}{{NewMessageID(), "msg_", 28}, {NewToolUseID(), "toolu_", 30}, {NewChatCompletionID(), "chatcmpl-", 45}, {NewCallID(), "call_", 41}} {
		if !strings.HasPrefix(c.id, c.prefix) || len(c.id) != c.n {
			t.Errorf("id %s", c.id)
		}
	}
	if a, b := NewMessageID(), NewMessageID(); a == b {
		t.Error("ids repeat")
	}
}
