package realtime

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// bufKey names one message's event stream: events are sequenced and kept
// per recipient, so a resume never sees another user's events.
type bufKey struct{ user, chat, msg string }

// record is one sequenced event kept for catch-up.
type record struct {
	seq   int64
	typ   string
	frame []byte
	// keys are the top-level members of a chat:completion payload that can
	// be superseded (nil otherwise, see supersedes).
	keys    []string
	content bool // a chat:completion payload with "content": a snapshot
	gone    bool // superseded or dropped; skipped, removed on compaction
}

// buffer is the catch-up state of one message. Invariants (under mu):
// events is in ascending seq order; bytes and live count only !gone
// records; floor is the highest seq dropped for the size bounds (superseded
// completions do not count: a later retained event carries their state).
type buffer struct {
	mu     sync.Mutex
	key    bufKey
	last   int64 // last seq assigned (kept after the events are freed)
	events []record
	head   int // events[:head] are all gone
	live   int
	bytes  int
	floor  int64
	// sigs maps a chat:completion key set to the index of its latest
	// retained record, to find superseded records without a scan.
	sigs      map[string]int
	doneAt    time.Time // a chat:completion with done true was seen
	lastAt    time.Time // last event
	dropped   bool      // events freed; only last survives (a tombstone)
	droppedAt time.Time
	deleted   bool // removed from the hub's map: look the key up again
}

// limits bounds one buffer.
type limits struct {
	maxEvents, maxBytes int
}

// add appends r (its seq already assigned) and applies the two compaction
// rules of doc.go. It returns the change in retained bytes.
func (b *buffer) add(r record, l limits, now time.Time) (delta int) {
	before := b.bytes
	if b.dropped {
		b.dropped, b.droppedAt = false, time.Time{}
	}
	b.lastAt = now
	idx := len(b.events)
	if r.keys != nil {
		if b.sigs == nil {
			b.sigs = map[string]int{}
		}
		for sig, i := range b.sigs {
			if subset(b.events[i].keys, r.keys) {
				b.drop(i, false)
				delete(b.sigs, sig)
			}
		}
		if len(b.sigs) < 64 { // a pathological key-set variety just stops superseding
			b.sigs[strings.Join(r.keys, "\x00")] = idx
		}
	}
	b.events = append(b.events, r)
	b.live++
	b.bytes += len(r.frame)
	// Size bounds: drop the oldest records, never the newest and never the
	// latest content snapshot.
	snap := -1
	for i := len(b.events) - 1; i >= b.head; i-- {
		if e := &b.events[i]; !e.gone && e.content {
			snap = i
			break
		}
	}
	for i := b.head; (b.live > l.maxEvents || b.bytes > l.maxBytes) && i < len(b.events)-1; i++ {
		if b.events[i].gone || i == snap {
			continue
		}
		b.drop(i, true)
	}
	b.compact()
	return b.bytes - before
}

// drop marks events[i] gone; bound drops raise the floor.
func (b *buffer) drop(i int, bound bool) {
	e := &b.events[i]
	if e.gone {
		return
	}
	e.gone = true
	b.live--
	b.bytes -= len(e.frame)
	e.frame = nil
	if bound && e.seq > b.floor {
		b.floor = e.seq
	}
	for b.head < len(b.events) && b.events[b.head].gone {
		b.head++
	}
}

// compact removes gone records once they are the majority, so the slice
// stays proportional to what is retained (amortised O(1) per event).
func (b *buffer) compact() {
	if len(b.events) < 64 || b.live*2 > len(b.events) {
		return
	}
	kept := b.events[:0]
	for _, e := range b.events {
		if !e.gone {
			kept = append(kept, e)
		}
	}
	clear(b.events[len(kept):])
	b.events, b.head = kept, 0
	for sig := range b.sigs {
		delete(b.sigs, sig)
	}
	for i, e := range b.events {
		if e.keys != nil {
			b.sigs[strings.Join(e.keys, "\x00")] = i
		}
	}
}

// free drops every event and keeps the buffer as a tombstone, so a later
// event of the same message continues its sequence (and a resume from
// before it is truncated). It returns the bytes freed.
func (b *buffer) free(now time.Time) int {
	n := b.bytes
	b.events, b.head, b.live, b.bytes, b.floor, b.sigs = nil, 0, 0, 0, b.last, nil
	b.dropped, b.droppedAt = true, now
	return n
}

// since returns the retained frames with seq > since.
func (b *buffer) since(since int64) [][]byte {
	var out [][]byte
	i, _ := slices.BinarySearchFunc(b.events[b.head:], since+1, func(e record, s int64) int {
		switch {
		case e.seq < s:
			return -1
		case e.seq > s:
			return 1
		}
		return 0
	})
	for _, e := range b.events[b.head+i:] {
		if !e.gone {
			out = append(out, e.frame)
		}
	}
	return out
}

// subset reports whether every key of a is in b (both short lists).
func subset(a, b []string) bool {
	for _, k := range a {
		if !slices.Contains(b, k) {
			return false
		}
	}
	return true
}
