package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hearth/store"
)

func openStore(t *testing.T) (*store.Store, store.Actor) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	u, err := st.CreateUser(ctx, store.NewUser{Email: "a@example.com", Name: "A", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	return st, store.Actor{UserID: u.ID, Role: u.Role}
}

// pendingFile stores a file waiting for processing.
func pendingFile(t *testing.T, st *store.Store, a store.Actor, id, name, content string) {
	t.Helper()
	ctx := context.Background()
	up, err := st.NewFileUpload(ctx, a, id, name, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Write(ctx, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	if _, err := up.Commit(ctx, []byte(`{"content_type":""}`), store.FilePending); err != nil {
		t.Fatal(err)
	}
}

func waitStatus(t *testing.T, q *Queue, st *store.Store, a store.Actor, id, want string) store.File {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ch := q.Changes()
		f, err := st.GetFile(context.Background(), a, id, true)
		if err != nil {
			t.Fatal(err)
		}
		if f.Status == want {
			return f
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s: status %q, want %q", id, f.Status, want)
		}
	}
}

func TestQueueBackground(t *testing.T) {
	st, a := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := New(Options{Store: st, Workers: 2, Context: ctx})
	for i, name := range []string{"a.txt", "b.md", "c.bin"} {
		content := "text of " + name
		if name == "c.bin" {
			content = "\x00\x01binary"
		}
		id := string(rune('a' + i))
		pendingFile(t, st, a, id, name, content)
		q.Submit(Job{FileID: id, Owner: a})
	}
	if f := waitStatus(t, q, st, a, "a", store.FileCompleted); *f.Content != "text of a.txt" || f.Hash == "" {
		t.Fatalf("a: %+v", f)
	}
	waitStatus(t, q, st, a, "b", store.FileCompleted)
	if f := waitStatus(t, q, st, a, "c", store.FileFailed); f.Error != "File type application/octet-stream is not supported for processing" {
		t.Fatalf("c: %q", f.Error)
	}
	cancel()
	if err := q.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// blockingIndexer holds every file until released, to observe the worker
// limit and shutdown.
type blockingIndexer struct {
	mu      sync.Mutex
	running int
	peak    int
	started chan string
	release chan struct{}
}

func (b *blockingIndexer) IndexFile(ctx context.Context, f store.File, text string) error {
	b.mu.Lock()
	b.running++
	b.peak = max(b.peak, b.running)
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.running--; b.mu.Unlock() }()
	b.started <- f.ID
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestQueueBoundAndShutdown(t *testing.T) {
	st, a := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	ix := &blockingIndexer{started: make(chan string, 10), release: make(chan struct{})}
	q := New(Options{Store: st, Workers: 2, Context: ctx, Indexer: ix})
	for _, id := range []string{"f1", "f2", "f3", "f4"} {
		pendingFile(t, st, a, id, id+".txt", "x")
		q.Submit(Job{FileID: id, Owner: a})
	}
	<-ix.started
	<-ix.started
	select {
	case id := <-ix.started:
		t.Fatalf("a third file (%s) started with 2 workers", id)
	case <-time.After(50 * time.Millisecond):
	}
	ix.release <- struct{}{} // one finishes; the next starts
	<-ix.started
	// Shutdown: running files stop and stay pending.
	cancel()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := q.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	if ix.peak > 2 {
		t.Fatalf("peak %d workers", ix.peak)
	}
	pending, err := st.PendingFiles(context.Background())
	if err != nil || len(pending) != 3 {
		t.Fatalf("pending after shutdown: %v %v", pending, err)
	}
	// The next start resumes them.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	close(ix.release)
	q2 := New(Options{Store: st, Workers: 2, Context: ctx2, Indexer: ix})
	go func() {
		for range ix.started {
		}
	}()
	if err := q2.Start(ctx2); err != nil {
		t.Fatal(err)
	}
	for _, p := range pending {
		waitStatus(t, q2, st, a, p.ID, store.FileCompleted)
	}
	cancel2()
	q2.Wait(context.Background())
	close(ix.started)
}

func TestQueueForeground(t *testing.T) {
	st, a := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := New(Options{Store: st, Context: ctx, Indexer: failingIndexer{}})
	pendingFile(t, st, a, "f", "f.txt", "hello")
	if err := q.Process(context.Background(), Job{FileID: "f", Owner: a}); err == nil {
		t.Fatal("indexer failure not returned")
	}
	f, _ := st.GetFile(context.Background(), a, "f", true)
	if f.Status != store.FileFailed || f.Error != "The file could not be processed" || f.Hash != "" {
		t.Fatalf("%+v", f)
	}
	// A deleted file is no error.
	if err := q.Process(context.Background(), Job{FileID: "gone", Owner: a}); err != nil {
		t.Fatal(err)
	}
}

type failingIndexer struct{}

func (failingIndexer) IndexFile(context.Context, store.File, string) error {
	return errors.New("embedding service down: secret detail")
}
