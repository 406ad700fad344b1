package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ChatRequest is an OpenAI chat-completions request, held as an ordered raw Object so that
// every field the pipeline does not consume reaches the provider unchanged (COMPAT §4.1).
// The typed accessors decode single members on demand.
type ChatRequest struct {
	Object
}

// ParseChatRequest parses a chat-completions request body (a JSON object).
func ParseChatRequest(body []byte) (*ChatRequest, error) {
	o, err := ParseObject(body)
	if err != nil {
		return nil, err
	}
	return &ChatRequest{Object: o}, nil
}

// Model returns the `model` member ("" when absent or not a string).
func (r *ChatRequest) Model() string {
	s, _ := r.GetString("model")
	return s
}

// Stream reports whether `stream` is true (absent means false, as upstream).
func (r *ChatRequest) Stream() bool {
	b, _ := r.GetBool("stream")
	return b
}

// Messages decodes the `messages` member.
func (r *ChatRequest) Messages() ([]ChatMessage, error) {
	var msgs []ChatMessage
	err := r.Decode("messages", &msgs)
	return msgs, err
}

// SetMessages replaces the `messages` member.
func (r *ChatRequest) SetMessages(msgs []ChatMessage) error {
	return r.SetValue("messages", msgs)
}

// ChatMessage is one chat-completions message. Content is kept raw: a string, an array of
// content parts, or null.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	// Thinking is Ollama's reasoning field; upstream preserves it on the way to Ollama.
	Thinking string `json:"thinking,omitempty"`
	// ReasoningContent is the reasoning field some OpenAI-compatible servers accept back.
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// ContentString returns Content when it is a JSON string.
func (m ChatMessage) ContentString() (string, bool) {
	if len(m.Content) == 0 || m.Content[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(m.Content, &s) != nil {
		return "", false
	}
	return s, true
}

// ContentParts returns Content when it is an array of content parts.
func (m ChatMessage) ContentParts() ([]ContentPart, bool) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || c[0] != '[' {
		return nil, false
	}
	var parts []ContentPart
	if json.Unmarshal(c, &parts) != nil {
		return nil, false
	}
	return parts, true
}

// TextContent returns s as a raw JSON string, for ChatMessage.Content.
func TextContent(s string) json.RawMessage { return appendString(nil, s) }

// PartsContent returns parts as a raw JSON array, for ChatMessage.Content.
func PartsContent(parts []ContentPart) json.RawMessage {
	raw, _ := marshalCompact(parts)
	return raw
}

// ContentPart is one element of an array content: text, image_url, or (on input only)
// the responses-style input_text / input_image.
type ContentPart struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ImageURL     *ImageURL       `json:"image_url,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// MarshalJSON writes `text` only for text parts.
func (p ContentPart) MarshalJSON() ([]byte, error) {
	b := []byte(`{"type":`)
	b = appendString(b, p.Type)
	if p.Type == "text" || p.Text != "" {
		b = append(b, `,"text":`...)
		b = appendString(b, p.Text)
	}
	if p.ImageURL != nil {
		b = append(b, `,"image_url":{"url":`...)
		b = appendString(b, p.ImageURL.URL)
		if p.ImageURL.Detail != "" {
			b = append(b, `,"detail":`...)
			b = appendString(b, p.ImageURL.Detail)
		}
		b = append(b, '}')
	}
	if len(p.CacheControl) > 0 {
		b = append(b, `,"cache_control":`...)
		b = append(b, compactRaw(p.CacheControl)...)
	}
	return append(b, '}'), nil
}

// ImageURL is the image_url member of a content part. A string (the responses-style
// shorthand) decodes as the URL.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// UnmarshalJSON accepts {"url": ...} or a bare string.
func (u *ImageURL) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &u.URL)
	}
	type plain ImageURL
	return json.Unmarshal(b, (*plain)(u))
}

// ToolCall is a function call of an assistant message, or a fragment of one in a
// streamed delta (where Index routes the fragment and ID/Name come only once).
type ToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function member of a ToolCall.
type FunctionCall struct {
	Name      string    `json:"name,omitempty"`
	Arguments Arguments `json:"arguments"`
}

// Arguments is a function call's arguments as the JSON text the model produced. It
// decodes from a string (the OpenAI form) or from a JSON object (which some servers send),
// kept as its compact text.
type Arguments string

// UnmarshalJSON implements json.Unmarshaler.
func (a *Arguments) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*a = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Arguments(s)
	default:
		*a = Arguments(compactRaw(b))
	}
	return nil
}

// ChatCompletion is a non-streaming chat-completions response.
type ChatCompletion struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created Int             `json:"created"`
	Model   string          `json:"model"`
	Choices []Choice        `json:"choices"`
	Usage   json.RawMessage `json:"usage,omitempty"`
}

// Choice is one choice of a ChatCompletion.
type Choice struct {
	Index        int             `json:"index"`
	Message      ResponseMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
}

// ResponseMessage is the assistant message of a Choice. Content is kept raw (a string,
// null, or — from a few servers — an array of parts); Text returns its text.
type ResponseMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	Reasoning        string          `json:"reasoning,omitempty"`
	ToolCalls        []ToolCall      `json:"tool_calls,omitempty"`
}

// Text returns the message text: the string content, or the concatenated text parts.
func (m ResponseMessage) Text() string { return rawText(m.Content) }

// rawText returns a content value's text: a string as is, an array's text parts joined.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// ChatChunk is one `chat.completion.chunk` of a streamed response, decoded for reading.
// Relays forward the upstream bytes, not a re-encoding of this struct, so fields it does
// not name still reach the client.
type ChatChunk struct {
	ID      string          `json:"id"`
	Created Int             `json:"created"`
	Model   string          `json:"model"`
	Choices []ChunkChoice   `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
}

// ChunkChoice is one choice of a ChatChunk.
type ChunkChoice struct {
	Index        int        `json:"index"`
	Delta        ChunkDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
	// Message is where a few providers put a final message (tool calls) in a stream.
	Message *ChunkDelta `json:"message"`
}

// ChunkDelta is the delta of a ChunkChoice.
type ChunkDelta struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content"`
	Reasoning        string     `json:"reasoning"`
	ToolCalls        []ToolCall `json:"tool_calls"`
}

// DecodeChunk decodes an SSE data payload into c, which is reset first (so one ChatChunk
// can be reused for a whole stream).
func DecodeChunk(data []byte, c *ChatChunk) error {
	*c = ChatChunk{}
	return json.Unmarshal(data, c)
}

// EmbeddingsRequest is an OpenAI /embeddings request. Input is a string or an array of
// strings (or of token arrays), kept raw.
type EmbeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format,omitempty"`
	Dimensions     int             `json:"dimensions,omitempty"`
	User           string          `json:"user,omitempty"`
}

// EmbeddingsResponse is an OpenAI /embeddings response. Each vector is kept as raw JSON
// (a conversion then copies it byte for byte; DecodeVector parses one).
type EmbeddingsResponse struct {
	Object string          `json:"object"`
	Data   []Embedding     `json:"data"`
	Model  string          `json:"model"`
	Usage  json.RawMessage `json:"usage,omitempty"`
}

// Embedding is one vector of an EmbeddingsResponse.
type Embedding struct {
	Object    string          `json:"object"`
	Embedding json.RawMessage `json:"embedding"`
	Index     int             `json:"index"`
}

// DecodeVector parses a raw JSON array of numbers as float32s.
func DecodeVector(raw json.RawMessage) ([]float32, error) {
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errors.New("llm: embedding is not an array")
	}
	return v, nil
}

// ModelList is an OpenAI /models response. Entries are kept whole (Open WebUI copies
// every upstream field into its model list and keeps the raw entry under `openai`).
type ModelList struct {
	Object string   `json:"object"`
	Data   []Object `json:"data"`
}
