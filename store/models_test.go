package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func grant(ptype, pid, perm string) Grant {
	return Grant{PrincipalType: ptype, PrincipalID: pid, Permission: perm}
}

func mustModel(t *testing.T, s *Store, a Actor, m Model) Model {
	t.Helper()
	if m.Name == "" {
		m.Name = m.ID
	}
	m.IsActive = true
	out, err := s.CreateModel(context.Background(), a, m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestModelCreateGetConflict(t *testing.T) {
	s, admin, a, b := chatTestStore(t)
	ctx := context.Background()
	m := mustModel(t, s, a, Model{ID: "a-preset", BaseModelID: "tiny:latest", Params: json.RawMessage(`{"system":"hi"}`),
		Grants: []Grant{grant("user", "*", "read"), grant("user", "*", "read"), grant("bogus", "x", "read"), grant("group", "g", "admin")}})
	if m.UserID != a.UserID || m.CreatedAt == 0 || len(m.Grants) != 1 || m.Grants[0].ID == "" || m.Grants[0].ResourceID != "a-preset" {
		t.Fatalf("created %+v", m)
	}
	if _, err := s.CreateModel(ctx, b, Model{ID: "a-preset", Name: "x"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("taken id: %v", err)
	}
	// Public read: b reads without write; a (owner) writes; admin writes only with adminAll.
	got, err := s.GetModel(ctx, b, "a-preset", true)
	if err != nil || got.WriteAccess || string(got.Params) != `{"system":"hi"}` || got.BaseModelID != "tiny:latest" {
		t.Fatalf("reader: %+v %v", got, err)
	}
	if got, _ := s.GetModel(ctx, a, "a-preset", false); !got.WriteAccess {
		t.Fatal("owner has no write access")
	}
	if got, _ := s.GetModel(ctx, admin, "a-preset", true); !got.WriteAccess {
		t.Fatal("admin with bypass has no write access")
	}
	if got, _ := s.GetModel(ctx, admin, "a-preset", false); got.WriteAccess {
		t.Fatal("admin without bypass has write access")
	}
	if _, err := s.GetModel(ctx, b, "missing", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	private := mustModel(t, s, a, Model{ID: "private", BaseModelID: "tiny:latest"})
	if _, err := s.GetModel(ctx, b, private.ID, true); !errors.Is(err, ErrForbidden) {
		t.Fatalf("private: %v", err)
	}
	if _, err := s.GetModel(ctx, admin, private.ID, false); !errors.Is(err, ErrForbidden) {
		t.Fatalf("admin without bypass reads a private record: %v", err)
	}
	if _, err := s.GetModel(ctx, admin, private.ID, true); err != nil {
		t.Fatalf("admin with bypass: %v", err)
	}
}

func TestModelGrantsByGroupAndUser(t *testing.T) {
	s, admin, a, b := chatTestStore(t)
	ctx := context.Background()
	g, err := s.CreateGroup(ctx, admin, Group{Name: "staff"})
	if err != nil {
		t.Fatal(err)
	}
	bInGroup := Actor{UserID: b.UserID, Role: b.Role, Groups: []string{g.ID}}
	mustModel(t, s, a, Model{ID: "grp", BaseModelID: "x", Grants: []Grant{grant("group", g.ID, "read")}})
	mustModel(t, s, a, Model{ID: "usr", BaseModelID: "x", Grants: []Grant{grant("user", b.UserID, "write")}})
	if _, err := s.GetModel(ctx, b, "grp", true); !errors.Is(err, ErrForbidden) {
		t.Fatalf("outside the group: %v", err)
	}
	if m, err := s.GetModel(ctx, bInGroup, "grp", true); err != nil || m.WriteAccess {
		t.Fatalf("group member: %+v %v", m, err)
	}
	// A write grant implies read.
	if m, err := s.GetModel(ctx, b, "usr", true); err != nil || !m.WriteAccess {
		t.Fatalf("user write grant: %+v %v", m, err)
	}
	// Go-side check agrees with SQL.
	all, err := s.AllModels(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("all: %v %v", all, err)
	}
	for _, m := range all {
		for _, tc := range []struct {
			who  Actor
			perm string
		}{{b, "read"}, {bInGroup, "read"}, {b, "write"}, {bInGroup, "write"}} {
			_, err := s.GetModel(ctx, tc.who, m.ID, false)
			sqlRead := err == nil
			goRead := m.UserID == tc.who.UserID || HasAccess(m.Grants, tc.who, "read")
			if tc.perm == "read" && sqlRead != goRead {
				t.Errorf("%s for %+v: SQL %v, Go %v", m.ID, tc.who, sqlRead, goRead)
			}
		}
	}
	if !HasAccess(all[1].Grants, b, "write") || HasAccess(all[0].Grants, bInGroup, "write") {
		t.Fatal("write checks")
	}
	// Deleting the user or the group deletes their grants.
	if err := s.DeleteGroup(ctx, admin, g.ID); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.GetModel(ctx, a, "grp", false); len(m.Grants) != 0 {
		t.Fatalf("group grants survive the group: %+v", m.Grants)
	}
}

func TestModelWrites(t *testing.T) {
	s, admin, a, b := chatTestStore(t)
	ctx := context.Background()
	mustModel(t, s, a, Model{ID: "m1", BaseModelID: "x", Grants: []Grant{grant("user", "*", "read")}})
	// A reader may not change it; a stranger to a missing id gets ErrNotFound.
	if _, err := s.UpdateModel(ctx, b, "m1", ModelPatch{Name: ptr("n")}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("update by reader: %v", err)
	}
	if _, err := s.ToggleModel(ctx, b, "m1"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("toggle by reader: %v", err)
	}
	if err := s.DeleteModel(ctx, b, "m1"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("delete by reader: %v", err)
	}
	if _, err := s.SetModelGrants(ctx, b, "m1", nil); !errors.Is(err, ErrForbidden) {
		t.Fatalf("grants by reader: %v", err)
	}
	if _, err := s.UpdateModel(ctx, b, "nope", ModelPatch{Name: ptr("n")}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	// The owner updates; grants stay unless given.
	m, err := s.UpdateModel(ctx, a, "m1", ModelPatch{Name: ptr("New"), BaseModelID: ptr("y"), Params: json.RawMessage(`{"temperature":0.5}`)})
	if err != nil || m.Name != "New" || m.BaseModelID != "y" || len(m.Grants) != 1 || m.UserID != a.UserID || !m.IsActive ||
		string(m.Params) != `{"temperature":0.5}` || string(m.Meta) != `{}` {
		t.Fatalf("update: %+v %v", m, err)
	}
	// nil fields keep their value; "" clears the base; grants replace.
	off := false
	m, err = s.UpdateModel(ctx, a, "m1", ModelPatch{BaseModelID: ptr(""), IsActive: &off, Grants: &[]Grant{}})
	if err != nil || m.Name != "New" || m.BaseModelID != "" || m.IsActive || len(m.Grants) != 0 || string(m.Params) != `{"temperature":0.5}` {
		t.Fatalf("patch: %+v %v", m, err)
	}
	// A write grant lets b change it; admin always may.
	if _, err := s.SetModelGrants(ctx, a, "m1", []Grant{grant("user", b.UserID, "write")}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.ToggleModel(ctx, b, "m1"); err != nil || !m.IsActive {
		t.Fatalf("toggle by writer: %+v %v", m, err)
	}
	if m, err := s.ToggleModel(ctx, admin, "m1"); err != nil || m.IsActive {
		t.Fatalf("toggle by admin: %+v %v", m, err)
	}
	if err := s.DeleteModel(ctx, b, "m1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteModel(ctx, b, "m1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	var n int
	s.read.QueryRowContext(ctx, `SELECT count(*) FROM access_grants WHERE resource_id = 'm1'`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d grants survive the model", n)
	}
}

func TestListModels(t *testing.T) {
	s, admin, a, b := chatTestStore(t)
	ctx := context.Background()
	for i := range 35 {
		mustModel(t, s, a, Model{ID: fmt.Sprintf("a%02d", i), Name: fmt.Sprintf("Alpha %02d", i), BaseModelID: "x",
			Meta: json.RawMessage(`{"tags":[{"name":"Fast"}]}`)})
	}
	mustModel(t, s, b, Model{ID: "b-shared", BaseModelID: "x", Grants: []Grant{grant("user", a.UserID, "read")}})
	mustModel(t, s, b, Model{ID: "b-private", BaseModelID: "x"})
	mustModel(t, s, a, Model{ID: "override"}) // no base: not listed

	items, total, err := s.ListModels(ctx, a, ModelFilter{Limit: 30})
	if err != nil || total != 36 || len(items) != 30 {
		t.Fatalf("page 1: %d items, total %d, %v", len(items), total, err)
	}
	if items[0].Owner == nil || items[0].Owner.ID == "" {
		t.Fatalf("owner card missing: %+v", items[0])
	}
	items, _, _ = s.ListModels(ctx, a, ModelFilter{Limit: 30, Offset: 30})
	if len(items) != 6 {
		t.Fatalf("page 2: %d", len(items))
	}
	items, total, _ = s.ListModels(ctx, a, ModelFilter{ViewOption: "shared"})
	if total != 1 || items[0].ID != "b-shared" || items[0].WriteAccess {
		t.Fatalf("shared: %+v", items)
	}
	_, total, _ = s.ListModels(ctx, a, ModelFilter{ViewOption: "created", Tag: "fast"})
	if total != 35 {
		t.Fatalf("tag: %d", total)
	}
	items, total, _ = s.ListModels(ctx, a, ModelFilter{Query: "alpha 0", OrderBy: "name", Direction: "asc"})
	if total != 10 || items[0].ID != "a00" || !items[0].WriteAccess {
		t.Fatalf("query: %d %+v", total, items)
	}
	_, total, _ = s.ListModels(ctx, admin, ModelFilter{All: true})
	if total != 37 {
		t.Fatalf("admin all: %d", total)
	}
	_, total, _ = s.ListModels(ctx, admin, ModelFilter{All: false})
	if total != 0 {
		t.Fatalf("admin without bypass: %d", total)
	}
	_, total, _ = s.ListModels(ctx, a, ModelFilter{Query: `%`})
	if total != 0 {
		t.Fatalf("LIKE wildcard not escaped: %d", total)
	}
}

func TestNormalizeGrants(t *testing.T) {
	in := []Grant{grant("user", "*", "read"), grant("group", "g", "write"), {ID: "keep", PrincipalType: "user", PrincipalID: "*", Permission: "read"},
		grant("user", "", "read"), grant("team", "x", "read"), grant("user", "u", "delete")}
	out := NormalizeGrants(in)
	if len(out) != 2 || out[0].ID != "keep" || out[1].PrincipalID != "g" {
		t.Fatalf("%+v", out)
	}
	if HasAccess(out, Actor{UserID: "u"}, "write") || !HasAccess(out, Actor{UserID: "u"}, "read") || !HasAccess(out, Actor{Groups: []string{"g"}}, "write") {
		t.Fatal("HasAccess")
	}
	if HasAccess(nil, Actor{}, "read") {
		t.Fatal("no grants")
	}
}

func ptr[T any](v T) *T { return &v }
