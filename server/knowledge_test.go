package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"hearth/store"
)

type knowledgeOut struct {
	ID           string `json:"id"`
	UserID       string `json:"user_id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	AccessGrants []struct {
		PrincipalType string `json:"principal_type"`
		PrincipalID   string `json:"principal_id"`
		Permission    string `json:"permission"`
	} `json:"access_grants"`
	Files *[]struct {
		ID   string  `json:"id"`
		Hash *string `json:"hash"`
		Meta struct {
			Name string `json:"name"`
		} `json:"meta"`
	} `json:"files"`
	WriteAccess *bool `json:"write_access"`
	User        *struct {
		ID string `json:"id"`
	} `json:"user"`
}

func decodeKnowledge(t *testing.T, w *httptest.ResponseRecorder) knowledgeOut {
	t.Helper()
	expect(t, w, 200, "")
	var k knowledgeOut
	if err := json.Unmarshal(w.Body.Bytes(), &k); err != nil {
		t.Fatal(err)
	}
	return k
}

// userKnowledge creates a private collection of user's through the store
// (plain users lack workspace.knowledge by default).
func (f *fixture) userKnowledge(grants ...store.Grant) store.Knowledge {
	f.t.Helper()
	k, err := f.store.CreateKnowledge(context.Background(), actorOf(f.user), store.Knowledge{Name: "Docs", Grants: grants})
	if err != nil {
		f.t.Fatal(err)
	}
	return k
}

// firstKnowledgeOf is the id of the owner's newest collection.
func firstKnowledgeOf(f *fixture) string {
	ks, _, err := f.store.ListKnowledge(context.Background(), actorOf(f.user), false, 1, 0)
	if err != nil || len(ks) == 0 {
		f.t.Fatalf("no collection: %v", err)
	}
	return ks[0].ID
}

func TestKnowledgeCRUD(t *testing.T) {
	f := newFixture(t, map[string]string{"USER_PERMISSIONS_WORKSPACE_KNOWLEDGE": "true"})
	k := decodeKnowledge(t, f.do("POST", "/api/v1/knowledge/create", f.userTok, `{"name":"Handbook","description":"HR docs"}`))
	if k.ID == "" || k.UserID != f.user.ID || k.Name != "Handbook" || k.Description != "HR docs" || k.Files != nil || len(k.AccessGrants) != 0 {
		t.Fatalf("created %+v", k)
	}
	expect(t, f.do("POST", "/api/v1/knowledge/create", f.userTok, `{"description":"x"}`), 422, "")

	got := decodeKnowledge(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.userTok, ""))
	if got.Files == nil || len(*got.Files) != 0 || got.WriteAccess == nil || !*got.WriteAccess {
		t.Fatalf("get %+v", got)
	}
	// Private: another user is refused (401), a missing id is 404.
	expect(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.otherTok, ""), 401, msgAccessProhibited)
	expect(t, f.do("GET", "/api/v1/knowledge/nope", f.userTok, ""), 404, msgNotFound)

	upd := decodeKnowledge(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/update", f.userTok, `{"name":"Handbook 2"}`))
	if upd.Name != "Handbook 2" || upd.Description != "HR docs" {
		t.Fatalf("update %+v", upd)
	}
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/update", f.otherTok, `{"name":"Mine"}`), 400, msgAccessProhibited)
	expect(t, f.do("POST", "/api/v1/knowledge/nope/update", f.userTok, `{"name":"Mine"}`), 400, msgNotFound)

	var list struct {
		Items []knowledgeOut `json:"items"`
		Total int            `json:"total"`
	}
	json.Unmarshal(f.do("GET", "/api/v1/knowledge/", f.userTok, "").Body.Bytes(), &list)
	if list.Total != 1 || list.Items[0].User == nil || list.Items[0].User.ID != f.user.ID || !*list.Items[0].WriteAccess {
		t.Fatalf("list %+v", list)
	}
	json.Unmarshal(f.do("GET", "/api/v1/knowledge/", f.otherTok, "").Body.Bytes(), &list)
	if list.Total != 0 {
		t.Fatalf("other's list %+v", list)
	}

	expect(t, f.do("DELETE", "/api/v1/knowledge/"+k.ID+"/delete", f.otherTok, ""), 400, msgAccessProhibited)
	w := f.do("DELETE", "/api/v1/knowledge/"+k.ID+"/delete", f.userTok, "")
	expect(t, w, 200, "")
	if w.Body.String() != "true" {
		t.Fatal(w.Body.String())
	}
	expect(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.userTok, ""), 404, msgNotFound)
}

func TestKnowledgeFiles(t *testing.T) {
	f := newFixture(t, nil)
	k := f.userKnowledge()
	file := f.mkFile(f.userTok, "guide.txt", "text/plain", "How to do things.")
	add := func(tok, fileID string) *httptest.ResponseRecorder {
		return f.do("POST", "/api/v1/knowledge/"+k.ID+"/file/add", tok, `{"file_id":"`+fileID+`"}`)
	}
	got := decodeKnowledge(t, add(f.userTok, file.ID))
	if got.Files == nil || len(*got.Files) != 1 || (*got.Files)[0].ID != file.ID || (*got.Files)[0].Meta.Name != "guide.txt" || (*got.Files)[0].Hash == nil {
		t.Fatalf("after add %+v", got)
	}
	// Again: still one.
	if got = decodeKnowledge(t, add(f.userTok, file.ID)); len(*got.Files) != 1 {
		t.Fatalf("after second add %+v", got)
	}
	// A file whose processing has not produced text: SPEC.md §7's 400.
	ctx := context.Background()
	up, _ := f.store.NewFileUpload(ctx, actorOf(f.user), "pending-file", "p.txt", 0)
	up.Write(ctx, strings.NewReader("later"))
	up.Commit(ctx, nil, store.FilePending)
	expect(t, add(f.userTok, "pending-file"), 400, msgEmptyContent)
	// A failed extraction, and text that is empty, are refused the same way.
	failed := f.mkFile(f.userTok, "pic.png", "image/png", "\x89PNG\x00\x00")
	expect(t, add(f.userTok, failed.ID), 400, msgEmptyContent)
	blank := f.mkFile(f.userTok, "blank.txt", "text/plain", "   ")
	if blank.Data.Status != "completed" {
		t.Fatalf("blank %+v", blank.Data)
	}
	// "   " is text; a file whose text is empty is refused.
	empty := f.mkFile(f.userTok, "empty.html", "text/html", "<p></p>")
	expect(t, add(f.userTok, empty.ID), 400, msgEmptyContent)
	// Missing file, missing collection, a file of someone else, no write access.
	expect(t, add(f.userTok, "nope"), 400, msgNotFound)
	expect(t, f.do("POST", "/api/v1/knowledge/nope/file/add", f.userTok, `{"file_id":"`+file.ID+`"}`), 400, msgNotFound)
	theirs := f.mkFile(f.otherTok, "theirs.txt", "text/plain", "x")
	expect(t, add(f.userTok, theirs.ID), 403, msgAccessProhibited)
	expect(t, add(f.otherTok, theirs.ID), 400, msgAccessProhibited)

	// Remove without deleting the file, then add back and remove with delete.
	got = decodeKnowledge(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/file/remove?delete_file=false", f.userTok, `{"file_id":"`+file.ID+`"}`))
	if len(*got.Files) != 0 {
		t.Fatalf("after remove %+v", got)
	}
	expect(t, f.do("GET", "/api/v1/files/"+file.ID, f.userTok, ""), 200, "")
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/file/remove", f.userTok, `{"file_id":"`+file.ID+`"}`), 400, msgNotFound)
	decodeKnowledge(t, add(f.userTok, file.ID))
	decodeKnowledge(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/file/remove", f.userTok, `{"file_id":"`+file.ID+`"}`))
	expect(t, f.do("GET", "/api/v1/files/"+file.ID, f.userTok, ""), 404, msgNotFound)
}

// TestKnowledgeAccessControl: grants to everyone, a group and a user give
// read (and through the collection, the files); write grants allow changes.
func TestKnowledgeAccessControl(t *testing.T) {
	f := newFixture(t, nil)
	k := f.userKnowledge()
	file := f.mkFile(f.userTok, "shared.txt", "text/plain", "shared text")
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/file/add", f.userTok, `{"file_id":"`+file.ID+`"}`), 200, "")
	// Private: other sees neither the collection nor its file.
	expect(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.otherTok, ""), 401, "")
	expect(t, f.do("GET", "/api/v1/files/"+file.ID, f.otherTok, ""), 404, "")

	// Public read (legacy access_control null); an admin may give it.
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/access/update", f.adminTok, `{"access_control":null}`), 200, "")
	got := decodeKnowledge(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.otherTok, ""))
	if *got.WriteAccess || len(*got.Files) != 1 {
		t.Fatalf("public read %+v", got)
	}
	expect(t, f.do("GET", "/api/v1/files/"+file.ID+"/content", f.otherTok, ""), 200, "")
	expect(t, f.do("DELETE", "/api/v1/files/"+file.ID, f.otherTok, ""), 404, "")
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/update", f.otherTok, `{"name":"x"}`), 400, msgAccessProhibited)

	// Group write grant: a member of the group may change it.
	g, err := f.store.CreateGroup(context.Background(), actorOf(f.admin), store.Group{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.ChangeMembers(context.Background(), actorOf(f.admin), g.ID, []string{f.other.ID}, nil); err != nil {
		t.Fatal(err)
	}
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/access/update", f.userTok,
		`{"access_grants":[{"principal_type":"group","principal_id":"`+g.ID+`","permission":"write"}]}`), 200, "")
	got = decodeKnowledge(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/update", f.otherTok, `{"name":"Team docs"}`))
	if got.Name != "Team docs" || len(got.AccessGrants) != 1 || got.AccessGrants[0].Permission != "write" {
		t.Fatalf("group write %+v", got)
	}

	// Grants to a single user; a plain user may not give public grants
	// (sharing.public_knowledge is off by default).
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/access/update", f.userTok,
		`{"access_grants":[{"principal_type":"user","principal_id":"*","permission":"read"},{"principal_type":"user","principal_id":"`+f.other.ID+`","permission":"read"}]}`), 200, "")
	got = decodeKnowledge(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.userTok, ""))
	if len(got.AccessGrants) != 1 || got.AccessGrants[0].PrincipalID != f.other.ID {
		t.Fatalf("grants %+v", got.AccessGrants)
	}
	expect(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.otherTok, ""), 200, "")
	// Back to private: the other user loses it again.
	expect(t, f.do("POST", "/api/v1/knowledge/"+k.ID+"/access/update", f.userTok, `{"access_grants":[]}`), 200, "")
	expect(t, f.do("GET", "/api/v1/knowledge/"+k.ID, f.otherTok, ""), 401, "")
	expect(t, f.do("GET", "/api/v1/files/"+file.ID, f.otherTok, ""), 404, "")
}

func authzKnowledgeRows() []authzRow {
	withKB := func(f *fixture) { f.userKnowledge() }
	withKBFile := func(f *fixture) {
		f.userKnowledge()
		f.storeFile(f.user, "users-file", "hello")
	}
	withKBLinked := func(f *fixture) {
		withKBFile(f)
		if _, err := f.store.AddKnowledgeFile(context.Background(), actorOf(f.user), firstKnowledgeOf(f), "users-file"); err != nil {
			f.t.Fatal(err)
		}
	}
	kb := func(suffix string) func(*fixture) string {
		return func(f *fixture) string { return "/api/v1/knowledge/" + firstKnowledgeOf(f) + suffix }
	}
	write := [5]int{401, 401, 200, 400, 200}
	return []authzRow{
		{pattern: "GET /api/v1/knowledge/", setup: withKB, want: wantVerified},
		// Plain users lack workspace.knowledge by default.
		{pattern: "POST /api/v1/knowledge/create", body: `{"name":"K","description":""}`, want: wantAdmin},
		{pattern: "GET /api/v1/knowledge/{id}", setup: withKB, path: kb(""), want: [5]int{401, 401, 200, 401, 200}},
		{pattern: "POST /api/v1/knowledge/{id}/update", setup: withKB, path: kb("/update"), body: `{"name":"New"}`, want: write},
		{pattern: "POST /api/v1/knowledge/{id}/access/update", setup: withKB, path: kb("/access/update"), body: `{"access_grants":[]}`, want: write},
		{pattern: "POST /api/v1/knowledge/{id}/file/add", setup: withKBFile, path: kb("/file/add"), body: `{"file_id":"users-file"}`, want: write},
		{pattern: "POST /api/v1/knowledge/{id}/file/remove", setup: withKBLinked, path: kb("/file/remove"), body: `{"file_id":"users-file"}`, want: write},
		{pattern: "DELETE /api/v1/knowledge/{id}/delete", setup: withKB, path: kb("/delete"), want: write},
	}
}
