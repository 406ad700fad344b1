package llm

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllSSE drains r and returns the events as "event|data" strings and the final error.
func readAllSSE(r *SSEReader) ([]string, error) {
	var out []string
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev.Event+"|"+string(ev.Data))
	}
}

// readers returns the same input as several readers: whole, one byte per Read, and
// data-error at EOF.
func readers(s string) map[string]func() io.Reader {
	return map[string]func() io.Reader{
		"whole":   func() io.Reader { return strings.NewReader(s) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"halves":  func() io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"dataerr": func() io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
	}
}

func TestSSEReader(t *testing.T) {
	type want struct {
		events  []string
		err     error  // sentinel, or nil to check errMsg
		errMsg  string // *UpstreamError message
		garbage int
	}
	cases := []struct {
		name string
		in   string
		opts SSEOptions
		want want
	}{
		{
			name: "basic with done",
			in:   "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n",
			want: want{events: []string{`|{"a":1}`, `|{"a":2}`}, err: io.EOF},
		},
		{
			name: "crlf, comments, event names, id, retry",
			in:   ": ping\r\nevent: delta\r\nid: 7\r\nretry: 100\r\ndata: {\"a\":1}\r\n\r\ndata:{\"b\":2}\r\n\r\n:keepalive\r\ndata: [DONE]\r\n\r\n",
			want: want{events: []string{`delta|{"a":1}`, `|{"b":2}`}, err: io.EOF},
		},
		{
			name: "event name lasts until blank line",
			in:   "event: x\ndata: {\"a\":1}\ndata: {\"a\":2}\n\ndata: {\"a\":3}\n\ndata: [DONE]\n",
			want: want{events: []string{`x|{"a":1}`, `x|{"a":2}`, `|{"a":3}`}, err: io.EOF},
		},
		{
			name: "garbage lines skipped and counted",
			in:   "hello world\ndata: not json\ndata: {\"a\":1}\n\ndata: {broken\n<html>\ndata: 42\ndata: [1,2]\ndata: {\"a\":2}\ndata: [DONE]\n",
			want: want{events: []string{`|{"a":1}`, `|{"a":2}`}, err: io.EOF, garbage: 6},
		},
		{
			name: "empty data lines ignored",
			in:   "data:\ndata: \ndata: {\"a\":1}\ndata: [DONE]\n",
			want: want{events: []string{`|{"a":1}`}, err: io.EOF},
		},
		{
			name: "ends without done",
			in:   "data: {\"a\":1}\n\n",
			want: want{events: []string{`|{"a":1}`}, err: ErrStreamEndedEarly},
		},
		{
			name: "empty body",
			in:   "",
			want: want{err: ErrStreamEndedEarly},
		},
		{
			name: "final line without newline",
			in:   "data: {\"a\":1}\n\ndata: [DONE]",
			want: want{events: []string{`|{"a":1}`}, err: io.EOF},
		},
		{
			name: "last data line cut mid-json",
			in:   "data: {\"a\":1}\n\ndata: {\"a\":",
			want: want{events: []string{`|{"a":1}`}, err: ErrStreamEndedEarly, garbage: 1},
		},
		{
			name: "nothing read after done",
			in:   "data: [DONE]\n\ndata: {\"a\":1}\n\n",
			want: want{err: io.EOF},
		},
		{
			name: "error object mid-stream",
			in:   "data: {\"a\":1}\n\ndata: {\"error\":{\"message\":\"model overloaded\",\"type\":\"server_error\"}}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n",
			want: want{events: []string{`|{"a":1}`}, errMsg: "model overloaded"},
		},
		{
			name: "error string mid-stream",
			in:   "data: {\"error\":\"boom\"}\n\n",
			want: want{errMsg: "boom"},
		},
		{
			name: "named error event (anthropic style)",
			in:   "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			want: want{errMsg: "Overloaded"},
		},
		{
			name: "null error is not an error; error word in content is not either",
			in:   "data: {\"error\":null,\"a\":1}\n\ndata: {\"content\":\"error\"}\n\ndata: [DONE]\n\n",
			want: want{events: []string{`|{"error":null,"a":1}`, `|{"content":"error"}`}, err: io.EOF},
		},
		{
			name: "oversized line replaced by {} (skip mode), normal line read again",
			in:   "data: {\"a\":1}\n\ndata: {\"big\":\"" + strings.Repeat("x", 100) + "\"}\n" + strings.Repeat("y", 80) + "\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n",
			opts: SSEOptions{MaxLineSize: 40},
			want: want{events: []string{`|{"a":1}`, `|{}`, `|{}`, `|{"a":2}`}, err: io.EOF},
		},
		{
			name: "oversized line counted with its CR",
			in:   "data: {\"a\":12}\r\ndata: [DONE]\r\n",
			opts: SSEOptions{MaxLineSize: 14},
			want: want{events: []string{`|{}`}, err: io.EOF},
		},
		{
			name: "exactly max is kept",
			in:   "data: {\"a\":12}\ndata: [DONE]\n",
			opts: SSEOptions{MaxLineSize: 14},
			want: want{events: []string{`|{"a":12}`}, err: io.EOF},
		},
		{
			name: "oversized last line without newline",
			in:   "data: {\"a\":1}\n" + strings.Repeat("z", 50),
			opts: SSEOptions{MaxLineSize: 20},
			want: want{events: []string{`|{"a":1}`, `|{}`}, err: ErrStreamEndedEarly},
		},
		{
			name: "long line without limit",
			in:   "data: {\"big\":\"" + strings.Repeat("x", 20000) + "\"}\n\ndata: [DONE]\n\n",
			want: want{events: []string{`|{"big":"` + strings.Repeat("x", 20000) + `"}`}, err: io.EOF},
		},
	}
	for _, tc := range cases {
		for rname, mk := range readers(tc.in) {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				r := NewSSEReader(mk(), tc.opts)
				got, err := readAllSSE(r)
				if fmt.Sprint(got) != fmt.Sprint(tc.want.events) {
					t.Errorf("events\n got %q\nwant %q", got, tc.want.events)
				}
				if tc.want.errMsg != "" {
					var ue *UpstreamError
					if !errors.As(err, &ue) || ue.Message != tc.want.errMsg || ue.Status != 0 {
						t.Errorf("err = %v, want UpstreamError %q", err, tc.want.errMsg)
					}
				} else if err != tc.want.err {
					t.Errorf("err = %v, want %v", err, tc.want.err)
				}
				if r.Garbage() != tc.want.garbage {
					t.Errorf("garbage = %d, want %d", r.Garbage(), tc.want.garbage)
				}
				// Errors are sticky.
				if _, err2 := r.Next(); err2 != err {
					t.Errorf("second Next = %v, want %v", err2, err)
				}
			})
		}
	}
}

func TestSSEReaderMemoryBounded(t *testing.T) {
	// A 10 MB line under a 1 KB limit must never be buffered.
	huge := "data: {\"x\":\"" + strings.Repeat("a", 10<<20) + "\"}\ndata: {\"ok\":1}\ndata: [DONE]\n"
	r := NewSSEReader(strings.NewReader(huge), SSEOptions{MaxLineSize: 1024})
	got, err := readAllSSE(r)
	if err != io.EOF || fmt.Sprint(got) != `[|{} |{"ok":1}]` {
		t.Fatalf("got %q, %v", got, err)
	}
	if n := cap(r.lr.buf); n > 2048 {
		t.Errorf("buffer grew to %d bytes", n)
	}
	if r.Oversized() != 1 {
		t.Errorf("oversized = %d", r.Oversized())
	}
}

func TestSSEReaderFixtures(t *testing.T) {
	for _, name := range []string{"10-v1-chat-stream.http", "12-v1-chat-stream-usage.http"} {
		ex := loadFixture(t, name)
		for _, mode := range allModes {
			t.Run(name+"/"+mode.String(), func(t *testing.T) {
				srv := newFixtureServer(t, mode, ex)
				c := NewOpenAIClient(srv.URL+"/v1", "", srv.Client())
				res, err := c.ChatCompletion(t.Context(), ex.ReqBody)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Close()
				if !res.Streaming() {
					t.Fatal("not a stream")
				}
				r := NewSSEReader(res.Stream, SSEOptions{})
				got, err := readAllSSE(r)
				if err != io.EOF || !r.Done() || r.Garbage() != 0 {
					t.Fatalf("err=%v done=%v garbage=%d", err, r.Done(), r.Garbage())
				}
				var want []string
				for _, l := range strings.Split(string(ex.RespBody), "\n") {
					if d, ok := strings.CutPrefix(l, "data: "); ok && d != "[DONE]" {
						want = append(want, "|"+d)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("got %q\nwant %q", got, want)
				}
			})
		}
	}
}

func TestNDJSONReader(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		opts    NDJSONOptions
		want    []string
		err     error
		errMsg  string
		garbage int
	}{
		{name: "lines", in: "{\"a\":1}\n{\"a\":2}\n", want: []string{`{"a":1}`, `{"a":2}`}, err: io.EOF},
		{name: "last line without newline", in: "{\"a\":1}\n{\"a\":2}", want: []string{`{"a":1}`, `{"a":2}`}, err: io.EOF},
		{name: "crlf and blank lines", in: "\r\n{\"a\":1}\r\n\r\n  {\"a\":2}  \r\n", want: []string{`{"a":1}`, `{"a":2}`}, err: io.EOF},
		{name: "garbage", in: "oops\n{\"a\":1}\n{bad\n[1]\n\"s\"\n{\"a\":2}\n", want: []string{`{"a":1}`, `{"a":2}`}, err: io.EOF, garbage: 4},
		{name: "error line", in: "{\"a\":1}\n{\"error\":\"model 'nope' not found\"}\n{\"a\":2}\n", want: []string{`{"a":1}`}, errMsg: "model 'nope' not found"},
		{name: "oversized dropped", in: "{\"a\":1}\n{\"big\":\"" + strings.Repeat("x", 64) + "\"}\n{\"a\":2}\n", opts: NDJSONOptions{MaxLineSize: 32}, want: []string{`{"a":1}`, `{"a":2}`}, err: io.EOF, garbage: 1},
		{name: "empty", in: "", err: io.EOF},
	}
	for _, tc := range cases {
		for rname, mk := range readers(tc.in) {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				r := NewNDJSONReader(mk(), tc.opts)
				var got []string
				var err error
				for {
					var line []byte
					line, err = r.Next()
					if err != nil {
						break
					}
					got = append(got, string(line))
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("got %q want %q", got, tc.want)
				}
				if tc.errMsg != "" {
					var ue *UpstreamError
					if !errors.As(err, &ue) || ue.Message != tc.errMsg {
						t.Errorf("err = %v, want %q", err, tc.errMsg)
					}
				} else if err != tc.err {
					t.Errorf("err = %v, want %v", err, tc.err)
				}
				if r.Garbage() != tc.garbage {
					t.Errorf("garbage = %d, want %d", r.Garbage(), tc.garbage)
				}
			})
		}
	}
}

func TestOllamaChatStreamEndedEarly(t *testing.T) {
	ex := loadFixture(t, "04-chat-stream.http")
	body := string(ex.RespBody)
	cut := body[:strings.LastIndex(strings.TrimRight(body, "\n"), "\n")+1] // drop the done line
	s := NewOllamaChatStream(strings.NewReader(cut), NDJSONOptions{})
	n := 0
	var err error
	for {
		if _, err = s.Next(); err != nil {
			break
		}
		n++
	}
	if n != 3 || err != ErrStreamEndedEarly {
		t.Fatalf("lines=%d err=%v", n, err)
	}
	s = NewOllamaChatStream(strings.NewReader(body), NDJSONOptions{})
	n = 0
	for {
		if _, err = s.Next(); err != nil {
			break
		}
		n++
	}
	if n != 4 || err != io.EOF {
		t.Fatalf("lines=%d err=%v", n, err)
	}
}

func TestSSERelayReproducesUpstream(t *testing.T) {
	for _, name := range []string{"10-v1-chat-stream.http", "12-v1-chat-stream-usage.http"} {
		ex := loadFixture(t, name)
		r := NewSSEReader(iotest.HalfReader(strings.NewReader(string(ex.RespBody))), SSEOptions{MaxLineSize: 4096})
		var out []byte
		for {
			ev, err := r.Next()
			if err == io.EOF {
				out = AppendSSEDone(out)
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = AppendSSEEvent(out, ev)
		}
		if string(out) != string(ex.RespBody) {
			t.Errorf("%s: relay differs:\n%s", name, out)
		}
	}
	// Under a small limit every chunk line is replaced by `data: {}` (COMPAT §4.5).
	ex := loadFixture(t, "10-v1-chat-stream.http")
	r := NewSSEReader(strings.NewReader(string(ex.RespBody)), SSEOptions{MaxLineSize: 100})
	var out []byte
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		out = AppendSSEEvent(out, ev)
	}
	if want := strings.Repeat("data: {}\n\n", 4); string(out) != want || !r.Done() {
		t.Errorf("limited relay %q", out)
	}
	if got := string(AppendSSEEvent(nil, SSEEvent{Event: "x", Data: []byte(`{"a":1}`)})); got != "event: x\ndata: {\"a\":1}\n\n" {
		t.Errorf("named event %q", got)
	}
}

func TestSSEReaderNamedEventStreams(t *testing.T) {
	// Responses and messages streams name their events and have no [DONE]: the caller
	// knows their last event, and the reader reports the end as ErrStreamEndedEarly.
	for name, want := range map[string][]string{
		"16-v1-responses-stream.http": {"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
			"response.content_part.done", "response.output_item.done", "response.completed"},
		"18-v1-messages-stream.http": {"message_start", "content_block_start", "content_block_delta", "content_block_delta",
			"content_block_delta", "content_block_stop", "message_delta", "message_stop"},
	} {
		ex := loadFixture(t, name)
		r := NewSSEReader(iotest.OneByteReader(strings.NewReader(string(ex.RespBody))), SSEOptions{})
		var got []string
		var err error
		for {
			var ev SSEEvent
			if ev, err = r.Next(); err != nil {
				break
			}
			got = append(got, ev.Event)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || err != ErrStreamEndedEarly || r.Garbage() != 0 {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
}

func TestDecodeChunkReuse(t *testing.T) {
	ex := loadFixture(t, "12-v1-chat-stream-usage.http")
	r := NewSSEReader(strings.NewReader(string(ex.RespBody)), SSEOptions{})
	var c ChatChunk
	var text strings.Builder
	var finish string
	var usage []byte
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if err := DecodeChunk(ev.Data, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
			if c.Choices[0].FinishReason != "" {
				finish = c.Choices[0].FinishReason
			}
		}
		if c.Usage != nil && string(c.Usage) != "null" {
			usage = c.Usage
		}
		if c.ID != "chatcmpl-199" || c.Created != 1795315986 {
			t.Errorf("chunk id/created %q %d", c.ID, c.Created)
		}
	}
	if text.String() != ";t" || finish != "length" || string(usage) != `{"prompt_tokens":23,"completion_tokens":4,"total_tokens":27}` {
		t.Errorf("text %q finish %q usage %s", text.String(), finish, usage)
	}
	// Tool-call arguments sent as an object (some servers) decode as their JSON text.
	if err := DecodeChunk([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":{"a": 1}}}]}}]}`), &c); err != nil ||
		c.Choices[0].Delta.ToolCalls[0].Function.Arguments != `{"a":1}` || c.Usage != nil {
		t.Errorf("object arguments: %v %+v", err, c)
	}
}
