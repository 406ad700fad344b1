package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func mustFolder(t *testing.T, s *Store, a Actor, name, parent string) Folder {
	t.Helper()
	f, err := s.CreateFolder(context.Background(), a, NewFolder{Name: name, ParentID: parent})
	if err != nil {
		t.Fatalf("create %q: %v", name, err)
	}
	return f
}

func TestFolderCreateNestingNames(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, a := mustUser(t, s, "a@example.com", "A", "user")
	_, b := mustUser(t, s, "b@example.com", "B", "user")

	top := mustFolder(t, s, a, "Work", "")
	if top.ParentID != "" || top.UserID != a.UserID || top.IsExpanded || top.Data != nil {
		t.Fatalf("top %+v", top)
	}
	sub := mustFolder(t, s, a, "Projects", top.ID)
	if sub.ParentID != top.ID {
		t.Fatalf("sub parent %q", sub.ParentID)
	}
	// Duplicate names: refused under the same parent ignoring case, fine
	// under another parent and for another user.
	if _, err := s.CreateFolder(ctx, a, NewFolder{Name: "work"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("dup top: %v", err)
	}
	if _, err := s.CreateFolder(ctx, a, NewFolder{Name: "PROJECTS", ParentID: top.ID}); !errors.Is(err, ErrConflict) {
		t.Fatalf("dup sub: %v", err)
	}
	mustFolder(t, s, a, "Work", sub.ID)
	mustFolder(t, s, a, "Projects", "")
	mustFolder(t, s, b, "Work", "")
	// Parent of another user: not found, nothing created.
	if _, err := s.CreateFolder(ctx, b, NewFolder{Name: "x", ParentID: top.ID}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign parent: %v", err)
	}
	if n := ftCount(t, s, `FROM folders WHERE name = 'x'`); n != 0 {
		t.Fatal("folder under a foreign parent was created")
	}
	fs, err := s.ListFolders(ctx, a)
	if err != nil || len(fs) != 4 {
		t.Fatalf("list %v %d", err, len(fs))
	}
	if _, err := s.GetFolder(ctx, b, top.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign get: %v", err)
	}
	// Admins see only their own folders too.
	if _, err := s.GetFolder(ctx, Actor{UserID: b.UserID, Role: "admin"}, top.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("admin get: %v", err)
	}
}

func TestFolderUpdateMergeAndRename(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, a := mustUser(t, s, "a@example.com", "A", "user")
	_, b := mustUser(t, s, "b@example.com", "B", "user")
	f, err := s.CreateFolder(ctx, a, NewFolder{Name: "One", Data: json.RawMessage(`{"system_prompt":"p","files":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	mustFolder(t, s, a, "Two", "")
	name := "Uno"
	u, err := s.UpdateFolder(ctx, a, f.ID, FolderPatch{Name: &name, Data: json.RawMessage(`{"files":[{"id":"f1"}]}`), Meta: json.RawMessage(`{"icon":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	json.Unmarshal(u.Data, &data)
	if u.Name != "Uno" || data["system_prompt"] != "p" || len(data["files"].([]any)) != 1 || string(u.Meta) != `{"icon":"x"}` {
		t.Fatalf("updated %+v data %v", u, data)
	}
	if u.UpdatedAt <= f.UpdatedAt {
		t.Fatal("updated_at not bumped")
	}
	taken := "two"
	if _, err := s.UpdateFolder(ctx, a, f.ID, FolderPatch{Name: &taken}); !errors.Is(err, ErrConflict) {
		t.Fatalf("rename to taken: %v", err)
	}
	// Renaming to itself in another case is fine.
	same := "UNO"
	if _, err := s.UpdateFolder(ctx, a, f.ID, FolderPatch{Name: &same}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateFolder(ctx, b, f.ID, FolderPatch{Name: &name}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign update: %v", err)
	}
	if _, err := s.SetFolderExpanded(ctx, b, f.ID, true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign expand: %v", err)
	}
	e, err := s.SetFolderExpanded(ctx, a, f.ID, true)
	if err != nil || !e.IsExpanded || e.Name != "UNO" {
		t.Fatalf("expand %v %+v", err, e)
	}
}

func TestMoveFolderCycles(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, a := mustUser(t, s, "a@example.com", "A", "user")
	_, b := mustUser(t, s, "b@example.com", "B", "user")
	root := mustFolder(t, s, a, "root", "")
	child := mustFolder(t, s, a, "child", root.ID)
	grand := mustFolder(t, s, a, "grand", child.ID)
	other := mustFolder(t, s, a, "other", "")
	bf := mustFolder(t, s, b, "b", "")

	for _, target := range []string{root.ID, child.ID, grand.ID} {
		if _, err := s.MoveFolder(ctx, a, root.ID, target); !errors.Is(err, ErrFolderCycle) {
			t.Fatalf("move root under %s: %v", target, err)
		}
	}
	if _, err := s.MoveFolder(ctx, a, child.ID, child.ID); !errors.Is(err, ErrFolderCycle) {
		t.Fatalf("move under itself: %v", err)
	}
	if _, err := s.MoveFolder(ctx, a, root.ID, bf.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign parent: %v", err)
	}
	if _, err := s.MoveFolder(ctx, b, root.ID, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign folder: %v", err)
	}
	got, _ := s.GetFolder(ctx, a, root.ID)
	if got.ParentID != "" {
		t.Fatalf("refused move changed parent to %q", got.ParentID)
	}
	// A legal move: grand to top level, then root under other.
	if m, err := s.MoveFolder(ctx, a, grand.ID, ""); err != nil || m.ParentID != "" {
		t.Fatalf("to top: %v %+v", err, m)
	}
	if m, err := s.MoveFolder(ctx, a, root.ID, other.ID); err != nil || m.ParentID != other.ID {
		t.Fatalf("under other: %v %+v", err, m)
	}
	// A name clash under the new parent.
	mustFolder(t, s, a, "CHILD", other.ID)
	if _, err := s.MoveFolder(ctx, a, child.ID, other.ID); !errors.Is(err, ErrConflict) {
		t.Fatalf("clash: %v", err)
	}
}

func TestDeleteFolder(t *testing.T) {
	setup := func(t *testing.T) (*Store, Actor, Actor, Folder, Folder, Folder) {
		s := usersTestStore(t)
		_, a := mustUser(t, s, "a@example.com", "A", "user")
		_, b := mustUser(t, s, "b@example.com", "B", "user")
		root := mustFolder(t, s, a, "root", "")
		child := mustFolder(t, s, a, "child", root.ID)
		keep := mustFolder(t, s, a, "keep", "")
		ftChat(t, s, a, "in-root", root.ID, 10, false, false)
		ftChat(t, s, a, "in-child", child.ID, 11, false, true)
		ftChat(t, s, a, "in-keep", keep.ID, 12, false, false)
		ftChat(t, s, a, "loose", "", 13, false, false)
		ftChat(t, s, b, "b-chat", "", 14, false, false)
		ctx := context.Background()
		for _, c := range []struct{ chat, tag string }{{"in-root", "gone"}, {"in-child", "shared"}, {"loose", "shared"}} {
			if _, err := s.AddChatTag(ctx, a, c.chat, c.tag); err != nil {
				t.Fatal(err)
			}
		}
		return s, a, b, root, child, keep
	}
	ctx := context.Background()

	t.Run("with contents", func(t *testing.T) {
		s, a, b, root, _, keep := setup(t)
		if err := s.DeleteFolder(ctx, b, root.ID, true, true); !errors.Is(err, ErrNotFound) {
			t.Fatalf("foreign delete: %v", err)
		}
		if err := s.DeleteFolder(ctx, a, root.ID, true, false); !errors.Is(err, ErrForbidden) {
			t.Fatalf("without chat.delete: %v", err)
		}
		if n := ftCount(t, s, `FROM chats`); n != 5 {
			t.Fatalf("refused delete removed chats: %d left", n)
		}
		if err := s.DeleteFolder(ctx, a, root.ID, true, true); err != nil {
			t.Fatal(err)
		}
		if n := ftCount(t, s, `FROM folders WHERE user_id = ?`, a.UserID); n != 1 {
			t.Fatalf("%d folders left", n)
		}
		if _, err := s.GetFolder(ctx, a, keep.ID); err != nil {
			t.Fatal(err)
		}
		if n := ftCount(t, s, `FROM chats WHERE id IN ('in-root','in-child')`); n != 0 {
			t.Fatal("chats in the folders survive")
		}
		if n := ftCount(t, s, `FROM chats WHERE id IN ('in-keep','loose','b-chat')`); n != 3 {
			t.Fatal("other chats deleted")
		}
		if n := ftCount(t, s, `FROM tags WHERE id = 'gone'`); n != 0 {
			t.Fatal("orphan tag kept")
		}
		if n := ftCount(t, s, `FROM tags WHERE id = 'shared'`); n != 1 {
			t.Fatal("tag still in use dropped")
		}
	})

	t.Run("without contents", func(t *testing.T) {
		s, a, _, root, _, _ := setup(t)
		// chat.delete is not needed when nothing is deleted.
		if err := s.DeleteFolder(ctx, a, root.ID, false, false); err != nil {
			t.Fatal(err)
		}
		if n := ftCount(t, s, `FROM folders WHERE user_id = ?`, a.UserID); n != 1 {
			t.Fatalf("%d folders left", n)
		}
		if n := ftCount(t, s, `FROM chats WHERE id IN ('in-root','in-child') AND folder_id IS NULL`); n != 2 {
			t.Fatal("chats not moved out")
		}
		if n := ftCount(t, s, `FROM chats WHERE id = 'in-keep' AND folder_id IS NOT NULL`); n != 1 {
			t.Fatal("chat of another folder moved")
		}
		if n := ftCount(t, s, `FROM tags WHERE id = 'gone'`); n != 1 {
			t.Fatal("tag of a kept chat dropped")
		}
	})
}

func TestFolderChats(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, a := mustUser(t, s, "a@example.com", "A", "user")
	_, b := mustUser(t, s, "b@example.com", "B", "user")
	f := mustFolder(t, s, a, "f", "")
	for i := range 12 {
		ftChat(t, s, a, string(rune('a'+i)), f.ID, int64(100+i), false, false)
	}
	ftChat(t, s, a, "archived", f.ID, 500, true, false)
	ftChat(t, s, a, "pinned", f.ID, 501, false, true)
	cs, err := s.FolderChats(ctx, a, f.ID, 0, 10)
	if err != nil || len(cs) != 10 || cs[0].ID != "l" || cs[9].ID != "c" {
		t.Fatalf("page 1 %v %+v", err, cs)
	}
	cs, err = s.FolderChats(ctx, a, f.ID, 10, 10)
	if err != nil || len(cs) != 2 || cs[1].ID != "a" {
		t.Fatalf("page 2 %v %+v", err, cs)
	}
	if _, err := s.FolderChats(ctx, b, f.ID, 0, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign folder: %v", err)
	}
}
