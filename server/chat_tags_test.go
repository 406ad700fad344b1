package server

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"hearth/store"
)

// ftDB opens the fixture's database file directly, for test-only writes
// and checks that do not go through the chats API.
func ftDB(f *fixture) *sql.DB {
	f.t.Helper()
	db, err := sql.Open("sqlite", "file:"+f.store.Path()+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { db.Close() })
	return db
}

// ftChat inserts a chat row for owner: id, folder ("" = none), updated_at,
// archived, pinned; last_read_at = updated_at.
func ftChat(f *fixture, owner store.User, id, folderID string, updatedAt int64, archived, pinned bool) {
	f.t.Helper()
	var folder any
	if folderID != "" {
		folder = folderID
	}
	_, err := ftDB(f).Exec(`INSERT INTO chats (id, user_id, title, folder_id, archived, pinned, created_at, updated_at, last_read_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, owner.ID, "Chat "+id, folder, archived, pinned, updatedAt-1, updatedAt, updatedAt)
	if err != nil {
		f.t.Fatal(err)
	}
}

// ftCount counts the rows of "FROM ..." in the fixture's database.
func ftCount(f *fixture, from string, args ...any) int {
	f.t.Helper()
	var n int
	if err := ftDB(f).QueryRow("SELECT count(*) "+from, args...).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// ftDecode decodes a response body into v or fails.
func ftDecode(t *testing.T, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
}

// ftExpect422 checks a 422 with a string detail.
func ftExpect422(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	expect(t, w, 422, "")
	var b struct {
		Detail any `json:"detail"`
	}
	ftDecode(t, w, &b)
	if _, isStr := b.Detail.(string); !isStr {
		t.Fatalf("422 detail is not a string: %s", w.Body.String())
	}
}

func TestChatTagsAPI(t *testing.T) {
	f := newFixture(t, nil)
	ftChat(f, f.user, "c1", "", 100, false, false)
	ftChat(f, f.user, "c2", "", 200, false, false)
	ftChat(f, f.other, "o1", "", 300, false, false)
	tags := "/api/v1/chats/c1/tags"

	w := f.do("POST", tags, f.userTok, `{"name":"My Tag"}`)
	expect(t, w, 200, "")
	var got []map[string]any
	ftDecode(t, w, &got)
	if len(got) != 1 || got[0]["id"] != "my_tag" || got[0]["name"] != "My Tag" || got[0]["user_id"] != f.user.ID || got[0]["meta"] != nil {
		t.Fatalf("add: %s", w.Body.String())
	}
	if _, has := got[0]["meta"]; !has {
		t.Fatalf("meta missing: %s", w.Body.String())
	}
	expect(t, f.do("POST", "/api/v1/chats/c2/tags", f.userTok, `{"name":"  my tag "}`), 200, "")
	expect(t, f.do("POST", tags, f.userTok, `{"name":"Second"}`), 200, "")

	w = f.do("GET", tags, f.userTok, "")
	expect(t, w, 200, "")
	ftDecode(t, w, &got)
	if len(got) != 2 || got[0]["id"] != "my_tag" || got[1]["id"] != "second" {
		t.Fatalf("chat tags: %s", w.Body.String())
	}
	w = f.do("GET", "/api/v1/chats/all/tags", f.userTok, "")
	expect(t, w, 200, "")
	ftDecode(t, w, &got)
	if len(got) != 2 {
		t.Fatalf("all tags: %s", w.Body.String())
	}
	w = f.do("GET", "/api/v1/chats/all/tags", f.otherTok, "")
	expect(t, w, 200, "")
	if w.Body.String() != "[]" {
		t.Fatalf("other's tags: %s", w.Body.String())
	}

	// "None" in any case is refused; bad bodies are 422 with a string
	// detail; nothing is written by any of them.
	for _, n := range []string{"None", "none", " NONE "} {
		expect(t, f.do("POST", tags, f.userTok, fmt.Sprintf(`{"name":%q}`, n)), 400, "[ERROR: Tag name cannot be 'None']")
	}
	for _, body := range []string{``, `{}`, `{"name":""}`, `{"name":"   "}`, `{"name":7}`, `[]`, `{"name":"x"`, `{"name":"` + strings.Repeat("x", 300) + `"}`} {
		ftExpect422(t, f.do("POST", tags, f.userTok, body))
		ftExpect422(t, f.do("DELETE", tags, f.userTok, body))
	}
	if n := ftCount(f, `FROM tags`); n != 2 {
		t.Fatalf("%d tag rows after refused writes", n)
	}
	if n := ftCount(f, `FROM chat_tags`); n != 3 {
		t.Fatalf("%d links after refused writes", n)
	}

	// Another user's chat (and an admin, who acts on their own chats here)
	// gets the same 404 as a missing chat, and nothing changes.
	for _, tok := range []string{f.otherTok, f.adminTok} {
		expect(t, f.do("GET", tags, tok, ""), 404, msgNotFound)
		expect(t, f.do("POST", tags, tok, `{"name":"intruder"}`), 404, msgNotFound)
		expect(t, f.do("DELETE", tags, tok, `{"name":"my tag"}`), 404, msgNotFound)
	}
	expect(t, f.do("GET", "/api/v1/chats/nope/tags", f.userTok, ""), 404, msgNotFound)
	expect(t, f.do("POST", "/api/v1/chats/o1/tags", f.userTok, `{"name":"x"}`), 404, msgNotFound)
	if n := ftCount(f, `FROM tags WHERE id IN ('intruder', 'x')`); n != 0 {
		t.Fatal("tag written through a foreign chat")
	}
	if n := ftCount(f, `FROM chat_tags WHERE chat_id = 'c1'`); n != 2 {
		t.Fatal("foreign delete removed a link")
	}

	// Removing: the tag stays while c2 uses it, goes with the last use.
	w = f.do("DELETE", tags, f.userTok, `{"name":"MY TAG"}`)
	expect(t, w, 200, "")
	ftDecode(t, w, &got)
	if len(got) != 1 || got[0]["id"] != "second" {
		t.Fatalf("after remove: %s", w.Body.String())
	}
	if n := ftCount(f, `FROM tags WHERE id = 'my_tag'`); n != 1 {
		t.Fatal("tag in use dropped")
	}
	w = f.do("DELETE", "/api/v1/chats/c2/tags", f.userTok, `{"name":"my_tag"}`)
	expect(t, w, 200, "")
	if w.Body.String() != "[]" {
		t.Fatalf("c2 tags: %s", w.Body.String())
	}
	w = f.do("GET", "/api/v1/chats/all/tags", f.userTok, "")
	ftDecode(t, w, &got)
	if len(got) != 1 || got[0]["id"] != "second" {
		t.Fatalf("orphan kept: %s", w.Body.String())
	}
	// Tagging bumps nothing else of the chat.
	if n := ftCount(f, `FROM chats WHERE id = 'c1' AND updated_at = 100`); n != 1 {
		t.Fatal("tagging changed updated_at")
	}
}

func TestChatsByTagAPI(t *testing.T) {
	f := newFixture(t, nil)
	for i := range 5 {
		id := fmt.Sprintf("c%d", i)
		ftChat(f, f.user, id, "", int64(100+i), false, false)
		expect(t, f.do("POST", "/api/v1/chats/"+id+"/tags", f.userTok, `{"name":"Work Stuff"}`), 200, "")
	}
	ftChat(f, f.user, "arch", "", 900, true, false)
	expect(t, f.do("POST", "/api/v1/chats/arch/tags", f.userTok, `{"name":"work stuff"}`), 200, "")
	ftChat(f, f.other, "o1", "", 950, false, false)
	expect(t, f.do("POST", "/api/v1/chats/o1/tags", f.otherTok, `{"name":"work stuff"}`), 200, "")

	list := func(body string) []map[string]any {
		t.Helper()
		w := f.do("POST", "/api/v1/chats/tags", f.userTok, body)
		expect(t, w, 200, "")
		var rows []map[string]any
		ftDecode(t, w, &rows)
		return rows
	}
	rows := list(`{"name":"Work Stuff"}`)
	if len(rows) != 5 || rows[0]["id"] != "c4" || rows[4]["id"] != "c0" {
		t.Fatalf("default page: %v", rows)
	}
	r0 := rows[0]
	if r0["title"] != "Chat c4" || r0["updated_at"] != float64(104) || r0["created_at"] != float64(103) || r0["last_read_at"] != float64(104) {
		t.Fatalf("row: %v", r0)
	}
	if v, has := r0["snippet"]; !has || v != nil {
		t.Fatalf("snippet: %v", r0)
	}
	if rows = list(`{"name":"work_stuff","skip":1,"limit":2}`); len(rows) != 2 || rows[0]["id"] != "c3" || rows[1]["id"] != "c2" {
		t.Fatalf("page: %v", rows)
	}
	if rows = list(`{"name":"work stuff","skip":4,"limit":null}`); len(rows) != 1 || rows[0]["id"] != "c0" {
		t.Fatalf("last page: %v", rows)
	}
	// Past the end: empty, and the tag (still used) stays.
	if rows = list(`{"name":"work stuff","skip":40}`); len(rows) != 0 {
		t.Fatalf("past end: %v", rows)
	}
	if n := ftCount(f, `FROM tags WHERE user_id = ? AND id = 'work_stuff'`, f.user.ID); n != 1 {
		t.Fatal("used tag dropped")
	}
	for _, body := range []string{``, `{}`, `{"name":""}`, `{"name":"x","skip":-1}`, `{"name":"x","limit":-5}`, `{"name":"x","limit":"ten"}`} {
		ftExpect422(t, f.do("POST", "/api/v1/chats/tags", f.userTok, body))
	}
	// An unused tag is dropped when the list comes back empty (as upstream).
	if _, err := ftDB(f).Exec(`INSERT INTO tags (id, user_id, name) VALUES ('stale', ?, 'stale')`, f.user.ID); err != nil {
		t.Fatal(err)
	}
	if rows = list(`{"name":"Stale"}`); len(rows) != 0 {
		t.Fatalf("stale: %v", rows)
	}
	if n := ftCount(f, `FROM tags WHERE id = 'stale'`); n != 0 {
		t.Fatal("unused tag kept")
	}
}
