package realtime

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// replay decodes the seqs and types kept after since.
func replay(b *buffer, since int64) (seqs []int64, types []string) {
	for _, f := range b.since(since) {
		var e frame
		json.Unmarshal(f, &e)
		seqs = append(seqs, e.Seq)
		types = append(types, e.Data.Type)
	}
	return
}

// push emits into a bare hub (no connections) and returns its buffer.
func push(h *Hub, typ string, data any) {
	h.Emit("u", Event{ChatID: "c", MessageID: "m", Data: Data{Type: typ, Data: data}})
}

func bufOf(h *Hub) *buffer {
	h.bufMu.Lock()
	defer h.bufMu.Unlock()
	return h.buffers[bufKey{"u", "c", "m"}]
}

func bareHub(t *testing.T, o Options) *Hub {
	if o.Auth == nil {
		o.Auth = &fakeAuth{}
	}
	o.SweepEvery = time.Hour
	h := New(o)
	t.Cleanup(func() { h.Close() })
	return h
}

func TestSupersession(t *testing.T) {
	h := bareHub(t, Options{})
	push(h, "chat:completion", map[string]any{"sources": []string{"s"}})                                // 1: other keys, kept
	push(h, "chat:completion", map[string]any{"content": "a", "output": 1})                             // 2: superseded by 4
	push(h, "status", map[string]any{"description": "x"})                                               // 3
	push(h, "chat:completion", map[string]any{"content": "ab", "output": 2})                            // 4: superseded by 6
	push(h, "chat:completion", map[string]any{"choices": []any{"d"}})                                   // 5: deltas, never superseded
	push(h, "chat:completion", map[string]any{"content": "abc", "output": 3})                           // 6: superseded by 7
	push(h, "chat:completion", map[string]any{"done": true, "content": "abc", "output": 3, "usage": 1}) // 7
	push(h, "chat:completion", "not an object")                                                         // 8
	push(h, "chat:completion", "not an object")                                                         // 9
	seqs, _ := replay(bufOf(h), 0)
	if want := []int64{1, 3, 5, 7, 8, 9}; !reflect.DeepEqual(seqs, want) {
		t.Fatalf("kept %v, want %v", seqs, want)
	}
	b := bufOf(h)
	if b.floor != 0 || b.doneAt.IsZero() {
		t.Fatalf("floor %d doneAt %v", b.floor, b.doneAt)
	}
	// A continued generation clears done.
	push(h, "chat:completion", map[string]any{"content": "abcd"})
	if !bufOf(h).doneAt.IsZero() {
		t.Fatal("continue did not clear done")
	}
	// Since a seq in the middle.
	if seqs, _ := replay(bufOf(h), 5); !reflect.DeepEqual(seqs, []int64{7, 8, 9, 10}) {
		t.Fatalf("since 5: %v", seqs)
	}
}

func TestBoundsKeepSnapshot(t *testing.T) {
	h := bareHub(t, Options{MaxEvents: 10})
	push(h, "chat:completion", map[string]any{"content": "snap"}) // 1: the snapshot
	for i := 0; i < 30; i++ {
		push(h, "status", map[string]any{"n": i}) // 2..31
	}
	b := bufOf(h)
	seqs, types := replay(b, 0)
	if len(seqs) != 10 || seqs[0] != 1 || types[0] != "chat:completion" || seqs[1] != 23 || seqs[9] != 31 {
		t.Fatalf("kept %v %v", seqs, types)
	}
	if b.floor != 22 {
		t.Fatalf("floor %d", b.floor)
	}
	// A new snapshot frees the old one (superseded) and bounds move on.
	push(h, "chat:completion", map[string]any{"content": "snap2"}) // 32
	seqs, _ = replay(b, 0)
	if seqs[0] != 23 || seqs[len(seqs)-1] != 32 || len(seqs) != 10 {
		t.Fatalf("after new snapshot %v", seqs)
	}

	// Byte bound: large statuses, the newest always kept.
	h2 := bareHub(t, Options{MaxBytes: 10_000})
	push(h2, "chat:completion", map[string]any{"content": "s"})
	for i := 0; i < 20; i++ {
		push(h2, "status", map[string]any{"d": strings.Repeat("x", 3000)})
	}
	b2 := bufOf(h2)
	if b2.bytes > 10_000+3100 || b2.bytes != int(h2.total.Load()) {
		t.Fatalf("bytes %d total %d", b2.bytes, h2.total.Load())
	}
	seqs, _ = replay(b2, 0)
	if seqs[0] != 1 || seqs[len(seqs)-1] != 21 {
		t.Fatalf("byte-bounded kept %v", seqs)
	}
}

func TestCompactionKeepsOrder(t *testing.T) {
	h := bareHub(t, Options{})
	for i := 1; i <= 500; i++ {
		push(h, "chat:completion", map[string]any{"content": fmt.Sprint(i)})
		if i%7 == 0 {
			push(h, "status", map[string]any{"i": i})
		}
	}
	b := bufOf(h)
	seqs, types := replay(b, 0)
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("out of order %v", seqs)
		}
	}
	if types[len(types)-1] != "chat:completion" || len(seqs) != 500/7+1 {
		t.Fatalf("kept %d: %v", len(seqs), types)
	}
	if len(b.events) > 2*b.live+64 {
		t.Fatalf("slice %d for %d live", len(b.events), b.live)
	}
}

func TestTotalEviction(t *testing.T) {
	h := bareHub(t, Options{MaxTotalBytes: 50_000})
	for m := 0; m < 10; m++ {
		h.o.Now = func() time.Time { return time.Unix(int64(1000+m), 0) }
		for i := 0; i < 5; i++ {
			h.Emit("u", Event{ChatID: "c", MessageID: fmt.Sprint("m", m), Data: Data{Type: "status", Data: strings.Repeat("x", 2000)}})
		}
	}
	if n := h.total.Load(); n > 50_000 {
		t.Fatalf("total %d", n)
	}
	h.bufMu.Lock()
	first, last := h.buffers[bufKey{"u", "c", "m0"}], h.buffers[bufKey{"u", "c", "m9"}]
	h.bufMu.Unlock()
	if !first.dropped || last.dropped || first.last != 5 {
		t.Fatalf("oldest dropped %v, newest dropped %v", first.dropped, last.dropped)
	}
}

func TestTopLevel(t *testing.T) {
	cases := []struct {
		in   string
		keys []string
		done bool
		ok   bool
	}{
		{`{}`, []string{}, false, true},
		{`{"content":"a \"}\" b","done":true,"x":{"y":[1,{"z":"]"}]},"n":-1.5e3,"t":null}`, []string{"content", "done", "x", "n", "t"}, true, true},
		{`{"done":false}`, []string{"done"}, false, true},
		{`{"a\u0062":1}`, []string{"ab"}, false, true},
		{`"str"`, nil, false, false},
		{`[1]`, nil, false, false},
		{`{"a":}`, nil, false, false},
		{`{"a":1`, nil, false, false},
	}
	for _, c := range cases {
		keys, done, ok := topLevel([]byte(c.in))
		if ok != c.ok || done != c.done || (c.ok && !reflect.DeepEqual(keys, c.keys)) {
			t.Errorf("%s: %v %v %v", c.in, keys, done, ok)
		}
	}
}

func TestEditFor(t *testing.T) {
	cases := []struct {
		typ, data string
		want      string // the edit as JSON, "" = nothing written
	}{
		{"status", `{"description":"d","done":true}`, `{"Append":{"statusHistory":[{"description":"d","done":true}]}}`},
		{"message", `{"content":"x"}`, `{"AppendContent":"x","MoveCurrent":true}`},
		{"message", `{"content":1}`, ``},
		{"replace", `{"content":"y"}`, `{"Set":{"content":"y"},"MoveCurrent":true}`},
		{"replace", `{}`, ``},
		{"embeds", `{"embeds":["a"]}`, `{"Prepend":{"embeds":["a"]},"MoveCurrent":true}`},
		{"embeds", `{"embeds":["a"],"replace":true}`, `{"Set":{"embeds":["a"]},"MoveCurrent":true}`},
		{"embeds", `{"embeds":[],"replace":1}`, `{"Set":{"embeds":[]},"MoveCurrent":true}`},
		{"embeds", `{"embeds":["a"],"replace":false}`, `{"Prepend":{"embeds":["a"]},"MoveCurrent":true}`},
		{"embeds", `{"embeds":"a"}`, ``},
		{"files", `{"files":[{"id":"f"}]}`, `{"Prepend":{"files":[{"id":"f"}]},"MoveCurrent":true}`},
		{"source", `{"source":{"name":"s"}}`, `{"Append":{"sources":[{"source":{"name":"s"}}]},"MoveCurrent":true}`},
		{"citation", `{"source":{},"type":null}`, `{"Append":{"sources":[{"source":{},"type":null}]},"MoveCurrent":true}`},
		{"citation", `{"type":"code_execution"}`, ``},
		{"chat:message:delta", `{"content":"x"}`, ``},
		{"notification", `{"content":"x"}`, ``},
	}
	for _, c := range cases {
		e, ok := editFor(c.typ, []byte(c.data))
		got := ""
		if ok {
			b, _ := json.Marshal(struct {
				Set           map[string]json.RawMessage `json:",omitempty"`
				AppendContent string                     `json:",omitempty"`
				Append        map[string]json.RawMessage `json:",omitempty"`
				Prepend       map[string]json.RawMessage `json:",omitempty"`
				MoveCurrent   bool                       `json:",omitempty"`
			}{e.Set, e.AppendContent, e.Append, e.Prepend, e.MoveCurrent})
			got = string(b)
		}
		if got != c.want {
			t.Errorf("%s %s: %s, want %s", c.typ, c.data, got, c.want)
		}
	}
}

func TestFrames(t *testing.T) {
	f := eventFrame(7, Event{ChatID: "c", MessageID: "m", Data: Data{Type: "embeds"}}, []byte(`{"embeds":["<b>&</b>"]}`))
	want := `{"type":"events","seq":7,"chat_id":"c","message_id":"m","data":{"type":"embeds","data":{"embeds":["<b>&</b>"]}}}`
	if string(f) != want {
		t.Fatalf("%s", f)
	}
	if !json.Valid(resumed{chatID: "c", events: [][]byte{f, f}}.frame()) {
		t.Fatal("resumed frame is not JSON")
	}
	if b, _ := marshal("<&>"); string(b) != `"<&>"` {
		t.Fatalf("%s", b)
	}
}

func TestEndMarkers(t *testing.T) {
	for _, end := range []Event{
		{Data: Data{Type: "chat:completion", Data: map[string]any{"done": true}}},
		{Data: Data{Type: "chat:tasks:cancel", Data: map[string]any{}}},
		{Data: Data{Type: "chat:message:error", Data: map[string]any{"error": map[string]string{"content": "x"}}}},
		{Data: Data{Type: "chat:active", Data: map[string]any{"active": false}}},
	} {
		h := bareHub(t, Options{})
		push(h, "chat:active", map[string]any{"active": true})
		push(h, "chat:completion", map[string]any{"content": "a"})
		if !bufOf(h).doneAt.IsZero() {
			t.Fatal("done before the end")
		}
		end.ChatID, end.MessageID = "c", "m"
		h.Emit("u", end)
		if bufOf(h).doneAt.IsZero() {
			t.Fatalf("%s did not end the message", end.Data.Type)
		}
		push(h, "chat:active", map[string]any{"active": true})
		if !bufOf(h).doneAt.IsZero() {
			t.Fatal("a new run did not clear the end")
		}
	}
}
