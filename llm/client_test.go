package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func fixtures(t *testing.T, names ...string) []exchange {
	var out []exchange
	for _, n := range names {
		out = append(out, loadFixture(t, n))
	}
	return out
}

func TestOllamaClient(t *testing.T) {
	exs := fixtures(t, "01-version.http", "02-tags.http", "03-show.http", "04-chat-stream.http",
		"06-generate-stream.http", "08-embed.http", "09-embeddings-legacy.http", "23-ps.http")
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			srv := newFixtureServer(t, mode, exs...)
			c := NewOllamaClient(srv.URL+"/", "secret-key", srv.Client())
			ctx := t.Context()

			v, err := c.Version(ctx)
			if err != nil || v != "0.0.0" {
				t.Fatalf("version %q %v", v, err)
			}
			if r := srv.lastRequest(); r.Path != "/api/version" || r.Header.Get("Authorization") != "Bearer secret-key" || r.Header.Get("Content-Type") != "" {
				t.Errorf("version request %+v", r)
			}

			tags, err := c.Tags(ctx)
			if err != nil || len(tags.Models) != 2 {
				t.Fatalf("tags %v %v", tags, err)
			}
			var info OllamaModelInfo
			if err := tags.Models[0].Decode("details", &info.Details); err != nil || tags.Models[0].Get("digest") == nil {
				t.Errorf("tags entry %v", err)
			}
			ps, err := c.PS(ctx)
			if err != nil || len(ps.Models) != 2 || ps.Models[0].Get("expires_at") == nil {
				t.Errorf("ps %v %v", ps, err)
			}

			show, err := c.Show(ctx, map[string]string{"model": "tiny"})
			if err != nil || !show.Has("modelfile") || !show.Has("model_info") {
				t.Errorf("show %v", err)
			}
			if r := srv.lastRequest(); string(r.Body) != `{"model":"tiny"}` || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("show request %s %v", r.Body, r.Header)
			}

			// Streamed chat: the body arrives unread, as NDJSON.
			chat := exs[3]
			res, err := c.Chat(ctx, chat.ReqBody)
			if err != nil || !res.Streaming() {
				t.Fatalf("chat %v", err)
			}
			st := NewOllamaChatStream(res.Stream, NDJSONOptions{})
			var text strings.Builder
			for {
				line, err := st.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				text.WriteString(line.Message.Content)
			}
			res.Close()
			if text.String() != ";tq" {
				t.Errorf("chat text %q", text.String())
			}
			if r := srv.lastRequest(); !bytes.Equal(r.Body, chat.ReqBody) {
				t.Errorf("chat body sent %s", r.Body)
			}

			gen, err := c.Generate(ctx, exs[4].ReqBody)
			if err != nil || !gen.Streaming() {
				t.Fatalf("generate %v", err)
			}
			nd := NewNDJSONReader(gen.Stream, NDJSONOptions{})
			n := 0
			for {
				line, err := nd.Next()
				if err != nil {
					if err != io.EOF {
						t.Fatal(err)
					}
					break
				}
				var g OllamaGenerateResponse
				if err := json.Unmarshal(line, &g); err != nil {
					t.Fatal(err)
				}
				n++
				if g.Done && (g.DoneReason != "length" || len(g.Context) != 26) {
					t.Errorf("generate done line %+v", g)
				}
			}
			gen.Close()
			if n != 4 {
				t.Errorf("generate lines %d", n)
			}

			emb, err := c.Embed(ctx, &OllamaEmbedRequest{Model: "tiny-embed", Input: json.RawMessage(`["hello","world"]`)})
			if err != nil || len(emb.Embeddings) != 2 || emb.PromptEvalCount != 9 {
				t.Fatalf("embed %v %v", emb, err)
			}
			if r := srv.lastRequest(); string(r.Body) != `{"model":"tiny-embed","input":["hello","world"]}` {
				t.Errorf("embed request %s", r.Body)
			}
			vec, err := DecodeVector(emb.Embeddings[0])
			if err != nil || len(vec) != 64 {
				t.Errorf("vector %d %v", len(vec), err)
			}
			leg, err := c.Embeddings(ctx, &OllamaEmbeddingsRequest{Model: "tiny-embed", Prompt: "hello"})
			if err != nil || len(leg.Embedding) == 0 {
				t.Errorf("legacy embeddings %v", err)
			}
			if r := srv.lastRequest(); string(r.Body) != `{"model":"tiny-embed","prompt":"hello"}` {
				t.Errorf("legacy request %s", r.Body)
			}

			// Raw pass-through: the body is never read by the client.
			raw, err := c.Do(ctx, http.MethodGet, "/api/tags", nil)
			if err != nil || raw.Stream == nil {
				t.Fatalf("do %v", err)
			}
			b, _ := io.ReadAll(raw.Stream)
			raw.Close()
			if !bytes.Equal(b, exs[1].RespBody) || raw.Header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("do body %s", b)
			}
		})
	}
}

func TestOllamaClientNonStreamChat(t *testing.T) {
	ex := loadFixture(t, "05-chat-nostream.http")
	srv := newFixtureServer(t, writeLines, ex)
	c := NewOllamaClient(srv.URL, "", srv.Client())
	res, err := c.Chat(t.Context(), ex.ReqBody)
	if err != nil || res.Streaming() {
		t.Fatalf("%v streaming=%v", err, res.Streaming())
	}
	if !bytes.Equal(res.Body, ex.RespBody) {
		t.Errorf("body %s", res.Body)
	}
	if h := srv.lastRequest().Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
}

func TestUpstreamErrors(t *testing.T) {
	cases := []struct {
		fixture string
		status  int
		message string
	}{
		{"19-error-unknown-model.http", 404, "model 'nope' not found"},
		{"20-error-chat-on-embed-model.http", 400, `"tiny-embed" does not support chat`},
		{"21-error-bad-json.http", 400, "unexpected EOF"},
		{"22-v1-error-unknown-model.http", 404, "model 'nope' not found"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			ex := loadFixture(t, tc.fixture)
			srv := newFixtureServer(t, writeSplit, ex)
			var err error
			if strings.HasPrefix(ex.Path, "/v1/") {
				_, err = NewOpenAIClient(srv.URL+"/v1", "k", srv.Client()).ChatCompletion(t.Context(), ex.ReqBody)
			} else {
				_, err = NewOllamaClient(srv.URL, "", srv.Client()).Chat(t.Context(), ex.ReqBody)
			}
			var ue *UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v", err)
			}
			if ue.Status != tc.status || ue.Message != tc.message || !bytes.Equal(ue.Body, ex.RespBody) {
				t.Errorf("got %d %q %s", ue.Status, ue.Message, ue.Body)
			}
		})
	}
	for body, want := range map[string]string{
		`{"detail":"Not authenticated"}`:                       "Not authenticated",
		`{"detail":[{"loc":["body"],"msg":"field required"}]}`: `[{"loc":["body"],"msg":"field required"}]`,
		`{"message":"Invalid API key"}`:                        "Invalid API key",
		`{"error":{"code":429}}`:                               `{"code":429}`,
		`upstream connect error`:                               "upstream connect error",
		`<html><body>502 Bad Gateway</body></html>`:            "Bad Gateway",
		``: "Bad Gateway",
	} {
		if got := newUpstreamError(502, []byte(body)).Message; got != want {
			t.Errorf("message of %q = %q want %q", body, got, want)
		}
	}
}

func TestOpenAIClient(t *testing.T) {
	exs := fixtures(t, "11-v1-chat-nostream.http", "13-v1-embeddings.http", "14-v1-models.http")
	srv := newFixtureServer(t, writeSplit, exs...)
	c := NewOpenAIClient(srv.URL+"/v1///", "sk-abc", srv.Client())
	c.SetHeader(http.Header{"X-Title": {"Hearth"}})
	ctx := WithHeader(t.Context(), http.Header{"X-Service-Chat-Id": {"chat-1"}})

	req, _ := ParseChatRequest(exs[0].ReqBody)
	res, err := c.ChatCompletion(ctx, req)
	if err != nil || res.Streaming() || !bytes.Equal(res.Body, exs[0].RespBody) {
		t.Fatalf("chat %v", err)
	}
	r := srv.lastRequest()
	if r.Path != "/v1/chat/completions" || !bytes.Equal(r.Body, exs[0].ReqBody) ||
		r.Header.Get("Authorization") != "Bearer sk-abc" || r.Header.Get("X-Title") != "Hearth" ||
		r.Header.Get("X-Service-Chat-Id") != "chat-1" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %s %v", r.Path, r.Body, r.Header)
	}

	models, err := c.Models(ctx)
	if err != nil || len(models) != 2 {
		t.Fatalf("models %v %v", models, err)
	}
	if id, _ := models[0].GetString("id"); id != "tiny:latest" || !models[0].Has("owned_by") {
		t.Errorf("model %s", models[0].AppendJSON(nil))
	}

	emb, err := c.Embeddings(ctx, &EmbeddingsRequest{Model: "tiny-embed", Input: json.RawMessage(`["hello","world"]`)})
	if err != nil || len(emb.Data) != 2 || emb.Data[1].Index != 1 {
		t.Fatalf("embeddings %v", err)
	}
	if got := srv.lastRequest().Body; string(got) != string(exs[1].ReqBody) {
		t.Errorf("embeddings request %s", got)
	}
}

func TestClientContextTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"a\":1}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	c := NewOpenAIClient(srv.URL+"/v1?key=secret", "", srv.Client())
	res, err := c.ChatCompletion(ctx, `{"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	r := NewSSEReader(res.Stream, SSEOptions{})
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = r.Next()
	if err == nil || err == ErrStreamEndedEarly || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}

	// Transport errors name the URL without its query or userinfo.
	c = NewOpenAIClient("http://user:pw@127.0.0.1:1/v1?api_key=secret", "sk-hidden", nil)
	_, err = c.Models(t.Context())
	if err == nil || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "sk-hidden") {
		t.Errorf("err = %v", err)
	}
}

func TestClientBodyLimit(t *testing.T) {
	srv := streamServer(t, "application/json", bytes.Repeat([]byte("x"), 2000), writeWhole)
	c := NewOllamaClient(srv.URL, "", srv.Client())
	c.SetMaxBody(1000)
	if _, err := c.Chat(t.Context(), `{}`); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("err = %v", err)
	}
}
