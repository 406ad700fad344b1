package chat

import (
	"context"
	"errors"
	"slices"
	"sync"

	"hearth/llm"
)

// ErrStopped is the cancellation cause of a task stopped through the task
// endpoints (COMPAT.md §4.10).
var ErrStopped = errors.New("chat: task stopped")

// Tasks is the registry of server-side generations (Open WebUI's tasks.py
// without Redis): each task has an id, the chat it writes to (its "item")
// and the user it belongs to, and runs on its own context — derived from the
// pipeline's base context, never from a request — so it survives the client
// going away and ends only when it finishes, is stopped, or the server shuts
// down.
type Tasks struct {
	base context.Context

	mu     sync.Mutex
	byID   map[string]*Task
	byChat map[string][]*Task
	wg     sync.WaitGroup
}

// Task is one running generation.
type Task struct {
	ID     string
	ChatID string
	UserID string

	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Done is closed when the task has finished (its final write made).
func (t *Task) Done() <-chan struct{} { return t.done }

// NewTasks returns a registry whose tasks run on contexts derived from base
// (cancelled at shutdown).
func NewTasks(base context.Context) *Tasks {
	if base == nil {
		base = context.Background()
	}
	return &Tasks{base: base, byID: map[string]*Task{}, byChat: map[string][]*Task{}}
}

// Start registers a task for chatID of userID and runs fn in a new
// goroutine; the task leaves the registry when fn returns.
func (ts *Tasks) Start(chatID, userID string, fn func(ctx context.Context)) *Task {
	ctx, cancel := context.WithCancelCause(ts.base)
	t := &Task{ID: llm.NewUUID(), ChatID: chatID, UserID: userID, cancel: cancel, done: make(chan struct{})}
	ts.mu.Lock()
	ts.byID[t.ID] = t
	ts.byChat[chatID] = append(ts.byChat[chatID], t)
	ts.wg.Add(1)
	ts.mu.Unlock()
	go func() {
		defer ts.wg.Done()
		defer close(t.done)
		defer cancel(nil)
		defer ts.remove(t)
		fn(ctx)
	}()
	return t
}

func (ts *Tasks) remove(t *Task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.byID, t.ID)
	list := slices.DeleteFunc(ts.byChat[t.ChatID], func(x *Task) bool { return x == t })
	if len(list) == 0 {
		delete(ts.byChat, t.ChatID)
	} else {
		ts.byChat[t.ChatID] = list
	}
}

// List returns the ids of every running task (admin view).
func (ts *Tasks) List() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ids := make([]string, 0, len(ts.byID))
	for id := range ts.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ChatTasks returns the ids of chatID's running tasks that userID may see:
// all of them when all is true (an admin), else the user's own.
func (ts *Tasks) ChatTasks(chatID, userID string, all bool) []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ids := []string{}
	for _, t := range ts.byChat[chatID] {
		if all || t.UserID == userID {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// Get returns a running task.
func (ts *Tasks) Get(id string) (*Task, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.byID[id]
	return t, ok
}

// Stop cancels a task with ErrStopped and waits until it has made its final
// write, or ctx ends. It reports whether the task was running.
func (ts *Tasks) Stop(ctx context.Context, id string) bool {
	t, ok := ts.Get(id)
	if !ok {
		return false
	}
	t.cancel(ErrStopped)
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	return true
}

// StopChat stops chatID's tasks that userID may stop (all of them when all
// is true) and waits for them; it returns how many were stopped.
func (ts *Tasks) StopChat(ctx context.Context, chatID, userID string, all bool) int {
	ts.mu.Lock()
	var list []*Task
	for _, t := range ts.byChat[chatID] {
		if all || t.UserID == userID {
			list = append(list, t)
		}
	}
	ts.mu.Unlock()
	for _, t := range list {
		t.cancel(ErrStopped)
	}
	for _, t := range list {
		select {
		case <-t.done:
		case <-ctx.Done():
		}
	}
	return len(list)
}

// Wait blocks until every task has finished or ctx ends (shutdown; cancel
// the base context first to stop them).
func (ts *Tasks) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { ts.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
