package server

import (
	"encoding/json"
	"fmt"
	"testing"
)

// eventChat: currentId is m1, so the tests can see which events move it
// to m2.
const eventChat = `{"title":"Events","history":{"currentId":"m1","messages":{` +
	`"m1":{"id":"m1","parentId":null,"childrenIds":["m2"],"role":"user","content":"hello","timestamp":1},` +
	`"m2":{"id":"m2","parentId":"m1","childrenIds":[],"role":"assistant","content":"hi","timestamp":2,` +
	`"statusHistory":[{"description":"s0"}],"embeds":["e0"],"files":[{"id":"f0"}],"sources":[{"n":0}]}}}}`

// storedChat returns the stored chat's history as the owner reads it.
func storedChat(t *testing.T, f *fixture, id string) (raw string, currentID string, m2 map[string]json.RawMessage) {
	t.Helper()
	w := f.do("GET", "/api/v1/chats/"+id, f.userTok, "")
	expect(t, w, 200, "")
	var body struct {
		Chat struct {
			History struct {
				CurrentID string                                `json:"currentId"`
				Messages  map[string]map[string]json.RawMessage `json:"messages"`
			} `json:"history"`
		} `json:"chat"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	return w.Body.String(), body.Chat.History.CurrentID, body.Chat.History.Messages["m2"]
}

func TestChatEventPersistence(t *testing.T) {
	cases := []struct {
		typ, data string
		field     string // the m2 field that changes
		want      string // its stored value afterwards
		moves     bool   // history.currentId moves to m2
	}{
		{"status", `{"description":"s1","done":true}`, "statusHistory", `[{"description":"s0"},{"description":"s1","done":true}]`, false},
		{"message", `{"content":" there"}`, "content", `"hi there"`, true},
		{"replace", `{"content":"bye"}`, "content", `"bye"`, true},
		{"embeds", `{"embeds":["e1"]}`, "embeds", `["e1","e0"]`, true},
		{"embeds", `{"embeds":["e1"],"replace":true}`, "embeds", `["e1"]`, true},
		{"embeds", `{"embeds":[],"replace":true}`, "embeds", `[]`, true},
		{"files", `{"files":[{"id":"f1"}]}`, "files", `[{"id":"f1"},{"id":"f0"}]`, true},
		{"source", `{"n":1}`, "sources", `[{"n":0},{"n":1}]`, true},
		{"citation", `{"n":2}`, "sources", `[{"n":0},{"n":2}]`, true},
	}
	for _, tc := range cases {
		t.Run(tc.typ+" "+tc.data, func(t *testing.T) {
			f := newFixture(t, nil)
			url := wsURL(t, f)
			id := mkChat(f, f.user, eventChat)
			live := wsDial(t, url, nil)
			live.auth(f.userTok, f.user.ID)
			body := fmt.Sprintf(`{"type":%q,"data":%s}`, tc.typ, tc.data)
			w := f.do("POST", "/api/v1/chats/"+id+"/messages/m2/event", f.userTok, body)
			expect(t, w, 200, "")
			if w.Body.String() != "true" {
				t.Fatalf("answer %s", w.Body.String())
			}
			_, cur, m2 := storedChat(t, f, id)
			if got := string(m2[tc.field]); got != tc.want {
				t.Fatalf("%s = %s, want %s", tc.field, got, tc.want)
			}
			if want := map[bool]string{true: "m2", false: "m1"}[tc.moves]; cur != want {
				t.Fatalf("currentId %s, want %s", cur, want)
			}
			got := live.read()
			if got.Type != "events" || got.ChatID != id || got.MessageID != "m2" || got.Data.Type != tc.typ || string(got.Data.Data) != tc.data {
				t.Fatalf("emitted %+v", got)
			}
		})
	}
}

func TestChatEventEmitOnly(t *testing.T) {
	f := newFixture(t, nil)
	url := wsURL(t, f)
	id := mkChat(f, f.user, eventChat)
	live := wsDial(t, url, nil)
	live.auth(f.userTok, f.user.ID)
	before, _, _ := storedChat(t, f, id)
	for _, ev := range []string{
		`{"type":"notification","data":{"type":"info","content":"n"}}`,
		`{"type":"chat:message:delta","data":{"content":"x"}}`,
		`{"type":"chat:message","data":{"content":"x"}}`,
		`{"type":"chat:message:files","data":{"files":[]}}`,
		`{"type":"chat:message:embeds","data":{"embeds":["x"]}}`,
		`{"type":"source","data":{"type":"code_execution","output":"1"}}`, // code execution: live only
		`{"type":"message","data":{"content":"x"}}`,                       // to a missing message below
	} {
		path := "/api/v1/chats/" + id + "/messages/m2/event"
		if ev == `{"type":"message","data":{"content":"x"}}` {
			path = "/api/v1/chats/" + id + "/messages/nope/event"
		}
		expect(t, f.do("POST", path, f.userTok, ev), 200, "")
		var want struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		json.Unmarshal([]byte(ev), &want)
		if got := live.read(); got.Data.Type != want.Type || string(got.Data.Data) != string(want.Data) {
			t.Fatalf("emitted %+v, want %s", got, ev)
		}
	}
	if after, _, _ := storedChat(t, f, id); after != before {
		t.Fatalf("emit-only events changed the chat:\n%s\n%s", before, after)
	}
}

func TestChatEventErrors(t *testing.T) {
	f := newFixture(t, nil)
	id := mkChat(f, f.user, eventChat)
	path := "/api/v1/chats/" + id + "/messages/m2/event"
	before, _, _ := storedChat(t, f, id)
	for _, tc := range []struct {
		tok, body string
		status    int
		detail    string
	}{
		{f.userTok, `{"type":"chat:title","data":{"title":"x"}}`, 400, `Event type "chat:title" is not accepted here`},
		{f.userTok, `{"type":"execute","data":{"code":"1"}}`, 400, ""},
		{f.userTok, `{"type":"message","data":"text"}`, 422, `Field "data" must be an object`},
		{f.userTok, `{"type":"message","data":[1]}`, 422, ""},
		{f.userTok, `{"type":"message","data":null}`, 422, ""},
		{f.userTok, `{"type":"message"}`, 422, `Field "data" is required`},
		{f.userTok, `{"data":{}}`, 422, `Field "type" is required`},
		{f.userTok, `{"type":1,"data":{}}`, 422, ""},
		{f.userTok, `[]`, 422, ""},
		{f.otherTok, `{"type":"replace","data":{"content":"pwned"}}`, 404, msgNotFound},
		{f.userTok, `{"type":"replace","data":{"content":"x"}}`, 404, msgNotFound}, // path below: unknown chat
	} {
		p := path
		if tc.detail == msgNotFound && tc.tok == f.userTok {
			p = "/api/v1/chats/no-such-chat/messages/m2/event"
		}
		expect(t, f.do("POST", p, tc.tok, tc.body), tc.status, tc.detail)
	}
	if after, _, _ := storedChat(t, f, id); after != before {
		t.Fatalf("refused events changed the chat:\n%s\n%s", before, after)
	}
}

func TestChatEventCallers(t *testing.T) {
	f := newFixture(t, nil)
	url := wsURL(t, f)
	id := mkChat(f, f.user, eventChat)
	path := "/api/v1/chats/" + id + "/messages/m2/event"
	owner := wsDial(t, url, nil)
	owner.auth(f.userTok, f.user.ID)
	adm := wsDial(t, url, nil)
	adm.auth(f.adminTok, f.admin.ID)

	// An API key works (SPEC §5 rule 5), in either header.
	expect(t, f.do("POST", path, f.userKey, `{"type":"message","data":{"content":"+k"}}`), 200, "")
	expect(t, f.doH("POST", path, `{"type":"message","data":{"content":"+x"}}`, map[string]string{"x-api-key": f.userKey}), 200, "")
	// An admin may post to anyone's chat: written as the owner, emitted to
	// the owner's connections (not the admin's).
	expect(t, f.do("POST", path, f.adminTok, `{"type":"message","data":{"content":"+a"}}`), 200, "")
	_, _, m2 := storedChat(t, f, id)
	if got := string(m2["content"]); got != `"hi+k+x+a"` {
		t.Fatalf("content %s", got)
	}
	for i := int64(1); i <= 3; i++ {
		if got := owner.read(); got.Seq != i || got.Data.Type != "message" {
			t.Fatalf("owner got %+v", got)
		}
	}
	note(f, f.admin.ID, "marker")
	if got := adm.read(); got.Data.Type != "notification" {
		t.Fatalf("admin got %+v", got)
	}
}
