package chat

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"hearth/llm"
)

// The structured answer of a stored generation (COMPAT.md §4.7, §4.8): an
// ordered list of output items — message text, reasoning, function calls —
// and, derived from it, the plain-text `content` the user reads (message
// text only, no reasoning). Hearth stores both (decision 16).
//
// Work per delta is proportional to the delta: text is appended to the
// current item, reasoning tags are detected by a small state machine that
// holds back at most one tag's length. Only a snapshot (an event, a
// realtime-save write, the final write) costs the size of the answer.

// tagPair is a reasoning start/end tag pair detected in streamed content.
type tagPair struct{ start, end string }

// defaultReasoningTags are the pairs Open WebUI detects by default.
var defaultReasoningTags = []tagPair{
	{"<think>", "</think>"}, {"<thinking>", "</thinking>"}, {"<reason>", "</reason>"},
	{"<reasoning>", "</reasoning>"}, {"<thought>", "</thought>"}, {"<Thought>", "</Thought>"},
	{"<|begin_of_thought|>", "<|end_of_thought|>"}, {"◁think▷", "◁/think▷"},
}

// reasoningTags reads the reasoning_tags param: absent, null or true → the
// defaults; false → none; [start, end] → that pair.
func reasoningTags(raw json.RawMessage) []tagPair {
	if raw == nil || string(raw) == "null" || string(raw) == "true" {
		return defaultReasoningTags
	}
	if string(raw) == "false" {
		return nil
	}
	var pair []string
	if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 && pair[0] != "" && pair[1] != "" {
		return []tagPair{{pair[0], pair[1]}}
	}
	return defaultReasoningTags
}

// Item kinds.
const (
	itemMessage   = "message"
	itemReasoning = "reasoning"
	itemFunction  = "function_call"
)

// item is one output item being built.
type item struct {
	kind   string
	id     string
	done   bool
	text   appendOnly // reasoning text (message text lives in accumulator.content)
	from   int        // message items: their text is content[from:to]
	to     int
	tags   tagPair
	start  time.Time
	end    time.Time
	callID string // function calls
	name   string
	args   []byte
	index  int
}

// ItemView is an output item as events and the stored message carry it.
type ItemView struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments *string         `json:"arguments,omitempty"`
	Status    string          `json:"status"`
	Role      string          `json:"role,omitempty"`
	StartTag  string          `json:"start_tag,omitempty"`
	EndTag    string          `json:"end_tag,omitempty"`
	Content   []TextPart      `json:"content,omitempty"`
	Summary   json.RawMessage `json:"summary,omitempty"`
	StartedAt *float64        `json:"started_at,omitempty"`
	EndedAt   *float64        `json:"ended_at,omitempty"`
	Duration  *int64          `json:"duration,omitempty"`
}

// TextPart is the content of a message or reasoning item.
type TextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// accumulator builds the answer from upstream deltas.
type accumulator struct {
	now     func() time.Time
	items   []*item
	content appendOnly // text of the message items, in order
	calls   map[int]*item
	parser  tagParser
	usage   json.RawMessage
	finish  string
}

func newAccumulator(tags []tagPair, now func() time.Time) *accumulator {
	return &accumulator{now: now, parser: tagParser{pairs: tags}}
}

// addContent feeds answer text, which may carry reasoning tags.
func (a *accumulator) addContent(s string) {
	if s == "" {
		return
	}
	a.parser.feed(s, a.addSegment)
}

func (a *accumulator) addSegment(reasoning bool, text string, tags tagPair) {
	if reasoning {
		a.addReasoning(text, tags)
		return
	}
	if text == "" {
		return
	}
	it := a.last(itemMessage)
	a.content.Append(text)
	it.to = a.content.Len()
}

// addReasoning feeds reasoning text (reasoning_content / thinking deltas,
// or text between reasoning tags).
func (a *accumulator) addReasoning(s string, tags tagPair) {
	it := a.last(itemReasoning)
	if it.tags == (tagPair{}) {
		it.tags = tags
	}
	it.text.Append(s)
}

// addToolCall merges one tool-call fragment, routed by its index (a
// fragment without one continues the last call, or starts call 0).
func (a *accumulator) addToolCall(tc llm.ToolCall) {
	idx := -1
	if tc.Index != nil {
		idx = *tc.Index
	}
	if a.calls == nil {
		a.calls = map[int]*item{}
	}
	var it *item
	if idx < 0 {
		if n := len(a.items); n > 0 && a.items[n-1].kind == itemFunction && !a.items[n-1].done && tc.ID == "" {
			it = a.items[n-1]
		} else {
			idx = len(a.calls)
		}
	}
	if it == nil {
		it = a.calls[idx]
		if it != nil && tc.ID != "" && it.callID != "" && tc.ID != it.callID {
			it = nil // a new call reusing an index
		}
	}
	if it == nil {
		a.closeOpen()
		it = &item{kind: itemFunction, id: newItemID("fc"), index: idx, start: a.now()}
		a.items = append(a.items, it)
		a.calls[idx] = it
	}
	if tc.ID != "" {
		it.callID = tc.ID
	}
	if tc.Function.Name != "" {
		it.name = tc.Function.Name
	}
	it.args = append(it.args, tc.Function.Arguments...)
}

// last returns the open item of kind at the end of the list, starting a new
// one (and closing the previous) when the kind changes.
func (a *accumulator) last(kind string) *item {
	if n := len(a.items); n > 0 {
		if it := a.items[n-1]; it.kind == kind && !it.done {
			return it
		}
	}
	a.closeOpen()
	prefix := "msg"
	if kind == itemReasoning {
		prefix = "r"
	}
	it := &item{kind: kind, id: newItemID(prefix), start: a.now(), from: a.content.Len(), to: a.content.Len()}
	a.items = append(a.items, it)
	return it
}

// closeOpen marks the last item finished.
func (a *accumulator) closeOpen() {
	if n := len(a.items); n > 0 && !a.items[n-1].done {
		it := a.items[n-1]
		it.done, it.end = true, a.now()
	}
}

// finish flushes text held back by the tag parser and closes every item.
func (a *accumulator) finishAll() {
	a.parser.flush(a.addSegment)
	for _, it := range a.items {
		if !it.done {
			it.done, it.end = true, a.now()
		}
	}
}

// Content is the plain-text answer: message text without reasoning,
// surrounding white space trimmed (COMPAT.md §4.7: `<think>x</think>ok` →
// "ok", white space only → "").
func (a *accumulator) Content() string { return strings.TrimSpace(a.content.String()) }

// Output is a snapshot of the items (safe to hand to another goroutine).
func (a *accumulator) Output() []ItemView {
	out := make([]ItemView, 0, len(a.items))
	content := a.content.String()
	for _, it := range a.items {
		status := "in_progress"
		if it.done {
			status = "completed"
		}
		v := ItemView{Type: it.kind, ID: it.id, Status: status}
		switch it.kind {
		case itemMessage:
			v.Role = "assistant"
			v.Content = []TextPart{{Type: "output_text", Text: content[it.from:it.to]}}
		case itemReasoning:
			v.StartTag, v.EndTag = it.tags.start, it.tags.end
			v.Content = []TextPart{{Type: "output_text", Text: it.text.String()}}
			v.Summary = json.RawMessage("null")
			started := unixFloat(it.start)
			v.StartedAt = &started
			if it.done {
				ended := unixFloat(it.end)
				d := int64(it.end.Sub(it.start).Round(time.Second) / time.Second)
				v.EndedAt, v.Duration = &ended, &d
			}
		case itemFunction:
			v.CallID, v.Name = it.callID, it.name
			args := string(it.args)
			v.Arguments = &args
		}
		out = append(out, v)
	}
	return out
}

// HasToolCalls reports whether the answer holds function calls.
func (a *accumulator) HasToolCalls() bool { return len(a.calls) > 0 }

// Reasoning is the concatenated reasoning text.
func (a *accumulator) Reasoning() string {
	var b strings.Builder
	for _, it := range a.items {
		if it.kind == itemReasoning {
			b.WriteString(it.text.String())
		}
	}
	return b.String()
}

func unixFloat(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// newItemID returns "<prefix>_<24 hex>".
func newItemID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// appendOnly is a text buffer that only grows. Its String is a snapshot
// without a copy: bytes below the current length are never written again
// (append writes only past it, and a reallocation leaves the old array
// as it was), so a string over them stays immutable, as Go requires. This
// keeps a cumulative snapshot per streamed delta O(1) instead of O(answer).
type appendOnly struct{ b []byte }

func (a *appendOnly) Append(s string) { a.b = append(a.b, s...) }

func (a *appendOnly) Len() int { return len(a.b) }

func (a *appendOnly) String() string {
	if len(a.b) == 0 {
		return ""
	}
	return unsafe.String(&a.b[0], len(a.b))
}

// tagParser splits streamed text into answer and reasoning segments at
// reasoning tags. It holds back at most the longest tag minus one byte: a
// tail that could still become a tag.
type tagParser struct {
	pairs   []tagPair
	in      bool // inside a reasoning block
	cur     tagPair
	pending string
	firsts  string // first rune of each start tag (a quick "no tag here" test)
}

func (p *tagParser) feed(s string, emit func(reasoning bool, text string, tags tagPair)) {
	if len(p.pairs) == 0 {
		emit(false, s, tagPair{})
		return
	}
	buf := s
	if p.pending != "" {
		buf = p.pending + s
		p.pending = ""
	}
	for buf != "" {
		if !p.in {
			i, pair := p.findStart(buf)
			if i >= 0 {
				emit(false, buf[:i], tagPair{})
				p.in, p.cur = true, pair
				buf = buf[i+len(pair.start):]
				continue
			}
			keep := p.holdback(buf, true)
			emit(false, buf[:len(buf)-keep], tagPair{})
			p.pending = buf[len(buf)-keep:]
			return
		}
		if i := strings.Index(buf, p.cur.end); i >= 0 {
			emit(true, buf[:i], p.cur)
			p.in = false
			buf = buf[i+len(p.cur.end):]
			continue
		}
		keep := p.holdback(buf, false)
		if len(buf)-keep > 0 {
			emit(true, buf[:len(buf)-keep], p.cur)
		}
		p.pending = buf[len(buf)-keep:]
		return
	}
}

// flush emits text held back at the end of the stream.
func (p *tagParser) flush(emit func(reasoning bool, text string, tags tagPair)) {
	if p.pending != "" {
		emit(p.in, p.pending, p.cur)
		p.pending = ""
	}
	p.in = false
}

// findStart finds the earliest start tag in s.
func (p *tagParser) findStart(s string) (int, tagPair) {
	best, bestPair := -1, tagPair{}
	if p.firsts == "" {
		for _, pr := range p.pairs {
			r, _ := utf8.DecodeRuneInString(pr.start)
			p.firsts += string(r)
		}
	}
	if !strings.ContainsAny(s, p.firsts) {
		return -1, bestPair
	}
	for _, pr := range p.pairs {
		if i := strings.Index(s, pr.start); i >= 0 && (best < 0 || i < best) {
			best, bestPair = i, pr
		}
	}
	return best, bestPair
}

// holdback is the length of the longest suffix of s that is a proper prefix
// of a start tag (outside a block) or of the current end tag (inside).
func (p *tagParser) holdback(s string, start bool) int {
	longest := 0
	check := func(tag string) {
		for n := min(len(tag)-1, len(s)); n > longest; n-- {
			if strings.HasPrefix(tag, s[len(s)-n:]) {
				longest = n
				return
			}
		}
	}
	if start {
		for _, pr := range p.pairs {
			check(pr.start)
		}
	} else {
		check(p.cur.end)
	}
	return longest
}
