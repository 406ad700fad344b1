package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"hearth/llm"
)

// EmbedConfig is the embedding and chunking configuration, one snapshot
// per use (COMPAT.md §8.4). Engine "" is Open WebUI's default, a local
// SentenceTransformers model that a Go binary does not ship: it is not
// usable, and files are then extracted only (full-context retrieval).
type EmbedConfig struct {
	Engine    string // RAG_EMBEDDING_ENGINE: "ollama" or "openai" are usable
	Model     string // RAG_EMBEDDING_MODEL
	BaseURL   string // RAG_OLLAMA_BASE_URL / RAG_OPENAI_API_BASE_URL
	Key       string // RAG_OLLAMA_API_KEY / RAG_OPENAI_API_KEY
	BatchSize int    // RAG_EMBEDDING_BATCH_SIZE (<= 0: 1)
	// Bypass is BYPASS_EMBEDDING_AND_RETRIEVAL: extraction only.
	Bypass bool

	ChunkSize, ChunkOverlap int  // CHUNK_SIZE, CHUNK_OVERLAP
	MarkdownHeaders         bool // ENABLE_MARKDOWN_HEADER_TEXT_SPLITTER
}

// Usable reports whether files get chunks and vectors.
func (c EmbedConfig) Usable() bool {
	return !c.Bypass && (c.Engine == "ollama" || c.Engine == "openai") && c.Model != "" && c.BaseURL != ""
}

// ModelKey names the vectors this configuration makes ("openai:<model>");
// vectors of another key are never compared with its queries.
func (c EmbedConfig) ModelKey() string { return c.Engine + ":" + c.Model }

// ErrEmptyContent is Open WebUI's EMPTY_CONTENT: a text that gives no chunk.
//
//lint:ignore ST1005 Open WebUI's literal message, shown as the file's error.
var ErrEmptyContent = errors.New("The content provided is empty. Please ensure that there is text or data present before proceeding.")

// EmbedError is a failed embedding request; its text is shown as the
// file's error (the provider's message, or that it could not be reached).
type EmbedError struct{ Err error }

func (e *EmbedError) Error() string {
	var ue *llm.UpstreamError
	if errors.As(e.Err, &ue) {
		return "Embedding failed: " + ue.Message
	}
	return "Embedding failed: the embedding server could not be reached"
}

func (e *EmbedError) Unwrap() error { return e.Err }

// Embed returns one vector per text, through the configured engine's API
// (Ollama /api/embed, OpenAI-compatible /embeddings), BatchSize texts per
// request.
func Embed(ctx context.Context, hc *http.Client, c EmbedConfig, texts []string) ([][]float32, error) {
	if !c.Usable() {
		return nil, errors.New("no embedding engine is configured")
	}
	batch := max(c.BatchSize, 1)
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += batch {
		part := texts[i:min(i+batch, len(texts))]
		var raws []json.RawMessage
		switch c.Engine {
		case "ollama":
			r, err := llm.NewOllamaClient(c.BaseURL, c.Key, hc).Embed(ctx, map[string]any{"model": c.Model, "input": part})
			if err != nil {
				return nil, &EmbedError{err}
			}
			raws = r.Embeddings
		default:
			r, err := llm.NewOpenAIClient(c.BaseURL, c.Key, hc).Embeddings(ctx, map[string]any{"model": c.Model, "input": part})
			if err != nil {
				return nil, &EmbedError{err}
			}
			raws = make([]json.RawMessage, len(part))
			for _, d := range r.Data {
				if d.Index >= 0 && d.Index < len(raws) {
					raws[d.Index] = d.Embedding
				}
			}
		}
		if len(raws) != len(part) {
			return nil, &EmbedError{&llm.UpstreamError{Message: fmt.Sprintf("%d vectors for %d texts", len(raws), len(part))}}
		}
		for _, raw := range raws {
			var v []float32
			if err := json.Unmarshal(raw, &v); err != nil || len(v) == 0 {
				return nil, &EmbedError{&llm.UpstreamError{Message: "the answer holds no vector"}}
			}
			out = append(out, v)
		}
	}
	return out, nil
}
