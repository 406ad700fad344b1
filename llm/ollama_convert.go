package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ollamaOptionKeys are the OpenAI-style request parameters that Ollama reads from
// `options` (COMPAT §6.4, apply_model_params_to_body_ollama's typed options). A request
// sent straight to /api/chat/completions for an Ollama model carries them at the top
// level; Ollama ignores them there, so the conversion moves them into options.
var ollamaOptionKeys = [...]string{
	"temperature", "top_p", "top_k", "min_p", "seed",
	"frequency_penalty", "presence_penalty", "repeat_penalty", "repeat_last_n",
	"mirostat", "mirostat_eta", "mirostat_tau",
	"num_ctx", "num_batch", "num_keep", "num_predict", "num_gpu", "num_thread",
	"use_mmap", "use_mlock",
}

// ChatToOllama converts a chat-completions request into an Ollama /api/chat request
// (COMPAT §6.4, utils/payload.py convert_payload_openai_to_ollama), for a model whose
// owned_by is "ollama".
//
//   - model, tools copied; stream copied (default false).
//   - messages: string content kept; tool_calls become Ollama calls with decoded
//     arguments and content ""; tool_call_id and thinking kept; array content becomes the
//     concatenated, trimmed text parts plus `images` (base64 without the data: prefix).
//   - options (the model params the pipeline put there, §4.1): format, keep_alive (both
//     JSON-decoded when they are JSON text) and think lifted to the root, max_tokens
//     renamed num_predict, system lifted to the root.
//   - top-level max_tokens (or max_completion_tokens) becomes options.num_predict and
//     stop becomes options.stop (a lone string becomes a one-element list) — upstream
//     put num_predict at the root, where Ollama ignores it (fixed upstream in #31437);
//     other top-level sampling parameters (temperature, top_p, seed, ...) are moved into
//     options as well. A key already in options wins: options hold the model's params,
//     which override request values (§4.1).
//   - response_format {type: json_schema} sets format to its schema, {type: json_object}
//     sets format "json"; a top-level format, keep_alive or think (Ollama-native clients)
//     is kept.
//
// Everything else (metadata, the pipeline's own fields, unknown provider parameters) is
// dropped: Ollama has no place for it.
func ChatToOllama(req *ChatRequest) (*OllamaChatRequest, error) {
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	out := &OllamaChatRequest{Model: req.Model(), Stream: req.Stream()}
	msgs, err := req.Messages()
	if err != nil {
		return nil, fmt.Errorf("llm: messages: %w", err)
	}
	out.Messages = make([]OllamaMessage, 0, len(msgs))
	for _, m := range msgs {
		om, err := messageToOllama(m)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, om)
	}
	if t := req.Get("tools"); t != nil {
		out.Tools = t
	}

	// Ollama-native root parameters sent at the top level.
	if v := req.Get("format"); v != nil && string(v) != "null" {
		out.Format = parseJSONText(v)
	}
	if v := req.Get("keep_alive"); v != nil && string(v) != "null" {
		out.KeepAlive = parseJSONText(v)
	}
	if v := req.Get("think"); v != nil && string(v) != "null" {
		out.Think = v
	}

	// options: the model params put there by the pipeline.
	var opts Object
	if raw := req.Get("options"); len(raw) > 0 && raw[0] == '{' {
		if err := opts.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("llm: options: %w", err)
		}
		opts = opts.Clone()
		if v := opts.Delete("format"); v != nil && string(v) != "null" {
			out.Format = parseJSONText(v)
		}
		if v := opts.Delete("keep_alive"); v != nil && string(v) != "null" {
			out.KeepAlive = parseJSONText(v)
		}
		if v := opts.Delete("think"); v != nil && string(v) != "null" {
			out.Think = v
		}
		if v := opts.Delete("max_tokens"); v != nil && !opts.Has("num_predict") {
			opts.Set("num_predict", v)
		}
		if v := opts.Delete("system"); v != nil {
			var s string
			if json.Unmarshal(v, &s) == nil {
				out.System = s
			}
		}
	}

	// Top-level request parameters Ollama only reads from options.
	setOpt := func(key string, v json.RawMessage) {
		if v != nil && string(v) != "null" && !opts.Has(key) {
			opts.Set(key, v)
		}
	}
	if v := req.Get("max_tokens"); v != nil && string(v) != "null" {
		setOpt("num_predict", v)
	} else {
		setOpt("num_predict", req.Get("max_completion_tokens"))
	}
	for _, k := range ollamaOptionKeys {
		setOpt(k, req.Get(k))
	}
	if v := req.Get("stop"); v != nil && string(v) != "null" && !opts.Has("stop") {
		if v[0] == '"' {
			v = append(append([]byte{'['}, v...), ']')
		}
		opts.Set("stop", v)
	}
	out.Options = opts

	if raw := req.Get("response_format"); len(raw) > 0 && raw[0] == '{' {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if json.Unmarshal(raw, &rf) == nil {
			switch rf.Type {
			case "json_schema":
				if rf.JSONSchema != nil && len(rf.JSONSchema.Schema) > 0 && string(rf.JSONSchema.Schema) != "null" {
					out.Format = compactRaw(rf.JSONSchema.Schema)
				}
			case "json_object":
				out.Format = json.RawMessage(`"json"`)
			}
		}
	}
	return out, nil
}

// parseJSONText returns the JSON a string value contains when it parses (upstream's
// parse_json on format / keep_alive: `"{\"type\":...}"` becomes the object), else v.
func parseJSONText(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || v[0] != '"' {
		return v
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return v
	}
	inner := []byte(strings.TrimSpace(s))
	if len(inner) > 0 && json.Valid(inner) {
		return compactRaw(inner)
	}
	return v
}

func messageToOllama(m ChatMessage) (OllamaMessage, error) {
	om := OllamaMessage{Role: m.Role, Thinking: m.Thinking}
	if len(m.ToolCalls) > 0 {
		om.ToolCalls = make([]OllamaToolCall, 0, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			args := json.RawMessage(tc.Function.Arguments)
			if s := bytes.TrimSpace(args); len(s) == 0 || !json.Valid(s) {
				args = json.RawMessage(`{}`)
			} else {
				args = compactRaw(s)
			}
			om.ToolCalls = append(om.ToolCalls, OllamaToolCall{
				ID:       tc.ID,
				Index:    &idx,
				Function: OllamaFunctionCall{Name: tc.Function.Name, Arguments: args},
			})
		}
		// Ollama requires an empty string for tool-call messages (upstream does the same).
		return om, nil
	}
	om.ToolCallID = m.ToolCallID
	if s, ok := m.ContentString(); ok {
		om.Content = s
		return om, nil
	}
	if parts, ok := m.ContentParts(); ok {
		var text strings.Builder
		for _, p := range parts {
			switch p.Type {
			case "text":
				text.WriteString(p.Text)
			case "image_url":
				if p.ImageURL == nil || p.ImageURL.URL == "" {
					continue
				}
				url := p.ImageURL.URL
				if strings.HasPrefix(url, "data:") {
					url = url[strings.LastIndexByte(url, ',')+1:]
				}
				om.Images = append(om.Images, url)
			}
		}
		om.Content = strings.TrimSpace(text.String())
		return om, nil
	}
	c := bytes.TrimSpace(m.Content)
	if len(c) > 0 && string(c) != "null" {
		return om, fmt.Errorf("llm: message content of role %q is neither a string nor a list of parts", m.Role)
	}
	return om, nil
}

// OllamaToOpenAIOptions configure the Ollama → OpenAI response conversions.
type OllamaToOpenAIOptions struct {
	// ID of the completion: streamed chunks share it. "" → "chatcmpl-<uuid4>" for a
	// stream, "<model>-<uuid4>" for a non-streamed answer (upstream's shapes).
	ID string
	// Created is the Unix time written on every chunk; 0 → now.
	Created int64
	// Model overrides the model name written on chunks ("" → each line's own `model`).
	Model string
	// NewCallID makes ids for tool calls Ollama sent without one (nil → NewCallID).
	NewCallID func() string
}

// OllamaToOpenAI converts a streamed Ollama /api/chat answer into OpenAI
// chat.completion.chunk events (COMPAT §6.5): one SSE event per NDJSON line, sharing one
// id; the first carries delta.role "assistant"; content, thinking (as
// reasoning_content) and tool calls go into the delta; the `done` line carries
// finish_reason and the usage Open WebUI builds from Ollama's counters. It is a pure state
// machine: Append writes bytes to a caller's buffer and performs no I/O.
//
// finish_reason: "tool_calls" when any tool call was seen, else "length" when Ollama's
// done_reason is "length", else "stop". (Upstream maps every done line to "stop" or
// "tool_calls" and also stamps "stop" on any empty mid-stream line; here a mid-stream line
// with nothing in it produces no event at all.)
type OllamaToOpenAI struct {
	id        string
	created   int64
	model     string
	newCallID func() string
	started   bool
	sawTools  bool
	nextTool  int
	done      bool
}

// NewOllamaToOpenAI returns a converter for one streamed answer.
func NewOllamaToOpenAI(opts OllamaToOpenAIOptions) *OllamaToOpenAI {
	c := &OllamaToOpenAI{id: opts.ID, created: opts.Created, model: opts.Model, newCallID: opts.NewCallID}
	if c.id == "" {
		c.id = NewChatCompletionID()
	}
	if c.created == 0 {
		c.created = time.Now().Unix()
	}
	if c.newCallID == nil {
		c.newCallID = NewCallID
	}
	return c
}

// Append appends the SSE event for one decoded NDJSON line to dst (nothing when the line
// carries nothing and is not the last).
func (c *OllamaToOpenAI) Append(dst []byte, r *OllamaChatResponse) []byte {
	m := &r.Message
	if !r.Done && m.Content == "" && m.Thinking == "" && len(m.ToolCalls) == 0 {
		return dst
	}
	dst = append(dst, "data: "...)
	dst = c.appendChunk(dst, r)
	return append(dst, "\n\n"...)
}

// AppendDone appends the stream terminator `data: [DONE]`.
func (c *OllamaToOpenAI) AppendDone(dst []byte) []byte { return AppendSSEDone(dst) }

// Done reports whether the `"done": true` line was converted.
func (c *OllamaToOpenAI) Done() bool { return c.done }

func (c *OllamaToOpenAI) appendChunk(dst []byte, r *OllamaChatResponse) []byte {
	m := &r.Message
	model := c.model
	if model == "" {
		model = r.Model
	}
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, c.id)
	dst = append(dst, `,"object":"chat.completion.chunk","created":`...)
	dst = appendInt(dst, c.created)
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, model)
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	sep := false
	comma := func() {
		if sep {
			dst = append(dst, ',')
		}
		sep = true
	}
	if !c.started {
		c.started = true
		comma()
		dst = append(dst, `"role":"assistant"`...)
	}
	if m.Content != "" {
		comma()
		dst = append(dst, `"content":`...)
		dst = appendString(dst, m.Content)
	}
	if m.Thinking != "" {
		comma()
		dst = append(dst, `"reasoning_content":`...)
		dst = appendString(dst, m.Thinking)
	}
	if len(m.ToolCalls) > 0 {
		comma()
		dst = append(dst, `"tool_calls":`...)
		dst = c.appendToolCalls(dst, m.ToolCalls, true)
		c.sawTools = true
	}
	dst = append(dst, `},"logprobs":null,"finish_reason":`...)
	if r.Done {
		c.done = true
		dst = appendString(dst, c.finishReason(r.DoneReason))
		dst = append(dst, `}],"usage":`...)
		dst = appendOllamaUsage(dst, r)
		return append(dst, '}')
	}
	return append(dst, `null}]}`...)
}

func (c *OllamaToOpenAI) finishReason(doneReason string) string {
	switch {
	case c.sawTools:
		return "tool_calls"
	case doneReason == "length":
		return "length"
	default:
		return "stop"
	}
}

// appendToolCalls appends OpenAI tool calls for Ollama's complete calls: the index is
// the call's own (or its function's), else a running count over the stream — upstream
// defaulted every call to 0, which makes clients merge parallel calls into one; the id is
// the call's own or a new call_<uuid4>; arguments become a JSON string.
func (c *OllamaToOpenAI) appendToolCalls(dst []byte, calls []OllamaToolCall, withIndex bool) []byte {
	dst = append(dst, '[')
	for i := range calls {
		tc := &calls[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if withIndex {
			idx := c.nextTool
			switch {
			case tc.Index != nil:
				idx = *tc.Index
			case tc.Function.Index != nil:
				idx = *tc.Function.Index
			}
			if idx >= c.nextTool {
				c.nextTool = idx + 1
			}
			dst = append(dst, `"index":`...)
			dst = appendInt(dst, int64(idx))
			dst = append(dst, ',')
		}
		id := tc.ID
		if id == "" {
			id = c.newCallID()
		}
		dst = append(dst, `"id":`...)
		dst = appendString(dst, id)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = appendString(dst, tc.Function.Name)
		dst = append(dst, `,"arguments":`...)
		dst = appendStringBytes(dst, argumentsText(tc.Function.Arguments))
		dst = append(dst, "}}"...)
	}
	return append(dst, ']')
}

// argumentsText returns Ollama's arguments (an object) as compact JSON text; a string
// value is taken as already being the text.
func argumentsText(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []byte(s)
		}
	}
	return compactRaw(raw)
}

// OllamaChatToOpenAI converts a non-streamed Ollama /api/chat answer into a
// chat.completion object (COMPAT §6.5): message content, reasoning_content from thinking,
// tool_calls (arguments as JSON strings, ids call_<uuid4> when missing), finish_reason as
// for streams, and the usage built from Ollama's counters.
func OllamaChatToOpenAI(r *OllamaChatResponse, opts OllamaToOpenAIOptions) []byte {
	model := opts.Model
	if model == "" {
		model = r.Model
	}
	id := opts.ID
	if id == "" {
		id = model + "-" + NewUUID()
	}
	c := NewOllamaToOpenAI(OllamaToOpenAIOptions{ID: id, Created: opts.Created, Model: model, NewCallID: opts.NewCallID})
	dst := make([]byte, 0, 512+len(r.Message.Content)+len(r.Message.Thinking))
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, id)
	dst = append(dst, `,"object":"chat.completion","created":`...)
	dst = appendInt(dst, c.created)
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	dst = appendString(dst, r.Message.Content)
	if r.Message.Thinking != "" {
		dst = append(dst, `,"reasoning_content":`...)
		dst = appendString(dst, r.Message.Thinking)
	}
	if len(r.Message.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":`...)
		dst = c.appendToolCalls(dst, r.Message.ToolCalls, true)
		c.sawTools = true
	}
	dst = append(dst, `},"logprobs":null,"finish_reason":`...)
	dst = appendString(dst, c.finishReason(r.DoneReason))
	dst = append(dst, `}],"usage":`...)
	dst = appendOllamaUsage(dst, r)
	return append(dst, '}')
}

// OllamaChatStream reads a streamed /api/chat answer line by line.
type OllamaChatStream struct {
	nd   *NDJSONReader
	line OllamaChatResponse
	done bool
}

// NewOllamaChatStream returns a reader of the NDJSON in r.
func NewOllamaChatStream(r io.Reader, opts NDJSONOptions) *OllamaChatStream {
	return &OllamaChatStream{nd: NewNDJSONReader(r, opts)}
}

// Next decodes the next line. The result is reused by the following call. Errors are
// those of NDJSONReader, except that the end of the body before a `"done": true` line is
// ErrStreamEndedEarly, and io.EOF is returned once after the done line (Ollama closes the
// stream there). Lines that do not decode as a chat line count as garbage.
func (s *OllamaChatStream) Next() (*OllamaChatResponse, error) {
	for {
		if s.done {
			return nil, io.EOF
		}
		data, err := s.nd.Next()
		if err == io.EOF {
			s.nd.err = ErrStreamEndedEarly
			return nil, ErrStreamEndedEarly
		}
		if err != nil {
			return nil, err
		}
		s.line = OllamaChatResponse{}
		if json.Unmarshal(data, &s.line) != nil {
			s.nd.garbage++
			continue
		}
		if s.line.Done {
			s.done = true
		}
		return &s.line, nil
	}
}

// Garbage is the number of lines skipped.
func (s *OllamaChatStream) Garbage() int { return s.nd.Garbage() }

// flusher is what http.ResponseWriter offers to push bytes to the client now.
type flusher interface{ Flush() }

// StreamOllamaAsOpenAI reads an Ollama /api/chat NDJSON stream from src and writes the
// equivalent OpenAI SSE stream to w, ending with `data: [DONE]`; after each event it
// flushes w when w has a Flush method. It holds one line and one event in memory.
//
// When the upstream reports an error mid-stream, or ends before its done line, it writes
// `data: {"error": {"message": ..., "type": "api_error", ...}}` (the shape OpenAI SDKs
// raise as an APIError), no [DONE], and returns the error (*UpstreamError or
// ErrStreamEndedEarly). A write error (the client went away) is returned as is.
func StreamOllamaAsOpenAI(w io.Writer, src io.Reader, opts OllamaToOpenAIOptions, nd NDJSONOptions) error {
	conv := NewOllamaToOpenAI(opts)
	stream := NewOllamaChatStream(src, nd)
	f, _ := w.(flusher)
	buf := make([]byte, 0, 1024)
	for {
		line, err := stream.Next()
		if err == io.EOF {
			buf = conv.AppendDone(buf[:0])
			if _, werr := w.Write(buf); werr != nil {
				return werr
			}
			if f != nil {
				f.Flush()
			}
			return nil
		}
		if err != nil {
			buf = AppendOpenAIErrorEvent(buf[:0], streamErrorMessage(err))
			if _, werr := w.Write(buf); werr != nil {
				return werr
			}
			if f != nil {
				f.Flush()
			}
			return err
		}
		buf = conv.Append(buf[:0], line)
		if len(buf) == 0 {
			continue
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if f != nil {
			f.Flush()
		}
	}
}

// streamErrorMessage is the text shown to a client for a stream that failed.
func streamErrorMessage(err error) string {
	var ue *UpstreamError
	switch {
	case errors.As(err, &ue):
		return ue.Message
	case errors.Is(err, ErrStreamEndedEarly):
		return "upstream stream ended early"
	default:
		return "upstream stream failed"
	}
}

// AppendOpenAIErrorEvent appends `data: {"error": {...}}` in the shape OpenAI-compatible
// servers use (Ollama's own: message, type "api_error", param null, code null).
func AppendOpenAIErrorEvent(dst []byte, message string) []byte {
	dst = append(dst, `data: {"error":{"message":`...)
	dst = appendString(dst, message)
	return append(dst, `,"type":"api_error","param":null,"code":null}}`+"\n\n"...)
}

// OllamaEmbedToOpenAI converts an Ollama /api/embed (or legacy /api/embeddings) answer
// into an OpenAI embeddings list (COMPAT §6.5): {"object":"list","data":[{"object":
// "embedding","embedding":[...],"index":i}],"model":...}. Vectors are copied byte for
// byte. A usage member is added from prompt_eval_count when Ollama reported one.
func OllamaEmbedToOpenAI(body []byte) ([]byte, error) {
	var r struct {
		Model           string            `json:"model"`
		Embeddings      []json.RawMessage `json:"embeddings"`
		Embedding       json.RawMessage   `json:"embedding"`
		PromptEvalCount *int64            `json:"prompt_eval_count"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	vectors := r.Embeddings
	if vectors == nil && r.Embedding != nil {
		vectors = []json.RawMessage{r.Embedding}
	}
	if vectors == nil {
		return nil, errors.New("llm: no embeddings in Ollama answer")
	}
	dst := []byte(`{"object":"list","data":[`)
	for i, v := range vectors {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"object":"embedding","embedding":`...)
		dst = append(dst, compactRaw(v)...)
		dst = append(dst, `,"index":`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"model":`...)
	if r.Model == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, r.Model)
	}
	if r.PromptEvalCount != nil {
		dst = append(dst, `,"usage":{"prompt_tokens":`...)
		dst = appendInt(dst, *r.PromptEvalCount)
		dst = append(dst, `,"total_tokens":`...)
		dst = appendInt(dst, *r.PromptEvalCount)
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// EmbeddingsToOllama converts an OpenAI embeddings request into an Ollama /api/embed
// request (upstream convert_embed_payload_openai_to_ollama): model and input copied,
// dimensions kept.
func EmbeddingsToOllama(req *EmbeddingsRequest) *OllamaEmbedRequest {
	return &OllamaEmbedRequest{Model: req.Model, Input: req.Input, Dimensions: req.Dimensions}
}

// OllamaModelEntry builds the Open WebUI model-list entry for one /api/tags entry (COMPAT
// §5.1, utils/models.py fetch_ollama_models): {id: the entry's `model` (else `name`),
// name, object: "model", created, owned_by: "ollama", ollama: <the raw entry>}. The server
// adds connection_type, tags, urls and loaded. Open WebUI writes created 0.
func OllamaModelEntry(tag Object, created int64) Object {
	name, _ := tag.GetString("name")
	id, _ := tag.GetString("model")
	if id == "" {
		id = name
	}
	if name == "" {
		name = id
	}
	var e Object
	e.SetString("id", id)
	e.SetString("name", name)
	e.SetString("object", "model")
	e.SetInt("created", created)
	e.SetString("owned_by", "ollama")
	e.Set("ollama", tag.AppendJSON(nil))
	return e
}

// OllamaTagsToOpenAIModels builds the OpenAI /v1/models list Open WebUI's Ollama router
// serves (COMPAT §6.3): {"data":[{"id","object":"model","created","owned_by":"openai"}],
// "object":"list"}.
func OllamaTagsToOpenAIModels(tags *OllamaTags, created int64) ModelList {
	list := ModelList{Object: "list", Data: make([]Object, 0, len(tags.Models))}
	for _, t := range tags.Models {
		id, _ := t.GetString("model")
		if id == "" {
			id, _ = t.GetString("name")
		}
		var e Object
		e.SetString("id", id)
		e.SetString("object", "model")
		e.SetInt("created", created)
		e.SetString("owned_by", "openai")
		list.Data = append(list.Data, e)
	}
	return list
}
