package llm

import (
	"io"
	"testing"
)

// repeatReader yields line n times, then tail, in reads of at most 4 KiB (about what a
// network read gives), so a benchmark op is one streamed chunk without holding the whole
// stream in memory.
type repeatReader struct {
	line []byte
	n    int
	off  int
	tail []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if len(p) > 4096 {
		p = p[:4096]
	}
	total := 0
	for len(p) > 0 {
		if r.n == 0 {
			if len(r.tail) == 0 {
				break
			}
			k := copy(p, r.tail)
			r.tail = r.tail[k:]
			total += k
			p = p[k:]
			continue
		}
		k := copy(p, r.line[r.off:])
		r.off += k
		total += k
		p = p[k:]
		if r.off == len(r.line) {
			r.off = 0
			r.n--
		}
	}
	if total == 0 {
		return 0, io.EOF
	}
	return total, nil
}

const (
	benchOllamaLine = `{"model":"llama3.1:8b","created_at":"2026-11-22T02:53:06.313611574Z","message":{"role":"assistant","content":" the quick"},"done":false}` + "\n"
	benchOllamaDone = `{"model":"llama3.1:8b","created_at":"2026-11-22T02:53:06.377143985Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":377338003,"load_duration":300985248,"prompt_eval_count":23,"prompt_eval_duration":10963845,"eval_count":8,"eval_duration":63526511}` + "\n"
	benchSSELine    = `data: {"id":"chatcmpl-363","object":"chat.completion.chunk","created":1795315986,"model":"gpt-4o-mini","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"content":" the quick"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	benchSSEDone    = `data: {"id":"chatcmpl-363","object":"chat.completion.chunk","created":1795315986,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
)

// BenchmarkOllamaToOpenAIStream: one op = one NDJSON line read, decoded, converted to an
// SSE chunk and written (StreamOllamaAsOpenAI end to end).
func BenchmarkOllamaToOpenAIStream(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchOllamaLine)))
	src := &repeatReader{line: []byte(benchOllamaLine), n: b.N, tail: []byte(benchOllamaDone)}
	b.ResetTimer()
	if err := StreamOllamaAsOpenAI(io.Discard, src, OllamaToOpenAIOptions{ID: "chatcmpl-x", Created: 1}, NDJSONOptions{}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSSEReader: one op = one OpenAI chunk event read (line split, JSON validated,
// error-checked).
func BenchmarkSSEReader(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchSSELine)))
	r := NewSSEReader(&repeatReader{line: []byte(benchSSELine), n: b.N, tail: []byte("data: [DONE]\n\n")}, SSEOptions{MaxLineSize: 1 << 20})
	b.ResetTimer()
	for {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			break
		}
	}
}

// BenchmarkSSEReaderDecode: one op = one chunk read and decoded into a reused ChatChunk
// (what the pipeline does to inspect a relayed chunk).
func BenchmarkSSEReaderDecode(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchSSELine)))
	r := NewSSEReader(&repeatReader{line: []byte(benchSSELine), n: b.N, tail: []byte("data: [DONE]\n\n")}, SSEOptions{})
	var c ChatChunk
	b.ResetTimer()
	for {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			break
		}
		if err := DecodeChunk(ev.Data, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMessagesStream: one op = one OpenAI chunk read, decoded and converted to a
// messages-format content_block_delta event and written (StreamChatAsMessages end to end).
func BenchmarkMessagesStream(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchSSELine)))
	src := NewSSEReader(&repeatReader{line: []byte(benchSSELine), n: b.N, tail: []byte(benchSSEDone)}, SSEOptions{})
	b.ResetTimer()
	if err := StreamChatAsMessages(io.Discard, src, MessagesStreamOptions{ID: "msg_x", Model: "m"}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMessagesStreamToolArgs: one op = one tool-call argument fragment.
func BenchmarkMessagesStreamToolArgs(b *testing.B) {
	b.ReportAllocs()
	open := "data: " + toolOpen(0, "call_1", "search") + "\n\ndata: " + toolArgs(0, `{"q": "`) + "\n\n"
	frag := "data: " + toolArgs(0, "abcd") + "\n\n"
	end := "data: " + toolArgs(0, `"}`) + "\n\ndata: [DONE]\n\n"
	src := NewSSEReader(io.MultiReader(
		&repeatReader{line: []byte(open), n: 1},
		&repeatReader{line: []byte(frag), n: b.N, tail: []byte(end)}), SSEOptions{})
	b.ResetTimer()
	if err := StreamChatAsMessages(io.Discard, src, MessagesStreamOptions{ID: "msg_x", Model: "m"}); err != nil {
		b.Fatal(err)
	}
}
