package store

import (
	"context"
	"errors"
	"testing"
)

// Every attribute with every operator and every value type either compiles
// to SQL that SQLite runs, or is ErrInvalidFilter: never a SQL error.
func TestSCIMFilterMatrix(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	u, admin := mustUser(t, s, "a@example.com", "Ada Lovelace", "user")
	// Data in every JSON column and a membership, so each expression is
	// really evaluated.
	if _, err := s.UpdateSCIMUser(ctx, admin, u.ID, SCIMUserPatch{Provider: "idp", ExternalID: new("e1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE users SET oauth = '{"idp":{"sub":"s"}}'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSCIMGroup(ctx, admin, Group{Name: "g"}, "idp", "ge", []string{u.ID}); err != nil {
		t.Fatal(err)
	}
	attrs := []string{"id", "username", "emails", "emails.value", "emails.type", "emails.primary", "displayname",
		"name.formatted", "name.givenname", "name.familyname", "active", "meta.created", "meta.lastmodified",
		"externalid", "groups", "groups.value", "groups.display", "members", "members.value", "members.display", "nope"}
	ops := []string{"eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le", "pr", "xx"}
	values := []any{"x", "", "2020-01-01T00:00:00.5Z", true, 1.5, nil}
	for _, a := range attrs {
		for _, op := range ops {
			for _, v := range values {
				f := SCIMNot{X: SCIMLogic{Op: "or", Left: SCIMCompare{Attr: a, Op: op, Value: v}, Right: SCIMCompare{Attr: "id", Op: "pr"}}}
				q := SCIMQuery{Filter: f, Provider: "idp", Limit: 10}
				if _, _, err := s.SCIMUsers(ctx, admin, q); err != nil && !errors.Is(err, ErrInvalidFilter) {
					t.Errorf("users %s %s %v: %v", a, op, v, err)
				}
				if _, _, err := s.SCIMGroups(ctx, admin, q); err != nil && !errors.Is(err, ErrInvalidFilter) {
					t.Errorf("groups %s %s %v: %v", a, op, v, err)
				}
			}
		}
	}
}

// externalId falls back to the OAuth subject under the same provider name,
// which links accounts made by OAuth sign-in to the provider's records.
func TestSCIMExternalIDFallsBackToOAuthSub(t *testing.T) {
	s := usersTestStore(t)
	ctx := context.Background()
	_, admin := mustUser(t, s, "a@example.com", "Admin", "user")
	u, _ := mustUser(t, s, "o@example.com", "OAuth User", "user")
	if _, err := s.write.ExecContext(ctx, `UPDATE users SET oauth = '{"idp":{"sub":"sub-1"}}' WHERE id = ?`, u.ID); err != nil {
		t.Fatal(err)
	}
	q := SCIMQuery{Filter: SCIMCompare{Attr: "externalid", Op: "eq", Value: "sub-1"}, Provider: "idp", Limit: 10}
	rows, total, err := s.SCIMUsers(ctx, admin, q)
	if err != nil || total != 1 || rows[0].ID != u.ID {
		t.Fatalf("fallback: %v %d %v", rows, total, err)
	}
	// Once the provider's own id is stored, it is what matches.
	if _, err := s.UpdateSCIMUser(ctx, admin, u.ID, SCIMUserPatch{Provider: "idp", ExternalID: new("scim-1")}); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.SCIMUsers(ctx, admin, q); total != 0 {
		t.Fatalf("sub still matches: %d", total)
	}
	q.Filter = SCIMCompare{Attr: "externalid", Op: "eq", Value: "scim-1"}
	if _, total, _ := s.SCIMUsers(ctx, admin, q); total != 1 {
		t.Fatalf("scim id: %d", total)
	}
	// Only admins see anything.
	if _, total, _ := s.SCIMUsers(ctx, Actor{UserID: u.ID, Role: "user"}, q); total != 0 {
		t.Fatalf("non-admin saw %d", total)
	}
	if _, err := s.CreateSCIMUser(ctx, Actor{Role: "user"}, SCIMNewUser{Email: "x@example.com", Name: "x"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("non-admin create: %v", err)
	}
}
