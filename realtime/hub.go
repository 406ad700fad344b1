package realtime

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/olahol/melody"

	"hearth/store"
)

// Authentication refusals an Authenticator returns; anything else is an
// internal failure (the connection is closed with CloseInternal).
var (
	ErrUnauthenticated = errors.New("realtime: invalid or expired token")
	ErrForbidden       = errors.New("realtime: account not allowed")
)

// ErrClosed is returned by ServeWS once the hub is closed.
var ErrClosed = errors.New("realtime: hub closed")

// Authenticator checks a token presented by a connection: r is the
// connection's handshake request (for headers such as a trusted e-mail
// header), token a JWT. It returns the user id, ErrUnauthenticated,
// ErrForbidden or another error.
type Authenticator interface {
	Authenticate(ctx context.Context, r *http.Request, token string) (userID string, err error)
}

// Options configures a Hub; zero values take the defaults shown.
type Options struct {
	Log    *slog.Logger
	Store  MessageStore  // persistence of the short-named types
	Auth   Authenticator // required
	PubSub PubSub        // nil: this hub alone
	Now    func() time.Time

	AuthTimeout   time.Duration // 10 s: an unauthenticated socket is closed after it
	RecheckEvery  time.Duration // 1 min: the token of a connection is verified again
	SendQueue     int           // 1024 frames per connection; overflow closes it
	Grace         time.Duration // 2 min: a finished message's events stay for catch-up
	IdleTTL       time.Duration // 1 h: a message without events (and never done) is dropped
	TombTTL       time.Duration // 1 h: a dropped message's last seq is remembered
	MaxEvents     int           // 10 000 retained events per message
	MaxBytes      int           // 8 MiB retained per message
	MaxTotalBytes int64         // 256 MiB retained over all messages
	SweepEvery    time.Duration // 10 s: how often timers above are applied

	// OnActivity is called on a client heartbeat (Open WebUI refreshes the
	// user's last activity there).
	OnActivity func(userID string)
}

// Hub owns the live connections: authentication, fan-out to every
// connection of a user, sequencing and catch-up, persistence of events.
type Hub struct {
	o     Options
	id    string
	log   *slog.Logger
	m     *melody.Melody
	unsub func()

	mu    sync.RWMutex
	users map[string]map[*conn]struct{} // authenticated connections
	conns map[*conn]struct{}            // all connections

	bufMu   sync.Mutex
	buffers map[bufKey]*buffer
	total   atomic.Int64 // retained bytes over all buffers

	closed atomic.Bool
	stop   chan struct{}
	done   chan struct{}
}

// conn is one websocket connection.
type conn struct {
	hub  *Hub
	sess *melody.Session
	nc   net.Conn // the hijacked connection, to drop a slow consumer at once
	dead atomic.Bool

	preUser, preToken string // the handshake's credential, if any

	mu        sync.Mutex
	userID    string // "" until authenticated
	token     string
	checkedAt time.Time
	timer     *time.Timer
}

const connKey = "hearth.conn"

// New builds a hub and starts its sweeper; Close stops it.
func New(o Options) *Hub {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.AuthTimeout, 10*time.Second)
	def(&o.RecheckEvery, time.Minute)
	def(&o.Grace, 2*time.Minute)
	def(&o.IdleTTL, time.Hour)
	def(&o.TombTTL, time.Hour)
	def(&o.SweepEvery, 10*time.Second)
	if o.SendQueue <= 0 {
		o.SendQueue = 1024
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 10_000
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 8 << 20
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = 256 << 20
	}
	var rb [8]byte
	rand.Read(rb[:])
	h := &Hub{
		o: o, id: hex.EncodeToString(rb[:]), log: o.Log,
		users: map[string]map[*conn]struct{}{}, conns: map[*conn]struct{}{},
		buffers: map[bufKey]*buffer{},
		stop:    make(chan struct{}), done: make(chan struct{}),
	}
	m := melody.New()
	m.Config.MessageBufferSize = o.SendQueue
	m.Config.MaxMessageSize = 16 << 10 // client frames are small; a JWT fits many times
	m.Config.WriteWait = 30 * time.Second
	// Any origin may connect: without a token frame a socket gets nothing,
	// and the handshake cookie is honoured only for same-origin pages
	// (the server decides that before calling ServeWS).
	m.Upgrader.CheckOrigin = func(*http.Request) bool { return true }
	m.HandleConnect(h.onConnect)
	m.HandleDisconnect(h.onDisconnect)
	m.HandleMessage(h.onMessage)
	m.HandleError(h.onError)
	h.m = m
	if o.PubSub != nil {
		h.unsub = o.PubSub.Subscribe(h.receive)
	}
	go h.sweeper()
	return h
}

// Close closes every connection (close code 1001) and stops the hub. Events
// emitted afterwards are dropped. It is safe to call more than once.
func (h *Hub) Close() error {
	if !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(h.stop)
	<-h.done
	if h.unsub != nil {
		h.unsub()
	}
	h.mu.RLock()
	for c := range h.conns {
		c.mu.Lock()
		if c.timer != nil {
			c.timer.Stop()
		}
		c.mu.Unlock()
	}
	h.mu.RUnlock()
	return h.m.CloseWithMsg(melody.FormatCloseMessage(CloseGoingAway, "server shutting down"))
}

// ValidUpgrade reports whether r is a well-formed websocket handshake.
func ValidUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket") &&
		r.Header.Get("Sec-Websocket-Version") == "13" && r.Header.Get("Sec-Websocket-Key") != ""
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// ServeWS upgrades r and serves the connection until it ends. userID and
// token are the handshake's credential when the server accepted one ("":
// the client must send an auth frame within AuthTimeout). It returns
// ErrClosed after Close, or the upgrade error (the answer is then written).
func (h *Hub) ServeWS(w http.ResponseWriter, r *http.Request, userID, token string) error {
	if h.closed.Load() || h.m.IsClosed() {
		return ErrClosed
	}
	c := &conn{hub: h, preUser: userID, preToken: token}
	err := h.m.HandleRequestWithKeys(&hijackWriter{ResponseWriter: w, c: c}, r, map[string]any{connKey: c})
	if errors.Is(err, melody.ErrClosed) {
		return ErrClosed
	}
	return err
}

// hijackWriter remembers the hijacked connection: melody can only close a
// session by queueing a close frame, which is no use when the queue is full.
type hijackWriter struct {
	http.ResponseWriter
	c *conn
}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("realtime: connection cannot be hijacked")
	}
	nc, rw, err := hj.Hijack()
	w.c.nc = nc
	return nc, rw, err
}

func connOf(s *melody.Session) *conn {
	v, _ := s.Get(connKey)
	c, _ := v.(*conn)
	return c
}

func (h *Hub) onConnect(s *melody.Session) {
	c := connOf(s)
	if c == nil {
		s.Close()
		return
	}
	c.sess = s
	h.mu.Lock()
	h.conns[c] = struct{}{}
	h.mu.Unlock()
	if c.preUser != "" {
		h.admit(c, c.preUser, c.preToken)
		return
	}
	c.mu.Lock()
	c.timer = time.AfterFunc(h.o.AuthTimeout, func() {
		c.mu.Lock()
		authed := c.userID != ""
		c.mu.Unlock()
		if !authed {
			c.closeWith(CloseUnauthenticated, "authentication required")
		}
	})
	c.mu.Unlock()
}

func (h *Hub) onDisconnect(s *melody.Session) {
	c := connOf(s)
	if c == nil {
		return
	}
	c.dead.Store(true)
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	uid := c.userID
	c.mu.Unlock()
	h.mu.Lock()
	delete(h.conns, c)
	h.removeLocked(c, uid)
	h.mu.Unlock()
}

func (h *Hub) removeLocked(c *conn, uid string) {
	if set := h.users[uid]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(h.users, uid)
		}
	}
}

func (h *Hub) onError(s *melody.Session, err error) {
	if errors.Is(err, melody.ErrMessageBufferFull) {
		if c := connOf(s); c != nil && !c.dead.Load() {
			h.log.Warn("live connection too slow; closing it", slog.String("user_id", c.uid()))
			c.kill()
		}
	}
}

// admit makes c an authenticated connection of userID: it gets a ready
// frame and, from then on, every event of the user.
func (h *Hub) admit(c *conn, userID, token string) {
	c.mu.Lock()
	prev := c.userID
	if prev != "" && prev != userID {
		c.mu.Unlock()
		c.closeWith(CloseUnauthenticated, "token is for another user")
		return
	}
	c.userID, c.token, c.checkedAt = userID, token, h.o.Now()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	// Register and queue ready under the hub lock: fanOut holds it too, so
	// every event emitted after the client sees ready reaches it, and none
	// is queued ahead of ready.
	h.mu.Lock()
	defer h.mu.Unlock()
	if prev == "" {
		if _, open := h.conns[c]; open && !c.dead.Load() {
			set := h.users[userID]
			if set == nil {
				set = map[*conn]struct{}{}
				h.users[userID] = set
			}
			set[c] = struct{}{}
		}
	}
	c.send(readyFrame(userID))
}

func (c *conn) uid() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.userID
}

// send queues a frame; it never blocks (melody drops on a full queue and
// reports it to onError, which closes the connection).
func (c *conn) send(frame []byte) {
	if c.dead.Load() || c.sess == nil {
		return
	}
	c.sess.Write(frame)
}

// closeWith sends a close frame with a reason and stops delivering events.
func (c *conn) closeWith(code int, reason string) {
	h := c.hub
	h.mu.Lock()
	h.removeLocked(c, c.uid())
	h.mu.Unlock()
	if c.sess != nil {
		c.sess.CloseWithMsg(melody.FormatCloseMessage(code, reason))
	}
}

// kill drops the connection without a close frame (its queue is full).
func (c *conn) kill() {
	c.dead.Store(true)
	if c.nc != nil {
		c.nc.Close()
	}
}

func (h *Hub) onMessage(s *melody.Session, msg []byte) {
	c := connOf(s)
	if c == nil || c.dead.Load() {
		return
	}
	var f clientFrame
	if err := json.Unmarshal(msg, &f); err != nil {
		if c.uid() == "" {
			c.closeWith(CloseUnauthenticated, "authentication required")
			return
		}
		c.send(errorFrame("frame is not a JSON object"))
		return
	}
	if f.Type == "auth" {
		h.authenticate(c, s.Request, f.Token)
		return
	}
	uid := c.uid()
	if uid == "" {
		c.closeWith(CloseUnauthenticated, "authentication required")
		return
	}
	switch f.Type {
	case "heartbeat":
		c.send(heartbeatFrame)
		if h.o.OnActivity != nil {
			h.o.OnActivity(uid)
		}
	case "resume":
		if f.MessageID == "" {
			c.send(errorFrame("resume needs message_id"))
			return
		}
		h.resume(c, bufKey{uid, f.ChatID, f.MessageID}, max(f.Since, 0))
	default:
		c.send(errorFrame("unknown frame type " + quote(f.Type)))
	}
}

func quote(s string) string { return string(appendString(nil, s)) }

func (h *Hub) authenticate(c *conn, r *http.Request, token string) {
	if token == "" {
		c.closeWith(CloseUnauthenticated, "token required")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uid, err := h.o.Auth.Authenticate(ctx, r, token)
	if err != nil {
		c.refuse(err)
		return
	}
	h.admit(c, uid, token)
}

// refuse closes c for a failed authentication.
func (c *conn) refuse(err error) {
	switch {
	case errors.Is(err, ErrUnauthenticated):
		c.closeWith(CloseUnauthenticated, "invalid or expired token")
	case errors.Is(err, ErrForbidden):
		c.closeWith(CloseForbidden, "account not allowed")
	default:
		c.hub.log.Error("checking a live connection's token failed", slog.Any("err", err))
		c.closeWith(CloseInternal, "internal error")
	}
}

// ConnCount is the number of authenticated connections of a user.
func (h *Hub) ConnCount(userID string) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.users[userID])
}

// fanOut sends a frame to every authenticated connection of a user.
func (h *Hub) fanOut(userID string, frame []byte) {
	h.mu.RLock()
	for c := range h.users[userID] {
		c.send(frame)
	}
	h.mu.RUnlock()
}

// Emit sends an event to every connection of userID: events with a
// message id are sequenced and kept for catch-up (doc.go). Nothing is
// written to the database. It never blocks on a connection and never fails
// the caller (an unencodable payload is logged and dropped). It implements
// chat.Emitter.
func (h *Hub) Emit(userID string, ev Event) {
	if h.closed.Load() || userID == "" {
		return
	}
	data, err := marshal(ev.Data.Data)
	if err != nil {
		h.log.Error("event payload cannot be encoded; dropped", slog.String("type", ev.Data.Type), slog.Any("err", err))
		return
	}
	m := Message{Origin: h.id, UserID: userID, ChatID: ev.ChatID, MessageID: ev.MessageID, Type: ev.Data.Type}
	if ev.MessageID == "" {
		m.Frame = eventFrame(0, ev, data)
		h.fanOut(userID, m.Frame)
		h.publish(m)
		return
	}
	switch ev.Data.Type {
	case "chat:completion":
		keys, done, isObj := topLevel(data)
		if isObj {
			m.Done = done
			m.Snapshot = contains(keys, "content")
			m.Reset = !done && m.Snapshot
			if !contains(keys, "choices") { // OpenAI-style deltas append: never superseded
				m.Keys = sortedCopy(keys)
			}
		}
	case "chat:tasks:cancel", "chat:message:error":
		m.Done = true // stopped or failed: no done chat:completion follows
	case "chat:active":
		var a struct{ Active *bool }
		if json.Unmarshal(data, &a) == nil && a.Active != nil {
			m.Done, m.Reset = !*a.Active, *a.Active
		}
	}
	b := h.lockBuffer(bufKey{userID, ev.ChatID, ev.MessageID})
	b.last++
	m.Seq = b.last
	m.Frame = eventFrame(m.Seq, ev, data)
	h.record(b, m)
	h.fanOut(userID, m.Frame)
	// Published under the message's lock, so replicas see its events in
	// order (a single producer per message is assumed: see doc.go).
	h.publish(m)
	b.mu.Unlock()
	h.evictIfFull()
}

func (h *Hub) publish(m Message) {
	if h.o.PubSub != nil {
		h.o.PubSub.Publish(m)
	}
}

// receive takes a message emitted by another hub.
func (h *Hub) receive(m Message) {
	if m.Origin == h.id || h.closed.Load() {
		return
	}
	if m.MessageID == "" || m.Seq <= 0 {
		h.fanOut(m.UserID, m.Frame)
		return
	}
	b := h.lockBuffer(bufKey{m.UserID, m.ChatID, m.MessageID})
	if m.Seq > b.last {
		b.last = m.Seq
		h.record(b, m)
		h.fanOut(m.UserID, m.Frame)
	}
	b.mu.Unlock()
	h.evictIfFull()
}

// record adds a sequenced message to its (locked) buffer.
func (h *Hub) record(b *buffer, m Message) {
	now := h.o.Now()
	if m.Done {
		b.doneAt = now
	} else if m.Reset {
		b.doneAt = time.Time{} // "continue": the same message generates again
	}
	delta := b.add(record{seq: m.Seq, typ: m.Type, frame: m.Frame, keys: m.Keys, content: m.Snapshot},
		limits{maxEvents: h.o.MaxEvents, maxBytes: h.o.MaxBytes}, now)
	h.total.Add(int64(delta))
}

// lockBuffer returns the locked buffer of k, creating it.
func (h *Hub) lockBuffer(k bufKey) *buffer {
	for {
		h.bufMu.Lock()
		b := h.buffers[k]
		if b == nil {
			b = &buffer{key: k}
			h.buffers[k] = b
		}
		h.bufMu.Unlock()
		b.mu.Lock()
		if !b.deleted {
			return b
		}
		b.mu.Unlock()
	}
}

// resume answers a resume frame: under the message's lock, so every live
// event of that message sent to c after the answer is newer than it.
func (h *Hub) resume(c *conn, k bufKey, since int64) {
	h.bufMu.Lock()
	b := h.buffers[k]
	h.bufMu.Unlock()
	ans := resumed{chatID: k.chat, messageID: k.msg, since: since}
	if b == nil {
		c.send(ans.frame())
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ans.seq = b.last
	if b.deleted || b.dropped {
		c.send(ans.frame())
		return
	}
	if since > b.last {
		// A counter from before a restart: everything kept is news.
		since, ans.since = 0, 0
	}
	ans.found = true
	ans.done = !b.doneAt.IsZero()
	ans.truncated = since < b.floor
	ans.events = b.since(since)
	c.send(ans.frame())
}

// evictIfFull frees the least recently updated buffers while the retained
// total exceeds MaxTotalBytes (down to 90% of it).
func (h *Hub) evictIfFull() {
	if h.total.Load() <= h.o.MaxTotalBytes {
		return
	}
	h.bufMu.Lock()
	list := make([]*buffer, 0, len(h.buffers))
	for _, b := range h.buffers {
		list = append(list, b)
	}
	h.bufMu.Unlock()
	type cand struct {
		b  *buffer
		at time.Time
	}
	cands := make([]cand, 0, len(list))
	for _, b := range list {
		b.mu.Lock()
		if !b.dropped && b.bytes > 0 {
			cands = append(cands, cand{b, b.lastAt})
		}
		b.mu.Unlock()
	}
	sortByTime(cands, func(c cand) time.Time { return c.at })
	target := h.o.MaxTotalBytes * 9 / 10
	now := h.o.Now()
	for _, cd := range cands {
		if h.total.Load() <= target {
			break
		}
		cd.b.mu.Lock()
		if !cd.b.dropped {
			h.total.Add(-int64(cd.b.free(now)))
			h.log.Warn("catch-up memory full; dropped a message's events", slog.String("message_id", cd.b.key.msg))
		}
		cd.b.mu.Unlock()
	}
}

func (h *Hub) sweeper() {
	defer close(h.done)
	t := time.NewTicker(h.o.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.sweep()
		}
	}
}

// sweep applies the time rules: finished messages are dropped after Grace,
// idle ones after IdleTTL, tombstones forgotten after TombTTL; tokens of
// connections are verified again every RecheckEvery.
func (h *Hub) sweep() {
	now := h.o.Now()
	h.bufMu.Lock()
	for k, b := range h.buffers {
		b.mu.Lock()
		switch {
		case b.dropped && now.Sub(b.droppedAt) >= h.o.TombTTL:
			b.deleted = true
			delete(h.buffers, k)
		case !b.dropped && !b.doneAt.IsZero() && now.Sub(b.doneAt) >= h.o.Grace,
			!b.dropped && now.Sub(b.lastAt) >= h.o.IdleTTL:
			h.total.Add(-int64(b.free(now)))
		}
		b.mu.Unlock()
	}
	h.bufMu.Unlock()
	h.recheck(now)
}

// recheck verifies the token of each connection not checked for
// RecheckEvery: a signed-out (revoked), expired or deleted account stops
// receiving events within that time.
func (h *Hub) recheck(now time.Time) {
	h.mu.RLock()
	var due []*conn
	for c := range h.conns {
		c.mu.Lock()
		if c.userID != "" && now.Sub(c.checkedAt) >= h.o.RecheckEvery {
			due = append(due, c)
		}
		c.mu.Unlock()
	}
	h.mu.RUnlock()
	for _, c := range due {
		if c.dead.Load() || c.sess == nil {
			continue
		}
		c.mu.Lock()
		token, uid := c.token, c.userID
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got, err := h.o.Auth.Authenticate(ctx, c.sess.Request, token)
		cancel()
		switch {
		case err == nil && got == uid:
			c.mu.Lock()
			c.checkedAt = now
			c.mu.Unlock()
		case err == nil:
			c.closeWith(CloseUnauthenticated, "token is for another user")
		case errors.Is(err, ErrUnauthenticated), errors.Is(err, ErrForbidden):
			c.refuse(err)
		default: // a passing database problem does not end sessions
			h.log.Warn("rechecking a live connection's token failed", slog.Any("err", err))
		}
	}
}

// PersistAndEmit writes the short-named types of SPEC.md §6 Persistence to
// the stored message of ownerID's chat (COMPAT.md §9.3), then emits the
// event to ownerID (always, even when the write fails). A missing chat or
// message is not an error: the event is only emitted (Open WebUI writes
// "only if the message exists"). Other store errors are returned after
// the emit. Temporary ("local:") chats are never written.
func (h *Hub) PersistAndEmit(ctx context.Context, ownerID string, ev Event) error {
	err := h.persist(ctx, ownerID, ev)
	h.Emit(ownerID, ev)
	return err
}

func (h *Hub) persist(ctx context.Context, ownerID string, ev Event) error {
	if h.o.Store == nil || !Persisted(ev.Data.Type) || !persistable(ev) {
		return nil
	}
	data, err := marshal(ev.Data.Data)
	if err != nil {
		return nil // Emit logs it
	}
	e, ok := editFor(ev.Data.Type, data)
	if !ok {
		return nil
	}
	err = h.o.Store.EditMessage(ctx, store.Actor{UserID: ownerID, Role: "user"}, ev.ChatID, ev.MessageID, e)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

func sortedCopy(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return out
}

func sortByTime[T any](list []T, at func(T) time.Time) {
	slices.SortFunc(list, func(a, b T) int { return at(a).Compare(at(b)) })
}
