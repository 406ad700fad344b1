package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	neturl "net/url"
	"strings"
)

// DefaultMaxBody bounds a non-streamed upstream answer read into memory (64 MiB).
const DefaultMaxBody = 64 << 20

// Result is an upstream's successful (status < 400) answer: either a complete body or an
// unread stream. Close it when done (it releases the connection).
type Result struct {
	Status int
	// Header is the upstream's response header (a relay copies it minus
	// Content-Encoding, Content-Length and Transfer-Encoding, COMPAT §4.4).
	Header http.Header
	// Body is the whole answer when it was not a stream (nil otherwise).
	Body []byte
	// Stream is the unread answer when the upstream answered text/event-stream or
	// application/x-ndjson (nil otherwise): wrap it in an SSEReader / NDJSONReader /
	// OllamaChatStream, or relay it.
	Stream io.ReadCloser
}

// Streaming reports whether the answer is a stream.
func (r *Result) Streaming() bool { return r.Stream != nil }

// Close releases the stream, if any.
func (r *Result) Close() error {
	if r == nil || r.Stream == nil {
		return nil
	}
	return r.Stream.Close()
}

type headerKey struct{}

// WithHeader returns a context whose requests through these clients carry h in addition
// to the client's own headers (per-request headers such as forwarded user info, COMPAT
// §9.5). Values in h replace the client's for the same name.
func WithHeader(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}

// transport is the shared HTTP plumbing of both clients.
type transport struct {
	baseURL string
	key     string
	http    *http.Client
	header  http.Header
	maxBody int64
}

func newTransport(baseURL, key string, hc *http.Client) transport {
	if hc == nil {
		hc = http.DefaultClient
	}
	return transport{baseURL: baseURL, key: key, http: hc, maxBody: DefaultMaxBody}
}

// requestBody turns a body argument into bytes: nil, []byte, json.RawMessage, string,
// io.Reader are sent as they are; anything else is marshaled.
func requestBody(body any) (io.Reader, bool, error) {
	switch b := body.(type) {
	case nil:
		return nil, false, nil
	case []byte:
		return bytes.NewReader(b), true, nil
	case json.RawMessage:
		return bytes.NewReader(b), true, nil
	case string:
		return strings.NewReader(b), true, nil
	case io.Reader:
		return b, true, nil
	default:
		raw, err := marshalCompact(b)
		if err != nil {
			return nil, false, fmt.Errorf("llm: encode request: %w", err)
		}
		return bytes.NewReader(raw), true, nil
	}
}

// send performs one request and returns the raw response for status < 400; a status
// ≥ 400 becomes *UpstreamError (its body read, bounded, and closed). The path is joined
// to the base URL with exactly one slash.
func (t *transport) send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	rd, hasBody, err := requestBody(body)
	if err != nil {
		return nil, err
	}
	url := joinURL(t.baseURL, path)
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("llm: build request: %w", err)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.key != "" {
		req.Header.Set("Authorization", "Bearer "+t.key)
	}
	for k, vs := range t.header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if h, ok := ctx.Value(headerKey{}).(http.Header); ok {
		for k, vs := range h {
			req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	resp, err := t.http.Do(req)
	if err != nil {
		// The error names the URL without query or userinfo (net/http's own *url.Error
		// would print them), never the key or the body.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("llm: %s %s: %w", method, redactURL(url), err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, newUpstreamError(resp.StatusCode, b)
	}
	return resp, nil
}

// joinURL appends path to base with exactly one slash, keeping a query string of the
// base (Azure-style "?api-version=...") after the joined path.
func joinURL(base, path string) string {
	query := ""
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, query = base[:i], base[i:]
	}
	u := strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
	if query != "" {
		if strings.IndexByte(u, '?') >= 0 {
			u += "&" + query[1:]
		} else {
			u += query
		}
	}
	return u
}

// redactURL drops a URL's userinfo and query (either may hold a credential).
func redactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		if at := strings.IndexByte(u[i+3:], '@'); at >= 0 {
			if slash := strings.IndexByte(u[i+3:], '/'); slash < 0 || at < slash {
				u = u[:i+3] + u[i+3+at+1:]
			}
		}
	}
	return u
}

// do sends a request and returns a Result: a stream when the content type says so (or
// forceStream), else the whole body.
func (t *transport) do(ctx context.Context, method, path string, body any, forceStream bool) (*Result, error) {
	resp, err := t.send(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	res := &Result{Status: resp.StatusCode, Header: resp.Header}
	if forceStream || isStreamType(resp.Header.Get("Content-Type")) {
		res.Stream = resp.Body
		return res, nil
	}
	defer resp.Body.Close()
	b, err := readBounded(resp.Body, t.maxBody)
	if err != nil {
		return nil, err
	}
	res.Body = b
	return res, nil
}

// getJSON sends a request and decodes a JSON answer into v.
func (t *transport) getJSON(ctx context.Context, method, path string, body, v any) error {
	res, err := t.do(ctx, method, path, body, false)
	if err != nil {
		return err
	}
	if res.Stream != nil {
		res.Close()
		return fmt.Errorf("llm: %s %s: unexpected stream answer", method, path)
	}
	if err := json.Unmarshal(res.Body, v); err != nil {
		return fmt.Errorf("llm: %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

func isStreamType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "text/event-stream" || mt == "application/x-ndjson"
}

// ErrBodyTooLarge is returned when a non-streamed answer exceeds the client's max body.
var ErrBodyTooLarge = errors.New("llm: upstream answer over the size limit")

func readBounded(r io.Reader, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxBody
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("llm: read answer: %w", err)
	}
	if int64(len(b)) > max {
		return nil, ErrBodyTooLarge
	}
	return b, nil
}

// OpenAIClient calls one OpenAI-compatible connection (COMPAT §6.1, §6.2). It is safe for
// concurrent use. Timeouts and cancellation come from each call's context.
type OpenAIClient struct {
	t transport
}

// NewOpenAIClient returns a client for baseURL (for example "https://api.openai.com/v1";
// a trailing slash is ignored). key, when not empty, is sent as `Authorization: Bearer`.
// hc nil means http.DefaultClient.
func NewOpenAIClient(baseURL, key string, hc *http.Client) *OpenAIClient {
	return &OpenAIClient{t: newTransport(baseURL, key, hc)}
}

// SetHeader adds headers sent on every request (a connection's configured `headers`).
// Call it before the client is shared.
func (c *OpenAIClient) SetHeader(h http.Header) { c.t.header = h.Clone() }

// SetMaxBody bounds non-streamed answers read into memory (default DefaultMaxBody).
func (c *OpenAIClient) SetMaxBody(n int64) { c.t.maxBody = n }

// BaseURL returns the base URL as given.
func (c *OpenAIClient) BaseURL() string { return c.t.baseURL }

// ChatCompletion posts body (a *ChatRequest, raw JSON bytes, or anything marshalable) to
// /chat/completions. The answer is a stream when the upstream answers
// text/event-stream (read it with NewSSEReader), else the whole JSON body.
func (c *OpenAIClient) ChatCompletion(ctx context.Context, body any) (*Result, error) {
	return c.t.do(ctx, http.MethodPost, "chat/completions", body, false)
}

// Responses posts body to /responses (connections with api_type "responses").
func (c *OpenAIClient) Responses(ctx context.Context, body any) (*Result, error) {
	return c.t.do(ctx, http.MethodPost, "responses", body, false)
}

// Models returns the entries of GET /models, whole. A bare JSON list is accepted too.
func (c *OpenAIClient) Models(ctx context.Context) ([]Object, error) {
	res, err := c.t.do(ctx, http.MethodGet, "models", nil, false)
	if err != nil {
		return nil, err
	}
	if res.Stream != nil {
		res.Close()
		return nil, errors.New("llm: GET models: unexpected stream answer")
	}
	b := bytes.TrimSpace(res.Body)
	var list []Object
	if len(b) > 0 && b[0] == '[' {
		err = json.Unmarshal(b, &list)
	} else {
		var ml ModelList
		err = json.Unmarshal(b, &ml)
		list = ml.Data
	}
	if err != nil {
		return nil, fmt.Errorf("llm: GET models: decode answer: %w", err)
	}
	return list, nil
}

// Embeddings posts body to /embeddings and decodes the answer.
func (c *OpenAIClient) Embeddings(ctx context.Context, body any) (*EmbeddingsResponse, error) {
	var r EmbeddingsResponse
	if err := c.t.getJSON(ctx, http.MethodPost, "embeddings", body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Do sends any request to path (relative to the base URL) and returns the answer unread
// as Result.Stream, whatever its content type: the raw pass-through for proxies. A status
// ≥ 400 is an *UpstreamError.
func (c *OpenAIClient) Do(ctx context.Context, method, path string, body any) (*Result, error) {
	return c.t.do(ctx, method, path, body, true)
}

// OllamaClient calls one Ollama server's native API (COMPAT §6.3). It is safe for
// concurrent use. Timeouts and cancellation come from each call's context.
type OllamaClient struct {
	t transport
}

// NewOllamaClient returns a client for baseURL (for example "http://localhost:11434"; a
// trailing slash is ignored). key, when not empty (a connection's configured key), is
// sent as `Authorization: Bearer`. hc nil means http.DefaultClient.
func NewOllamaClient(baseURL, key string, hc *http.Client) *OllamaClient {
	return &OllamaClient{t: newTransport(baseURL, key, hc)}
}

// SetHeader adds headers sent on every request. Call it before the client is shared.
func (c *OllamaClient) SetHeader(h http.Header) { c.t.header = h.Clone() }

// SetMaxBody bounds non-streamed answers read into memory (default DefaultMaxBody).
func (c *OllamaClient) SetMaxBody(n int64) { c.t.maxBody = n }

// BaseURL returns the base URL as given.
func (c *OllamaClient) BaseURL() string { return c.t.baseURL }

// Chat posts body to /api/chat. Ollama streams unless the body says "stream": false; the
// answer is a stream when Ollama answers application/x-ndjson (read it with
// NewOllamaChatStream), else the whole JSON body.
func (c *OllamaClient) Chat(ctx context.Context, body any) (*Result, error) {
	return c.t.do(ctx, http.MethodPost, "api/chat", body, false)
}

// Generate posts body to /api/generate (stream or whole body, as Chat).
func (c *OllamaClient) Generate(ctx context.Context, body any) (*Result, error) {
	return c.t.do(ctx, http.MethodPost, "api/generate", body, false)
}

// Embed posts body to /api/embed and decodes the answer.
func (c *OllamaClient) Embed(ctx context.Context, body any) (*OllamaEmbedResponse, error) {
	var r OllamaEmbedResponse
	if err := c.t.getJSON(ctx, http.MethodPost, "api/embed", body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Embeddings posts body to the legacy /api/embeddings and decodes the answer.
func (c *OllamaClient) Embeddings(ctx context.Context, body any) (*OllamaEmbeddingsResponse, error) {
	var r OllamaEmbeddingsResponse
	if err := c.t.getJSON(ctx, http.MethodPost, "api/embeddings", body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Tags returns GET /api/tags (the installed models).
func (c *OllamaClient) Tags(ctx context.Context) (*OllamaTags, error) {
	var r OllamaTags
	if err := c.t.getJSON(ctx, http.MethodGet, "api/tags", nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// PS returns GET /api/ps (the loaded models; same shape as Tags plus expires_at).
func (c *OllamaClient) PS(ctx context.Context) (*OllamaTags, error) {
	var r OllamaTags
	if err := c.t.getJSON(ctx, http.MethodGet, "api/ps", nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Version returns GET /api/version's version string.
func (c *OllamaClient) Version(ctx context.Context) (string, error) {
	var r OllamaVersion
	if err := c.t.getJSON(ctx, http.MethodGet, "api/version", nil, &r); err != nil {
		return "", err
	}
	return r.Version, nil
}

// Show posts body ({"model": ...}) to /api/show and returns the answer whole.
func (c *OllamaClient) Show(ctx context.Context, body any) (Object, error) {
	var r Object
	err := c.t.getJSON(ctx, http.MethodPost, "api/show", body, &r)
	return r, err
}

// Do sends any request to path (relative to the base URL) and returns the answer unread
// as Result.Stream, whatever its content type: the raw pass-through of the runtime proxy
// (/api/pull, /api/create, /v1/*, ...). A status ≥ 400 is an *UpstreamError.
func (c *OllamaClient) Do(ctx context.Context, method, path string, body any) (*Result, error) {
	return c.t.do(ctx, method, path, body, true)
}
