package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"hearth/store"
)

// newChat creates a chat through the API and returns its id.
func newChat(t *testing.T, f *fixture, tok, chat string) string {
	t.Helper()
	w := f.do("POST", "/api/v1/chats/new", tok, `{"chat":`+chat+`}`)
	expect(t, w, 200, "")
	var c struct{ ID string }
	decodeInto(t, w, &c)
	return c.ID
}

func chatJSON(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	expect(t, w, 200, "")
	var m map[string]any
	decodeInto(t, w, &m)
	return m
}

// titles is the list of titles of a list answer.
func titles(t *testing.T, w *httptest.ResponseRecorder) []string {
	t.Helper()
	expect(t, w, 200, "")
	var items []map[string]any
	decodeInto(t, w, &items)
	out := []string{}
	for _, it := range items {
		out = append(out, it["title"].(string))
	}
	return out
}

func TestCreateChatShape(t *testing.T) {
	f := newFixture(t, nil)
	chat := `{"models":["m"],"history":{"currentId":null,"messages":{}},"messages":[],"tags":[],"params":{},"timestamp":1700000000000}`
	w := f.do("POST", "/api/v1/chats/new", f.userTok, `{"chat":`+chat+`}`)
	m := chatJSON(t, w)
	if got := strings.Join(keysOf(m), ","); got != "archived,chat,created_at,folder_id,id,last_read_at,meta,pinned,share_id,summary,tasks,title,updated_at,user_id" {
		t.Errorf("keys %s", got)
	}
	if m["title"] != "New Chat" || m["archived"] != false || m["pinned"] != false || m["share_id"] != nil ||
		m["folder_id"] != nil || m["tasks"] != nil || m["summary"] != nil || m["user_id"] != f.user.ID {
		t.Errorf("answer %v", m)
	}
	if meta, _ := json.Marshal(m["meta"]); string(meta) != "{}" {
		t.Errorf("meta %s", meta)
	}
	if m["created_at"] != m["updated_at"] || m["last_read_at"] != m["created_at"] {
		t.Errorf("timestamps %v %v %v", m["created_at"], m["updated_at"], m["last_read_at"])
	}
	var raw struct{ Chat json.RawMessage }
	decodeInto(t, w, &raw)
	if string(raw.Chat) != chat {
		t.Errorf("chat\n got %s\nwant %s", raw.Chat, chat)
	}
	if strings.Contains(w.Header().Get("Content-Type"), "json") == false {
		t.Errorf("content type %q", w.Header().Get("Content-Type"))
	}
}

// Bad input: every case is refused before anything is written, and nothing
// a client sends can make the chat unreadable afterwards.
func TestChatBadInput(t *testing.T) {
	f := newFixture(t, nil)
	id := newChat(t, f, f.userTok, twoMessageChat)
	before := f.do("GET", "/api/v1/chats/"+id, f.userTok, "").Body.String()
	cases := []struct {
		name, body string
		status     int
	}{
		{"body array", `[]`, 422},
		{"body empty", ``, 422},
		{"malformed", `{"chat":{`, 422},
		{"no chat", `{}`, 422},
		{"chat null", `{"chat":null}`, 422},
		{"chat array", `{"chat":[]}`, 422},
		{"chat string", `{"chat":"x"}`, 422},
		{"history not object", `{"chat":{"history":5}}`, 422},
		{"messages not object", `{"chat":{"history":{"messages":["a"]}}}`, 422},
		{"message not object", `{"chat":{"history":{"messages":{"ok":{"id":"ok"},"bad":"x"}}}}`, 422},
		{"folder_id not string", `{"chat":{},"folder_id":5}`, 422},
		{"raw control char", "{\"chat\":{\"title\":\"a\x01\"}}", 422},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := f.do("POST", "/api/v1/chats/new", f.userTok, tc.body)
			expect(t, w, tc.status, "")
			if tc.name != "folder_id not string" && tc.name != "body array" && tc.name != "body empty" && tc.name != "malformed" {
				w = f.do("POST", "/api/v1/chats/"+id, f.userTok, tc.body)
				expect(t, w, tc.status, "")
			}
		})
	}
	if items := titles(t, f.do("GET", "/api/v1/chats/?include_pinned=true&include_folders=true", f.userTok, "")); len(items) != 1 {
		t.Errorf("chats after refused creates: %v", items)
	}
	if after := f.do("GET", "/api/v1/chats/"+id, f.userTok, "").Body.String(); after != before {
		t.Errorf("chat changed by refused updates")
	}
	// A foreign or unknown folder: 404, nothing created.
	mkFolder(f, f.other, "other-folder", "Theirs", "")
	expect(t, f.do("POST", "/api/v1/chats/new", f.userTok, `{"chat":{},"folder_id":"other-folder"}`), 404, msgNotFound)
	expect(t, f.do("POST", "/api/v1/chats/new", f.userTok, `{"chat":{},"folder_id":"nope"}`), 404, msgNotFound)

	// 50 MB: 413 from the body limit, nothing written.
	huge := `{"chat":{"history":{"messages":{"big":{"id":"big","content":"` + strings.Repeat("x", 50<<20) + `"}}}}}`
	expect(t, f.do("POST", "/api/v1/chats/new", f.userTok, huge), 413, "")
	expect(t, f.do("POST", "/api/v1/chats/"+id, f.userTok, huge), 413, "")
	if after := f.do("GET", "/api/v1/chats/"+id, f.userTok, "").Body.String(); after != before {
		t.Errorf("chat changed by a 413 update")
	}
	if items := titles(t, f.do("GET", "/api/v1/chats/", f.userTok, "")); len(items) != 1 {
		t.Errorf("chats after 413: %v", items)
	}

	// Invalid UTF-8 becomes U+FFFD; escaped NULs are stripped (as Open
	// WebUI's sanitize_data_for_db); ids that disagree with their key and
	// non-string parentIds are stored as sent; duplicate keys: last wins.
	body := "{\"chat\":{\"title\":\"t\xff\",\"title\":\"t\xffx\",\"history\":{\"currentId\":\"k\",\"messages\":{\"k\":{\"id\":42,\"parentId\":[1],\"content\":\"a\\u0000b\"}}}}}"
	w := f.do("POST", "/api/v1/chats/new", f.userTok, body)
	m := chatJSON(t, w)
	if m["title"] != "t\uFFFDx" {
		t.Errorf("title %q", m["title"])
	}
	var raw rawChat
	decodeInto(t, w, &raw)
	if got := string(raw.Chat.History.Messages["k"]); got != `{"id":42,"parentId":[1],"content":"ab"}` {
		t.Errorf("message %s", got)
	}
}

const twoMessageChat = `{"title":"Two","history":{"currentId":"m2","messages":{` +
	`"m1":{"id":"m1","parentId":null,"childrenIds":["m2"],"role":"user","content":"first question","timestamp":1},` +
	`"m2":{"id":"m2","parentId":"m1","childrenIds":[],"role":"assistant","content":"first answer","timestamp":2}}}}`

func TestChatListPaging(t *testing.T) {
	f := newFixture(t, nil)
	for i := range 61 {
		id := newChat(t, f, f.userTok, fmt.Sprintf(`{"title":"c%02d"}`, i))
		execSQL(f, `UPDATE chats SET updated_at = ? WHERE id = ?`, 1000+i, id)
	}
	newChat(t, f, f.otherTok, `{"title":"not mine"}`)
	all := titles(t, f.do("GET", "/api/v1/chats/", f.userTok, ""))
	if len(all) != 61 || all[0] != "c60" || all[60] != "c00" {
		t.Fatalf("all: %d %v", len(all), all)
	}
	p1 := titles(t, f.do("GET", "/api/v1/chats/list?page=1", f.userTok, ""))
	p2 := titles(t, f.do("GET", "/api/v1/chats/list?page=2", f.userTok, ""))
	p3 := titles(t, f.do("GET", "/api/v1/chats/list?page=3", f.userTok, ""))
	if len(p1) != 60 || p1[0] != "c60" || p1[59] != "c01" || len(p2) != 1 || p2[0] != "c00" || len(p3) != 0 {
		t.Errorf("pages %d %d %d", len(p1), len(p2), len(p3))
	}
	expect(t, f.do("GET", "/api/v1/chats/?page=x", f.userTok, ""), 422, "")
	expect(t, f.do("GET", "/api/v1/chats/?include_pinned=maybe", f.userTok, ""), 422, "")

	// Row shape.
	w := f.do("GET", "/api/v1/chats/?page=2", f.userTok, "")
	var rows []map[string]any
	decodeInto(t, w, &rows)
	if got := strings.Join(keysOf(rows[0]), ","); got != "created_at,id,last_read_at,snippet,title,updated_at" {
		t.Errorf("row keys %s", got)
	}

	// Pinned, in a folder, archived.
	ids := map[string]string{}
	items, _ := f.store.ListChats(t.Context(), actorOf(f.user), storeAll())
	for _, it := range items {
		ids[it.Title] = it.ID
	}
	expect(t, f.do("POST", "/api/v1/chats/"+ids["c60"]+"/pin", f.userTok, ""), 200, "")
	mkFolder(f, f.user, "fold", "Folder", "")
	expect(t, f.do("POST", "/api/v1/chats/"+ids["c59"]+"/folder", f.userTok, `{"folder_id":"fold"}`), 200, "")
	expect(t, f.do("POST", "/api/v1/chats/"+ids["c58"]+"/archive", f.userTok, ""), 200, "")
	// pin/folder bump updated_at: put them back in place for the order checks.
	execSQL(f, `UPDATE chats SET updated_at = 1000 + CAST(substr(title, 2) AS INTEGER) WHERE user_id = ?`, f.user.ID)
	first := func(q string) []string {
		return titles(t, f.do("GET", "/api/v1/chats/?page=1"+q, f.userTok, ""))[:2]
	}
	if got := strings.Join(first(""), ","); got != "c57,c56" {
		t.Errorf("default: %s", got)
	}
	if got := strings.Join(first("&include_pinned=true"), ","); got != "c60,c57" {
		t.Errorf("include_pinned: %s", got)
	}
	if got := strings.Join(first("&include_folders=true"), ","); got != "c59,c57" {
		t.Errorf("include_folders: %s", got)
	}
	if got := strings.Join(first("&include_pinned=1&include_folders=yes"), ","); got != "c60,c59" {
		t.Errorf("both: %s", got)
	}
	if got := titles(t, f.do("GET", "/api/v1/chats/pinned", f.userTok, "")); len(got) != 1 || got[0] != "c60" {
		t.Errorf("pinned: %v", got)
	}
	if got := titles(t, f.do("GET", "/api/v1/chats/archived", f.userTok, "")); len(got) != 1 || got[0] != "c58" {
		t.Errorf("archived: %v", got)
	}
	expect(t, f.do("GET", "/api/v1/chats/archived/count", f.userTok, ""), 200, "")
	if w := f.do("GET", "/api/v1/chats/archived/count", f.userTok, ""); w.Body.String() != "1" {
		t.Errorf("count %s", w.Body.String())
	}
	if w := f.do("GET", "/api/v1/chats/archived/count", f.otherTok, ""); w.Body.String() != "0" {
		t.Errorf("other's count %s", w.Body.String())
	}
}

func storeAll() store.ChatListFilter {
	return store.ChatListFilter{IncludePinned: true, IncludeFolders: true}
}

func TestArchivedListQueryOrder(t *testing.T) {
	f := newFixture(t, nil)
	for i, title := range []string{"Banana", "apple pie", "Cherry"} {
		id := newChat(t, f, f.userTok, fmt.Sprintf(`{"title":%q}`, title))
		expect(t, f.do("POST", "/api/v1/chats/"+id+"/archive", f.userTok, ""), 200, "")
		execSQL(f, `UPDATE chats SET updated_at = ?, created_at = ? WHERE id = ?`, 100+i, 300-i, id)
	}
	for _, tc := range []struct{ q, want string }{
		{"", "Cherry,apple pie,Banana"},
		{"?order_by=title&direction=asc", "Banana,Cherry,apple pie"},
		{"?order_by=created_at&direction=asc", "Cherry,apple pie,Banana"},
		{"?query=APPLE", "apple pie"},
		{"?query=%25", ""},
		{"?page=2", ""},
	} {
		if got := strings.Join(titles(t, f.do("GET", "/api/v1/chats/archived"+tc.q, f.userTok, "")), ","); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.q, got, tc.want)
		}
	}
	// Unarchive all / archive all.
	expect(t, f.do("POST", "/api/v1/chats/unarchive/all", f.userTok, ""), 200, "")
	if got := titles(t, f.do("GET", "/api/v1/chats/archived", f.userTok, "")); len(got) != 0 {
		t.Errorf("after unarchive all: %v", got)
	}
	w := f.do("POST", "/api/v1/chats/archive/all", f.userTok, "")
	if w.Body.String() != "true" {
		t.Errorf("archive all: %s", w.Body.String())
	}
	if got := titles(t, f.do("GET", "/api/v1/chats/", f.userTok, "")); len(got) != 0 {
		t.Errorf("after archive all: %v", got)
	}
}

func TestChatSearchAPI(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	mk := func(title, content string) string {
		return newChat(t, f, f.userTok, fmt.Sprintf(`{"title":%q,"history":{"messages":{"m":{"id":"m","role":"user","content":%q}}}}`, title, content))
	}
	rome := mk("Trip to Rome", "Which museums should I visit? The Vatican is a must.")
	paris := mk("Weekend", "What to see in Paris in two days")
	code := mk("Go question", "How do I use [generics] in Go?")
	newChat(t, f, f.otherTok, `{"title":"Rome of other","history":{"messages":{"m":{"id":"m","content":"rome"}}}}`)
	search := func(q string) string {
		w := f.do("GET", "/api/v1/chats/search?text="+strings.ReplaceAll(q, " ", "+"), f.userTok, "")
		return strings.Join(titles(t, w), ",")
	}
	if got := search("rome"); got != "Trip to Rome" {
		t.Errorf("title: %s", got)
	}
	if got := search("vatic"); got != "Trip to Rome" {
		t.Errorf("content prefix: %s", got)
	}
	if got := search("PARIS days"); got != "Weekend" {
		t.Errorf("content words: %s", got)
	}
	for _, q := range []string{"!!!", `"`, "*", "(", "AND", "NEAR(", "[generics]"} {
		w := f.do("GET", "/api/v1/chats/search?text="+strings.ReplaceAll(q, " ", "+"), f.userTok, "")
		expect(t, w, 200, "")
	}
	if got := search("[generics]"); got != "Go question" {
		t.Errorf("punctuated word: %s", got)
	}
	if got := search("%21%21%21"); got != "" {
		t.Errorf("punctuation only: %s", got)
	}
	expect(t, f.do("GET", "/api/v1/chats/search", f.userTok, ""), 422, "")

	// Snippet around the first content match.
	var rows []map[string]any
	decodeInto(t, f.do("GET", "/api/v1/chats/search?text=vatican", f.userTok, ""), &rows)
	if len(rows) != 1 || !strings.Contains(fmt.Sprint(rows[0]["snippet"]), "Vatican") {
		t.Errorf("snippet: %v", rows)
	}

	// Prefix filters.
	if _, err := f.store.AddChatTag(ctx, actorOf(f.user), paris, "Travel"); err != nil {
		t.Fatal(err)
	}
	if got := search("tag:travel"); got != "Weekend" {
		t.Errorf("tag: %s", got)
	}
	if got := search("tag:none"); got != "Go question,Trip to Rome" && got != "Trip to Rome,Go question" { // same second: order by id
		t.Errorf("tag:none: %s", got)
	}
	mkFolder(f, f.user, "fx", "Projects", "")
	expect(t, f.do("POST", "/api/v1/chats/"+code+"/folder", f.userTok, `{"folder_id":"fx"}`), 200, "")
	if got := search("folder:projects"); got != "Go question" {
		t.Errorf("folder: %s", got)
	}
	if got := search("folder:nothing"); got != "" {
		t.Errorf("unknown folder: %s", got)
	}
	expect(t, f.do("POST", "/api/v1/chats/"+rome+"/pin", f.userTok, ""), 200, "")
	if got := search("pinned:true"); got != "Trip to Rome" {
		t.Errorf("pinned:true: %s", got)
	}
	if got := search("pinned:false go"); got != "Go question" {
		t.Errorf("pinned:false: %s", got)
	}
	expect(t, f.do("POST", "/api/v1/chats/"+paris+"/share", f.userTok, ""), 200, "")
	if got := search("shared:true"); got != "Weekend" {
		t.Errorf("shared:true: %s", got)
	}
	expect(t, f.do("POST", "/api/v1/chats/"+paris+"/archive", f.userTok, ""), 200, "")
	if got := search("paris"); got != "" {
		t.Errorf("archived found without archived:true: %s", got)
	}
	if got := search("paris archived:true"); got != "Weekend" {
		t.Errorf("archived:true: %s", got)
	}

	// The index follows updates and deletes.
	expect(t, f.do("POST", "/api/v1/chats/"+rome, f.userTok, `{"chat":{"title":"Trip to Milan","history":{"messages":{"m":{"id":"m","content":"Duomo"}}}}}`), 200, "")
	if got := search("vatican"); got != "" {
		t.Errorf("old content: %s", got)
	}
	if got := search("duomo milan"); got != "Trip to Milan" {
		t.Errorf("new content: %s", got)
	}
	expect(t, f.do("DELETE", "/api/v1/chats/"+rome, f.userTok, ""), 200, "")
	if got := search("duomo"); got != "" {
		t.Errorf("deleted chat: %s", got)
	}

	// Paging: 61 matches.
	for i := range 61 {
		mk(fmt.Sprintf("many %02d", i), "zebra")
	}
	p1 := titles(t, f.do("GET", "/api/v1/chats/search?text=zebra&page=1", f.userTok, ""))
	p2 := titles(t, f.do("GET", "/api/v1/chats/search?text=zebra&page=2", f.userTok, ""))
	if len(p1) != 60 || len(p2) != 1 {
		t.Errorf("search pages %d %d", len(p1), len(p2))
	}
}

// ndjsonChats reads an NDJSON answer.
func ndjsonChats(t *testing.T, w *httptest.ResponseRecorder) []map[string]any {
	t.Helper()
	expect(t, w, 200, "")
	if ct := w.Header().Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("content type %q", ct)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(w.Body.Bytes()))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestChatExports(t *testing.T) {
	f := newFixture(t, nil)
	for i := range 205 {
		newChat(t, f, f.userTok, fmt.Sprintf(`{"title":"e%03d"}`, i))
	}
	arch := newChat(t, f, f.userTok, twoMessageChat)
	expect(t, f.do("POST", "/api/v1/chats/"+arch+"/archive", f.userTok, ""), 200, "")
	newChat(t, f, f.otherTok, `{"title":"other's"}`)

	lines := ndjsonChats(t, f.do("GET", "/api/v1/chats/all", f.userTok, ""))
	seen := map[string]bool{}
	for _, l := range lines {
		if l["user_id"] != f.user.ID || seen[l["id"].(string)] {
			t.Fatalf("line %v", l)
		}
		seen[l["id"].(string)] = true
	}
	if len(lines) != 206 || !seen[arch] {
		t.Errorf("%d lines", len(lines))
	}
	if ls := ndjsonChats(t, f.do("GET", "/api/v1/chats/all", f.otherTok, "")); len(ls) != 1 {
		t.Errorf("other's export %d", len(ls))
	}

	w := f.do("GET", "/api/v1/chats/all/archived", f.userTok, "")
	var archived []rawChat
	decodeInto(t, w, &archived)
	if len(archived) != 1 || archived[0].ID != arch || len(archived[0].Chat.History.Messages) != 2 {
		t.Errorf("archived export: %s", w.Body.String())
	}
	decodeInto(t, f.do("GET", "/api/v1/chats/all/archived", f.otherTok, ""), &archived)
	if len(archived) != 0 || f.do("GET", "/api/v1/chats/all/archived", f.otherTok, "").Body.String() != "[]" {
		t.Errorf("empty export: %v", archived)
	}

	w = f.do("GET", "/api/v1/chats/all/db", f.adminTok, "")
	var all []map[string]any
	decodeInto(t, w, &all)
	if len(all) != 207 {
		t.Errorf("db export: %d", len(all))
	}
	f2 := newFixture(t, map[string]string{"ENABLE_ADMIN_EXPORT": "false"})
	expect(t, f2.do("GET", "/api/v1/chats/all/db", f2.adminTok, ""), 401, msgAccessProhibited)
}

func TestAdminChatAccess(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			f := newFixture(t, map[string]string{"ENABLE_ADMIN_CHAT_ACCESS": fmt.Sprint(on)})
			id := newChat(t, f, f.userTok, twoMessageChat)
			get := f.do("GET", "/api/v1/chats/"+id, f.adminTok, "")
			list := f.do("GET", "/api/v1/chats/list/user/"+f.user.ID, f.adminTok, "")
			byShareRoute := f.do("GET", "/api/v1/chats/share/"+id, f.adminTok, "")
			if on {
				expect(t, get, 200, "")
				if got := titles(t, list); len(got) != 1 || got[0] != "Two" {
					t.Errorf("list %v", got)
				}
				expect(t, byShareRoute, 200, "")
			} else {
				expect(t, get, 404, msgNotFound)
				expect(t, list, 401, msgAccessProhibited)
				expect(t, byShareRoute, 404, msgNotFound)
			}
			// Admins edit and delete any message and delete any chat either way.
			expect(t, f.do("POST", "/api/v1/chats/"+id+"/messages/m2", f.adminTok, `{"content":"by admin"}`), 200, "")
			expect(t, f.do("DELETE", "/api/v1/chats/"+id+"/messages/m2", f.adminTok, ""), 200, "")
			// ... but never update the chat itself.
			expect(t, f.do("POST", "/api/v1/chats/"+id, f.adminTok, `{"chat":{"title":"x"}}`), 404, msgNotFound)
			w := f.do("DELETE", "/api/v1/chats/"+id, f.adminTok, "")
			if w.Code != 200 || w.Body.String() != "true" {
				t.Errorf("admin delete: %d %s", w.Code, w.Body.String())
			}
		})
	}
}

func TestImportChatsAPI(t *testing.T) {
	f := newFixture(t, nil)
	mkFolder(f, f.user, "mine", "Mine", "")
	mkFolder(f, f.other, "theirs", "Theirs", "")
	body := `{"chats":[` +
		`{"chat":` + twoMessageChat + `,"folder_id":"mine","meta":{"tags":["Imported"],"k":"v"},"pinned":true,"created_at":100,"updated_at":200},` +
		`{"chat":{"title":"second"},"folder_id":"theirs","archived":true}]}`
	w := f.do("POST", "/api/v1/chats/import", f.userTok, body)
	expect(t, w, 200, "")
	var got []map[string]any
	decodeInto(t, w, &got)
	if len(got) != 2 {
		t.Fatalf("%s", w.Body.String())
	}
	a, b := got[0], got[1]
	meta, _ := json.Marshal(a["meta"])
	if a["folder_id"] != "mine" || a["pinned"] != true || a["created_at"] != float64(100) || a["updated_at"] != float64(200) ||
		string(meta) != `{"k":"v","tags":["imported"]}` || a["title"] != "Two" {
		t.Errorf("first %v (meta %s)", a, meta)
	}
	if b["folder_id"] != nil || b["archived"] != true {
		t.Errorf("second %v", b)
	}
	if a["id"] == b["id"] {
		t.Error("same id")
	}

	// All or nothing: one bad chat refuses the whole import.
	before := len(ndjsonChats(t, f.do("GET", "/api/v1/chats/all", f.userTok, "")))
	w = f.do("POST", "/api/v1/chats/import", f.userTok, `{"chats":[{"chat":{"title":"ok"}},{"chat":{"history":{"messages":{"x":1}}}}]}`)
	expect(t, w, 422, "")
	expect(t, f.do("POST", "/api/v1/chats/import", f.userTok, `{"chats":[{"chat":{"title":"ok"}},{"chat":null}]}`), 422, "")
	expect(t, f.do("POST", "/api/v1/chats/import", f.userTok, `{}`), 422, "")
	if after := len(ndjsonChats(t, f.do("GET", "/api/v1/chats/all", f.userTok, ""))); after != before {
		t.Errorf("%d chats after refused imports, want %d", after, before)
	}

	f2 := newFixture(t, map[string]string{"USER_PERMISSIONS_CHAT_IMPORT": "false"})
	expect(t, f2.do("POST", "/api/v1/chats/import", f2.userTok, `{"chats":[]}`), 403, msgAccessProhibited)
	expect(t, f2.do("POST", "/api/v1/chats/import", f2.adminTok, `{"chats":[]}`), 200, "")
}

func TestDeleteChatAPI(t *testing.T) {
	f := newFixture(t, map[string]string{"USER_PERMISSIONS_CHAT_DELETE": "false"})
	id := newChat(t, f, f.userTok, twoMessageChat)
	expect(t, f.do("DELETE", "/api/v1/chats/"+id, f.userTok, ""), 401, msgAccessProhibited)
	expect(t, f.do("DELETE", "/api/v1/chats/", f.userTok, ""), 401, msgAccessProhibited)
	expect(t, f.do("DELETE", "/api/v1/chats/missing", f.adminTok, ""), 404, msgNotFound)
	expect(t, f.do("DELETE", "/api/v1/chats/"+id, f.adminTok, ""), 200, "")
	expect(t, f.do("GET", "/api/v1/chats/"+id, f.userTok, ""), 404, msgNotFound)

	f = newFixture(t, nil)
	id = newChat(t, f, f.userTok, twoMessageChat)
	keep := newChat(t, f, f.otherTok, twoMessageChat)
	expect(t, f.do("DELETE", "/api/v1/chats/"+id, f.otherTok, ""), 404, msgNotFound)
	newChat(t, f, f.userTok, `{}`)
	w := f.do("DELETE", "/api/v1/chats/", f.userTok, "")
	if w.Code != 200 || w.Body.String() != "true" {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	if got := titles(t, f.do("GET", "/api/v1/chats/", f.userTok, "")); len(got) != 0 {
		t.Errorf("left: %v", got)
	}
	expect(t, f.do("GET", "/api/v1/chats/"+keep, f.otherTok, ""), 200, "")
}

func TestArchiveClearsFolderAndPin(t *testing.T) {
	f := newFixture(t, nil)
	mkFolder(f, f.user, "fa", "A", "")
	id := newChat(t, f, f.userTok, twoMessageChat)
	m := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/folder", f.userTok, `{"folder_id":"fa"}`))
	if m["folder_id"] != "fa" {
		t.Fatalf("%v", m)
	}
	execSQL(f, `UPDATE chats SET updated_at = 5 WHERE id = ?`, id)
	m = chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/archive", f.userTok, ""))
	if m["archived"] != true || m["folder_id"] != nil || m["updated_at"].(float64) <= 5 {
		t.Errorf("archived: %v", m)
	}
	m = chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/archive", f.userTok, ""))
	if m["archived"] != false || m["folder_id"] != nil {
		t.Errorf("unarchived: %v", m)
	}
	if w := f.do("GET", "/api/v1/chats/"+id+"/pinned", f.userTok, ""); w.Body.String() != "false" {
		t.Errorf("pinned %s", w.Body.String())
	}
	if m := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/pin", f.userTok, "")); m["pinned"] != true {
		t.Errorf("pin %v", m)
	}
	if w := f.do("GET", "/api/v1/chats/"+id+"/pinned", f.userTok, ""); w.Body.String() != "true" {
		t.Errorf("pinned %s", w.Body.String())
	}
	if m := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/pin", f.userTok, "")); m["pinned"] != false {
		t.Errorf("unpin %v", m)
	}
	// Moving into a folder unpins and unarchives (as upstream).
	chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/pin", f.userTok, ""))
	chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/archive", f.userTok, ""))
	m = chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/folder", f.userTok, `{"folder_id":"fa"}`))
	if m["pinned"] != false || m["archived"] != false || m["folder_id"] != "fa" {
		t.Errorf("moved: %v", m)
	}
	if m := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/folder", f.userTok, `{"folder_id":null}`)); m["folder_id"] != nil {
		t.Errorf("out of folder: %v", m)
	}
	mkFolder(f, f.other, "fo", "O", "")
	expect(t, f.do("POST", "/api/v1/chats/"+id+"/folder", f.userTok, `{"folder_id":"fo"}`), 404, msgNotFound)
}

func TestFolderChatsAPI(t *testing.T) {
	f := newFixture(t, nil)
	mkFolder(f, f.user, "top", "Top", "")
	mkFolder(f, f.user, "sub", "Sub", "top")
	mkFolder(f, f.user, "elsewhere", "Else", "")
	in := func(title, folder string) string {
		id := newChat(t, f, f.userTok, fmt.Sprintf(`{"title":%q}`, title))
		chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/folder", f.userTok, fmt.Sprintf(`{"folder_id":%q}`, folder)))
		return id
	}
	in("in top", "top")
	in("in sub", "sub")
	in("elsewhere", "elsewhere")
	pinned := in("pinned in top", "top")
	chatJSON(t, f.do("POST", "/api/v1/chats/"+pinned+"/pin", f.userTok, ""))
	w := f.do("GET", "/api/v1/chats/folder/top", f.userTok, "")
	expect(t, w, 200, "")
	var got []map[string]any
	decodeInto(t, w, &got)
	var ts []string
	for _, c := range got {
		ts = append(ts, c["title"].(string))
		if _, ok := c["chat"].(map[string]any); !ok {
			t.Errorf("not a ChatResponse: %v", c)
		}
	}
	sort.Strings(ts)
	if strings.Join(ts, ",") != "in sub,in top" {
		t.Errorf("folder chats %v", ts)
	}
	expect(t, f.do("GET", "/api/v1/chats/folder/top", f.otherTok, ""), 404, msgNotFound)
}

func TestCloneAPI(t *testing.T) {
	f := newFixture(t, nil)
	id := newChat(t, f, f.userTok, twoMessageChat)
	m := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/clone", f.userTok, ""))
	chat := m["chat"].(map[string]any)
	if m["id"] == id || m["title"] != "Clone of Two" || chat["originalChatId"] != id || chat["branchPointMessageId"] != "m2" ||
		chat["title"] != "Clone of Two" || len(chat["history"].(map[string]any)["messages"].(map[string]any)) != 2 {
		t.Errorf("clone %v", m)
	}
	m = chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/clone", f.userTok, `{"title":"Mine now"}`))
	if m["title"] != "Mine now" {
		t.Errorf("titled clone %v", m["title"])
	}
	expect(t, f.do("POST", "/api/v1/chats/"+id+"/clone", f.otherTok, `{}`), 404, msgNotFound)

	// clone/shared: any verified user holding the token.
	share := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/share", f.userTok, ""))["share_id"].(string)
	m = chatJSON(t, f.do("POST", "/api/v1/chats/"+share+"/clone/shared", f.otherTok, ""))
	chat = m["chat"].(map[string]any)
	if m["user_id"] != f.other.ID || m["title"] != "Clone of Two" || chat["originalChatId"] != share || chat["branchPointMessageId"] != "m2" {
		t.Errorf("shared clone %v", m)
	}
	expect(t, f.do("POST", "/api/v1/chats/nope/clone/shared", f.otherTok, ""), 404, msgNotFound)

	f2 := newFixture(t, map[string]string{"USER_PERMISSIONS_CHAT_IMPORT": "false"})
	id2 := newChat(t, f2, f2.userTok, twoMessageChat)
	expect(t, f2.do("POST", "/api/v1/chats/"+id2+"/clone", f2.userTok, `{}`), 403, msgAccessProhibited)
}

func TestShareAPI(t *testing.T) {
	f := newFixture(t, nil)
	id := newChat(t, f, f.userTok, twoMessageChat)
	m := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/share", f.userTok, ""))
	token, _ := m["share_id"].(string)
	if token == "" || m["id"] != id {
		t.Fatalf("share answer %v", m)
	}
	snap := f.do("GET", "/api/v1/chats/share/"+token, f.otherTok, "")
	s := chatJSON(t, snap)
	if s["id"] != token || s["share_id"] != token || s["user_id"] != f.user.ID || s["title"] != "Two" {
		t.Errorf("snapshot %v", s)
	}
	expect(t, f.do("GET", "/api/v1/chats/share/"+token, f.pendingTok, ""), 401, "")

	// Later changes do not reach the snapshot.
	chatJSON(t, f.do("POST", "/api/v1/chats/"+id, f.userTok, `{"chat":{"title":"Edited","history":{"messages":{"m3":{"id":"m3","content":"new"}}}}}`))
	var a, b struct{ Chat json.RawMessage }
	decodeInto(t, snap, &a)
	decodeInto(t, f.do("GET", "/api/v1/chats/share/"+token, f.otherTok, ""), &b)
	if !bytes.Equal(a.Chat, b.Chat) {
		t.Errorf("snapshot changed:\n%s\n%s", a.Chat, b.Chat)
	}
	// Sharing again refreshes it, same token.
	if m := chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/share", f.userTok, "")); m["share_id"] != token {
		t.Errorf("re-share token %v", m["share_id"])
	}
	if s := chatJSON(t, f.do("GET", "/api/v1/chats/share/"+token, f.otherTok, "")); s["title"] != "Edited" {
		t.Errorf("refreshed %v", s["title"])
	}
	var shared []map[string]any
	decodeInto(t, f.do("GET", "/api/v1/chats/shared", f.userTok, ""), &shared)
	if len(shared) != 1 || shared[0]["id"] != id || shared[0]["chat_id"] != id || shared[0]["share_id"] != token || shared[0]["title"] != "Edited" {
		t.Errorf("shared list %v", shared)
	}
	expect(t, f.do("POST", "/api/v1/chats/"+id+"/share", f.otherTok, ""), 404, msgNotFound)
	expect(t, f.do("DELETE", "/api/v1/chats/"+id+"/share", f.otherTok, ""), 404, msgNotFound)
	if w := f.do("DELETE", "/api/v1/chats/"+id+"/share", f.userTok, ""); w.Body.String() != "true" {
		t.Errorf("unshare %s", w.Body.String())
	}
	expect(t, f.do("GET", "/api/v1/chats/share/"+token, f.otherTok, ""), 404, msgNotFound)
	if w := f.do("DELETE", "/api/v1/chats/"+id+"/share", f.userTok, ""); w.Body.String() != "false" {
		t.Errorf("unshare twice %s", w.Body.String())
	}
	if m := chatJSON(t, f.do("GET", "/api/v1/chats/"+id, f.userTok, "")); m["share_id"] != nil {
		t.Errorf("share_id after unshare %v", m["share_id"])
	}
	// Delete all shares.
	chatJSON(t, f.do("POST", "/api/v1/chats/"+id+"/share", f.userTok, ""))
	expect(t, f.do("DELETE", "/api/v1/chats/share/all", f.userTok, ""), 200, "")
	decodeInto(t, f.do("GET", "/api/v1/chats/shared", f.userTok, ""), &shared)
	if len(shared) != 0 {
		t.Errorf("shares left %v", shared)
	}
	f2 := newFixture(t, map[string]string{"USER_PERMISSIONS_CHAT_SHARE": "false"})
	id2 := newChat(t, f2, f2.userTok, twoMessageChat)
	expect(t, f2.do("POST", "/api/v1/chats/"+id2+"/share", f2.userTok, ""), 401, msgAccessProhibited)
}

func TestMessageEndpointsAPI(t *testing.T) {
	f := newFixture(t, nil)
	id := newChat(t, f, f.userTok, twoMessageChat)
	live := wsDial(t, wsURL(t, f), nil)
	live.auth(f.userTok, f.user.ID)
	w := f.do("POST", "/api/v1/chats/"+id+"/messages/m2", f.userTok, `{"content":"edited answer"}`)
	// The owner's live connection gets chat:message (also when an admin edits).
	wantEv := `{"chat_id":"` + id + `","content":"edited answer","message_id":"m2"}`
	if ev := live.read(); ev.ChatID != id || ev.MessageID != "m2" || ev.Data.Type != "chat:message" || string(ev.Data.Data) != wantEv {
		t.Errorf("event %+v %s", ev, ev.Data.Data)
	}
	expect(t, f.do("POST", "/api/v1/chats/"+id+"/messages/m2", f.adminTok, `{"content":"edited answer"}`), 200, "")
	if ev := live.read(); ev.Data.Type != "chat:message" || string(ev.Data.Data) != wantEv {
		t.Errorf("event after the admin's edit %+v", ev)
	}
	var c rawChat
	decodeInto(t, w, &c)
	if got := string(c.Chat.History.Messages["m2"]); got != `{"id":"m2","parentId":"m1","childrenIds":[],"role":"assistant","content":"edited answer","timestamp":2}` {
		t.Errorf("edited %s", got)
	}
	expect(t, f.do("POST", "/api/v1/chats/"+id+"/messages/m2", f.userTok, `{}`), 422, "")
	expect(t, f.do("POST", "/api/v1/chats/"+id+"/messages/m2", f.userTok, `{"content":5}`), 422, "")
	expect(t, f.do("POST", "/api/v1/chats/"+id+"/messages/m2", f.otherTok, `{"content":"x"}`), 404, msgNotFound)

	w = f.do("DELETE", "/api/v1/chats/"+id+"/messages/m2", f.userTok, "")
	c = rawChat{}
	decodeInto(t, w, &c)
	if len(c.Chat.History.Messages) != 1 || c.Chat.History.CurrentID == nil || *c.Chat.History.CurrentID != "m1" {
		t.Errorf("after delete: %s", w.Body.String())
	}
	if got := string(c.Chat.History.Messages["m1"]); !strings.Contains(got, `"childrenIds":[]`) {
		t.Errorf("parent %s", got)
	}
	expect(t, f.do("DELETE", "/api/v1/chats/"+id+"/messages/m2", f.userTok, ""), 404, msgNotFound)
	expect(t, f.do("DELETE", "/api/v1/chats/"+id+"/messages/m1", f.otherTok, ""), 404, msgNotFound)
}
