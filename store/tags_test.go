package store

import (
	"context"
	"errors"
	"testing"
)

// ftChat inserts a chat row directly (folders/tags tests must not depend
// on the chats API): owner, id, folder ("" = none), updated_at, archived,
// pinned.
func ftChat(t *testing.T, s *Store, owner Actor, id, folderID string, updatedAt int64, archived, pinned bool) {
	t.Helper()
	_, err := s.write.ExecContext(context.Background(), `INSERT INTO chats (id, user_id, title, folder_id, archived, pinned, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, owner.UserID, "chat "+id, nullStr(folderID), archived, pinned, updatedAt-1, updatedAt)
	if err != nil {
		t.Fatal(err)
	}
}

// ftCount counts rows of a query.
func ftCount(t *testing.T, s *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.read.QueryRowContext(context.Background(), "SELECT count(*) "+query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNormalizeTagID(t *testing.T) {
	for in, want := range map[string]string{
		"My Tag":      "my_tag",
		"  Work  ":    "work",
		"a b  c":      "a_b__c",
		"ÜBER tag":    "über_tag",
		"already_low": "already_low",
	} {
		if got := NormalizeTagID(in); got != want {
			t.Errorf("NormalizeTagID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChatTagsAddRemoveOrphans(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, a := mustUser(t, s, "a@example.com", "A", "user")
	_, b := mustUser(t, s, "b@example.com", "B", "user")
	ftChat(t, s, a, "c1", "", 10, false, false)
	ftChat(t, s, a, "c2", "", 20, false, false)
	ftChat(t, s, b, "b1", "", 30, false, false)

	ts, err := s.AddChatTag(ctx, a, "c1", "My Tag")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].ID != "my_tag" || ts[0].Name != "My Tag" || ts[0].UserID != a.UserID {
		t.Fatalf("tags %+v", ts)
	}
	// Same tag again: no duplicate; another spelling on another chat keeps
	// the first name.
	if ts, err = s.AddChatTag(ctx, a, "c1", "my tag"); err != nil || len(ts) != 1 {
		t.Fatalf("re-add: %v %+v", err, ts)
	}
	if _, err = s.AddChatTag(ctx, a, "c2", "MY TAG"); err != nil {
		t.Fatal(err)
	}
	if ts, err = s.AddChatTag(ctx, a, "c1", "second"); err != nil || len(ts) != 2 {
		t.Fatalf("second: %v %+v", err, ts)
	}
	all, err := s.ListTags(ctx, a)
	if err != nil || len(all) != 2 || all[0].ID != "my_tag" || all[0].Name != "My Tag" || all[1].ID != "second" {
		t.Fatalf("ListTags %v %+v", err, all)
	}

	// Another user's chat: not found, nothing written.
	if _, err := s.AddChatTag(ctx, a, "b1", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign chat: %v", err)
	}
	if _, err := s.ChatTags(ctx, a, "b1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign chat tags: %v", err)
	}
	if _, err := s.RemoveChatTag(ctx, b, "c1", "my tag"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign remove: %v", err)
	}
	if n := ftCount(t, s, `FROM tags WHERE id = 'x'`); n != 0 {
		t.Fatalf("tag x written for a foreign chat")
	}
	if n := ftCount(t, s, `FROM chat_tags WHERE chat_id = 'c1'`); n != 2 {
		t.Fatalf("foreign remove changed c1: %d links", n)
	}
	// b's own tag of the same id is independent of a's.
	if _, err := s.AddChatTag(ctx, b, "b1", "My Tag"); err != nil {
		t.Fatal(err)
	}

	// Removing from one of two chats keeps the tag; from the last drops it.
	if ts, err = s.RemoveChatTag(ctx, a, "c1", "My Tag"); err != nil || len(ts) != 1 || ts[0].ID != "second" {
		t.Fatalf("remove: %v %+v", err, ts)
	}
	if n := ftCount(t, s, `FROM tags WHERE user_id = ? AND id = 'my_tag'`, a.UserID); n != 1 {
		t.Fatalf("tag dropped while c2 uses it")
	}
	if _, err = s.RemoveChatTag(ctx, a, "c2", "my_tag"); err != nil {
		t.Fatal(err)
	}
	if n := ftCount(t, s, `FROM tags WHERE user_id = ? AND id = 'my_tag'`, a.UserID); n != 0 {
		t.Fatalf("orphan tag kept")
	}
	if n := ftCount(t, s, `FROM tags WHERE user_id = ? AND id = 'my_tag'`, b.UserID); n != 1 {
		t.Fatalf("b's tag of the same id was dropped")
	}
	// Removing a tag the chat does not have is fine.
	if ts, err = s.RemoveChatTag(ctx, a, "c1", "nope"); err != nil || len(ts) != 1 {
		t.Fatalf("remove absent: %v %+v", err, ts)
	}
	// Deleting a chat (cascade) removes its links.
	if _, err := s.write.ExecContext(ctx, `DELETE FROM chats WHERE id = 'c1'`); err != nil {
		t.Fatal(err)
	}
	if n := ftCount(t, s, `FROM chat_tags WHERE chat_id = 'c1'`); n != 0 {
		t.Fatalf("links survive chat deletion")
	}
}

func TestChatsByTag(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, a := mustUser(t, s, "a@example.com", "A", "user")
	_, b := mustUser(t, s, "b@example.com", "B", "user")
	for i, id := range []string{"c1", "c2", "c3", "c4", "c5"} {
		ftChat(t, s, a, id, "", int64(100+i), false, false)
		if _, err := s.AddChatTag(ctx, a, id, "Work"); err != nil {
			t.Fatal(err)
		}
	}
	ftChat(t, s, a, "arch", "", 200, true, false)
	if _, err := s.AddChatTag(ctx, a, "arch", "work"); err != nil {
		t.Fatal(err)
	}
	ftChat(t, s, b, "b1", "", 300, false, false)
	if _, err := s.AddChatTag(ctx, b, "b1", "work"); err != nil {
		t.Fatal(err)
	}

	page := func(skip, limit int) []string {
		t.Helper()
		cs, err := s.ChatsByTag(ctx, a, "WORK", skip, limit)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		return ids
	}
	if got := page(0, 2); len(got) != 2 || got[0] != "c5" || got[1] != "c4" {
		t.Fatalf("page 1 %v", got)
	}
	if got := page(2, 2); len(got) != 2 || got[0] != "c3" || got[1] != "c2" {
		t.Fatalf("page 2 %v", got)
	}
	if got := page(4, 2); len(got) != 1 || got[0] != "c1" {
		t.Fatalf("page 3 %v", got)
	}
	// Past the end: empty, but the tag is in use and stays.
	if got := page(50, 2); len(got) != 0 {
		t.Fatalf("past end %v", got)
	}
	if n := ftCount(t, s, `FROM tags WHERE user_id = ? AND id = 'work'`, a.UserID); n != 1 {
		t.Fatalf("tag in use dropped")
	}
	// An unused tag row is dropped by an empty answer.
	if _, err := s.write.ExecContext(ctx, `INSERT INTO tags (id, user_id, name) VALUES ('lonely', ?, 'lonely')`, a.UserID); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.ChatsByTag(ctx, a, "lonely", 0, 50); err != nil || len(cs) != 0 {
		t.Fatalf("lonely %v %v", err, cs)
	}
	if n := ftCount(t, s, `FROM tags WHERE id = 'lonely'`); n != 0 {
		t.Fatalf("unused tag kept")
	}
}
