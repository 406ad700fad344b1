package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func filesStore(t *testing.T) (*Store, Actor, Actor, Actor) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var as []Actor
	for _, e := range []string{"admin@x.org", "a@x.org", "b@x.org"} {
		u, err := s.CreateUser(ctx, NewUser{Email: e, Name: e, Role: "user"})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, Actor{UserID: u.ID, Role: u.Role})
	}
	return s, as[0], as[1], as[2]
}

func putFile(t *testing.T, s *Store, a Actor, id string, data []byte) File {
	t.Helper()
	ctx := context.Background()
	up, err := s.NewFileUpload(ctx, a, id, id+".bin", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Write(ctx, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	f, err := up.Commit(ctx, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFilePiecesRoundTrip(t *testing.T) {
	s, _, a, b := filesStore(t)
	ctx := context.Background()
	data := make([]byte, 2*PieceSize+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	f := putFile(t, s, a, "f", data)
	if f.Size != int64(len(data)) {
		t.Fatalf("size %d", f.Size)
	}
	var pieces int
	s.read.QueryRowContext(ctx, `SELECT count(*) FROM file_pieces WHERE file_id = 'f'`).Scan(&pieces)
	if pieces != 3 {
		t.Fatalf("%d pieces", pieces)
	}
	c, err := s.OpenFileContent(ctx, a, "f")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	// ReadAt across a piece boundary, and past the end.
	buf := make([]byte, 10)
	if n, err := c.ReadAt(buf, PieceSize-5); n != 10 || err != nil || !bytes.Equal(buf, data[PieceSize-5:PieceSize+5]) {
		t.Fatalf("ReadAt: %d %v", n, err)
	}
	if n, err := c.ReadAt(buf, int64(len(data))-3); n != 3 || !errors.Is(err, io.EOF) {
		t.Fatalf("ReadAt at end: %d %v", n, err)
	}
	// Another user cannot open it, nor see it.
	if _, err := s.OpenFileContent(ctx, b, "f"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other user: %v", err)
	}
	if err := s.DeleteFile(ctx, b, "f"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other user delete: %v", err)
	}
	if err := s.DeleteFile(ctx, a, "f"); err != nil {
		t.Fatal(err)
	}
	s.read.QueryRowContext(ctx, `SELECT count(*) FROM file_pieces`).Scan(&pieces)
	if pieces != 0 {
		t.Fatalf("%d pieces left after delete", pieces)
	}
}

func TestFileUploadLimitAndAbort(t *testing.T) {
	s, _, a, _ := filesStore(t)
	ctx := context.Background()
	up, err := s.NewFileUpload(ctx, a, "big", "big.bin", PieceSize+10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Write(ctx, bytes.NewReader(make([]byte, PieceSize+11))); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	// Not visible before Commit; gone after Abort, even with a cancelled context.
	if _, err := s.GetFile(ctx, a, "big", false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("uncommitted file visible: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := up.Abort(cctx); err != nil {
		t.Fatal(err)
	}
	var rows int
	s.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM files) + (SELECT count(*) FROM file_pieces)`).Scan(&rows)
	if rows != 0 {
		t.Fatalf("%d rows left", rows)
	}
	// A crashed upload is swept by age.
	up, _ = s.NewFileUpload(ctx, a, "crashed", "c.bin", 0)
	up.Write(ctx, strings.NewReader("partial"))
	if n, _ := s.DeleteIncompleteFiles(ctx, time.Now().Add(-time.Hour)); n != 0 {
		t.Fatal("a recent upload was swept")
	}
	if n, _ := s.DeleteIncompleteFiles(ctx, time.Now().Add(time.Hour)); n != 1 {
		t.Fatalf("swept %d", n)
	}
}

func TestFileReadableThroughKnowledge(t *testing.T) {
	s, admin, a, b := filesStore(t)
	ctx := context.Background()
	putFile(t, s, a, "f", []byte("text"))
	if err := s.SetFileResult(ctx, a, "f", "text", ""); err != nil {
		t.Fatal(err)
	}
	k, err := s.CreateKnowledge(ctx, a, Knowledge{Name: "K"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddKnowledgeFile(ctx, a, k.ID, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFile(ctx, b, "f", false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("private collection: %v", err)
	}
	admin.Role = "admin"
	if _, err := s.GetFile(ctx, admin, "f", false); err != nil {
		t.Fatalf("admin: %v", err)
	}
	everyone := []Grant{{PrincipalType: PrincipalUser, PrincipalID: Everyone, Permission: PermRead}}
	if _, err := s.UpdateKnowledge(ctx, a, k.ID, KnowledgePatch{Grants: &everyone}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFile(ctx, b, "f", false); err != nil {
		t.Fatalf("public collection: %v", err)
	}
	if err := s.DeleteFile(ctx, b, "f"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read grant allowed delete: %v", err)
	}
	// Deleting the collection keeps the file, and its grants go.
	if err := s.DeleteKnowledge(ctx, a, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFile(ctx, a, "f", false); err != nil {
		t.Fatal(err)
	}
	var grants int
	s.read.QueryRowContext(ctx, `SELECT count(*) FROM access_grants WHERE resource_type = 'knowledge'`).Scan(&grants)
	if grants != 0 {
		t.Fatalf("%d grants left", grants)
	}
}
