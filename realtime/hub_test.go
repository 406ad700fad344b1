package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"hearth/store"
)

// fakeAuth maps tokens to users; "pending" is refused as forbidden.
type fakeAuth struct {
	mu     sync.Mutex
	tokens map[string]string
}

func (a *fakeAuth) Authenticate(_ context.Context, _ *http.Request, token string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if token == "pending" {
		return "", ErrForbidden
	}
	if u, ok := a.tokens[token]; ok {
		return u, nil
	}
	return "", ErrUnauthenticated
}

func (a *fakeAuth) revoke(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.tokens, token)
}

// clock is an injectable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type testHub struct {
	*Hub
	url   string
	clock *clock
	auth  *fakeAuth
}

// newTestHub serves h at an httptest server; the handshake header
// X-Test-User pre-authenticates (as the server does with a cookie).
func newTestHub(t *testing.T, o Options) *testHub {
	t.Helper()
	ck := &clock{now: time.Unix(1_800_000_000, 0)}
	fa := &fakeAuth{tokens: map[string]string{"tok-a": "alice", "tok-a2": "alice", "tok-b": "bob"}}
	if o.Now == nil {
		o.Now = ck.Now
	}
	if o.Auth == nil {
		o.Auth = fa
	}
	if o.SweepEvery == 0 {
		o.SweepEvery = time.Hour // tests call sweep themselves
	}
	h := New(o)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, tok := r.Header.Get("X-Test-User"), ""
		if u != "" {
			tok = "tok-a"
		}
		if err := h.ServeWS(w, r, u, tok); err != nil && !errors.Is(err, ErrClosed) {
			t.Logf("ServeWS: %v", err)
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { h.Close() })
	return &testHub{Hub: h, url: "ws" + strings.TrimPrefix(ts.URL, "http"), clock: ck, auth: fa}
}

type frame struct {
	Type      string            `json:"type"`
	Seq       int64             `json:"seq"`
	UserID    string            `json:"user_id"`
	ChatID    string            `json:"chat_id"`
	MessageID string            `json:"message_id"`
	Data      Data              `json:"data"`
	Found     bool              `json:"found"`
	Truncated bool              `json:"truncated"`
	Done      bool              `json:"done"`
	Since     int64             `json:"since"`
	Events    []json.RawMessage `json:"events"`
	Detail    string            `json:"detail"`
}

type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, url string, header http.Header) *client {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { ws.Close() })
	return &client{t: t, ws: ws}
}

func (c *client) send(v any) {
	c.t.Helper()
	if err := c.ws.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next frame, failing after a deadline.
func (c *client) read() frame {
	c.t.Helper()
	f, err := c.tryRead()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return f
}

func (c *client) tryRead() (frame, error) {
	c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		return frame{}, err
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		c.t.Fatalf("frame %s: %v", b, err)
	}
	return f, nil
}

// expectClose reads until the connection ends and returns the close code
// (-1 when it ended without a close frame); frames read on the way fail the
// test unless allowFrames.
func (c *client) expectClose(allowFrames bool) (int, string) {
	c.t.Helper()
	for {
		f, err := c.tryRead()
		if err == nil {
			if !allowFrames {
				c.t.Fatalf("got frame %+v, want the connection closed", f)
			}
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatalf("connection not closed: %v", err)
		}
		return -1, err.Error()
	}
}

// auth sends an auth frame and waits for ready.
func (c *client) auth(token string) {
	c.t.Helper()
	c.send(map[string]string{"type": "auth", "token": token})
	if f := c.read(); f.Type != "ready" {
		c.t.Fatalf("after auth got %+v", f)
	}
}

func status(n int) Event {
	return Event{ChatID: "c1", MessageID: "m1", Data: Data{Type: "status", Data: map[string]any{"description": fmt.Sprint("step ", n)}}}
}

func TestAuthenticationAndRouting(t *testing.T) {
	h := newTestHub(t, Options{})
	a1 := dial(t, h.url, http.Header{"X-Test-User": {"alice"}}) // handshake credential
	if f := a1.read(); f.Type != "ready" || f.UserID != "alice" {
		t.Fatalf("ready: %+v", f)
	}
	a2 := dial(t, h.url, nil)
	a2.auth("tok-a2")
	b := dial(t, h.url, nil)
	b.auth("tok-b")

	h.Emit("alice", status(1))
	h.Emit("bob", Event{Data: Data{Type: "notification", Data: map[string]string{"content": "marker"}}})
	for _, c := range []*client{a1, a2} {
		f := c.read()
		if f.Type != "events" || f.Seq != 1 || f.ChatID != "c1" || f.MessageID != "m1" || f.Data.Type != "status" {
			t.Fatalf("alice got %+v", f)
		}
	}
	// bob's first frame is his marker: alice's event never reached him.
	if f := b.read(); f.Data.Type != "notification" || f.Seq != 0 {
		t.Fatalf("bob got %+v", f)
	}
	if n := h.ConnCount("alice"); n != 2 {
		t.Fatalf("alice connections %d", n)
	}

	// Heartbeat is answered and marks activity.
	a2.send(map[string]string{"type": "heartbeat"})
	if f := a2.read(); f.Type != "heartbeat" {
		t.Fatalf("heartbeat answer %+v", f)
	}
	// Unknown frames get an error frame, the connection stays.
	a2.send(map[string]string{"type": "nope"})
	if f := a2.read(); f.Type != "error" || !strings.Contains(f.Detail, "nope") {
		t.Fatalf("error frame %+v", f)
	}
	// Re-auth as another user is refused.
	a2.send(map[string]string{"type": "auth", "token": "tok-b"})
	if code, _ := a2.expectClose(false); code != CloseUnauthenticated {
		t.Fatalf("re-auth as bob: close %d", code)
	}
}

func TestRefusals(t *testing.T) {
	h := newTestHub(t, Options{AuthTimeout: 50 * time.Millisecond})
	cases := []struct {
		name  string
		first any // nil: send nothing (the auth timeout closes it)
		code  int
	}{
		{"silent", nil, CloseUnauthenticated},
		{"bad token", map[string]string{"type": "auth", "token": "forged"}, CloseUnauthenticated},
		{"empty token", map[string]string{"type": "auth"}, CloseUnauthenticated},
		{"pending", map[string]string{"type": "auth", "token": "pending"}, CloseForbidden},
		{"frame before auth", map[string]any{"type": "resume", "message_id": "m1", "since": 0}, CloseUnauthenticated},
		{"not JSON", "{{", CloseUnauthenticated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, h.url, nil)
			switch v := tc.first.(type) {
			case nil:
			case string:
				c.ws.WriteMessage(websocket.TextMessage, []byte(v))
			default:
				c.send(v)
			}
			h.Emit("alice", status(1))
			if code, _ := c.expectClose(false); code != tc.code {
				t.Fatalf("close code %d, want %d", code, tc.code)
			}
		})
	}
}

func TestRecheckClosesRevoked(t *testing.T) {
	h := newTestHub(t, Options{})
	c := dial(t, h.url, nil)
	c.auth("tok-a")
	keep := dial(t, h.url, nil)
	keep.auth("tok-a2")
	h.auth.revoke("tok-a")
	h.sweep() // not yet due
	h.clock.advance(time.Minute)
	h.sweep()
	if code, _ := c.expectClose(false); code != CloseUnauthenticated {
		t.Fatalf("revoked: close %d", code)
	}
	h.Emit("alice", status(1))
	if f := keep.read(); f.Type != "events" {
		t.Fatalf("valid connection got %+v", f)
	}
}

func TestCatchUp(t *testing.T) {
	h := newTestHub(t, Options{})
	live := dial(t, h.url, nil)
	live.auth("tok-a")
	for i := 1; i <= 100; i++ {
		h.Emit("alice", Event{ChatID: "c1", MessageID: "m1", Data: Data{Type: "chat:message:delta", Data: map[string]string{"content": fmt.Sprint(i, " ")}}})
	}
	for i := int64(1); i <= 100; i++ {
		if f := live.read(); f.Seq != i {
			t.Fatalf("live frame %d has seq %d", i, f.Seq)
		}
	}
	late := dial(t, h.url, nil)
	late.auth("tok-a")
	late.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": 40})
	f := late.read()
	if f.Type != "resumed" || !f.Found || f.Truncated || f.Done || f.Seq != 100 || f.Since != 40 {
		t.Fatalf("resumed %+v", f)
	}
	if len(f.Events) != 60 {
		t.Fatalf("%d events, want 60", len(f.Events))
	}
	for i, raw := range f.Events {
		var e frame
		json.Unmarshal(raw, &e)
		if e.Seq != int64(41+i) || e.Type != "events" || e.Data.Type != "chat:message:delta" {
			t.Fatalf("event %d: %s", i, raw)
		}
	}
	// Another user's resume of the same ids finds nothing.
	bob := dial(t, h.url, nil)
	bob.auth("tok-b")
	bob.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": 0})
	if f := bob.read(); f.Found || len(f.Events) != 0 || f.Seq != 0 {
		t.Fatalf("bob's resume %+v", f)
	}

	// Done, then the grace period: kept until it ends, then dropped; the
	// sequence continues afterwards.
	h.Emit("alice", Event{ChatID: "c1", MessageID: "m1", Data: Data{Type: "chat:completion", Data: map[string]any{"done": true, "content": "all"}}})
	h.clock.advance(time.Minute)
	h.sweep()
	late.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": 99})
	for {
		if f = late.read(); f.Type == "resumed" {
			break
		}
	}
	if !f.Found || !f.Done || len(f.Events) != 2 || f.Seq != 101 {
		t.Fatalf("within grace %+v", f)
	}
	h.clock.advance(time.Minute)
	h.sweep()
	late.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": 99})
	if f = late.read(); f.Type != "resumed" || f.Found || len(f.Events) != 0 || f.Seq != 101 {
		t.Fatalf("after grace %+v", f)
	}
	if n := h.total.Load(); n != 0 {
		t.Fatalf("retained bytes %d after drop", n)
	}
	h.Emit("alice", status(2))
	for {
		if f = late.read(); f.Type == "events" {
			break
		}
	}
	if f.Seq != 102 {
		t.Fatalf("sequence after drop restarted at %d", f.Seq)
	}
	// The revived message says what it lost; a counter from a previous
	// server run (above the last seq) is answered as since 0.
	for _, since := range []int64{0, 500} {
		late.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": since})
		if f = late.read(); !f.Found || !f.Truncated || f.Since != 0 || f.Seq != 102 || len(f.Events) != 1 {
			t.Fatalf("resume %d after revival: %+v", since, f)
		}
	}
	// The tombstone is forgotten after TombTTL; idle buffers are dropped.
	h.clock.advance(2 * time.Hour)
	h.sweep() // idle → dropped
	h.clock.advance(2 * time.Hour)
	h.sweep() // tombstone → forgotten
	h.bufMu.Lock()
	n := len(h.buffers)
	h.bufMu.Unlock()
	if n != 0 {
		t.Fatalf("%d buffers left", n)
	}
}

func TestSlowConsumerDoesNotBlock(t *testing.T) {
	h := newTestHub(t, Options{SendQueue: 64})
	slow := dial(t, h.url, nil)
	slow.auth("tok-a") // then never reads
	big := json.RawMessage(`{"content":"` + strings.Repeat("x", 4096) + `"}`)
	start := time.Now()
	for i := 0; i < 10_000; i++ {
		h.Emit("alice", Event{ChatID: "c", Data: Data{Type: "notification", Data: big}})
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("10k emits took %v", d)
	}
	if code, text := slow.expectClose(true); code != -1 && code != websocket.CloseAbnormalClosure {
		t.Fatalf("slow connection closed with %d %s", code, text)
	}
}

func TestReplicasShareEvents(t *testing.T) {
	bus := NewLocalPubSub()
	a := newTestHub(t, Options{PubSub: bus})
	b := newTestHub(t, Options{PubSub: bus})
	cb := dial(t, b.url, nil)
	cb.auth("tok-a")
	a.Emit("alice", status(1))
	a.Emit("alice", status(2))
	for i := int64(1); i <= 2; i++ {
		if f := cb.read(); f.Seq != i {
			t.Fatalf("replica got %+v", f)
		}
	}
	cb.send(map[string]any{"type": "resume", "chat_id": "c1", "message_id": "m1", "since": 1})
	if f := cb.read(); !f.Found || len(f.Events) != 1 || f.Seq != 2 {
		t.Fatalf("resume on replica %+v", f)
	}
}

func TestCloseEndsConnections(t *testing.T) {
	h := newTestHub(t, Options{})
	c := dial(t, h.url, nil)
	c.auth("tok-a")
	h.Close()
	if code, _ := c.expectClose(false); code != CloseGoingAway {
		t.Fatalf("close code %d", code)
	}
	h.Emit("alice", status(1)) // no panic, dropped
	if err := h.ServeWS(httptest.NewRecorder(), httptest.NewRequest("GET", "/ws", nil), "", ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("ServeWS after Close: %v", err)
	}
}

// fakeStore records edits.
type fakeStore struct {
	mu    sync.Mutex
	edits []store.MessageEdit
	err   error
}

func (s *fakeStore) EditMessage(_ context.Context, a store.Actor, chatID, msgID string, e store.MessageEdit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.UserID != "alice" || a.IsAdmin() {
		return fmt.Errorf("actor %+v", a)
	}
	s.edits = append(s.edits, e)
	return s.err
}

func TestPersistAndEmit(t *testing.T) {
	st := &fakeStore{}
	h := newTestHub(t, Options{Store: st})
	c := dial(t, h.url, nil)
	c.auth("tok-a")
	ctx := context.Background()
	ev := Event{ChatID: "c1", MessageID: "m1", Data: Data{Type: "message", Data: map[string]string{"content": "x"}}}
	if err := h.PersistAndEmit(ctx, "alice", ev); err != nil {
		t.Fatal(err)
	}
	if len(st.edits) != 1 || st.edits[0].AppendContent != "x" || !st.edits[0].MoveCurrent {
		t.Fatalf("edits %+v", st.edits)
	}
	if f := c.read(); f.Data.Type != "message" || f.Seq != 1 {
		t.Fatalf("emitted %+v", f)
	}
	// Emit-only types, local chats and missing messages write nothing.
	for _, ev := range []Event{
		{ChatID: "c1", MessageID: "m1", Data: Data{Type: "chat:message:delta", Data: map[string]string{"content": "x"}}},
		{ChatID: "local:abc", MessageID: "m1", Data: Data{Type: "message", Data: map[string]string{"content": "x"}}},
		{ChatID: "c1", MessageID: "", Data: Data{Type: "message", Data: map[string]string{"content": "x"}}},
	} {
		if err := h.PersistAndEmit(ctx, "alice", ev); err != nil {
			t.Fatal(err)
		}
		c.read()
	}
	if len(st.edits) != 1 {
		t.Fatalf("emit-only wrote: %+v", st.edits[1:])
	}
	st.err = store.ErrNotFound
	if err := h.PersistAndEmit(ctx, "alice", ev); err != nil {
		t.Fatalf("missing message: %v", err)
	}
	st.err = errors.New("disk full")
	if err := h.PersistAndEmit(ctx, "alice", ev); err == nil {
		t.Fatal("store error not returned")
	}
	c.read()
	if f := c.read(); f.Data.Type != "message" { // emitted even though the write failed
		t.Fatalf("after failed write %+v", f)
	}
}
