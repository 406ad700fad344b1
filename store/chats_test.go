package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func chatTestStore(t *testing.T) (*Store, Actor, Actor, Actor) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "chats.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mk := func(email string) Actor {
		u, err := s.CreateUser(ctx, NewUser{Email: email, Name: email, Role: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return Actor{UserID: u.ID, Role: u.Role}
	}
	admin, a, b := mk("admin@x.test"), mk("a@x.test"), mk("b@x.test")
	return s, admin, a, b
}

func mustParse(t *testing.T, chat string) *ChatPatch {
	t.Helper()
	p, err := ParseChat([]byte(chat))
	if err != nil {
		t.Fatalf("ParseChat(%s): %v", chat, err)
	}
	return p
}

func mustCreate(t *testing.T, s *Store, a Actor, chat string) string {
	t.Helper()
	id, err := s.CreateChat(context.Background(), a, NewChat{Chat: mustParse(t, chat)})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustGet(t *testing.T, s *Store, a Actor, id string) ChatRecord {
	t.Helper()
	rec, err := s.GetChat(context.Background(), a, id, false)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(rec.Chat) || !json.Valid(rec.Meta) {
		t.Fatalf("invalid JSON: %s / %s", rec.Chat, rec.Meta)
	}
	return rec
}

// chatOf decodes an assembled chat with raw message bodies.
type decodedChat struct {
	History struct {
		CurrentID any                        `json:"currentId"`
		Messages  map[string]json.RawMessage `json:"messages"`
	} `json:"history"`
	Messages json.RawMessage `json:"messages"`
	Rest     map[string]json.RawMessage
}

func decodeChat(t *testing.T, b []byte) decodedChat {
	t.Helper()
	var c decodedChat
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	json.Unmarshal(b, &c.Rest)
	return c
}

const twoMsgChat = `{"title":"Two","models":["m"],"history":{"currentId":"b","messages":{` +
	`"a":{"id":"a","parentId":null,"childrenIds":["b"],"role":"user","content":"hello world","timestamp":10},` +
	`"b":{"id":"b","parentId":"a","childrenIds":[],"role":"assistant","content":"hi there","timestamp":11}}},"messages":[1,2]}`

func TestParseChatBadInput(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not json", `{"a":`, "valid JSON"},
		{"array", `[1]`, "must be an object"},
		{"string", `"x"`, "must be an object"},
		{"history string", `{"history":"x"}`, "chat.history must be an object"},
		{"history null", `{"history":null}`, "chat.history must be an object"},
		{"messages array", `{"history":{"messages":[]}}`, "chat.history.messages must be an object"},
		{"message not object", `{"history":{"messages":{"a":{"id":"a"},"b":5}}}`, `chat.history.messages["b"] must be an object`},
		{"message null", `{"history":{"messages":{"a":null}}}`, `must be an object`},
		{"raw NUL", "{\"title\":\"a\x00b\"}", "valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseChat([]byte(tc.in))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrInvalid with %q", err, tc.want)
			}
		})
	}
}

func TestParseChatSanitizes(t *testing.T) {
	// Invalid UTF-8 becomes U+FFFD; escaped NULs are stripped from strings
	// (Open WebUI strips them); an escaped backslash before "u0000" is text.
	in := "{\"title\":\"bad \xff byte\",\"history\":{\"messages\":{\"a\":{\"id\":\"a\",\"content\":\"nu\\u0000ll \\\\u0000 kept\"}}}}"
	p := mustParse(t, in)
	if got := string(p.messages[0].val); got != `{"id":"a","content":"null \\u0000 kept"}` {
		t.Errorf("body %s", got)
	}
	if got := chatTitle(p.top); got != "bad \uFFFD byte" {
		t.Errorf("title %q", got)
	}
	// Duplicate keys: the last value wins, at the first position.
	p = mustParse(t, `{"title":"one","x":1,"title":"two"}`)
	if got := string(appendObject(nil, p.top)); got != `{"title":"two","x":1}` {
		t.Errorf("doc %s", got)
	}
}

func TestExtractMessage(t *testing.T) {
	c := extractMessage([]byte(`{"parentId":5,"role":"user","done":true,"timestamp":12.9,"childrenIds":["x"],` +
		`"content":[{"type":"text","text":"alpha"},{"type":"image_url","image_url":{"url":"u"}},"beta",{"type":"text","text":7}]}`))
	if c.parentID != nil || c.role != "user" || c.done != 1 || c.timestamp != int64(12) || c.leaf != 0 || c.content != "alpha\nbeta" {
		t.Errorf("%+v", c)
	}
	c = extractMessage([]byte(`{"parentId":"p","childrenIds":[],"timestamp":"soon","content":{"x":1},"done":"yes"}`))
	if c.parentID != "p" || c.role != nil || c.done != nil || c.timestamp != nil || c.leaf != 1 || c.content != "" {
		t.Errorf("%+v", c)
	}
	if c := extractMessage([]byte(`{"childrenIds":"x","Role":"user"}`)); c.leaf != 1 || c.role != nil {
		t.Errorf("%+v", c)
	}
}

func TestChatRoundTripBytes(t *testing.T) {
	s, _, a, _ := chatTestStore(t)
	body := `{ "z" : 1,"id":"a",  "content": "x\u00e9\n", "childrenIds":[ ] ,"role":"user","timestamp":1}`
	id := mustCreate(t, s, a, `{"title":"T","history":{"currentId":"a","messages":{"a":`+body+`}},"extra":{"k":[1,2]},"messages":[ {"a":1} ]}`)
	rec := mustGet(t, s, a, id)
	c := decodeChat(t, rec.Chat)
	if string(c.History.Messages["a"]) != body {
		t.Errorf("body\n got %s\nwant %s", c.History.Messages["a"], body)
	}
	if string(c.Messages) != `[ {"a":1} ]` || string(c.Rest["extra"]) != `{"k":[1,2]}` {
		t.Errorf("chat %s", rec.Chat)
	}
	if rec.Title != "T" || rec.Archived || rec.Pinned || rec.ShareID != "" || string(rec.Meta) != "{}" || rec.LastReadAt == nil {
		t.Errorf("record %+v", rec)
	}
	// Untitled chats are "New Chat" (also for an empty or non-string title).
	for _, chat := range []string{`{}`, `{"title":""}`, `{"title":5}`} {
		if rec := mustGet(t, s, a, mustCreate(t, s, a, chat)); rec.Title != "New Chat" || string(rec.Chat) != chat {
			t.Errorf("%s → %q %s", chat, rec.Title, rec.Chat)
		}
	}
}

func TestChatCurrentIDRepairOnRead(t *testing.T) {
	s, _, a, _ := chatTestStore(t)
	msgs := `"a":{"id":"a","childrenIds":["b","c"],"role":"user","timestamp":1},` +
		`"b":{"id":"b","parentId":"a","childrenIds":[],"role":"assistant","timestamp":5},` +
		`"c":{"id":"c","parentId":"a","childrenIds":[],"role":"assistant","timestamp":3},` +
		`"d":{"id":"d","childrenIds":[],"timestamp":9}` // no role: not a candidate
	for _, tc := range []struct{ name, history, want string }{
		{"missing", `{"messages":{` + msgs + `}}`, "b"},
		{"null", `{"currentId":null,"messages":{` + msgs + `}}`, "b"},
		{"stale", `{"currentId":"gone","messages":{` + msgs + `}}`, "b"},
		{"valid kept", `{"currentId":"c","messages":{` + msgs + `}}`, "c"},
		{"not walked", `{"currentId":"a","messages":{` + msgs + `}}`, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := mustCreate(t, s, a, `{"history":`+tc.history+`}`)
			c := decodeChat(t, mustGet(t, s, a, id).Chat)
			if c.History.CurrentID != tc.want {
				t.Errorf("currentId %v, want %s", c.History.CurrentID, tc.want)
			}
			// The repair is on the answer only; the stored document is as sent.
			var doc string
			s.read.QueryRow(`SELECT doc FROM chats WHERE id = ?`, id).Scan(&doc)
			sent := docCurrentID(appendObject(nil, mustParse(t, `{"history":`+tc.history+`}`).top))
			if docCurrentID([]byte(doc)) != sent {
				t.Errorf("stored doc rewritten: %s", doc)
			}
		})
	}
	// A parentId cycle is stored as is and reads fine.
	id := mustCreate(t, s, a, `{"history":{"currentId":"x","messages":{"x":{"id":"x","parentId":"y","childrenIds":["y"]},"y":{"id":"y","parentId":"x","childrenIds":["x"]}}}}`)
	if c := decodeChat(t, mustGet(t, s, a, id).Chat); len(c.History.Messages) != 2 {
		t.Errorf("cycle: %v", c.History.Messages)
	}
}

func TestUpdateChatMerge(t *testing.T) {
	s, _, a, b := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, a, `{"title":"Old","keep":true,"history":{"currentId":"b","extra":1,"messages":{`+
		`"a":{"id":"a","childrenIds":["b"],"role":"user","content":"one"},"b":{"id":"b","parentId":"a","childrenIds":[],"role":"assistant","content":"two"}}}}`)
	// b is replaced wholesale (no deep merge), c is new, a is kept; the
	// childrenIds stay exactly as sent even when they contradict parentId.
	p := mustParse(t, `{"title":"New","added":[1],"history":{"currentId":"c","current_id":"ignored","messages":{`+
		`"c":{"id":"c","parentId":"b","childrenIds":["nobody"],"role":"user","content":"three"},`+
		`"b":{"id":"b","content":"two, edited"}}},"messages":["legacy"]}`)
	if err := s.UpdateChat(ctx, a, id, p); err != nil {
		t.Fatal(err)
	}
	rec := mustGet(t, s, a, id)
	c := decodeChat(t, rec.Chat)
	if rec.Title != "New" || string(c.Rest["keep"]) != "true" || string(c.Rest["added"]) != "[1]" {
		t.Errorf("top level: %s", rec.Chat)
	}
	if c.History.CurrentID != "c" || string(c.Messages) != `["legacy"]` {
		t.Errorf("history/list: %s", rec.Chat)
	}
	if got := string(c.History.Messages["b"]); got != `{"id":"b","content":"two, edited"}` {
		t.Errorf("b %s", got)
	}
	if got := string(c.History.Messages["c"]); !strings.Contains(got, `"childrenIds":["nobody"]`) {
		t.Errorf("c %s", got)
	}
	var hist map[string]any
	json.Unmarshal(c.Rest["history"], &hist)
	if hist["extra"] != float64(1) || hist["current_id"] != "ignored" {
		t.Errorf("history keys %v", hist)
	}
	// Order: a, b (kept its place), c.
	if i, j, k := bytes.Index(rec.Chat, []byte(`"a":{`)), bytes.Index(rec.Chat, []byte(`"b":{`)), bytes.Index(rec.Chat, []byte(`"c":{`)); !(i < j && j < k) {
		t.Errorf("order a=%d b=%d c=%d", i, j, k)
	}
	// Not the owner: not found, nothing written.
	if err := s.UpdateChat(ctx, b, id, mustParse(t, `{"title":"x"}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("other user: %v", err)
	}
	if err := s.UpdateChat(ctx, a, "missing", mustParse(t, `{"title":"x"}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	// A history without messages changes only the other history keys.
	if err := s.UpdateChat(ctx, a, id, mustParse(t, `{"history":{"currentId":"a"}}`)); err != nil {
		t.Fatal(err)
	}
	if c := decodeChat(t, mustGet(t, s, a, id).Chat); c.History.CurrentID != "a" || len(c.History.Messages) != 3 {
		t.Errorf("after currentId-only update: %v %d", c.History.CurrentID, len(c.History.Messages))
	}
}

// The rows of a chat's messages form one rowid range in insertion order,
// and a turn touches only the rows it sends.
func TestMessageSeqLayout(t *testing.T) {
	s, _, a, _ := chatTestStore(t)
	id1 := mustCreate(t, s, a, twoMsgChat)
	id2 := mustCreate(t, s, a, twoMsgChat)
	if err := s.UpdateChat(context.Background(), a, id1, mustParse(t, `{"history":{"messages":{"c":{"id":"c"}}}}`)); err != nil {
		t.Fatal(err)
	}
	rows, err := s.read.Query(`SELECT m.seq, c.seq, m.id FROM messages m JOIN chats c ON c.id = m.chat_id ORDER BY m.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var ms, cs int64
		var id string
		rows.Scan(&ms, &cs, &id)
		if ms>>msgSeqBits != cs {
			t.Errorf("message %s seq %d not in chat %d's range", id, ms, cs)
		}
		got = append(got, fmt.Sprintf("%d:%s", ms&(msgSeqSpan-1), id))
	}
	if strings.Join(got, ",") != "0:a,1:b,2:c,0:a,1:b" {
		t.Errorf("layout %v", got)
	}
	_ = id2
}

func TestChatListUsesIndex(t *testing.T) {
	s, _, a, _ := chatTestStore(t)
	for range 3 {
		mustCreate(t, s, a, `{}`)
	}
	for _, q := range []string{
		`SELECT ` + listCols + ` FROM chats c WHERE c.user_id = ? AND c.archived = 0 AND c.pinned = 0 AND c.folder_id IS NULL ORDER BY c.updated_at DESC, c.id LIMIT ? OFFSET ?`,
		`SELECT ` + listCols + ` FROM chats c WHERE c.user_id = ? AND c.archived = 0 ORDER BY c.updated_at DESC, c.id LIMIT ? OFFSET ?`,
		`SELECT ` + listCols + ` FROM chats c WHERE c.user_id = ? AND c.pinned = 1 AND c.archived = 0 ORDER BY c.updated_at DESC, c.id`,
	} {
		rows, err := s.read.Query(`EXPLAIN QUERY PLAN `+q, a.UserID, 60, 0)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			rows.Scan(&id, &parent, &unused, &detail)
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if strings.Contains(p, "TEMP B-TREE") || !strings.Contains(p, "USING INDEX chats_") {
			t.Errorf("plan of %s:\n%s", q, p)
		}
	}
}

func TestSearchParse(t *testing.T) {
	q := parseSearch("Hello-World tag:Work folder:Projects pinned:true archived:false shared:maybe ÉTÉ!")
	if strings.Join(q.tokens, ",") != "hello,world,été" || q.noText {
		t.Errorf("tokens %q", q.tokens)
	}
	if len(q.tags) != 1 || q.tags[0] != "work" || q.folders[0] != "projects" || !*q.pinned || *q.archived || q.shared != nil {
		t.Errorf("%+v", q)
	}
	if q := parseSearch(`"*)(:^ -- NEAR`); strings.Join(q.tokens, ",") != "near" {
		t.Errorf("tokens %q", q.tokens)
	}
	if q := parseSearch(`!!! ???`); q.noText || len(q.tokens) != 0 {
		t.Errorf("punctuation: %+v", q)
	}
	if q := parseSearch(`tag:none`); !q.noText || !q.tagNone {
		t.Errorf("tag:none: %+v", q)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 20) + "the Needle is here " + strings.Repeat("dolor sit ", 30)
	sn := snippet(long, []string{"needle"})
	if !strings.HasPrefix(sn, "...") || !strings.HasSuffix(sn, "...") || !strings.Contains(sn, "Needle") || len(sn) > 170 {
		t.Errorf("snippet %q", sn)
	}
	if sn := snippet("short text", []string{"zzz"}); sn != "short text" {
		t.Errorf("snippet %q", sn)
	}
	if sn := snippet("needles first", []string{"needle"}); sn != "needles first" {
		t.Errorf("snippet %q", sn)
	}
}

func searchIDs(t *testing.T, s *Store, a Actor, text string) []string {
	t.Helper()
	items, err := s.SearchChats(context.Background(), a, text, 60, 0)
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.Title)
	}
	return ids
}

func TestSearchKeptInStep(t *testing.T) {
	s, _, a, b := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, a, `{"title":"Travel plans","history":{"messages":{"m":{"id":"m","role":"user","content":"book a flight to Lisbon"}}}}`)
	mustCreate(t, s, b, `{"title":"Lisbon trip of b","history":{"messages":{"m":{"id":"m","role":"user","content":"Lisbon"}}}}`)
	if got := searchIDs(t, s, a, "lisb"); len(got) != 1 || got[0] != "Travel plans" {
		t.Errorf("prefix search: %v", got)
	}
	if got := searchIDs(t, s, a, "travel lisbon"); len(got) != 1 {
		t.Errorf("title AND content: %v", got)
	}
	if got := searchIDs(t, s, a, "travel porto"); len(got) != 0 {
		t.Errorf("AND: %v", got)
	}
	// Content replaced: the old word is gone, the new one found.
	if err := s.UpdateChat(ctx, a, id, mustParse(t, `{"title":"Holiday","history":{"messages":{"m":{"id":"m","role":"user","content":"train to Porto"}}}}`)); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, s, a, "lisbon"); len(got) != 0 {
		t.Errorf("stale content found: %v", got)
	}
	if got := searchIDs(t, s, a, "travel"); len(got) != 0 {
		t.Errorf("stale title found: %v", got)
	}
	if got := searchIDs(t, s, a, "porto holiday"); len(got) != 1 {
		t.Errorf("new content: %v", got)
	}
	// Deleting the message, then the chat, removes them from the index.
	if err := s.DeleteMessage(ctx, a, id, "m"); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, s, a, "porto"); len(got) != 0 {
		t.Errorf("deleted message found: %v", got)
	}
	if err := s.DeleteChat(ctx, a, id); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, s, a, "holiday"); len(got) != 0 {
		t.Errorf("deleted chat found: %v", got)
	}
	var n int
	s.read.QueryRow(`SELECT count(*) FROM message_fts WHERE message_fts MATCH 'porto OR lisbon OR flight'`).Scan(&n)
	if n != 1 { // b's message only
		t.Errorf("%d index rows left", n)
	}
}

func TestDeleteChatDropsOrphanTags(t *testing.T) {
	s, admin, a, _ := chatTestStore(t)
	ctx := context.Background()
	ids, err := s.ImportChats(ctx, a, []NewChat{
		{Chat: mustParse(t, `{"title":"one"}`), Meta: []byte(`{"tags":["Work Stuff","solo"],"x":1}`)},
		{Chat: mustParse(t, `{"title":"two"}`), Meta: []byte(`{"tags":["work stuff"]}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := mustGet(t, s, a, ids[0])
	if string(rec.Meta) != `{"x":1,"tags":["solo","work_stuff"]}` {
		t.Errorf("meta %s", rec.Meta)
	}
	tags := func() string {
		rows, _ := s.read.Query(`SELECT id FROM tags WHERE user_id = ? ORDER BY id`, a.UserID)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id string
			rows.Scan(&id)
			out = append(out, id)
		}
		return strings.Join(out, ",")
	}
	if got := tags(); got != "solo,work_stuff" {
		t.Fatalf("tags %s", got)
	}
	// An admin deletes a's chat: a's orphan tags go, shared ones stay.
	if err := s.DeleteChat(ctx, admin, ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := tags(); got != "work_stuff" {
		t.Errorf("after delete: %s", got)
	}
	if err := s.DeleteAllChats(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := tags(); got != "" {
		t.Errorf("after delete all: %s", got)
	}
}

func TestImportAllOrNothing(t *testing.T) {
	s, _, a, _ := chatTestStore(t)
	ctx := context.Background()
	_, err := s.ImportChats(ctx, a, []NewChat{{Chat: mustParse(t, twoMsgChat)}, {Chat: nil}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v", err)
	}
	var n int
	s.read.QueryRow(`SELECT (SELECT count(*) FROM chats) + (SELECT count(*) FROM messages)`).Scan(&n)
	if n != 0 {
		t.Errorf("%d rows left by a failed import", n)
	}
}

func TestCloneCopiesRows(t *testing.T) {
	s, _, a, b := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, a, twoMsgChat)
	clone, err := s.CloneChat(ctx, a, id, "", false)
	if err != nil {
		t.Fatal(err)
	}
	orig, cp := mustGet(t, s, a, id), mustGet(t, s, a, clone)
	oc, cc := decodeChat(t, orig.Chat), decodeChat(t, cp.Chat)
	if cp.Title != "Clone of Two" || string(cc.Rest["originalChatId"]) != `"`+id+`"` || string(cc.Rest["branchPointMessageId"]) != `"b"` ||
		string(cc.Rest["title"]) != `"Clone of Two"` {
		t.Errorf("clone %s", cp.Chat)
	}
	for k, v := range oc.History.Messages {
		if string(cc.History.Messages[k]) != string(v) {
			t.Errorf("message %s differs", k)
		}
	}
	if !bytes.Contains(cp.Chat, []byte(`"messages":{"a":`)) || string(cc.Messages) != "[1,2]" {
		t.Errorf("clone order/list: %s", cp.Chat)
	}
	if _, err := s.CloneChat(ctx, b, id, "", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("other user's clone: %v", err)
	}
	// The copy is independent of the original.
	if err := s.UpdateChat(ctx, a, clone, mustParse(t, `{"history":{"messages":{"a":{"id":"a"}}}}`)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustGet(t, s, a, id).Chat, orig.Chat) {
		t.Error("original changed by an update of its clone")
	}
}

func TestShareSnapshotIsFrozen(t *testing.T) {
	s, _, a, b := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, a, twoMsgChat)
	if err := s.ShareChat(ctx, a, id); err != nil {
		t.Fatal(err)
	}
	token := mustGet(t, s, a, id).ShareID
	snap, err := s.GetSharedChat(ctx, token)
	if err != nil || snap.ID != token || snap.ShareID != token || snap.UserID != a.UserID {
		t.Fatalf("%+v %v", snap, err)
	}
	if err := s.UpdateChat(ctx, a, id, mustParse(t, `{"title":"Changed","history":{"messages":{"a":{"id":"a","content":"changed"}}}}`)); err != nil {
		t.Fatal(err)
	}
	again, _ := s.GetSharedChat(ctx, token)
	if !bytes.Equal(again.Chat, snap.Chat) || again.Title != "Two" {
		t.Errorf("snapshot changed: %s", again.Chat)
	}
	// Re-sharing refreshes it under the same token.
	if err := s.ShareChat(ctx, a, id); err != nil {
		t.Fatal(err)
	}
	fresh, _ := s.GetSharedChat(ctx, token)
	if fresh.Title != "Changed" || !bytes.Contains(fresh.Chat, []byte(`"content":"changed"`)) {
		t.Errorf("refreshed snapshot: %s", fresh.Chat)
	}
	if err := s.ShareChat(ctx, b, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("share by other: %v", err)
	}
	if ok, err := s.UnshareChat(ctx, a, id); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := s.GetSharedChat(ctx, token); !errors.Is(err, ErrNotFound) {
		t.Errorf("after unshare: %v", err)
	}
	if ok, err := s.UnshareChat(ctx, a, id); ok || err != nil {
		t.Errorf("unshare twice: %v %v", ok, err)
	}
}

func TestUpsertMessageContent(t *testing.T) {
	s, admin, a, b := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, a, `{"history":{"currentId":"a","messages":{"a":{"z":0,"id":"a","content":"old","childrenIds":["new"],"role":"user"}}}}`)
	if err := s.UpsertMessageContent(ctx, a, id, "a", "fresh"); err != nil {
		t.Fatal(err)
	}
	c := decodeChat(t, mustGet(t, s, a, id).Chat)
	if got := string(c.History.Messages["a"]); got != `{"z":0,"id":"a","content":"fresh","childrenIds":["new"],"role":"user"}` {
		t.Errorf("edited body %s", got)
	}
	// A new message: parent from childrenIds, role opposite of the parent's.
	s.now = func() time.Time { return time.Unix(1234, 0) }
	if err := s.UpsertMessageContent(ctx, admin, id, "new", "made <by> admin"); err != nil {
		t.Fatal(err)
	}
	c = decodeChat(t, mustGet(t, s, a, id).Chat)
	if got := string(c.History.Messages["new"]); got != `{"id":"new","parentId":"a","childrenIds":[],"role":"assistant","content":"made <by> admin","timestamp":1234}` {
		t.Errorf("new body %s", got)
	}
	if c.History.CurrentID != "new" {
		t.Errorf("currentId %v", c.History.CurrentID)
	}
	if err := s.UpsertMessageContent(ctx, b, id, "a", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("other user: %v", err)
	}
}

func TestDeleteMessageReparents(t *testing.T) {
	s, _, a, _ := chatTestStore(t)
	ctx := context.Background()
	// r → q → (x, y); x → g1; y → g2. Delete q: x and y go, g1 and g2 move
	// under r.
	id := mustCreate(t, s, a, `{"history":{"currentId":"g2","messages":{`+
		`"r":{"id":"r","childrenIds":["q","other"],"role":"user","timestamp":1},`+
		`"q":{"id":"q","parentId":"r","childrenIds":["x","y"],"role":"assistant","timestamp":2},`+
		`"x":{"id":"x","parentId":"q","childrenIds":["g1"],"role":"user","timestamp":3},`+
		`"y":{"id":"y","parentId":"q","childrenIds":["g2"],"role":"user","timestamp":4},`+
		`"g1":{"id":"g1","parentId":"x","childrenIds":[],"role":"assistant","timestamp":5},`+
		`"g2":{"parentId":"y","id":"g2","childrenIds":[],"role":"assistant","timestamp":6}}}}`)
	if err := s.DeleteMessage(ctx, a, id, "q"); err != nil {
		t.Fatal(err)
	}
	c := decodeChat(t, mustGet(t, s, a, id).Chat)
	if len(c.History.Messages) != 3 {
		t.Fatalf("messages left: %s", mustGet(t, s, a, id).Chat)
	}
	if got := string(c.History.Messages["r"]); got != `{"id":"r","childrenIds":["other","g1","g2"],"role":"user","timestamp":1}` {
		t.Errorf("parent %s", got)
	}
	if got := string(c.History.Messages["g2"]); got != `{"parentId":"r","id":"g2","childrenIds":[],"role":"assistant","timestamp":6}` {
		t.Errorf("grandchild %s", got)
	}
	if c.History.CurrentID != "g2" {
		t.Errorf("currentId %v (it was not deleted)", c.History.CurrentID)
	}
	// Deleting the current message moves currentId to the end of the
	// parent's last branch.
	if err := s.DeleteMessage(ctx, a, id, "g2"); err != nil {
		t.Fatal(err)
	}
	if c := decodeChat(t, mustGet(t, s, a, id).Chat); c.History.CurrentID != "g1" {
		t.Errorf("currentId %v, want g1", c.History.CurrentID)
	}
	if err := s.DeleteMessage(ctx, a, id, "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing message: %v", err)
	}
}

// The message members come back in insertion order (not id order), from a
// rowid range scan without a sort.
func TestMessageOrderPlan(t *testing.T) {
	s, _, a, _ := chatTestStore(t)
	ctx := context.Background()
	id := mustCreate(t, s, a, `{"history":{"messages":{"z":{"id":"z"},"a":{"id":"a"},"m":{"id":"m"}}}}`)
	if err := s.UpdateChat(ctx, a, id, mustParse(t, `{"history":{"messages":{"b":{"id":"b"},"a":{"id":"a","v":2}}}}`)); err != nil {
		t.Fatal(err)
	}
	rec := mustGet(t, s, a, id)
	if !bytes.Contains(rec.Chat, []byte(`"messages":{"z":{"id":"z"},"a":{"id":"a","v":2},"m":{"id":"m"},"b":{"id":"b"}}`)) {
		t.Errorf("order: %s", rec.Chat)
	}
	// The row-by-row fallback (for chats too large for one SQLite string)
	// gives the same bytes.
	var seq int64
	s.read.QueryRow(`SELECT seq FROM chats WHERE id = ?`, id).Scan(&seq)
	one, n1, err1 := messageMembers(ctx, s.read, seq)
	rowwise, n2, err2 := messageMembersByRow(ctx, s.read, seq)
	if err1 != nil || err2 != nil || n1 != 4 || n2 != 4 || !bytes.Equal(one, rowwise) {
		t.Errorf("fallback differs:\n%s\n%s (%v %v)", one, rowwise, err1, err2)
	}
	rows, err := s.read.Query(`EXPLAIN QUERY PLAN `+messageMembersSQL, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		rows.Scan(&id, &parent, &unused, &detail)
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); strings.Contains(p, "TEMP B-TREE") || !strings.Contains(p, "INTEGER PRIMARY KEY (rowid>? AND rowid<?)") {
		t.Errorf("plan: %s", p)
	}
}
