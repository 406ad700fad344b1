package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// ftFolder creates a folder through the API and returns its JSON.
func ftFolder(t *testing.T, f *fixture, tok, body string) map[string]any {
	t.Helper()
	w := f.do("POST", "/api/v1/folders/", tok, body)
	expect(t, w, 200, "")
	var m map[string]any
	ftDecode(t, w, &m)
	return m
}

// ftSnapshot is every folder and chat row (for "nothing changed" checks).
func ftSnapshot(f *fixture) string {
	f.t.Helper()
	rows, err := ftDB(f).Query(`SELECT 'f', id, coalesce(parent_id,''), name, coalesce(data,''), coalesce(meta,''), is_expanded, updated_at FROM folders
		UNION ALL SELECT 'c', id, coalesce(folder_id,''), title, '', '', archived, updated_at FROM chats ORDER BY 1, 2`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var k, id, parent, name, data, meta string
		var x, u int64
		if err := rows.Scan(&k, &id, &parent, &name, &data, &meta, &x, &u); err != nil {
			f.t.Fatal(err)
		}
		fmt.Fprintln(&b, k, id, parent, name, data, meta, x, u)
	}
	return b.String()
}

func TestFoldersAPI(t *testing.T) {
	f := newFixture(t, nil)
	work := ftFolder(t, f, f.userTok, `{"name":"Work","data":{"system_prompt":"Be brief"},"meta":{"icon":"💼"}}`)
	for _, k := range []string{"id", "parent_id", "user_id", "name", "items", "meta", "data", "is_expanded", "created_at", "updated_at"} {
		if _, has := work[k]; !has {
			t.Fatalf("FolderModel lacks %q: %v", k, work)
		}
	}
	if work["parent_id"] != nil || work["user_id"] != f.user.ID || work["is_expanded"] != false || work["items"] != nil {
		t.Fatalf("created %v", work)
	}
	wid := work["id"].(string)
	sub := ftFolder(t, f, f.userTok, fmt.Sprintf(`{"name":"Projects","parent_id":%q}`, wid))
	if sub["parent_id"] != wid {
		t.Fatalf("nested %v", sub)
	}
	sid := sub["id"].(string)

	// Duplicates ignoring case under one parent: 400; fine elsewhere.
	expect(t, f.do("POST", "/api/v1/folders/", f.userTok, `{"name":"work"}`), 400, msgFolderExists)
	expect(t, f.do("POST", "/api/v1/folders/", f.userTok, fmt.Sprintf(`{"name":"PROJECTS","parent_id":%q}`, wid)), 400, msgFolderExists)
	ftFolder(t, f, f.userTok, fmt.Sprintf(`{"name":"Work","parent_id":%q}`, sid))
	ftFolder(t, f, f.otherTok, `{"name":"Work"}`)

	w := f.do("GET", "/api/v1/folders/", f.userTok, "")
	expect(t, w, 200, "")
	var list []map[string]any
	ftDecode(t, w, &list)
	if len(list) != 3 {
		t.Fatalf("list: %s", w.Body.String())
	}
	w = f.do("GET", "/api/v1/folders/"+wid, f.userTok, "")
	expect(t, w, 200, "")
	var got map[string]any
	ftDecode(t, w, &got)
	if got["name"] != "Work" || got["data"].(map[string]any)["system_prompt"] != "Be brief" {
		t.Fatalf("get: %s", w.Body.String())
	}

	// Update: rename and merge data/meta key by key.
	w = f.do("POST", "/api/v1/folders/"+wid+"/update", f.userTok, `{"name":"Job","data":{"files":[{"type":"file","id":"f1"}]},"meta":{"color":"red"}}`)
	expect(t, w, 200, "")
	ftDecode(t, w, &got)
	data, meta := got["data"].(map[string]any), got["meta"].(map[string]any)
	if got["name"] != "Job" || data["system_prompt"] != "Be brief" || len(data["files"].([]any)) != 1 || meta["icon"] != "💼" || meta["color"] != "red" {
		t.Fatalf("update: %s", w.Body.String())
	}
	w = f.do("POST", "/api/v1/folders/"+wid+"/update/expanded", f.userTok, `{"is_expanded":true}`)
	expect(t, w, 200, "")
	ftDecode(t, w, &got)
	if got["is_expanded"] != true {
		t.Fatalf("expanded: %s", w.Body.String())
	}
	// Renaming onto a sibling's name is refused.
	ftFolder(t, f, f.userTok, `{"name":"Home"}`)
	expect(t, f.do("POST", "/api/v1/folders/"+wid+"/update", f.userTok, `{"name":"HOME"}`), 400, msgFolderExists)

	// Bad bodies: 422 with a string detail, and nothing changed.
	before := ftSnapshot(f)
	bad := []struct{ method, path, body string }{
		{"POST", "/api/v1/folders/", ``},
		{"POST", "/api/v1/folders/", `{}`},
		{"POST", "/api/v1/folders/", `{"name":"   "}`},
		{"POST", "/api/v1/folders/", `{"name":5}`},
		{"POST", "/api/v1/folders/", `{"name":"x","data":[1]}`},
		{"POST", "/api/v1/folders/", `{"name":"x","meta":"m"}`},
		{"POST", "/api/v1/folders/", `{"name":"x","data":{"files":"f"}}`},
		{"POST", "/api/v1/folders/", `{"name":"x","parent_id":7}`},
		{"POST", "/api/v1/folders/", `{"name":"` + strings.Repeat("n", 300) + `"}`},
		{"POST", "/api/v1/folders/" + wid + "/update", `{"name":""}`},
		{"POST", "/api/v1/folders/" + wid + "/update", `{"data":true}`},
		{"POST", "/api/v1/folders/" + wid + "/update", `not json`},
		{"POST", "/api/v1/folders/" + wid + "/update/parent", `{"parent_id":1}`},
		{"POST", "/api/v1/folders/" + wid + "/update/expanded", `{}`},
		{"POST", "/api/v1/folders/" + wid + "/update/expanded", `{"is_expanded":"yes"}`},
		{"DELETE", "/api/v1/folders/" + wid + "?delete_contents=maybe", ``},
		{"GET", "/api/v1/chats/folder/" + wid + "/list?page=two", ``},
	}
	for _, b := range bad {
		w := f.do(b.method, b.path, f.userTok, b.body)
		if w.Code != 422 {
			t.Errorf("%s %s %s: %d %s", b.method, b.path, b.body, w.Code, w.Body.String())
			continue
		}
		ftExpect422(t, w)
	}
	if after := ftSnapshot(f); after != before {
		t.Fatalf("refused requests changed data:\n%s\n---\n%s", before, after)
	}
}

func TestFoldersOtherUser(t *testing.T) {
	f := newFixture(t, nil)
	work := ftFolder(t, f, f.userTok, `{"name":"Work"}`)
	wid := work["id"].(string)
	ftChat(f, f.user, "c1", wid, 100, false, false)
	theirs := ftFolder(t, f, f.otherTok, `{"name":"Theirs"}`)["id"].(string)
	before := ftSnapshot(f)
	for _, tok := range []string{f.otherTok, f.adminTok} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/folders/" + wid, ``},
			{"POST", "/api/v1/folders/" + wid + "/update", `{"name":"Mine"}`},
			{"POST", "/api/v1/folders/" + wid + "/update/parent", `{"parent_id":null}`},
			{"POST", "/api/v1/folders/" + wid + "/update/expanded", `{"is_expanded":true}`},
			{"DELETE", "/api/v1/folders/" + wid, ``},
			{"DELETE", "/api/v1/folders/" + wid + "?delete_contents=false", ``},
			{"GET", "/api/v1/chats/folder/" + wid + "/list", ``},
			{"POST", "/api/v1/folders/", fmt.Sprintf(`{"name":"Sub","parent_id":%q}`, wid)},
		} {
			expect(t, f.do(c.method, c.path, tok, c.body), 404, msgNotFound)
		}
	}
	// user cannot hang a folder under other's, nor move into it.
	expect(t, f.do("POST", "/api/v1/folders/", f.userTok, fmt.Sprintf(`{"name":"Sub","parent_id":%q}`, theirs)), 404, msgNotFound)
	expect(t, f.do("POST", "/api/v1/folders/"+wid+"/update/parent", f.userTok, fmt.Sprintf(`{"parent_id":%q}`, theirs)), 404, msgNotFound)
	if after := ftSnapshot(f); after != before {
		t.Fatalf("foreign requests changed data:\n%s\n---\n%s", before, after)
	}
	w := f.do("GET", "/api/v1/folders/", f.adminTok, "")
	expect(t, w, 200, "")
	if w.Body.String() != "[]" {
		t.Fatalf("admin sees others' folders: %s", w.Body.String())
	}
}

func TestFolderParentCycles(t *testing.T) {
	f := newFixture(t, nil)
	root := ftFolder(t, f, f.userTok, `{"name":"root"}`)["id"].(string)
	child := ftFolder(t, f, f.userTok, fmt.Sprintf(`{"name":"child","parent_id":%q}`, root))["id"].(string)
	grand := ftFolder(t, f, f.userTok, fmt.Sprintf(`{"name":"grand","parent_id":%q}`, child))["id"].(string)
	other := ftFolder(t, f, f.userTok, `{"name":"other"}`)["id"].(string)
	move := func(id, parent string) *httptest.ResponseRecorder {
		body := `{"parent_id":null}`
		if parent != "" {
			body = fmt.Sprintf(`{"parent_id":%q}`, parent)
		}
		return f.do("POST", "/api/v1/folders/"+id+"/update/parent", f.userTok, body)
	}
	before := ftSnapshot(f)
	for _, target := range []string{root, child, grand} {
		expect(t, move(root, target), 400, msgFolderCycle)
	}
	expect(t, move(child, grand), 400, msgFolderCycle)
	expect(t, move(root, "missing"), 404, msgNotFound)
	if after := ftSnapshot(f); after != before {
		t.Fatal("refused moves changed data")
	}
	w := move(root, other)
	expect(t, w, 200, "")
	var got map[string]any
	ftDecode(t, w, &got)
	if got["parent_id"] != other {
		t.Fatalf("moved: %s", w.Body.String())
	}
	w = move(grand, "")
	expect(t, w, 200, "")
	ftDecode(t, w, &got)
	if got["parent_id"] != nil {
		t.Fatalf("to top: %s", w.Body.String())
	}
	// A name clash at the destination is the duplicate error.
	ftFolder(t, f, f.userTok, `{"name":"Child"}`)
	expect(t, move(child, ""), 400, msgFolderExists)
}

func TestFolderMaxFileCount(t *testing.T) {
	f := newFixture(t, map[string]string{"FOLDER_MAX_FILE_COUNT": "2"})
	files := func(n int) string {
		var fs []string
		for i := range n {
			fs = append(fs, fmt.Sprintf(`{"type":"file","id":"f%d"}`, i))
		}
		return "[" + strings.Join(fs, ",") + "]"
	}
	const limitMsg = "A folder can hold at most 2 files (FOLDER_MAX_FILE_COUNT); 3 were given."
	expect(t, f.do("POST", "/api/v1/folders/", f.userTok, `{"name":"big","data":{"files":`+files(3)+`}}`), 400, limitMsg)
	if n := ftCount(f, `FROM folders`); n != 0 {
		t.Fatal("refused folder created")
	}
	id := ftFolder(t, f, f.userTok, `{"name":"ok","data":{"files":`+files(2)+`}}`)["id"].(string)
	before := ftSnapshot(f)
	expect(t, f.do("POST", "/api/v1/folders/"+id+"/update", f.userTok, `{"data":{"files":`+files(3)+`}}`), 400, limitMsg)
	if after := ftSnapshot(f); after != before {
		t.Fatal("refused update changed data")
	}
	expect(t, f.do("POST", "/api/v1/folders/"+id+"/update", f.userTok, `{"data":{"files":[]}}`), 200, "")
	// The limit is reported to the UI as well.
	w := f.do("GET", "/api/config", f.userTok, "")
	if !strings.Contains(w.Body.String(), `"folder_max_file_count":2`) {
		t.Fatalf("config: %s", w.Body.String())
	}

	// Unset: no limit.
	g := newFixture(t, nil)
	ftFolder(t, g, g.userTok, `{"name":"big","data":{"files":`+files(50)+`}}`)
}

func TestDeleteFolderAPI(t *testing.T) {
	setup := func(t *testing.T, env map[string]string) (*fixture, string) {
		f := newFixture(t, env)
		root := ftFolder(t, f, f.userTok, `{"name":"root"}`)["id"].(string)
		child := ftFolder(t, f, f.userTok, fmt.Sprintf(`{"name":"child","parent_id":%q}`, root))["id"].(string)
		keep := ftFolder(t, f, f.userTok, `{"name":"keep"}`)["id"].(string)
		ftChat(f, f.user, "in-root", root, 100, false, false)
		ftChat(f, f.user, "in-child", child, 101, false, false)
		ftChat(f, f.user, "in-keep", keep, 102, false, false)
		ftChat(f, f.other, "theirs", "", 103, false, false)
		expect(t, f.do("POST", "/api/v1/chats/in-child/tags", f.userTok, `{"name":"only here"}`), 200, "")
		return f, root
	}

	t.Run("default deletes contents", func(t *testing.T) {
		f, root := setup(t, nil)
		w := f.do("DELETE", "/api/v1/folders/"+root, f.userTok, "")
		expect(t, w, 200, "")
		if w.Body.String() != "true" {
			t.Fatalf("answer %s", w.Body.String())
		}
		if n := ftCount(f, `FROM folders`); n != 1 {
			t.Fatalf("%d folders left", n)
		}
		if n := ftCount(f, `FROM chats WHERE id IN ('in-root','in-child')`); n != 0 {
			t.Fatal("chats of the deleted folders survive")
		}
		if n := ftCount(f, `FROM chats WHERE id IN ('in-keep','theirs')`); n != 2 {
			t.Fatal("unrelated chats deleted")
		}
		if n := ftCount(f, `FROM tags WHERE id = 'only_here'`); n != 0 {
			t.Fatal("orphan tag kept")
		}
		expect(t, f.do("GET", "/api/v1/folders/"+root, f.userTok, ""), 404, msgNotFound)
	})

	t.Run("without contents", func(t *testing.T) {
		f, root := setup(t, nil)
		expect(t, f.do("DELETE", "/api/v1/folders/"+root+"?delete_contents=false", f.userTok, ""), 200, "")
		if n := ftCount(f, `FROM folders`); n != 1 {
			t.Fatalf("%d folders left", n)
		}
		if n := ftCount(f, `FROM chats WHERE id IN ('in-root','in-child') AND folder_id IS NULL`); n != 2 {
			t.Fatal("chats not moved out")
		}
		if n := ftCount(f, `FROM chats WHERE id = 'in-keep' AND folder_id IS NOT NULL`); n != 1 {
			t.Fatal("chat of another folder moved")
		}
	})

	t.Run("chat.delete denied", func(t *testing.T) {
		f, root := setup(t, map[string]string{"USER_PERMISSIONS_CHAT_DELETE": "false"})
		before := ftSnapshot(f)
		expect(t, f.do("DELETE", "/api/v1/folders/"+root+"?delete_contents=true", f.userTok, ""), 403, msgAccessProhibited)
		if after := ftSnapshot(f); after != before {
			t.Fatal("refused delete changed data")
		}
		// Moving the chats out needs no chat.delete.
		expect(t, f.do("DELETE", "/api/v1/folders/"+root+"?delete_contents=0", f.userTok, ""), 200, "")
		// An empty folder can be deleted with contents.
		empty := ftFolder(t, f, f.userTok, `{"name":"empty"}`)["id"].(string)
		expect(t, f.do("DELETE", "/api/v1/folders/"+empty, f.userTok, ""), 200, "")
	})
}

func TestFoldersGates(t *testing.T) {
	paths := func(f *fixture, id string) [][3]string {
		return [][3]string{
			{"GET", "/api/v1/folders/", ""},
			{"POST", "/api/v1/folders/", `{"name":"n"}`},
			{"GET", "/api/v1/folders/" + id, ""},
			{"POST", "/api/v1/folders/" + id + "/update", `{"name":"m"}`},
			{"POST", "/api/v1/folders/" + id + "/update/parent", `{"parent_id":null}`},
			{"POST", "/api/v1/folders/" + id + "/update/expanded", `{"is_expanded":true}`},
			{"DELETE", "/api/v1/folders/" + id, ""},
		}
	}
	t.Run("ENABLE_FOLDERS=false", func(t *testing.T) {
		f := newFixture(t, map[string]string{"ENABLE_FOLDERS": "false"})
		withUserFolder(f)
		id := userFolderPath("", "")(f)
		before := ftSnapshot(f)
		for _, tok := range []string{f.userTok, f.adminTok} {
			for _, p := range paths(f, id) {
				expect(t, f.do(p[0], p[1], tok, p[2]), 403, msgFoldersOff)
			}
		}
		if after := ftSnapshot(f); after != before {
			t.Fatal("disabled folders changed data")
		}
	})
	t.Run("features.folders denied", func(t *testing.T) {
		f := newFixture(t, map[string]string{"USER_PERMISSIONS_FEATURES_FOLDERS": "false"})
		withUserFolder(f)
		id := userFolderPath("", "")(f)
		for _, p := range paths(f, id) {
			expect(t, f.do(p[0], p[1], f.userTok, p[2]), 403, msgAccessProhibited)
		}
		// Admins bypass the permission (they act on their own folders).
		expect(t, f.do("GET", "/api/v1/folders/", f.adminTok, ""), 200, "")
		expect(t, f.do("POST", "/api/v1/folders/", f.adminTok, `{"name":"admin's"}`), 200, "")
	})
}

func TestFolderChatListAPI(t *testing.T) {
	f := newFixture(t, nil)
	id := ftFolder(t, f, f.userTok, `{"name":"f"}`)["id"].(string)
	for i := range 12 {
		ftChat(f, f.user, fmt.Sprintf("c%02d", i), id, int64(100+i), false, false)
	}
	ftChat(f, f.user, "archived", id, 900, true, false)
	ftChat(f, f.user, "pinned", id, 901, false, true)
	ftChat(f, f.user, "outside", "", 902, false, false)
	page := func(q string) []map[string]any {
		t.Helper()
		w := f.do("GET", "/api/v1/chats/folder/"+id+"/list"+q, f.userTok, "")
		expect(t, w, 200, "")
		var rows []map[string]any
		ftDecode(t, w, &rows)
		return rows
	}
	rows := page("")
	if len(rows) != 10 || rows[0]["id"] != "c11" || rows[9]["id"] != "c02" {
		t.Fatalf("page 1: %v", rows)
	}
	b, _ := json.Marshal(rows[0])
	if string(b) != `{"id":"c11","last_read_at":111,"title":"Chat c11","updated_at":111}` {
		t.Fatalf("row shape %s", b)
	}
	if rows = page("?page=2"); len(rows) != 2 || rows[1]["id"] != "c00" {
		t.Fatalf("page 2: %v", rows)
	}
	if rows = page("?page=3"); len(rows) != 0 {
		t.Fatalf("page 3: %v", rows)
	}
	if rows = page("?page=0"); len(rows) != 10 {
		t.Fatalf("page 0: %v", rows)
	}
	expect(t, f.do("GET", "/api/v1/chats/folder/missing/list", f.userTok, ""), 404, msgNotFound)
}
