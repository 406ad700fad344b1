package realtime

import "sync"

// Message is one encoded event travelling between the hubs of several
// replicas. The emitting hub has already sequenced it; a receiving hub
// records it for catch-up under the same seq and sends it to its own
// connections of UserID.
type Message struct {
	Origin    string   `json:"origin"` // id of the emitting hub; it ignores its own
	UserID    string   `json:"user_id"`
	ChatID    string   `json:"chat_id"`
	MessageID string   `json:"message_id"`
	Seq       int64    `json:"seq"`
	Type      string   `json:"type"`
	Frame     []byte   `json:"frame"`
	Keys      []string `json:"keys,omitempty"` // chat:completion member names (supersession)
	Snapshot  bool     `json:"snapshot,omitempty"`
	Done      bool     `json:"done,omitempty"`
	Reset     bool     `json:"reset,omitempty"` // a continued generation clears done
}

// PubSub is the seam for fan-out across replicas (Redis later). Publish
// must not block on slow subscribers for long; Subscribe's fn is called for
// every published message, its own included.
type PubSub interface {
	Publish(m Message)
	Subscribe(fn func(Message)) (cancel func())
}

// LocalPubSub is the in-process PubSub: hubs sharing one behave like
// replicas (useful in tests); a single hub needs nothing else.
type LocalPubSub struct {
	mu   sync.RWMutex
	next int
	subs map[int]func(Message)
}

// NewLocalPubSub returns an empty in-process bus.
func NewLocalPubSub() *LocalPubSub { return &LocalPubSub{subs: map[int]func(Message){}} }

// Publish calls every subscriber synchronously.
func (p *LocalPubSub) Publish(m Message) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, fn := range p.subs {
		fn(m)
	}
}

// Subscribe registers fn until cancel is called.
func (p *LocalPubSub) Subscribe(fn func(Message)) (cancel func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.next
	p.next++
	p.subs[id] = fn
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.subs, id)
	}
}
