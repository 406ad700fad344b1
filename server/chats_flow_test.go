package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// rawChat is a ChatResponse decoded just enough to compare raw bytes: the
// message bodies and the legacy list stay json.RawMessage, i.e. exactly the
// bytes the server sent.
type rawChat struct {
	ID     string `json:"id"`
	UserID string `json:"user_id"`
	Title  string `json:"title"`
	Chat   struct {
		History struct {
			CurrentID *string                    `json:"currentId"`
			Messages  map[string]json.RawMessage `json:"messages"`
		} `json:"history"`
		Messages json.RawMessage `json:"messages"`
	} `json:"chat"`
}

// messageOrder lists the keys of chat.history.messages in the order the
// server wrote them.
func messageOrder(t *testing.T, body []byte) []string {
	t.Helper()
	var outer struct {
		Chat struct {
			History struct {
				Messages json.RawMessage `json:"messages"`
			} `json:"history"`
		} `json:"chat"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(outer.Chat.History.Messages))
	dec.Token() // {
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	return keys
}

// The SPEC §4 orchestration flow, through the real router: create a chat
// with a user message and an empty assistant placeholder, add a follow-up
// turn by sending only what changed, read the whole tree back.
func TestChatConversationFlow(t *testing.T) {
	f := newFixture(t, nil)

	// Message objects as a client would send them: odd key order, inner
	// white space, unknown fields. They must come back byte for byte.
	u1 := `{"role": "user", "id":"u1","parentId":null,"childrenIds":["a1"],"content":"What is the capital of France?","timestamp":1700000000,"models":["m1"],"x-client":{"z":1,"a":[true,null]}}`
	a1 := `{"id":"a1","parentId":"u1","childrenIds":[],"role":"assistant","content":"","model":"m1","modelName":"Model One","modelIdx":0,"done":false,"timestamp":1700000001}`
	create := `{"chat":{"title":"Capitals","models":["m1"],"history":{"currentId":"a1","messages":{"u1":` + u1 + `,"a1":` + a1 +
		`}},"messages":[` + u1 + `,` + a1 + `],"files":[],"tags":[],"params":{},"timestamp":1700000000123}}`
	w := f.do("POST", "/api/v1/chats/new", f.userTok, create)
	expect(t, w, 200, "")
	var c rawChat
	decodeInto(t, w, &c)
	if c.ID == "" || c.UserID != f.user.ID || c.Title != "Capitals" {
		t.Fatalf("create answer: %s", w.Body.String())
	}
	id := c.ID

	// The completion fills the placeholder (here: the client does it).
	a1done := `{"id":"a1","parentId":"u1","childrenIds":[],"role":"assistant","content":"Paris.","model":"m1","modelName":"Model One","modelIdx":0,"done":true,"timestamp":1700000001}`
	w = f.do("POST", "/api/v1/chats/"+id, f.userTok, `{"chat":{"history":{"messages":{"a1":`+a1done+`}}}}`)
	expect(t, w, 200, "")

	// Follow-up turn: only the new user+assistant messages, the previous
	// assistant message with its changed childrenIds, the new currentId and
	// a new messages[].
	a1next := `{"id":"a1","parentId":"u1","childrenIds":["u2"],"role":"assistant","content":"Paris.","model":"m1","modelName":"Model One","modelIdx":0,"done":true,"timestamp":1700000001}`
	u2 := `{"id":"u2","parentId":"a1","childrenIds":["a2"],"role":"user","content":"And of Italy?","timestamp":1700000100,"models":["m1"]}`
	a2 := `{"id":"a2","parentId":"u2","childrenIds":[],"role":"assistant","content":"","model":"m1","modelName":"Model One","modelIdx":0,"timestamp":1700000101,  "statusHistory" : [ ]}`
	list := `[` + u1 + `,` + a1next + `,` + u2 + `,` + a2 + `]`
	turn := `{"chat":{"history":{"currentId":"a2","messages":{"u2":` + u2 + `,"a2":` + a2 + `,"a1":` + a1next + `}},"messages":` + list + `}}`
	w = f.do("POST", "/api/v1/chats/"+id, f.userTok, turn)
	expect(t, w, 200, "")

	w = f.do("GET", "/api/v1/chats/"+id, f.userTok, "")
	expect(t, w, 200, "")
	before := w.Body.String()
	var got rawChat
	decodeInto(t, w, &got)
	want := map[string]string{"u1": u1, "a1": a1next, "u2": u2, "a2": a2}
	if len(got.Chat.History.Messages) != 4 {
		t.Fatalf("%d messages, want 4: %s", len(got.Chat.History.Messages), before)
	}
	for k, v := range want {
		if string(got.Chat.History.Messages[k]) != v {
			t.Errorf("message %s:\n got %s\nwant %s", k, got.Chat.History.Messages[k], v)
		}
	}
	if got.Chat.History.CurrentID == nil || *got.Chat.History.CurrentID != "a2" {
		t.Errorf("currentId %v, want a2", got.Chat.History.CurrentID)
	}
	if string(got.Chat.Messages) != list {
		t.Errorf("messages[]:\n got %s\nwant %s", got.Chat.Messages, list)
	}
	if order := strings.Join(messageOrder(t, w.Body.Bytes()), ","); order != "u1,a1,u2,a2" {
		t.Errorf("message order %s, want u1,a1,u2,a2", order)
	}
	var full map[string]any
	decodeInto(t, w, &full)
	chat := full["chat"].(map[string]any)
	if chat["title"] != "Capitals" || chat["timestamp"] != float64(1700000000123) || chat["models"].([]any)[0] != "m1" {
		t.Errorf("top-level keys lost: %v", chat)
	}

	// Another user: 404 with the same body as a chat that does not exist,
	// and nothing changes.
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/chats/" + id, ""},
		{"POST", "/api/v1/chats/" + id, `{"chat":{"title":"hijacked","history":{"messages":{"x":{"id":"x"}}}}}`},
		{"DELETE", "/api/v1/chats/" + id, ""},
		{"GET", "/api/v1/chats/no-such-chat", ""},
	} {
		w := f.do(tc.method, tc.path, f.otherTok, tc.body)
		expect(t, w, 404, msgNotFound)
		if w.Body.String() != `{"detail":"We could not find what you're looking for :/"}` {
			t.Errorf("%s %s: body %s", tc.method, tc.path, w.Body.String())
		}
	}
	w = f.do("GET", "/api/v1/chats/"+id, f.userTok, "")
	expect(t, w, 200, "")
	if w.Body.String() != before {
		t.Errorf("chat changed after another user's attempts:\n%s\n%s", before, w.Body.String())
	}
}
