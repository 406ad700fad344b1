package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// seedFixtureBodies adds the recorded response bodies (and request bodies) as seeds.
func seedFixtureBodies(f *testing.F, add func([]byte)) {
	entries, _ := os.ReadDir(fixtureDir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(fixtureDir, e.Name()))
		if err != nil {
			continue
		}
		ex, err := parseExchange(e.Name(), data)
		if err != nil {
			continue
		}
		add(ex.RespBody)
		add(ex.ReqBody)
	}
}

type sseResult struct {
	events []string
	err    string
}

func runSSE(r io.Reader, max int) (sseResult, *SSEReader) {
	sr := NewSSEReader(r, SSEOptions{MaxLineSize: max})
	var res sseResult
	for i := 0; ; i++ {
		ev, err := sr.Next()
		if err != nil {
			res.err = errClass(err)
			return res, sr
		}
		res.events = append(res.events, ev.Event+"\x00"+string(ev.Data))
	}
}

func errClass(err error) string {
	var ue *UpstreamError
	switch {
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, ErrStreamEndedEarly):
		return "early"
	case errors.As(err, &ue):
		return "upstream:" + ue.Message
	default:
		return "other:" + err.Error()
	}
}

func FuzzSSEReader(f *testing.F) {
	seedFixtureBodies(f, func(b []byte) { f.Add(b, 0) })
	f.Add([]byte(sse(chunk(`{"content":"x"}`, ""), "RAW:: ping\r\n\r\nevent: e\r\n", `{"error":{"message":"m"}}`)), 16)
	f.Add([]byte("data: {\"a\":1}\ndata: [DONE]"), 5)
	f.Add([]byte("data:{}\n\n\n\rdata: \xff\n"), 3)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		max %= 300
		whole, sr := runSSE(bytes.NewReader(data), max)
		for _, ev := range whole.events {
			_, d, _ := strings.Cut(ev, "\x00")
			if !json.Valid([]byte(d)) || d[0] != '{' {
				t.Fatalf("event data is not a JSON object: %q", d)
			}
			if max > 0 && len(d) > max && d != "{}" { // {} replaces an oversized line
				t.Fatalf("event of %d bytes under limit %d", len(d), max)
			}
		}
		if max > 0 && len(sr.lr.buf) > max+2 {
			t.Fatalf("buffer %d over limit %d", len(sr.lr.buf), max)
		}
		// The way the body is split into reads must not change anything.
		bytewise, _ := runSSE(iotest.OneByteReader(bytes.NewReader(data)), max)
		if strings.Join(whole.events, "\n") != strings.Join(bytewise.events, "\n") || whole.err != bytewise.err {
			t.Fatalf("split reads differ:\n%q %s\n%q %s", whole.events, whole.err, bytewise.events, bytewise.err)
		}
	})
}

func FuzzNDJSONReader(f *testing.F) {
	seedFixtureBodies(f, func(b []byte) { f.Add(b, 0) })
	f.Add([]byte("{\"a\":1}\r\n\n{\"error\":\"x\"}\n{bad"), 8)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		max %= 300
		read := func(r io.Reader) ([]string, string) {
			nd := NewNDJSONReader(r, NDJSONOptions{MaxLineSize: max})
			var out []string
			for {
				line, err := nd.Next()
				if err != nil {
					return out, errClass(err)
				}
				if !json.Valid(line) || line[0] != '{' {
					t.Fatalf("line is not a JSON object: %q", line)
				}
				out = append(out, string(line))
			}
		}
		a, ea := read(bytes.NewReader(data))
		b, eb := read(iotest.OneByteReader(bytes.NewReader(data)))
		if strings.Join(a, "\n") != strings.Join(b, "\n") || ea != eb {
			t.Fatalf("split reads differ: %q %s / %q %s", a, ea, b, eb)
		}
		// The typed Ollama reader and converter survive anything.
		var out bytes.Buffer
		_ = StreamOllamaAsOpenAI(&out, bytes.NewReader(data), OllamaToOpenAIOptions{ID: "x", Created: 1}, NDJSONOptions{MaxLineSize: max})
		for _, ev := range strings.SplitAfter(out.String(), "\n\n") {
			if ev == "" {
				continue
			}
			d, ok := strings.CutPrefix(ev, "data: ")
			d = strings.TrimSuffix(d, "\n\n")
			if !ok || strings.Contains(d, "\n") || (d != "[DONE]" && !json.Valid([]byte(d))) {
				t.Fatalf("bad SSE event %q", ev)
			}
		}
	})
}

func FuzzMessagesToChat(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","system":[{"type":"text","text":"s","cache_control":{}}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":1,"content":[{"type":"document","title":null,"source":{"type":"text","data":"d"}},{"type":"search_result","content":[{"type":"text","text":"x"}]}]},{"type":"image","source":{"type":"base64","data":5}},{"type":"tool_use","input":[1]}]}],"tools":[{"name":"n","input_schema":null}],"tool_choice":{"type":"tool"}}`))
	if b, err := os.ReadFile(filepath.Join(fixtureDir, "18-v1-messages-stream.http")); err == nil {
		if ex, err := parseExchange("18", b); err == nil {
			f.Add(ex.ReqBody)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := MessagesToChat(body)
		if err != nil {
			return
		}
		out := req.AppendJSON(nil)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON output %s", out)
		}
		back, err := ParseChatRequest(out)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		if _, err := back.Messages(); err != nil {
			t.Fatalf("messages do not decode: %v\n%s", err, out)
		}
		// The chat request goes on to Ollama for local models.
		if _, err := ChatToOllama(back); err != nil && !strings.Contains(err.Error(), "neither a string") {
			t.Fatalf("ChatToOllama: %v", err)
		}
	})
}

func FuzzMessagesStream(f *testing.F) {
	seedFixtureBodies(f, func(b []byte) { f.Add(b) })
	f.Add([]byte(sse(toolOpen(0, "a", "x"), toolArgs(0, `{"k":`), toolOpen(1, "b", "y"), toolArgs(1, "[1]"), toolArgs(0, "2}"), chunk(`{"content":"t"}`, "stop"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		_ = StreamChatAsMessages(&out, NewSSEReader(bytes.NewReader(data), SSEOptions{}), MessagesStreamOptions{ID: "msg_f", Model: "m"})
		started, stopped := map[int]bool{}, map[int]bool{}
		for _, ev := range strings.SplitAfter(out.String(), "\n\n") {
			if ev == "" {
				continue
			}
			name, rest, _ := strings.Cut(ev, "\n")
			d, ok := strings.CutPrefix(rest, "data: ")
			d = strings.TrimSuffix(d, "\n\n")
			if !ok || !strings.HasPrefix(name, "event: ") || strings.Contains(d, "\n") || !json.Valid([]byte(d)) {
				t.Fatalf("bad event %q", ev)
			}
			var e struct {
				Type  string
				Index *int
			}
			json.Unmarshal([]byte(d), &e)
			if e.Type != name[len("event: "):] {
				t.Fatalf("type %q under event %q", e.Type, name)
			}
			switch e.Type {
			case "content_block_start":
				if started[*e.Index] {
					t.Fatalf("block %d started twice", *e.Index)
				}
				started[*e.Index] = true
			case "content_block_delta":
				if !started[*e.Index] || stopped[*e.Index] {
					t.Fatalf("delta outside block %d", *e.Index)
				}
			case "content_block_stop":
				if !started[*e.Index] || stopped[*e.Index] {
					t.Fatalf("bad stop %d", *e.Index)
				}
				stopped[*e.Index] = true
			}
		}
		for i := range started {
			if !stopped[i] {
				t.Fatalf("block %d not stopped", i)
			}
		}
	})
}
