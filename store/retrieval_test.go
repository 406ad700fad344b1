package store

import (
	"context"
	"errors"
	"testing"
)

func TestRetrievalReads(t *testing.T) {
	s, admin, a, b := filesStore(t)
	ctx := context.Background()
	admin.Role = "admin"
	putFile(t, s, a, "done", []byte("x"))
	putFile(t, s, a, "pending", []byte("x"))
	putFile(t, s, a, "failed", []byte("x"))
	putFile(t, s, b, "bobs", []byte("x"))
	if err := s.SetFileResult(ctx, a, "done", "the text", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFileResult(ctx, a, "failed", "", "boom"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFileResult(ctx, b, "bobs", "bob's text", ""); err != nil {
		t.Fatal(err)
	}
	s.write.ExecContext(ctx, `UPDATE files SET status = 'pending' WHERE id = 'pending'`)

	ids := func(fs []File) (out []string) {
		for _, f := range fs {
			out = append(out, f.ID)
		}
		return out
	}
	fs, err := s.RetrievalFiles(ctx, a, []string{"bobs", "pending", "failed", "done", "missing", "done"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(fs); len(got) != 1 || got[0] != "done" || *fs[0].Content != "the text" {
		t.Fatalf("a got %v", got)
	}
	// An admin reads every processed file; order follows the request.
	fs, _ = s.RetrievalFiles(ctx, admin, []string{"bobs", "done"})
	if got := ids(fs); len(got) != 2 || got[0] != "bobs" || got[1] != "done" {
		t.Fatalf("admin got %v", got)
	}

	// Collections: bob's collection is invisible to a until shared.
	k, err := s.CreateKnowledge(ctx, b, Knowledge{Name: "Bob's notes"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddKnowledgeFile(ctx, b, k.ID, "bobs"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RetrievalKnowledge(ctx, a, k.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unshared collection: %v", err)
	}
	if _, err := s.RetrievalKnowledge(ctx, a, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing collection: %v", err)
	}
	got, err := s.RetrievalKnowledge(ctx, admin, k.ID)
	if err != nil || len(got.Files) != 1 || *got.Files[0].Content != "bob's text" || got.Name != "Bob's notes" {
		t.Fatalf("admin: %+v %v", got, err)
	}
	if _, err := s.UpdateKnowledge(ctx, b, k.ID, KnowledgePatch{Grants: &[]Grant{{PrincipalType: PrincipalUser, PrincipalID: a.UserID, Permission: PermRead}}}); err != nil {
		t.Fatal(err)
	}
	got, err = s.RetrievalKnowledge(ctx, a, k.ID)
	if err != nil || len(got.Files) != 1 {
		t.Fatalf("shared: %+v %v", got, err)
	}
	// A file of the collection being reprocessed is left out.
	s.write.ExecContext(ctx, `UPDATE files SET status = 'pending' WHERE id = 'bobs'`)
	got, _ = s.RetrievalKnowledge(ctx, a, k.ID)
	if len(got.Files) != 0 {
		t.Fatalf("pending file used: %+v", got.Files)
	}
}
