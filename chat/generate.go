package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"hearth/llm"
	"hearth/store"
)

// delta is one upstream chunk, reduced to what the pipeline keeps.
type delta struct {
	content   string
	reasoning string
	toolCalls []llm.ToolCall
	usage     json.RawMessage
	finish    string
}

// Kinds of delta for batching: switching kind flushes (COMPAT §4.8).
const (
	kindNone = iota
	kindText
	kindTool
)

func (d *delta) kind() int {
	switch {
	case len(d.toolCalls) > 0:
		return kindTool
	case d.content != "" || d.reasoning != "":
		return kindText
	}
	return kindNone
}

// apply adds a delta to the answer.
func (a *accumulator) apply(d delta) {
	if len(d.usage) > 0 {
		a.usage = d.usage
	}
	if d.finish != "" {
		a.finish = d.finish
	}
	if d.reasoning != "" {
		a.addReasoning(d.reasoning, tagPair{})
	}
	if d.content != "" {
		a.addContent(d.content)
	}
	for _, tc := range d.toolCalls {
		a.addToolCall(tc)
	}
}

// source yields the deltas of a streamed answer; io.EOF is a clean end.
type source interface {
	next() (delta, error)
}

func newSource(r io.Reader, kind string, maxLine int) source {
	if kind == KindOllama {
		return &ollamaSource{s: llm.NewOllamaChatStream(r, llm.NDJSONOptions{})}
	}
	return &sseSource{r: llm.NewSSEReader(r, llm.SSEOptions{MaxLineSize: maxLine})}
}

// sseSource reads an OpenAI-compatible event stream.
type sseSource struct {
	r     *llm.SSEReader
	chunk streamChunk
}

// streamChunk is the part of a chat.completion.chunk the pipeline reads
// (decoding only these members is about a third cheaper than the whole
// llm.ChatChunk, and a stored stream decodes every chunk).
type streamChunk struct {
	Choices []struct {
		Index        int            `json:"index"`
		Delta        llm.ChunkDelta `json:"delta"`
		FinishReason string         `json:"finish_reason"`
		Message      *struct {
			ToolCalls []llm.ToolCall `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

func (s *sseSource) next() (delta, error) {
	for {
		ev, err := s.r.Next()
		if err != nil {
			return delta{}, err
		}
		s.chunk = streamChunk{}
		if json.Unmarshal(ev.Data, &s.chunk) != nil {
			continue // not a chunk: skipped like garbage
		}
		var d delta
		if u := s.chunk.Usage; len(u) > 0 && string(u) != "null" {
			d.usage = bytes.Clone(u)
		}
		for _, c := range s.chunk.Choices {
			if c.Index != 0 {
				continue
			}
			d.content = c.Delta.Content
			d.reasoning = c.Delta.ReasoningContent
			if d.reasoning == "" {
				d.reasoning = c.Delta.Reasoning
			}
			d.toolCalls = c.Delta.ToolCalls
			if len(d.toolCalls) == 0 && c.Message != nil {
				d.toolCalls = c.Message.ToolCalls
			}
			d.finish = c.FinishReason
		}
		return d, nil
	}
}

// ollamaSource reads an Ollama /api/chat NDJSON stream.
type ollamaSource struct {
	s     *llm.OllamaChatStream
	calls int
}

func (o *ollamaSource) next() (delta, error) {
	r, err := o.s.Next()
	if err != nil {
		return delta{}, err
	}
	d := delta{content: r.Message.Content, reasoning: r.Message.Thinking}
	for _, tc := range r.Message.ToolCalls {
		idx := o.calls
		if tc.Function.Index != nil {
			idx = *tc.Function.Index
		} else if tc.Index != nil {
			idx = *tc.Index
		}
		o.calls++
		id := tc.ID
		if id == "" {
			id = llm.NewCallID()
		}
		args := string(bytes.TrimSpace(tc.Function.Arguments))
		if args == "" || args == "null" {
			args = "{}"
		}
		d.toolCalls = append(d.toolCalls, llm.ToolCall{Index: &idx, ID: id, Type: "function",
			Function: llm.FunctionCall{Name: tc.Function.Name, Arguments: llm.Arguments(args)}})
	}
	if r.Done {
		// Usage and finish_reason exactly as the Ollama → OpenAI conversion
		// builds them (COMPAT §6.5).
		var c llm.ChatCompletion
		last := *r
		last.Message = llm.OllamaMessage{}
		if json.Unmarshal(llm.OllamaChatToOpenAI(&last, llm.OllamaToOpenAIOptions{ID: "x", Created: 1}), &c) == nil {
			d.usage = c.Usage
			if len(c.Choices) > 0 {
				d.finish = c.Choices[0].FinishReason
			}
		}
		if o.calls > 0 {
			d.finish = "tool_calls"
		}
	}
	return d, nil
}

// generation is one stored (mode 1/2) answer being produced.
type generation struct {
	p       *Pipeline
	actor   store.Actor
	chatID  string
	msgID   string
	persist bool // false for temporary (local:) chats: events only
	async   bool // mode 1: chat:active events
	target  *Target
	pr      *prepared
	s       Settings
	title   string
	acc     *accumulator

	pending  int // deltas since the last chat:completion event
	lastKind int

	// Results, read by the waiting handler after the task is done.
	completion []byte
	failure    *Error
	stopped    bool
	finished   bool
}

// run is the task body: generate, store, outlet, background tasks. It never
// leaves the message at done=false: every way out — success, upstream error,
// stop, shutdown, panic — ends with a final write.
func (g *generation) run(ctx context.Context) {
	if g.async {
		g.emit("chat:active", map[string]any{"active": true})
		defer g.emit("chat:active", map[string]any{"active": false})
	}
	defer func() {
		if v := recover(); v != nil {
			g.p.log.Error("panic in generation", slog.String("chat_id", g.chatID), slog.String("message_id", g.msgID),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			if !g.finished {
				g.fail(ctx, &Error{Status: http.StatusInternalServerError, Detail: "internal error"})
			}
		}
	}()
	g.sendSources(ctx)
	if !g.generate(ctx) {
		return
	}
	g.outlet()
	g.background(ctx)
}

// sendSources tells the browser what retrieval found and stores it on the
// message (COMPAT §8.8, §4.7): status {action: "sources_retrieved", count,
// done: true} (kept in statusHistory by the emitter), then
// chat:completion {sources}, and `sources` written on the message.
func (g *generation) sendSources(ctx context.Context) {
	if g.pr.rag == nil {
		return
	}
	g.emit("status", map[string]any{"action": "sources_retrieved", "count": g.pr.rag.count, "done": true})
	sources := g.pr.rag.sourcesJSON()
	if len(sources) == 0 {
		return
	}
	g.emit("chat:completion", map[string]any{"sources": sources})
	g.write(ctx, map[string]any{"sources": sources}, "sources")
}

// generate calls the upstream and consumes its answer; false when it ended
// in failure or was stopped (already finalised).
func (g *generation) generate(ctx context.Context) bool {
	res, err := g.p.callUpstream(ctx, g.target, g.pr.payload)
	if err != nil {
		g.end(ctx, upstreamFailure(err))
		return false
	}
	defer res.Close()
	if res.Streaming() {
		src := newSource(res.Stream, g.target.Conn.Kind, g.s.MaxLineSize)
		for {
			d, err := src.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				g.end(ctx, &Error{Status: http.StatusBadRequest, Detail: streamFailure(err)})
				return false
			}
			g.apply(ctx, d)
		}
		g.acc.finishAll()
		if g.pending > 0 {
			g.flushBatch(ctx) // the end flush
		}
		if !g.pr.stream {
			g.completion = buildCompletion(g.acc, g.target.UpstreamID, g.p.o.Now())
		}
	} else {
		body, err := completionBody(res.Body, g.target.Conn.Kind)
		if err != nil {
			g.end(ctx, upstreamFailure(err))
			return false
		}
		var c llm.ChatCompletion
		if err := json.Unmarshal(body, &c); err != nil {
			g.end(ctx, &Error{Status: http.StatusBadGateway, Detail: "The model's answer is not a chat completion"})
			return false
		}
		if len(c.Choices) > 0 {
			m := c.Choices[0].Message
			d := delta{content: m.Text(), reasoning: m.ReasoningContent, finish: c.Choices[0].FinishReason, usage: c.Usage}
			if d.reasoning == "" {
				d.reasoning = m.Reasoning
			}
			for i, tc := range m.ToolCalls {
				if tc.Index == nil {
					idx := i
					tc.Index = &idx
				}
				d.toolCalls = append(d.toolCalls, tc)
			}
			g.acc.apply(d)
		} else if len(c.Usage) > 0 {
			g.acc.usage = c.Usage
		}
		g.acc.finishAll()
		g.completion = body
	}
	g.finishOK(ctx)
	return true
}

// end finalises a generation that did not complete: stopped (its context
// was cancelled: a stop request or shutdown) or failed.
func (g *generation) end(ctx context.Context, e *Error) {
	if ctx.Err() != nil {
		g.finishStopped(ctx)
		return
	}
	g.fail(ctx, e)
}

// apply adds one delta and emits a batch every deltaChunk deltas, and
// before a switch between text and tool-call deltas.
func (g *generation) apply(ctx context.Context, d delta) {
	k := d.kind()
	if k != kindNone && g.lastKind != kindNone && k != g.lastKind && g.pending > 0 {
		g.flushBatch(ctx)
	}
	g.acc.apply(d)
	if k == kindNone {
		return
	}
	g.lastKind = k
	g.pending++
	if g.pending >= g.pr.deltaChunk {
		g.flushBatch(ctx)
	}
}

// flushBatch emits the cumulative state as chat:completion (each event is
// self-contained, so a browser catching up needs only the latest one) and,
// with ENABLE_REALTIME_CHAT_SAVE, writes it.
func (g *generation) flushBatch(ctx context.Context) {
	g.pending = 0
	content, output := g.acc.Content(), g.acc.Output()
	if g.s.RealtimeSave {
		g.write(ctx, map[string]any{"content": content, "output": output}, "content", "output")
	}
	g.emit("chat:completion", map[string]any{"content": content, "output": output})
}

// finishOK makes the final write and event of a completed answer.
func (g *generation) finishOK(ctx context.Context) {
	g.finished = true
	content, output := g.acc.Content(), g.acc.Output()
	set := map[string]any{"content": content, "output": output, "done": true, "model": g.target.ModelID}
	order := []string{"content", "output", "done", "model"}
	ev := map[string]any{"done": true, "content": content, "output": output, "title": g.title}
	if len(g.acc.usage) > 0 {
		u := llm.NormalizeUsage(g.acc.usage)
		set["usage"], ev["usage"] = u, u
		order = append(order, "usage")
	}
	g.write(ctx, set, order...)
	g.emit("chat:completion", ev)
}

// fail stores the error on the message (done=true, with what was generated
// so far) and emits chat:message:error then chat:tasks:cancel.
func (g *generation) fail(ctx context.Context, e *Error) {
	g.finished = true
	g.failure = e
	g.acc.finishAll()
	errObj := map[string]any{"content": e.Detail}
	g.write(ctx, map[string]any{"content": g.acc.Content(), "output": g.acc.Output(), "done": true,
		"model": g.target.ModelID, "error": errObj}, "content", "output", "done", "model", "error")
	g.emit("chat:message:error", map[string]any{"error": errObj})
	g.emit("chat:tasks:cancel", map[string]any{})
}

// finishStopped keeps what was generated (done=true) and emits
// chat:tasks:cancel.
func (g *generation) finishStopped(ctx context.Context) {
	g.finished = true
	g.stopped = true
	g.acc.finishAll()
	set := map[string]any{"content": g.acc.Content(), "output": g.acc.Output(), "done": true, "model": g.target.ModelID}
	order := []string{"content", "output", "done", "model"}
	if len(g.acc.usage) > 0 {
		set["usage"] = llm.NormalizeUsage(g.acc.usage)
		order = append(order, "usage")
	}
	g.write(ctx, set, order...)
	g.emit("chat:tasks:cancel", map[string]any{})
}

// writeTimeout bounds a final write, which runs even after the task's
// context was cancelled.
const writeTimeout = 30 * time.Second

// write sets members of the assistant message (nothing for temporary chats).
func (g *generation) write(ctx context.Context, set map[string]any, order ...string) {
	if !g.persist {
		return
	}
	e := store.MessageEdit{Set: make(map[string]json.RawMessage, len(set)), SetOrder: order}
	for k, v := range set {
		b, err := marshalJSON(v)
		if err != nil {
			g.p.log.Error("encoding a message field failed", slog.String("field", k), slog.Any("err", err))
			return
		}
		e.Set[k] = b
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := g.p.o.Store.EditMessage(wctx, g.actor, g.chatID, g.msgID, e); err != nil {
		g.p.log.Error("storing the answer failed", slog.String("chat_id", g.chatID),
			slog.String("message_id", g.msgID), slog.Any("err", err))
	}
}

func (g *generation) emit(typ string, data any) {
	g.p.emit(g.actor.UserID, g.chatID, g.msgID, typ, data)
}

// outlet is the inline outlet of the dev release channel (SPEC §9 rule 4):
// after a non-streaming stored completion of the caller's chat it runs the
// outlet filters on the conversation and emits chat:outlet {messages}. No
// filters exist yet, so it changes nothing; the event and the switch exist.
// On stable outlet runs only through POST /api/chat/completed.
func (g *generation) outlet() {
	if g.s.ReleaseChannel != "dev" || g.pr.stream || !g.persist {
		return
	}
	var msgs []json.RawMessage
	if len(g.pr.requestMessages) > 0 {
		json.Unmarshal(g.pr.requestMessages, &msgs)
	}
	assistant, _ := json.Marshal(map[string]any{"id": g.msgID, "role": "assistant", "content": g.acc.Content(),
		"timestamp": g.p.o.Now().Unix()})
	msgs = append(msgs, assistant)
	g.emit("chat:outlet", map[string]any{"messages": msgs})
}

// marshalJSON encodes without HTML escaping (stored bodies keep `<`).
func marshalJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
