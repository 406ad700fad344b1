package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// usersTestStore opens a fresh database with a settable clock (one second
// per tick, so creation order is visible in created_at).
func usersTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clock := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return s
}

func mustUser(t *testing.T, s *Store, email, name, role string) (User, Actor) {
	t.Helper()
	u, err := s.CreateUser(context.Background(), NewUser{Email: email, Name: name, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	return u, Actor{UserID: u.ID, Role: u.Role}
}

func TestSearchUsersAndCards(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	admin, adminA := mustUser(t, s, "admin@example.com", "Admin", "user")
	_, userA := mustUser(t, s, "user@example.com", "User", "user")
	_, pendingA := mustUser(t, s, "pending@example.com", "Pending", "pending")
	for i := range 5 {
		mustUser(t, s, fmt.Sprintf("b%d@example.com", i), fmt.Sprintf("Bulk_%d", i), "user")
	}
	if adminA.Role != "admin" {
		t.Fatal("first user is not admin")
	}

	// Pending actors see nobody, not even by id.
	if cs, n, err := s.SearchUsers(ctx, pendingA, UserFilter{}); err != nil || n != 0 || len(cs) != 0 {
		t.Fatalf("pending search: %v %d %v", cs, n, err)
	}
	if _, err := s.UserCardByID(ctx, pendingA, admin.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pending card: %v", err)
	}

	cs, n, err := s.SearchUsers(ctx, userA, UserFilter{Query: "bulk", OrderBy: "name", Direction: "asc", Limit: 2, Offset: 2})
	if err != nil || n != 5 || len(cs) != 2 || cs[0].Name != "Bulk_2" || cs[1].Name != "Bulk_3" {
		t.Fatalf("page: %+v total %d %v", cs, n, err)
	}
	// Default order: newest first.
	cs, n, _ = s.SearchUsers(ctx, userA, UserFilter{})
	if n != 8 || cs[0].Email != "b4@example.com" || cs[len(cs)-1].Email != "admin@example.com" {
		t.Fatalf("default order: %+v", cs)
	}
	// _ and % are literal.
	if _, n, _ := s.SearchUsers(ctx, userA, UserFilter{Query: "k_"}); n != 5 {
		t.Fatalf("k_ matched %d", n)
	}
	if _, n, _ := s.SearchUsers(ctx, userA, UserFilter{Query: "%"}); n != 0 {
		t.Fatalf("%% matched %d", n)
	}
	c, err := s.UserCardByID(ctx, userA, admin.ID)
	if err != nil || c.Email != "admin@example.com" || c.Role != "admin" || c.LastActiveAt == 0 {
		t.Fatalf("card: %+v %v", c, err)
	}
	if _, err := s.UserCardByID(ctx, userA, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown card: %v", err)
	}

	// The full list stays admin-only.
	if rows, n, err := s.ListUsers(ctx, userA, UserFilter{}); err != nil || n != 0 || len(rows) != 0 {
		t.Fatalf("user ListUsers: %d %v", n, err)
	}
	rows, n, err := s.ListUsers(ctx, adminA, UserFilter{Query: "example", Limit: 3})
	if err != nil || n != 8 || len(rows) != 3 || rows[0].GroupIDs == nil {
		t.Fatalf("admin ListUsers: %+v %d %v", rows, n, err)
	}
}

func TestMergeUserSettingsAndInfo(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, adminA := mustUser(t, s, "admin@example.com", "Admin", "user")
	user, userA := mustUser(t, s, "user@example.com", "User", "user")
	_, otherA := mustUser(t, s, "other@example.com", "Other", "user")

	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	got, err := s.MergeUserSettings(ctx, userA, user.ID, map[string]json.RawMessage{"ui": raw(`{"a": 1}`), "tools": raw(`{"valves":{}}`)})
	if err != nil || string(got) != `{"tools":{"valves":{}},"ui":{"a":1}}` {
		t.Fatalf("first merge: %s %v", got, err)
	}
	got, err = s.MergeUserSettings(ctx, userA, user.ID, map[string]json.RawMessage{"ui": raw(`{"b":2}`)})
	if err != nil || string(got) != `{"tools":{"valves":{}},"ui":{"b":2}}` {
		t.Fatalf("second merge: %s %v", got, err)
	}
	// Another user cannot touch it; an admin can.
	if _, err := s.MergeUserSettings(ctx, otherA, user.ID, map[string]json.RawMessage{"ui": raw(`{}`)}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other: %v", err)
	}
	if _, err := s.MergeUserSettings(ctx, adminA, user.ID, map[string]json.RawMessage{"x": raw(`true`)}); err != nil {
		t.Fatalf("admin: %v", err)
	}
	if _, err := s.MergeUserInfo(ctx, userA, "nope", map[string]json.RawMessage{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	info, err := s.MergeUserInfo(ctx, userA, user.ID, map[string]json.RawMessage{"k": raw(`"v"`)})
	if err != nil || string(info) != `{"k":"v"}` {
		t.Fatalf("info: %s %v", info, err)
	}
	u, _ := s.UserByID(ctx, user.ID)
	if string(u.Settings) != `{"tools":{"valves":{}},"ui":{"b":2},"x":true}` || string(u.Info) != `{"k":"v"}` {
		t.Fatalf("stored: %s / %s", u.Settings, u.Info)
	}
	// A stored value that is not an object is replaced, not fatal.
	if _, err := s.write.Exec(`UPDATE users SET info = '[1]' WHERE id = ?`, user.ID); err != nil {
		t.Fatal(err)
	}
	if info, err := s.MergeUserInfo(ctx, userA, user.ID, map[string]json.RawMessage{"k": raw(`1`)}); err != nil || string(info) != `{"k":1}` {
		t.Fatalf("over junk: %s %v", info, err)
	}
}

func TestDeleteUserRules(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	admin, adminA := mustUser(t, s, "admin@example.com", "Admin", "user")
	second, _ := mustUser(t, s, "second@example.com", "Second", "admin")
	user, userA := mustUser(t, s, "user@example.com", "User", "user")
	secondA := Actor{UserID: second.ID, Role: "admin"}

	g, err := s.CreateGroup(ctx, adminA, Group{Name: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ChangeMembers(ctx, adminA, g.ID, []string{user.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAPIKey(ctx, userA, "k", []byte("hash"), "sk-…", false); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name  string
		actor Actor
		id    string
		want  error
	}{
		{"non-admin on primary", userA, admin.ID, ErrNotFound},
		{"non-admin on other", userA, second.ID, ErrNotFound},
		{"admin on primary", secondA, admin.ID, ErrForbidden},
		{"primary on itself", adminA, admin.ID, ErrForbidden},
		{"admin on itself", secondA, second.ID, ErrForbidden},
		{"unknown", adminA, "nope", ErrNotFound},
	} {
		if err := s.DeleteUser(ctx, c.actor, c.id); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if n, _ := s.CountUsers(ctx); n != 3 {
		t.Fatalf("refused deletes removed accounts: %d left", n)
	}
	if err := s.DeleteUser(ctx, secondA, user.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByID(ctx, user.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("still there: %v", err)
	}
	if _, _, err := s.UserForAPIKey(ctx, []byte("hash")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("key survived: %v", err)
	}
	if g, _ := s.GetGroup(ctx, adminA, g.ID); len(g.MemberIDs) != 0 {
		t.Fatalf("membership survived: %v", g.MemberIDs)
	}
}
