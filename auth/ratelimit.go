package auth

import (
	"sync"
	"time"
)

// Limiter allows at most N events per key in a sliding window. It is used
// for sign-in attempts per account and per client address.
type Limiter struct {
	n      int
	window time.Duration
	now    func() time.Time

	mu     sync.Mutex
	events map[string][]time.Time
	sweep  time.Time
}

// NewLimiter allows n events per window per key.
func NewLimiter(n int, window time.Duration) *Limiter {
	return &Limiter{n: n, window: window, now: time.Now, events: map[string][]time.Time{}}
}

// Allow records an event for key and reports whether it is within the limit.
// Refused events are not recorded, so a blocked client regains access once
// its old events leave the window.
func (l *Limiter) Allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	cut := now.Add(-l.window)
	if now.Sub(l.sweep) > l.window { // drop idle keys so the map cannot grow without bound
		for k, ev := range l.events {
			if len(ev) == 0 || ev[len(ev)-1].Before(cut) {
				delete(l.events, k)
			}
		}
		l.sweep = now
	}
	ev := l.events[key]
	i := 0
	for i < len(ev) && ev[i].Before(cut) {
		i++
	}
	ev = ev[i:]
	if len(ev) >= l.n {
		l.events[key] = ev
		return false
	}
	l.events[key] = append(ev, now)
	return true
}

// Blocked reports whether key is at its limit, without recording an event.
func (l *Limiter) Blocked(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	cut := l.now().Add(-l.window)
	n := 0
	for _, t := range l.events[key] {
		if !t.Before(cut) {
			n++
		}
	}
	return n >= l.n
}
