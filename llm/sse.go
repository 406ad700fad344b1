package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// SSEOptions configure an SSEReader.
type SSEOptions struct {
	// MaxLineSize is CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE (COMPAT §4.5): a line
	// longer than this many bytes (counted as upstream counts it, up to the "\n") is never
	// buffered whole; it is replaced by a `data: {}` event, which consumers ignore. That is
	// upstream's "skip mode": each further oversized line is replaced the same way, and the
	// first normal-sized line is read normally again. Zero or negative means no limit.
	MaxLineSize int
}

// SSEEvent is one `data:` line of an OpenAI-compatible event stream.
type SSEEvent struct {
	// Event is the value of the last `event:` line before this data line, since the last
	// blank line ("" when none).
	Event string
	// Data is the payload after `data:` (one optional space removed, surrounding space
	// trimmed): always one syntactically valid JSON object. It aliases the reader's buffer
	// and is valid only until the next call to Next.
	Data []byte
}

// SSEReader reads an OpenAI-compatible server-sent-event stream incrementally, never
// holding more than one line of it in memory.
//
// Each `data:` line is one event, as Open WebUI reads these streams (line by line, not by
// joining multi-line data fields): providers put one JSON object per data line. Comment
// lines (`: ping`), `id:` and `retry:` lines and blank lines are consumed silently; lines
// that are not SSE at all and data that is not a JSON object are skipped and counted
// (Garbage). `data: [DONE]` ends the stream: Next returns io.EOF and reads no further.
//
// Errors from Next are sticky:
//   - io.EOF: `data: [DONE]` was seen (a clean end);
//   - ErrStreamEndedEarly: the body ended without `data: [DONE]`;
//   - *UpstreamError (Status 0): an event carried a top-level "error" member, or was named
//     `event: error`; the stream is over;
//   - anything else: the underlying read failed (for example the context was cancelled).
type SSEReader struct {
	lr        *lineReader
	event     string
	err       error
	done      bool
	garbage   int
	oversized int
}

// NewSSEReader returns a reader of the event stream in r.
func NewSSEReader(r io.Reader, opts SSEOptions) *SSEReader {
	return &SSEReader{lr: newLineReader(r, opts.MaxLineSize)}
}

// Next returns the next data event.
func (s *SSEReader) Next() (SSEEvent, error) {
	for s.err == nil {
		line, err := s.lr.readLine()
		if err != nil {
			switch {
			case errors.Is(err, errOversized):
				s.oversized++
				// A fresh slice: callers may keep or modify Data.
				return SSEEvent{Event: s.event, Data: []byte("{}")}, nil
			case err == io.EOF:
				s.err = ErrStreamEndedEarly
			default:
				s.err = err
			}
			break
		}
		if len(line) == 0 {
			s.event = ""
			continue
		}
		switch {
		case line[0] == ':':
			// comment / keep-alive
		case bytes.HasPrefix(line, []byte("data:")):
			data := bytes.TrimSpace(line[5:])
			if len(data) == 0 {
				continue
			}
			if string(data) == "[DONE]" {
				s.done = true
				s.err = io.EOF
				break
			}
			if data[0] != '{' || !json.Valid(data) {
				s.garbage++
				continue
			}
			if ue := streamError(data, s.event); ue != nil {
				s.err = ue
				break
			}
			return SSEEvent{Event: s.event, Data: data}, nil
		case bytes.HasPrefix(line, []byte("event:")):
			s.event = string(bytes.TrimSpace(line[6:]))
		case bytes.HasPrefix(line, []byte("id:")), bytes.HasPrefix(line, []byte("retry:")):
		default:
			s.garbage++
		}
	}
	return SSEEvent{}, s.err
}

// AppendSSEEvent appends ev in SSE framing, for a relay: `event: <name>` when it has one,
// then `data: <data>` and a blank line. Oversized lines relay as `data: {}` (COMPAT §4.5).
func AppendSSEEvent(dst []byte, ev SSEEvent) []byte {
	if ev.Event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, ev.Event...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, ev.Data...)
	return append(dst, "\n\n"...)
}

// AppendSSEDone appends the OpenAI stream terminator `data: [DONE]`.
func AppendSSEDone(dst []byte) []byte { return append(dst, "data: [DONE]\n\n"...) }

// Done reports whether `data: [DONE]` was seen.
func (s *SSEReader) Done() bool { return s.done }

// Garbage is the number of lines skipped because they were not SSE or their data was not
// a JSON object.
func (s *SSEReader) Garbage() int { return s.garbage }

// Oversized is the number of lines replaced by `data: {}` under MaxLineSize.
func (s *SSEReader) Oversized() int { return s.oversized }

// NDJSONOptions configure an NDJSONReader.
type NDJSONOptions struct {
	// MaxLineSize drops (and counts as garbage) any line longer than this many bytes
	// without buffering it. Zero or negative means no limit.
	MaxLineSize int
}

// NDJSONReader reads a newline-delimited JSON stream (Ollama's /api/chat, /api/generate,
// /api/pull, ...) one object at a time.
//
// Blank lines are skipped; lines that are not a JSON object are skipped and counted
// (Garbage); the last line may lack its newline. Errors from Next are sticky: io.EOF at the
// end of the body; *UpstreamError (Status 0) for an `{"error": "..."}` line; or the
// underlying read error. Whether the stream ended before its `"done": true` line is for
// the caller to judge (see OllamaChatStream).
type NDJSONReader struct {
	lr      *lineReader
	err     error
	garbage int
}

// NewNDJSONReader returns a reader of the NDJSON stream in r.
func NewNDJSONReader(r io.Reader, opts NDJSONOptions) *NDJSONReader {
	return &NDJSONReader{lr: newLineReader(r, opts.MaxLineSize)}
}

// Next returns the next JSON object line. The slice aliases the reader's buffer and is
// valid only until the next call.
func (n *NDJSONReader) Next() ([]byte, error) {
	for n.err == nil {
		line, err := n.lr.readLine()
		if err != nil {
			if errors.Is(err, errOversized) {
				n.garbage++
				continue
			}
			n.err = err
			break
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' || !json.Valid(line) {
			n.garbage++
			continue
		}
		if ue := streamError(line, ""); ue != nil {
			n.err = ue
			break
		}
		return line, nil
	}
	return nil, n.err
}

// Garbage is the number of lines skipped because they were not a JSON object or were
// over the size limit.
func (n *NDJSONReader) Garbage() int { return n.garbage }
