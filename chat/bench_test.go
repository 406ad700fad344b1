package chat

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"hearth/realtime"
	"hearth/store"
)

// Per-chunk CPU cost of the completion paths (figures for issue 4). The
// upstream is an in-memory transport, so what is measured is Hearth's own
// work: the request, the parse of every chunk, the relay or conversion, the
// writes to the client (io.Discard). ns/chunk = ns/op / chunks.

const benchChunks = 1000

// memTransport answers every request with a fixed body, without a network.
type memTransport struct {
	ctype string
	body  []byte
}

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {m.ctype}},
		Body: io.NopCloser(bytes.NewReader(m.body)), Request: r}, nil
}

// openAIStream is a realistic OpenAI stream: chunks of a few characters
// with the usual envelope (about 230 bytes each).
func openAIStream(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-9f8e7d6c5b4a","object":"chat.completion.chunk","created":1795315986,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"content":" tok%d"},"logprobs":null,"finish_reason":null}]}`+"\n\n", i%100)
	}
	b.WriteString(`data: {"id":"chatcmpl-9f8e7d6c5b4a","object":"chat.completion.chunk","created":1795315986,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

// ollamaStream is an Ollama /api/chat NDJSON stream of n lines.
func ollamaStream(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"model":"llama3.2:3b","created_at":"2026-11-22T02:53:06.313611574Z","message":{"role":"assistant","content":" tok%d"},"done":false}`+"\n", i%100)
	}
	b.WriteString(`{"model":"llama3.2:3b","created_at":"2026-11-22T02:53:06.377143985Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":377338003,"load_duration":300985248,"prompt_eval_count":23,"prompt_eval_duration":10963845,"eval_count":1000,"eval_duration":63526511}` + "\n")
	return b.Bytes()
}

func benchPipeline(b *testing.B, kind string, body []byte, st Store, em Emitter) *Pipeline {
	ctype := "text/event-stream"
	t := &Target{ModelID: "m", UpstreamID: "up", Conn: Connection{Kind: kind, BaseURL: "http://upstream.invalid/v1"}}
	if kind == KindOllama {
		ctype = "application/x-ndjson"
	}
	res := &fakeResolver{targets: map[string]*Target{"m": t}}
	return New(Options{Store: st, Resolver: res, Emitter: em, HTTPClient: &http.Client{Transport: memTransport{ctype, body}},
		Settings: func() Settings { return Settings{DeltaChunkSize: 1} }})
}

func benchDirect(b *testing.B, kind string, body []byte) {
	p := benchPipeline(b, kind, body, nil, nil)
	req := Request{Actor: store.Actor{UserID: "u", Role: "user"}, Body: []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := p.Complete(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Stream(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChunks, "ns/chunk")
}

// BenchmarkRelayOpenAISSE: mode 3 relay of an OpenAI SSE stream.
func BenchmarkRelayOpenAISSE(b *testing.B) { benchDirect(b, KindOpenAI, openAIStream(benchChunks)) }

// BenchmarkRelayOllamaAsOpenAI: mode 3 Ollama NDJSON → OpenAI SSE.
func BenchmarkRelayOllamaAsOpenAI(b *testing.B) {
	benchDirect(b, KindOllama, ollamaStream(benchChunks))
}

// BenchmarkUpstreamAlone is the baseline: reading the same body with no
// processing at all.
func BenchmarkUpstreamAlone(b *testing.B) {
	body := openAIStream(benchChunks)
	b.SetBytes(int64(len(body)))
	for range b.N {
		io.Copy(io.Discard, bytes.NewReader(body))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChunks, "ns/chunk")
}

type discardEmitter struct{}

func (discardEmitter) Emit(string, realtime.Event) {}

// BenchmarkStoredStream: mode 2 over an OpenAI stream with a cumulative
// chat:completion event per chunk (CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE=1,
// the worst case) and the single final write to SQLite.
func BenchmarkStoredStream(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	u, _ := st.CreateUser(ctx, store.NewUser{Email: "a@example.com", Name: "A", Role: "user"})
	a := store.Actor{UserID: u.ID, Role: u.Role}
	p := benchPipeline(b, KindOpenAI, openAIStream(benchChunks), st, discardEmitter{})
	patch, _ := store.ParseChat([]byte(`{"title":"t","history":{"currentId":"a1","messages":{"u1":{"id":"u1","parentId":null,"childrenIds":["a1"],"role":"user","content":"hi"},"a1":{"id":"a1","parentId":"u1","childrenIds":[],"role":"assistant","content":""}}}}`))
	chatID, err := st.CreateChat(ctx, a, store.NewChat{Chat: patch})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Actor: a, Body: []byte(`{"model":"m","stream":true,"chat_id":"` + chatID + `","id":"a1","messages":[{"role":"user","content":"hi"}]}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := p.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChunks, "ns/chunk")
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p.Tasks().Wait(wctx)
}
