package llm

import "encoding/json"

// Ollama's native API wire types, as served by Ollama 0.17.4 (see the recorded exchanges
// in testdata/fixtures/ollama-0.17.4). Polymorphic or pass-through fields are raw.

// OllamaChatRequest is a POST /api/chat body.
type OllamaChatRequest struct {
	Model    string          `json:"model"`
	Messages []OllamaMessage `json:"messages"`
	// Stream is always written: Ollama streams when it is absent.
	Stream    bool            `json:"stream"`
	Format    json.RawMessage `json:"format,omitempty"`
	Options   Object          `json:"options,omitzero"`
	KeepAlive json.RawMessage `json:"keep_alive,omitempty"`
	Think     json.RawMessage `json:"think,omitempty"`
	Tools     json.RawMessage `json:"tools,omitempty"`
	// System is lifted from options.system by upstream's conversion (COMPAT §6.4).
	System string `json:"system,omitempty"`
}

// OllamaMessage is a chat message in Ollama's form.
type OllamaMessage struct {
	Role       string           `json:"role"`
	Content    string           `json:"content"`
	Thinking   string           `json:"thinking,omitempty"`
	Images     []string         `json:"images,omitempty"`
	ToolCalls  []OllamaToolCall `json:"tool_calls,omitempty"`
	ToolName   string           `json:"tool_name,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

// OllamaToolCall is a complete function call (Ollama never splits one across lines).
type OllamaToolCall struct {
	ID       string             `json:"id,omitempty"`
	Index    *int               `json:"index,omitempty"`
	Function OllamaFunctionCall `json:"function"`
}

// OllamaFunctionCall carries the arguments as a JSON object, not a string.
type OllamaFunctionCall struct {
	Index     *int            `json:"index,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// OllamaChatResponse is one NDJSON line of a streamed /api/chat answer, or the whole
// non-streamed answer. The counters and durations are set on the `done` line.
type OllamaChatResponse struct {
	Model              string        `json:"model"`
	CreatedAt          string        `json:"created_at"`
	Message            OllamaMessage `json:"message"`
	Done               bool          `json:"done"`
	DoneReason         string        `json:"done_reason,omitempty"`
	TotalDuration      int64         `json:"total_duration,omitempty"`
	LoadDuration       int64         `json:"load_duration,omitempty"`
	PromptEvalCount    int64         `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64         `json:"prompt_eval_duration,omitempty"`
	EvalCount          int64         `json:"eval_count,omitempty"`
	EvalDuration       int64         `json:"eval_duration,omitempty"`
}

// OllamaGenerateRequest is a POST /api/generate body.
type OllamaGenerateRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt,omitempty"`
	Suffix    string          `json:"suffix,omitempty"`
	Images    []string        `json:"images,omitempty"`
	Format    json.RawMessage `json:"format,omitempty"`
	Options   Object          `json:"options,omitzero"`
	System    string          `json:"system,omitempty"`
	Template  string          `json:"template,omitempty"`
	Context   []int           `json:"context,omitempty"`
	Stream    *bool           `json:"stream,omitempty"`
	Raw       bool            `json:"raw,omitempty"`
	KeepAlive json.RawMessage `json:"keep_alive,omitempty"`
	Think     json.RawMessage `json:"think,omitempty"`
}

// OllamaGenerateResponse is one NDJSON line of /api/generate (or the whole answer).
type OllamaGenerateResponse struct {
	Model              string `json:"model"`
	CreatedAt          string `json:"created_at"`
	Response           string `json:"response"`
	Thinking           string `json:"thinking,omitempty"`
	Done               bool   `json:"done"`
	DoneReason         string `json:"done_reason,omitempty"`
	Context            []int  `json:"context,omitempty"`
	TotalDuration      int64  `json:"total_duration,omitempty"`
	LoadDuration       int64  `json:"load_duration,omitempty"`
	PromptEvalCount    int64  `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64  `json:"prompt_eval_duration,omitempty"`
	EvalCount          int64  `json:"eval_count,omitempty"`
	EvalDuration       int64  `json:"eval_duration,omitempty"`
}

// OllamaEmbedRequest is a POST /api/embed body; Input is a string or array of strings.
type OllamaEmbedRequest struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"input"`
	Truncate   *bool           `json:"truncate,omitempty"`
	Options    Object          `json:"options,omitzero"`
	KeepAlive  json.RawMessage `json:"keep_alive,omitempty"`
	Dimensions int             `json:"dimensions,omitempty"`
}

// OllamaEmbedResponse is the /api/embed answer; vectors are kept raw.
type OllamaEmbedResponse struct {
	Model           string            `json:"model"`
	Embeddings      []json.RawMessage `json:"embeddings"`
	TotalDuration   int64             `json:"total_duration,omitempty"`
	LoadDuration    int64             `json:"load_duration,omitempty"`
	PromptEvalCount int64             `json:"prompt_eval_count,omitempty"`
}

// OllamaEmbeddingsRequest is the legacy POST /api/embeddings body.
type OllamaEmbeddingsRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt"`
	Options   Object          `json:"options,omitzero"`
	KeepAlive json.RawMessage `json:"keep_alive,omitempty"`
}

// OllamaEmbeddingsResponse is the legacy /api/embeddings answer (one vector).
type OllamaEmbeddingsResponse struct {
	Embedding json.RawMessage `json:"embedding"`
}

// OllamaTags is the /api/tags answer (also the shape of /api/ps). Entries are kept whole:
// Open WebUI stores the raw entry under the model's `ollama` member.
type OllamaTags struct {
	Models []Object `json:"models"`
}

// OllamaModelInfo is the typed view of one /api/tags entry.
type OllamaModelInfo struct {
	Name       string          `json:"name"`
	Model      string          `json:"model"`
	ModifiedAt string          `json:"modified_at"`
	Size       int64           `json:"size"`
	Digest     string          `json:"digest"`
	Details    json.RawMessage `json:"details,omitempty"`
	ExpiresAt  string          `json:"expires_at,omitempty"`
}

// OllamaVersion is the /api/version answer.
type OllamaVersion struct {
	Version string `json:"version"`
}
