package store

import (
	"context"
	"errors"
	"testing"
)

func TestGroupsOfUser(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, adminA := mustUser(t, s, "admin@example.com", "Admin", "user")
	user, userA := mustUser(t, s, "user@example.com", "User", "user")
	other, otherA := mustUser(t, s, "other@example.com", "Other", "user")

	a, _ := s.CreateGroup(ctx, adminA, Group{Name: "b-shared"})
	b, _ := s.CreateGroup(ctx, adminA, Group{Name: "A-private"})
	s.CreateGroup(ctx, adminA, Group{Name: "unrelated"})
	s.ChangeMembers(ctx, adminA, a.ID, []string{user.ID, other.ID}, nil)
	s.ChangeMembers(ctx, adminA, b.ID, []string{user.ID}, nil)

	names := func(gs []Group, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, g := range gs {
			out = append(out, g.Name)
		}
		return out
	}
	check := func(label string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", label, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", label, got, want)
			}
		}
	}
	check("admin view", names(s.GroupsOfUser(ctx, adminA, user.ID)), "A-private", "b-shared")
	check("own", names(s.GroupsOfUser(ctx, userA, user.ID)), "A-private", "b-shared")
	// Another user sees only the groups they share.
	check("other's view", names(s.GroupsOfUser(ctx, otherA, user.ID)), "b-shared")
	check("none", names(s.GroupsOfUser(ctx, adminA, "nope")))
	gs, _ := s.GroupsOfUser(ctx, userA, user.ID)
	if len(gs[1].MemberIDs) != 2 {
		t.Fatalf("member ids: %v", gs[1].MemberIDs)
	}
}

func TestGroupMembers(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, adminA := mustUser(t, s, "admin@example.com", "Admin", "user")
	user, userA := mustUser(t, s, "user@example.com", "User", "user")
	other, _ := mustUser(t, s, "other@example.com", "Other", "user")

	g, _ := s.CreateGroup(ctx, adminA, Group{Name: "g"})
	empty, _ := s.CreateGroup(ctx, adminA, Group{Name: "empty"})
	// Joined one tick apart: other first.
	s.ChangeMembers(ctx, adminA, g.ID, []string{other.ID}, nil)
	s.ChangeMembers(ctx, adminA, g.ID, []string{user.ID}, nil)

	ms, err := s.GroupMembers(ctx, adminA, g.ID)
	if err != nil || len(ms) != 2 || ms[0].ID != other.ID || ms[1].ID != user.ID {
		t.Fatalf("members: %+v %v", ms, err)
	}
	if len(ms[0].GroupIDs) != 1 || ms[0].GroupIDs[0] != g.ID {
		t.Fatalf("group ids: %v", ms[0].GroupIDs)
	}
	if ms, err := s.GroupMembers(ctx, adminA, empty.ID); err != nil || ms == nil || len(ms) != 0 {
		t.Fatalf("empty: %v %v", ms, err)
	}
	if _, err := s.GroupMembers(ctx, adminA, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	// Even a member gets no member list.
	if _, err := s.GroupMembers(ctx, userA, g.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("member: %v", err)
	}
	if _, err := s.GroupMembers(ctx, userA, empty.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("non-admin, empty group: %v", err)
	}
}
