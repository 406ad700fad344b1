package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"hearth/store"
)

// Store is what the queue needs of the store.
type Store interface {
	GetFile(ctx context.Context, actor store.Actor, id string, withContent bool) (store.File, error)
	OpenFileContent(ctx context.Context, actor store.Actor, id string) (*store.FileContent, error)
	SetFileResult(ctx context.Context, actor store.Actor, id, content, failMsg string) error
	PendingFiles(ctx context.Context) ([]store.PendingFile, error)
	DeleteIncompleteFiles(ctx context.Context, before time.Time) (int64, error)
}

// Indexer is the seam for the next stage: chunk the extracted text, embed
// the chunks and store them in the file's vector collection. An error
// fails the file with its message. Not implemented yet: with a nil Indexer
// a file is completed once its text is extracted.
type Indexer interface {
	IndexFile(ctx context.Context, f store.File, text string) error
}

// Options configure a Queue.
type Options struct {
	Store   Store
	Indexer Indexer // nil: extraction only
	Workers int     // files processed at once; <= 0 means 2
	// Timeout bounds one file's processing; <= 0 means 10 minutes.
	Timeout time.Duration
	Log     *slog.Logger
	// Context ends the queue: running files stop (and stay pending), no
	// new ones start. Required.
	Context context.Context
}

// Job is one file to process, on behalf of its owner.
type Job struct {
	FileID string
	Owner  store.Actor
}

// Queue processes files with a bounded number of workers. Background
// workers are goroutines that exist only while jobs are waiting.
type Queue struct {
	o   Options
	sem chan struct{} // one token per file being processed

	mu      sync.Mutex
	waiting []Job
	workers int           // background worker goroutines alive
	busy    int           // workers + foreground calls running
	idle    chan struct{} // closed while busy == 0
	changed chan struct{} // closed and replaced on every status change
}

// New builds a queue; nothing runs until Submit, Process or Start.
func New(o Options) *Queue {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	idle := make(chan struct{})
	close(idle)
	return &Queue{o: o, sem: make(chan struct{}, o.Workers), idle: idle, changed: make(chan struct{})}
}

// Start removes uploads a crash left incomplete and queues the files whose
// processing had not finished.
func (q *Queue) Start(ctx context.Context) error {
	if n, err := q.o.Store.DeleteIncompleteFiles(ctx, time.Now().Add(-time.Hour)); err != nil {
		return err
	} else if n > 0 {
		q.o.Log.Info("removed incomplete uploads", slog.Int64("count", n))
	}
	pending, err := q.o.Store.PendingFiles(ctx)
	if err != nil {
		return err
	}
	for _, p := range pending {
		q.Submit(Job{FileID: p.ID, Owner: store.Actor{UserID: p.UserID, Role: "user"}})
	}
	return nil
}

// Changes returns a channel that is closed at the next status change of
// any file. Take it before reading a status, then wait on it.
func (q *Queue) Changes() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// Notify announces a status change made elsewhere (a deleted file).
func (q *Queue) Notify() {
	q.mu.Lock()
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

// enter / leave count running work for Wait.
func (q *Queue) enter() {
	if q.busy == 0 {
		q.idle = make(chan struct{})
	}
	q.busy++
}

func (q *Queue) leave() {
	q.busy--
	if q.busy == 0 {
		close(q.idle)
	}
}

// Submit queues a file for background processing. After the queue's
// Context ended it does nothing (the file stays pending for Start).
func (q *Queue) Submit(j Job) {
	if q.o.Context.Err() != nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, j)
	if q.workers < q.o.Workers {
		q.workers++
		q.enter()
		go q.work()
	}
}

// work runs waiting jobs until none is left or the queue ends.
func (q *Queue) work() {
	for {
		q.mu.Lock()
		if len(q.waiting) == 0 || q.o.Context.Err() != nil {
			q.workers--
			q.leave()
			q.mu.Unlock()
			return
		}
		j := q.waiting[0]
		q.waiting[0] = Job{}
		q.waiting = q.waiting[1:]
		q.mu.Unlock()
		if err := q.run(q.o.Context, j); err != nil && q.o.Context.Err() == nil {
			q.o.Log.Warn("file processing failed", slog.String("file_id", j.FileID), slog.Any("err", err))
		}
	}
}

// Process runs one file in the caller's goroutine (an upload with
// process_in_background=false), sharing the worker limit, and returns
// when its status is final. If the caller's ctx ends first (the client
// left), the file is handed to the background workers instead.
func (q *Queue) Process(ctx context.Context, j Job) error {
	q.mu.Lock()
	q.enter()
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.leave()
		q.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(q.o.Context, cancel)
	defer stop()
	err := q.run(ctx, j)
	if err != nil && ctx.Err() != nil && q.o.Context.Err() == nil {
		q.Submit(j)
	}
	return err
}

// Wait returns once no file is being processed; call it after the
// queue's Context was cancelled, before closing the store.
func (q *Queue) Wait(ctx context.Context) error {
	q.mu.Lock()
	idle := q.idle
	q.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run processes one file under a worker token: extract, index, record
// the result. A cancelled context leaves the file pending.
func (q *Queue) run(ctx context.Context, j Job) error {
	select {
	case q.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-q.sem }()
	ctx, cancel := context.WithTimeout(ctx, q.o.Timeout)
	defer cancel()
	text, f, err := q.extract(ctx, j)
	if err == nil && q.o.Indexer != nil {
		err = q.o.Indexer.IndexFile(ctx, f, text)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err // shutting down or the caller left: stays pending
	}
	msg := ""
	if err != nil {
		msg = failureMessage(err)
	}
	// The result is recorded even when ctx just ended.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer wcancel()
	serr := q.o.Store.SetFileResult(wctx, j.Owner, j.FileID, text, msg)
	q.Notify()
	if serr != nil && !errors.Is(serr, store.ErrNotFound) {
		return serr
	}
	return err
}

func (q *Queue) extract(ctx context.Context, j Job) (string, store.File, error) {
	f, err := q.o.Store.GetFile(ctx, j.Owner, j.FileID, false)
	if err != nil {
		return "", f, err
	}
	var meta struct {
		ContentType string `json:"content_type"`
	}
	json.Unmarshal(f.Meta, &meta)
	src, err := q.o.Store.OpenFileContent(ctx, j.Owner, j.FileID)
	if err != nil {
		return "", f, err
	}
	text, err := Extract(ctx, f.Filename, meta.ContentType, src)
	return text, f, err
}

// failureMessage is the status error a client sees: extractor messages are
// meant for users; anything else (a store error) is not shown.
func failureMessage(err error) string {
	var ue *UnsupportedError
	switch {
	case errors.As(err, &ue):
		return ue.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "Processing took too long and was stopped"
	case errors.Is(err, errMalformedPDF), errors.Is(err, errMalformedDOCX), errors.Is(err, ErrEmptyContent):
		return err.Error()
	case errors.As(err, new(*EmbedError)):
		return err.Error()
	}
	return "The file could not be processed"
}
