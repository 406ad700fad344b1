package llm

import (
	"encoding/json"
	"io"
)

// MessagesStreamOptions configure a MessagesStream.
type MessagesStreamOptions struct {
	// ID is the message id ("" → NewMessageID: msg_<24 hex>).
	ID string
	// Model is the requested model, written in message_start.
	Model string
	// InputTokens is a pre-counted prompt size: message_start reports it, and
	// message_delta uses it when the upstream reports no prompt count.
	InputTokens int64
	// NewToolUseID makes ids for tool calls whose fragments never carried one
	// (nil → NewToolUseID).
	NewToolUseID func() string
}

// MessagesStream converts a chat-completions chunk stream into the messages-format named
// event stream (COMPAT §7.3, openai_stream_to_anthropic_stream). It is a pure state
// machine: every method appends the bytes of zero or more events to dst and returns it;
// it performs no I/O. Each event is exactly
//
//	event: <name>\ndata: <compact JSON with "type": <name> first>\n\n
//
// Sequence: message_start; on the first text delta a text block opens
// (content_block_start, then content_block_delta text_delta per delta); on the first
// tool-call delta the text block closes and each tool call (by id; fragments without an
// id are routed by their OpenAI index, so parallel calls interleaved by index each keep
// their own block) opens a tool_use block once its name is known; argument fragments are
// input_json_delta deltas; a tool block closes as soon as its accumulated arguments are
// complete JSON (later fragments for it are dropped); text after any tool call is
// dropped; empty deltas, `data: {}` and reasoning deltas produce nothing. Finish flushes
// tools never started (start + one delta with all their arguments), closes what is open,
// and writes message_delta {stop_reason, stop_sequence: null, usage} and message_stop.
//
// Decisions beyond 0.10.2: message_delta usage carries input_tokens as well as
// output_tokens (current Open WebUI, and what the Anthropic SDK accumulates); a stream
// that opened a tool_use block and finished with "stop" reports stop_reason tool_use;
// argument fragments that arrived before the call's name are sent when its block opens
// (upstream drops them, leaving the client JSON that does not parse); an upstream error
// or a cut stream ends with an `error` event instead of a normal message_stop (see
// Fail).
type MessagesStream struct {
	id          string
	model       string
	inputTokens int64
	newToolID   func() string

	started   bool
	finished  bool
	nextBlock int  // index the next opened block gets
	textOpen  bool // a text block is open at index nextBlock
	hadTool   bool // a tool_use block was opened (text is dropped from then on)
	tools     []*streamTool
	byIndex   []indexRoute
	finish    string
	usage     json.RawMessage // last upstream usage seen (copied)
	chunk     ChatChunk       // decode target, reused
}

type streamTool struct {
	id      string
	name    string
	args    []byte
	block   int
	started bool
	stopped bool
	scan    jsonEnd
}

type indexRoute struct {
	index int
	tool  *streamTool
}

// NewMessagesStream returns a converter for one streamed answer.
func NewMessagesStream(opts MessagesStreamOptions) *MessagesStream {
	s := &MessagesStream{id: opts.ID, model: opts.Model, inputTokens: opts.InputTokens, newToolID: opts.NewToolUseID}
	if s.id == "" {
		s.id = NewMessageID()
	}
	if s.newToolID == nil {
		s.newToolID = NewToolUseID
	}
	return s
}

// Start appends message_start (once; later calls append nothing). Feed and Finish call
// it when needed, so a caller may skip it; calling it first sends the event before the
// upstream's first chunk arrives.
func (s *MessagesStream) Start(dst []byte) []byte {
	if s.started {
		return dst
	}
	s.started = true
	dst = append(dst, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"...)
	dst = appendString(dst, s.id)
	dst = append(dst, `,"type":"message","role":"assistant","content":[],"model":`...)
	dst = appendString(dst, s.model)
	dst = append(dst, `,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	dst = appendInt(dst, s.inputTokens)
	return append(dst, ",\"output_tokens\":0}}}\n\n"...)
}

// Feed converts one upstream SSE data payload (a chat.completion.chunk). `[DONE]`, `{}`
// and payloads that do not decode as a chunk produce nothing.
func (s *MessagesStream) Feed(dst, data []byte) []byte {
	dst = s.Start(dst)
	if len(data) < 3 || data[0] != '{' { // `{}`, `[DONE]`, garbage
		return dst
	}
	if DecodeChunk(data, &s.chunk) != nil {
		return dst
	}
	return s.FeedChunk(dst, &s.chunk)
}

// FeedChunk converts one decoded chunk.
func (s *MessagesStream) FeedChunk(dst []byte, c *ChatChunk) []byte {
	dst = s.Start(dst)
	if s.finished {
		return dst
	}
	if u := c.Usage; len(u) > 0 && u[0] == '{' {
		s.usage = append(s.usage[:0], u...)
	}
	if len(c.Choices) == 0 {
		return dst
	}
	ch := &c.Choices[0]
	if ch.Delta.Content != "" && !s.hadTool {
		if !s.textOpen {
			s.textOpen = true
			dst = append(dst, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
			dst = appendInt(dst, int64(s.nextBlock))
			dst = append(dst, ",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"...)
		}
		dst = append(dst, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
		dst = appendInt(dst, int64(s.nextBlock))
		dst = append(dst, `,"delta":{"type":"text_delta","text":`...)
		dst = appendString(dst, ch.Delta.Content)
		dst = append(dst, "}}\n\n"...)
	}
	calls := ch.Delta.ToolCalls
	if len(calls) == 0 && ch.Message != nil {
		calls = ch.Message.ToolCalls
	}
	if len(calls) > 0 {
		if s.textOpen {
			dst = appendBlockStop(dst, s.nextBlock)
			s.textOpen = false
			s.nextBlock++
		}
		for i := range calls {
			dst = s.toolDelta(dst, &calls[i])
		}
	}
	if ch.FinishReason != "" {
		s.finish = ch.FinishReason
	}
	return dst
}

func (s *MessagesStream) toolDelta(dst []byte, tc *ToolCall) []byte {
	index := 0
	if tc.Index != nil {
		index = *tc.Index
	}
	var t *streamTool
	if tc.ID != "" {
		for _, x := range s.tools {
			if x.id == tc.ID {
				t = x
				break
			}
		}
		if t == nil {
			t = &streamTool{id: tc.ID}
			s.tools = append(s.tools, t)
		}
		s.route(index, t)
	} else {
		for _, r := range s.byIndex {
			if r.index == index {
				t = r.tool
				break
			}
		}
		if t == nil {
			t = &streamTool{id: s.newToolID()}
			s.tools = append(s.tools, t)
			s.route(index, t)
		}
	}
	if t.name == "" && tc.Function.Name != "" {
		t.name = tc.Function.Name
	}
	if !t.started && t.name != "" {
		dst = s.startTool(dst, t)
	}
	if frag := tc.Function.Arguments; frag != "" {
		t.args = append(t.args, frag...)
		if t.started && !t.stopped {
			dst = appendInputDelta(dst, t.block, string(frag))
			if t.scan.feed([]byte(frag)) && json.Valid(t.args) {
				t.stopped = true
				dst = appendBlockStop(dst, t.block)
			}
		}
	}
	return dst
}

func (s *MessagesStream) route(index int, t *streamTool) {
	for i := range s.byIndex {
		if s.byIndex[i].index == index {
			s.byIndex[i].tool = t
			return
		}
	}
	s.byIndex = append(s.byIndex, indexRoute{index: index, tool: t})
}

func (s *MessagesStream) startTool(dst []byte, t *streamTool) []byte {
	t.started = true
	t.block = s.nextBlock
	s.nextBlock++
	s.hadTool = true
	dst = append(dst, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	dst = appendInt(dst, int64(t.block))
	dst = append(dst, `,"content_block":{"type":"tool_use","id":`...)
	dst = appendString(dst, t.id)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, t.name)
	dst = append(dst, ",\"input\":{}}}\n\n"...)
	// Arguments that arrived before the name was known are sent now.
	if len(t.args) > 0 {
		dst = appendInputDelta(dst, t.block, string(t.args))
		if t.scan.feed(t.args) && json.Valid(t.args) {
			t.stopped = true
			dst = appendBlockStop(dst, t.block)
		}
	}
	return dst
}

func appendInputDelta(dst []byte, index int, partial string) []byte {
	dst = append(dst, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	dst = appendInt(dst, int64(index))
	dst = append(dst, `,"delta":{"type":"input_json_delta","partial_json":`...)
	dst = appendString(dst, partial)
	return append(dst, "}}\n\n"...)
}

func appendBlockStop(dst []byte, index int) []byte {
	dst = append(dst, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	dst = appendInt(dst, int64(index))
	return append(dst, "}\n\n"...)
}

// StopReason is the stop_reason Finish will write.
func (s *MessagesStream) StopReason() string {
	r := StopReason(s.finish)
	if r == "end_turn" && s.hadTool {
		r = "tool_use"
	}
	return r
}

// Finish appends the closing events: flushed tools, open blocks closed, message_delta and
// message_stop. Later calls append nothing.
func (s *MessagesStream) Finish(dst []byte) []byte {
	dst = s.Start(dst)
	if s.finished {
		return dst
	}
	dst = s.closeBlocks(dst)
	dst = append(dst, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"...)
	dst = appendString(dst, s.StopReason())
	dst = append(dst, `,"stop_sequence":null},"usage":`...)
	u := deriveMessagesUsage(s.usage, s.inputTokens)
	dst = u.appendJSON(dst)
	dst = append(dst, "}\n\n"...)
	return append(dst, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
}

func (s *MessagesStream) closeBlocks(dst []byte) []byte {
	s.finished = true
	for _, t := range s.tools {
		if !t.started && t.name != "" {
			t.started = true
			t.block = s.nextBlock
			s.nextBlock++
			s.hadTool = true
			dst = append(dst, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
			dst = appendInt(dst, int64(t.block))
			dst = append(dst, `,"content_block":{"type":"tool_use","id":`...)
			dst = appendString(dst, t.id)
			dst = append(dst, `,"name":`...)
			dst = appendString(dst, t.name)
			dst = append(dst, ",\"input\":{}}}\n\n"...)
			if len(t.args) > 0 {
				dst = appendInputDelta(dst, t.block, string(t.args))
			}
		}
	}
	if s.textOpen {
		s.textOpen = false
		dst = appendBlockStop(dst, s.nextBlock)
		s.nextBlock++
	}
	for _, t := range s.tools {
		if t.started && !t.stopped {
			t.stopped = true
			dst = appendBlockStop(dst, t.block)
		}
	}
	return dst
}

// Fail appends the end of a stream whose upstream failed: open blocks are closed and an
// `error` event {"type":"error","error":{"type":"api_error","message":...}} is written
// (the event Anthropic's API and SDKs use for a failure after the stream started), with
// no message_delta/message_stop. (0.10.2 logs the failure and ends the stream as if it had
// finished normally; a client then cannot tell a cut answer from a complete one.)
func (s *MessagesStream) Fail(dst []byte, message string) []byte {
	dst = s.Start(dst)
	if s.finished {
		return dst
	}
	dst = s.closeBlocks(dst)
	dst = append(dst, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":"...)
	dst = appendString(dst, message)
	return append(dst, "}}\n\n"...)
}

// StreamChatAsMessages reads a chat-completions SSE stream and writes the messages-format
// event stream to w, flushing after each upstream event when w has a Flush method. It
// returns nil after a clean end ([DONE]); on an upstream error or a stream cut before
// [DONE] it writes the error event (Fail) and returns the error; a write error is
// returned as is.
func StreamChatAsMessages(w io.Writer, src *SSEReader, opts MessagesStreamOptions) error {
	s := NewMessagesStream(opts)
	f, _ := w.(flusher)
	buf := s.Start(make([]byte, 0, 1024))
	write := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := w.Write(buf)
		buf = buf[:0]
		if err == nil && f != nil {
			f.Flush()
		}
		return err
	}
	if err := write(); err != nil {
		return err
	}
	for {
		ev, err := src.Next()
		if err == io.EOF {
			buf = s.Finish(buf)
			return write()
		}
		if err != nil {
			buf = s.Fail(buf, streamErrorMessage(err))
			if werr := write(); werr != nil {
				return werr
			}
			return err
		}
		buf = s.Feed(buf, ev.Data)
		if err := write(); err != nil {
			return err
		}
	}
}

// jsonEnd tracks, fragment by fragment, whether accumulated JSON text can be complete: it
// follows string and nesting state so a tool's arguments are validated (json.Valid) only
// when their top-level value has just closed, not after every fragment (which would be
// quadratic in the argument length). Scalars (no container) are always "maybe complete".
type jsonEnd struct {
	depth   int
	inStr   bool
	esc     bool
	opened  bool // a top-level container has started
	scalar  bool // the top-level value is not a container
	started bool
}

// feed consumes frag and reports whether the text so far may be a complete value.
func (j *jsonEnd) feed(frag []byte) bool {
	maybe := false
	for _, c := range frag {
		if !j.started {
			switch c {
			case ' ', '\t', '\n', '\r':
				continue
			case '{', '[':
				j.started, j.opened, j.depth = true, true, 1
				continue
			default:
				j.started, j.scalar = true, true
			}
		}
		if j.scalar {
			continue
		}
		switch {
		case j.esc:
			j.esc = false
		case j.inStr:
			if c == '\\' {
				j.esc = true
			} else if c == '"' {
				j.inStr = false
			}
		case c == '"':
			j.inStr = true
		case c == '{' || c == '[':
			j.depth++
		case c == '}' || c == ']':
			j.depth--
			if j.depth == 0 {
				maybe = true
			}
		}
	}
	if j.scalar {
		return true
	}
	return maybe || (j.opened && j.depth <= 0)
}
