package chat

import (
	"context"
	"encoding/json"
	"errors"

	"hearth/llm"
	"hearth/realtime"
	"hearth/store"
)

// ErrModelNotFound is the one answer for a model that does not exist and a
// model the caller may not use; the server answers it as 400 "Model not
// found" (COMPAT.md §1.4: same text for both).
var ErrModelNotFound = errors.New("model not found")

// Connection kinds.
const (
	KindOllama = "ollama"
	KindOpenAI = "openai"
)

// Connection is one configured upstream (an entry of OLLAMA_BASE_URLS or
// OPENAI_API_BASE_URLS with its per-connection config, COMPAT.md §6.1).
type Connection struct {
	Kind           string // KindOllama or KindOpenAI
	Index          int    // urlIdx: position in its URL list
	BaseURL        string // without trailing slash
	Key            string // API key (OpenAI: from OPENAI_API_KEYS; Ollama: config "key")
	Enabled        bool
	PrefixID       string   // model ids are exposed as "<prefix>.<upstream id>"
	Tags           []string // connection tags, shown on its models
	ModelIDs       []string // allow-list; empty = all
	ConnectionType string   // "local" or "external"
	Headers        map[string]string
	// Provider ("azure", "llama.cpp", ...), AuthType ("bearer" when empty,
	// "none", "session", ...) and APIType ("responses" = the Responses API
	// upstream) come from the per-connection config; Config is that config
	// whole, for the fields not copied out (azure, api_version,
	// extra_params, ...). Never modify it.
	Provider string
	AuthType string
	APIType  string
	Config   map[string]any
}

// Target is a resolved completion destination.
type Target struct {
	ModelID    string // the id the caller named (a record id or a provider id)
	UpstreamID string // the id sent upstream: base model, prefix stripped
	Conn       Connection
	// Params are the generation params to apply, lowest precedence first
	// already merged: DEFAULT_MODEL_PARAMS < base records < the record.
	Params llm.Object
	// System is the record chain's system prompt ("" when none).
	System string
	// Name is the display name; OwnedBy is "ollama" or "openai".
	Name    string
	OwnedBy string
	// Meta is the named record's meta (capabilities, knowledge, toolIds,
	// filterIds, ...; nil for a provider model without a record).
	Meta json.RawMessage
}

// Resolver resolves a model id for an actor: records map to their base
// model, access is checked on every hop of the base_model_id chain, the
// connection's prefix is stripped. Unknown or forbidden → ErrModelNotFound.
type Resolver interface {
	Resolve(ctx context.Context, actor store.Actor, modelID string) (*Target, error)
}

// Emitter sends live events to every connection of a user. It never blocks
// on a slow browser and never fails the caller.
type Emitter interface {
	Emit(userID string, ev realtime.Event)
}
