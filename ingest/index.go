package ingest

import (
	"context"
	"net/http"
	"strings"

	"hearth/store"
	"hearth/vector"
)

// IndexStore is what the vector index needs of the store.
type IndexStore interface {
	ReplaceChunks(ctx context.Context, actor store.Actor, fileID, model string, chunks []store.Chunk) error
	FileChunks(ctx context.Context, actor store.Actor, fileID, model string, withVectors bool) ([]store.Chunk, error)
}

// VectorIndex chunks, embeds and stores files (it is the queue's Indexer)
// and searches them (chat's retrieval). A file's vectors are its rows in
// the store; the in-RAM index caches them per file and model on first use.
type VectorIndex struct {
	Store      IndexStore
	Index      *vector.Index
	Config     func() EmbedConfig
	HTTPClient *http.Client
}

func indexKey(model, fileID string) string { return model + "\x00" + fileID }

// IndexFile chunks the text (§8.4), embeds the chunks ("\n" replaced by a
// space for the embedding; the stored text is unchanged) and replaces the
// file's chunks. Without a usable engine it does nothing: the file is then
// used whole. No chunk at all is ErrEmptyContent, as Open WebUI fails it.
func (v *VectorIndex) IndexFile(ctx context.Context, f store.File, text string) error {
	cfg := v.Config()
	if !cfg.Usable() {
		return nil
	}
	pieces := Split(text, cfg.ChunkSize, cfg.ChunkOverlap, cfg.MarkdownHeaders)
	if len(pieces) == 0 {
		return ErrEmptyContent
	}
	inputs := make([]string, len(pieces))
	for i, p := range pieces {
		inputs[i] = strings.ReplaceAll(p.Text, "\n", " ")
	}
	vecs, err := Embed(ctx, v.HTTPClient, cfg, inputs)
	if err != nil {
		return err
	}
	chunks := make([]store.Chunk, len(pieces))
	for i, p := range pieces {
		chunks[i] = store.Chunk{N: i, Start: p.Start, Text: p.Text, Vector: vector.Encode(vecs[i])}
	}
	owner := store.Actor{UserID: f.UserID, Role: "user"}
	if err := v.Store.ReplaceChunks(ctx, owner, f.ID, cfg.ModelKey(), chunks); err != nil {
		return err
	}
	v.Index.Drop(indexKey(cfg.ModelKey(), f.ID))
	return nil
}

// Hit is one chunk found by Search.
type Hit struct {
	FileID string
	Start  int
	Text   string
	Score  float32 // cosine similarity
}

// Search embeds query and returns the k chunks of the files nearest to it,
// best first, and which of the files have vectors of the current model
// (the others were processed without an engine, or with another model,
// and are to be used whole). The caller has checked that the actor may
// read the files; the store checks it again.
func (v *VectorIndex) Search(ctx context.Context, actor store.Actor, query string, fileIDs []string, k int) ([]Hit, map[string]bool, error) {
	cfg := v.Config()
	vecs, err := Embed(ctx, v.HTTPClient, cfg, []string{query})
	if err != nil {
		return nil, nil, err
	}
	model := cfg.ModelKey()
	indexed := map[string]bool{}
	keys := make([]string, len(fileIDs))
	for i, id := range fileIDs {
		keys[i] = indexKey(model, id)
	}
	load := func(ctx context.Context, key string) ([]vector.Entry, error) {
		_, id, _ := strings.Cut(key, "\x00")
		cs, err := v.Store.FileChunks(ctx, actor, id, model, true)
		if err != nil {
			return nil, err
		}
		out := make([]vector.Entry, 0, len(cs))
		for _, c := range cs {
			vec, err := vector.Decode(c.Vector)
			if err != nil {
				return nil, err
			}
			out = append(out, vector.Entry{Key: c.N, Vec: vec})
		}
		return out, nil
	}
	found, err := v.Index.Search(ctx, keys, load, vecs[0], k)
	if err != nil {
		return nil, nil, err
	}
	for i, id := range fileIDs {
		indexed[id] = v.Index.Size(keys[i]) > 0
	}
	texts := map[string][]store.Chunk{}
	var hits []Hit
	for _, h := range found {
		_, id, _ := strings.Cut(h.Collection, "\x00")
		cs, ok := texts[id]
		if !ok {
			if cs, err = v.Store.FileChunks(ctx, actor, id, model, false); err != nil {
				return nil, nil, err
			}
			texts[id] = cs
		}
		if h.Key >= 0 && h.Key < len(cs) && cs[h.Key].N == h.Key {
			hits = append(hits, Hit{FileID: id, Start: cs[h.Key].Start, Text: cs[h.Key].Text, Score: h.Score})
		}
	}
	return hits, indexed, nil
}
