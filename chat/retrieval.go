package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"hearth/ingest"
	"hearth/llm"
	"hearth/store"
)

// Retrieval during chat (COMPAT.md §8.8): the request's `files` become
// sources, the sources become the RAG prompt, and the sources reach the
// client in the way of each mode.
//
// Which documents an item gives:
//   - Full context (this slice's only mode): each item's whole extracted
//     text is its document — a file gives its content, a collection the
//     content of each of its processed files. This is Open WebUI's
//     RAG_FULL_CONTEXT=true / item `context: "full"` /
//     BYPASS_EMBEDDING_AND_RETRIEVAL behaviour, and it is also what Hearth
//     does when no embedding engine is usable: Open WebUI's default engine
//     "" is a local SentenceTransformers model, which a Go binary does not
//     ship, so without RAG_EMBEDDING_ENGINE=ollama|openai there are no
//     vectors to search and whole documents are the honest answer. It is a
//     real Open WebUI mode, not a stub.
//   - Access is checked in SQL (store.RetrievalFiles,
//     store.RetrievalKnowledge): a file or collection the actor may not
//     read, an unknown id and a file whose processing has not completed are
//     skipped silently, as Open WebUI skips them (its retrieval drops an
//     item that fails has_access / is not found, and never errors the
//     completion for it). Skipping, rather than a 4xx, also means a chat
//     that names a file later deleted or unshared keeps working.
//   - Budget: at most Settings.RAGContextMaxChars characters of documents
//     go out with one completion (RAG_CONTEXT_MAX_CHARS, Hearth's own,
//     default 100,000): the document that crosses the limit is cut and
//     ends with a note saying how much was left out, later documents are
//     dropped. A huge PDF cannot blow up the request (or the upstream's
//     context window) this way; the sources sent to the client carry the
//     same cut text the model saw.

// FileStore is what retrieval needs of the store (*store.Store has it).
type FileStore interface {
	RetrievalFiles(ctx context.Context, actor store.Actor, ids []string) ([]store.File, error)
	RetrievalKnowledge(ctx context.Context, actor store.Actor, id string) (store.Knowledge, error)
	// WebCollectionFiles lists the actor's own web pages stored under a
	// collection name by POST /retrieval/process/web.
	WebCollectionFiles(ctx context.Context, actor store.Actor, name string) ([]string, error)
}

// Searcher finds the chunks of files nearest to a query
// (*ingest.VectorIndex has it): hits best first, and which of the files
// have vectors of the current model.
type Searcher interface {
	Search(ctx context.Context, actor store.Actor, query string, fileIDs []string, k int) ([]ingest.Hit, map[string]bool, error)
}

// DefaultRAGContextMaxChars is the default of RAG_CONTEXT_MAX_CHARS.
const DefaultRAGContextMaxChars = 100_000

// DefaultRAGTemplate is Open WebUI's DEFAULT_RAG_TEMPLATE (config.py),
// used when RAG_TEMPLATE is empty.
const DefaultRAGTemplate = `### Task:
Respond to the user query using the provided context, incorporating inline citations in the format [id] **only when the <source> tag includes an explicit id attribute** (e.g., <source id="1">).

### Guidelines:
- If you don't know the answer, clearly state that.
- If uncertain, ask the user for clarification.
- Respond in the same language as the user's query.
- If the context is unreadable or of poor quality, inform the user and provide the best possible answer.
- If the answer isn't present in the context but you possess the knowledge, explain this to the user and provide the answer using your own understanding.
- **Only include inline citations using [id] (e.g., [1], [2]) when the <source> tag includes an id attribute.**
- Do not cite if the <source> tag does not contain an id attribute.
- Do not use XML tags in your response.
- Ensure citations are concise and directly related to the information provided.

### Example of Citation:
If the user asks about a specific topic and the information is found in a source with a provided id attribute, the response should include the citation like in the following example:
* "According to the study, the proposed method increases efficiency by 20% [1]."

### Output:
Provide a clear and direct response to the user's query, including inline citations in the format [id] only when the <source> tag with id attribute is present in the context.

<context>
{{CONTEXT}}
</context>
`

// Source is one source object (COMPAT §8.8): the request item as sent, its
// documents and one metadata object per document.
type Source struct {
	Source    json.RawMessage `json:"source"`
	Document  []string        `json:"document"`
	Metadata  []DocMeta       `json:"metadata"`
	Distances []float32       `json:"distances,omitempty"` // relevance of each chunk found by search

	name, id string       // the item's name and id (the <source> name, the event filter)
	full     bool         // the item asks for whole documents (context: "full")
	files    []store.File // the item's readable, processed files
}

// DocMeta is a document's metadata: for whole documents Open WebUI sets
// {file_id, name, source} with source = the file name (which also numbers
// the citations: documents of one source name share an id).
type DocMeta struct {
	FileID     string `json:"file_id"`
	Name       string `json:"name"`
	Source     string `json:"source"`
	StartIndex *int   `json:"start_index,omitempty"` // chunks found by search
}

// fileItem is the part of a request `files` item retrieval reads.
type fileItem struct {
	Type            string   `json:"type"`
	Context         string   `json:"context"`
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	CollectionName  string   `json:"collection_name"`
	CollectionNames []string `json:"collection_names"`
}

// retrieval is what retrieve found for one request.
type retrieval struct {
	sources []Source
	count   int // distinct citation ids (the sources_retrieved count)
}

// retrieve resolves the request's files into sources and injects them into
// pr's messages (COMPAT §8.8). Nothing happens without files, without a
// FileStore, or for a model whose capabilities.file_context is false.
func (p *Pipeline) retrieve(ctx context.Context, actor store.Actor, raw json.RawMessage, t *Target, pr *prepared, s Settings) (*retrieval, error) {
	if p.o.Files == nil || len(bytes.TrimSpace(raw)) == 0 || !fileContext(t.Meta) {
		return nil, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, nil
	}
	parsed := make([]fileItem, len(items))
	var fileIDs []string
	for i, it := range items {
		if !isJSONObject(it) || json.Unmarshal(it, &parsed[i]) != nil {
			parsed[i] = fileItem{}
			continue
		}
		fi := &parsed[i]
		switch {
		case fi.Type == "file" && fi.ID != "":
			fileIDs = append(fileIDs, fi.ID)
		case fi.Type == "collection":
		default:
			for _, name := range legacyNames(fi) {
				if id, ok := strings.CutPrefix(name, "file-"); ok && id != "" {
					fileIDs = append(fileIDs, id)
				}
			}
		}
	}
	files := map[string]store.File{}
	if len(fileIDs) > 0 {
		fs, err := p.o.Files.RetrievalFiles(ctx, actor, fileIDs)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			files[f.ID] = f
		}
	}
	var out []Source
	for i, fi := range parsed {
		src := Source{Source: items[i], name: fi.Name, id: fi.ID, full: fi.Context == "full"}
		switch {
		case fi.Type == "file":
			if f, ok := files[fi.ID]; ok {
				src.add(f)
			}
		case fi.Type == "collection":
			if err := p.addCollection(ctx, actor, &src, fi.ID); err != nil {
				return nil, err
			}
		default:
			for _, name := range legacyNames(&fi) {
				if id, ok := strings.CutPrefix(name, "file-"); ok && id != "" {
					if f, ok := files[id]; ok {
						src.add(f)
					}
					continue
				}
				if err := p.addCollection(ctx, actor, &src, name); err != nil {
					return nil, err
				}
			}
		}
		if len(src.files) > 0 {
			out = append(out, src)
		}
	}
	p.fillDocuments(ctx, actor, out, lastUserText(pr.messages), s)
	withDocs := out[:0]
	for _, src := range out {
		if len(src.Document) > 0 {
			withDocs = append(withDocs, src)
		}
	}
	out = applyBudget(withDocs, s.RAGContextMaxChars)
	if len(out) == 0 {
		return nil, nil
	}
	context, count := sourceContext(out)
	if context == "" {
		return nil, nil
	}
	injectSources(pr, ragPrompt(s.RAGTemplate, context, lastUserText(pr.messages)), s.RAGSystemContext)
	b, err := json.Marshal(pr.messages)
	if err != nil {
		return nil, err
	}
	pr.payload.Set("messages", b)
	return &retrieval{sources: out, count: count}, nil
}

// legacyNames are an item's legacy collection_name / collection_names.
func legacyNames(fi *fileItem) []string {
	if fi.CollectionName != "" {
		return []string{fi.CollectionName}
	}
	return fi.CollectionNames
}

// addCollection adds the processed files of a readable collection; a
// name that is no readable knowledge collection is looked up among the
// actor's web collections (the `url` / `web_search` items of COMPAT §8.8
// name the collection process/web wrote); otherwise it adds nothing.
func (p *Pipeline) addCollection(ctx context.Context, actor store.Actor, src *Source, id string) error {
	if id == "" {
		return nil
	}
	k, err := p.o.Files.RetrievalKnowledge(ctx, actor, id)
	if errors.Is(err, store.ErrNotFound) {
		ids, err := p.o.Files.WebCollectionFiles(ctx, actor, id)
		if err != nil || len(ids) == 0 {
			return err
		}
		fs, err := p.o.Files.RetrievalFiles(ctx, actor, ids)
		if err != nil {
			return err
		}
		for _, f := range fs {
			src.add(f)
		}
		return nil
	}
	if err != nil {
		return err
	}
	for _, f := range k.Files {
		src.add(f)
	}
	return nil
}

// add records one of the item's files.
func (s *Source) add(f store.File) { s.files = append(s.files, f) }

// addWhole appends a file's whole text as a document.
func (s *Source) addWhole(f store.File) {
	text := ""
	if f.Content != nil {
		text = *f.Content
	}
	s.Document = append(s.Document, text)
	s.Metadata = append(s.Metadata, DocMeta{FileID: f.ID, Name: f.Filename, Source: f.Filename})
}

// fillDocuments gives each source its documents: with search on
// (Settings.RAGSearch: an embedding engine is usable and RAG_FULL_CONTEXT is
// off) and an item that does not ask for context "full", the top k chunks
// of its files nearest to the query (the last user message), with their
// scores as distances; files without vectors of the current model
// (processed before an engine was configured, or with another model) are
// used whole, so configuring an engine never makes a file vanish from
// chats. A failed search (the embedding server is down) falls back to whole
// documents for the request, with a warning in the log: an answer without
// the files would be silently wrong.
func (p *Pipeline) fillDocuments(ctx context.Context, actor store.Actor, srcs []Source, query string, s Settings) {
	search := s.RAGSearch && p.o.Searcher != nil && strings.TrimSpace(query) != ""
	for i := range srcs {
		src := &srcs[i]
		if !search || src.full {
			for _, f := range src.files {
				src.addWhole(f)
			}
			continue
		}
		ids := make([]string, len(src.files))
		byID := make(map[string]store.File, len(src.files))
		for j, f := range src.files {
			ids[j] = f.ID
			byID[f.ID] = f
		}
		hits, indexed, err := p.o.Searcher.Search(ctx, actor, query, ids, max(s.RAGTopK, 1))
		if err != nil {
			p.log.Warn("retrieval search failed; sending whole documents", "err", err)
			for _, f := range src.files {
				src.addWhole(f)
			}
			continue
		}
		for _, h := range hits {
			f := byID[h.FileID]
			start := h.Start
			src.Document = append(src.Document, h.Text)
			src.Metadata = append(src.Metadata, DocMeta{FileID: f.ID, Name: f.Filename, Source: f.Filename, StartIndex: &start})
			src.Distances = append(src.Distances, h.Score)
		}
		for _, f := range src.files {
			if !indexed[f.ID] {
				src.addWhole(f)
				if len(src.Distances) > 0 {
					src.Distances = append(src.Distances, 1)
				}
			}
		}
	}
}

// fileContext reports the model capability file_context (default true).
func fileContext(meta json.RawMessage) bool {
	if len(meta) == 0 {
		return true
	}
	var m struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return true
	}
	return string(bytes.TrimSpace(m.Capabilities["file_context"])) != "false"
}

// truncationNote ends a document cut by the context budget.
const truncationNote = "\n[Hearth: %d more characters of the sources were left out (RAG_CONTEXT_MAX_CHARS is %d).]"

// applyBudget keeps at most limit characters of documents (limit <= 0:
// the default). The document that crosses the limit is cut and ends with a
// note counting every character left out; later documents are dropped, and
// sources left without documents with them.
func applyBudget(srcs []Source, limit int) []Source {
	if limit <= 0 {
		limit = DefaultRAGContextMaxChars
	}
	left := limit
	cut := -1 // source index of the cut document; its last document is the cut one
	omitted := 0
	out := srcs[:0:0]
	for _, s := range srcs {
		if cut >= 0 {
			for _, d := range s.Document {
				omitted += utf8.RuneCountInString(d)
			}
			continue
		}
		kept := s
		kept.Document, kept.Metadata, kept.Distances = nil, nil, nil
		for j, d := range s.Document {
			if cut >= 0 {
				omitted += utf8.RuneCountInString(d)
				continue
			}
			n := utf8.RuneCountInString(d)
			if j < len(s.Distances) {
				kept.Distances = append(kept.Distances, s.Distances[j])
			}
			if n <= left {
				left -= n
				kept.Document = append(kept.Document, d)
				kept.Metadata = append(kept.Metadata, s.Metadata[j])
				continue
			}
			kept.Document = append(kept.Document, prefixRunes(d, left))
			kept.Metadata = append(kept.Metadata, s.Metadata[j])
			omitted += n - left
			left = 0
			cut = len(out)
		}
		out = append(out, kept)
	}
	if cut >= 0 {
		docs := out[cut].Document
		docs[len(docs)-1] += fmt.Sprintf(truncationNote, omitted, limit)
	}
	return out
}

// prefixRunes returns the first n runes of s.
func prefixRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// sourceContext renders the documents as Open WebUI's
// apply_source_context_to_messages does: one
// `<source id="N"[ name="…"]>text</source>\n` per document, N numbered per
// distinct citation id (the document's metadata.source, else the item's
// id, else "N/A"), name = the request item's name when it has one. It
// returns the context and the number of distinct ids.
func sourceContext(srcs []Source) (string, int) {
	var b strings.Builder
	idx := map[string]int{}
	for _, s := range srcs {
		for j, d := range s.Document {
			cid := s.Metadata[j].Source
			if cid == "" {
				cid = s.id
			}
			if cid == "" {
				cid = "N/A"
			}
			n, ok := idx[cid]
			if !ok {
				n = len(idx) + 1
				idx[cid] = n
			}
			b.WriteString(`<source id="`)
			b.WriteString(strconv.Itoa(n))
			b.WriteByte('"')
			if s.name != "" {
				b.WriteString(` name="`)
				b.WriteString(s.name)
				b.WriteByte('"')
			}
			b.WriteByte('>')
			b.WriteString(d)
			b.WriteString("</source>\n")
		}
	}
	return b.String(), len(idx)
}

// ragPrompt renders the RAG template (RAG_TEMPLATE, empty = the default):
// {{CONTEXT}} / [context] become the context, {{QUERY}} / [query] the
// user's query, in one pass (text substituted in is never scanned again,
// so a document that contains "{{QUERY}}" stays as it is).
func ragPrompt(template, context, query string) string {
	if strings.TrimSpace(template) == "" {
		template = DefaultRAGTemplate
	}
	return strings.NewReplacer("{{CONTEXT}}", context, "[context]", context, "{{QUERY}}", query, "[query]", query).Replace(template)
}

// lastUserText is the text of the last user message.
func lastUserText(msgs []llm.Object) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if role, _ := msgs[i].GetString("role"); role != "user" {
			continue
		}
		if s, ok := msgs[i].GetString("content"); ok {
			return s
		}
		var parts []llm.Object
		json.Unmarshal(msgs[i].Get("content"), &parts)
		for _, p := range parts {
			if typ, _ := p.GetString("type"); typ == "text" {
				s, _ := p.GetString("text")
				return s
			}
		}
		return ""
	}
	return ""
}

// injectSources puts the rendered prompt where Open WebUI does: before the
// content of the last message when it is a user message, joined by a
// newline (add_or_update_user_message, else a new user message at the
// end); with RAG_SYSTEM_CONTEXT after the content of the first message when
// it is a system message (add_or_update_system_message with append, else a
// new system message first).
func injectSources(pr *prepared, prompt string, system bool) {
	msgs := pr.messages
	if system {
		if len(msgs) > 0 {
			if role, _ := msgs[0].GetString("role"); role == "system" {
				m := msgs[0].Clone()
				joinText(&m, prompt, true)
				msgs[0] = m
				pr.messages = msgs
				return
			}
		}
		var m llm.Object
		m.SetString("role", "system")
		m.SetString("content", prompt)
		pr.messages = append([]llm.Object{m}, msgs...)
		return
	}
	if n := len(msgs); n > 0 {
		if role, _ := msgs[n-1].GetString("role"); role == "user" {
			m := msgs[n-1].Clone()
			joinText(&m, prompt, false)
			msgs[n-1] = m
			pr.messages = msgs
			return
		}
	}
	var m llm.Object
	m.SetString("role", "user")
	m.SetString("content", prompt)
	pr.messages = append(msgs, m)
}

// joinText adds text to a message's content: after it (append) or before
// it, joined by a newline. For a list of parts the first text part takes
// it (a text part is added when there is none).
func joinText(m *llm.Object, text string, appendText bool) {
	join := func(s string) string {
		if appendText {
			return s + "\n" + text
		}
		return text + "\n" + s
	}
	if s, ok := m.GetString("content"); ok {
		m.SetString("content", join(s))
		return
	}
	var parts []llm.Object
	if json.Unmarshal(m.Get("content"), &parts) != nil {
		m.SetString("content", text)
		return
	}
	for i := range parts {
		if typ, _ := parts[i].GetString("type"); typ == "text" {
			s, _ := parts[i].GetString("text")
			parts[i] = parts[i].Clone()
			parts[i].SetString("text", join(s))
			b, _ := json.Marshal(parts)
			m.Set("content", b)
			return
		}
	}
	var tp llm.Object
	tp.SetString("type", "text")
	tp.SetString("text", text)
	b, _ := json.Marshal(append([]llm.Object{tp}, parts...))
	m.Set("content", b)
}

// eventSources are the sources the client is told about: those whose item
// has a name or an id (Open WebUI's filter for the pending event).
func (r *retrieval) eventSources() []Source {
	if r == nil {
		return nil
	}
	var out []Source
	for _, s := range r.sources {
		if s.name != "" || s.id != "" {
			out = append(out, s)
		}
	}
	return out
}

// sourcesJSON encodes the client's sources (nil when there are none).
func (r *retrieval) sourcesJSON() json.RawMessage {
	srcs := r.eventSources()
	if len(srcs) == 0 {
		return nil
	}
	b, err := marshalJSON(srcs)
	if err != nil {
		return nil
	}
	return b
}

// withSources adds the top-level "sources" member to a completion JSON
// (COMPAT §4.4: pending events are merged into the non-streaming answer).
func withSources(body []byte, sources json.RawMessage) []byte {
	if len(sources) == 0 {
		return body
	}
	var o llm.Object
	if o.UnmarshalJSON(body) != nil {
		return body
	}
	o.Set("sources", sources)
	return o.AppendJSON(nil)
}

// sourcesEvent is the first SSE event of a streamed API answer:
// `data: {"sources":[...]}`.
func sourcesEvent(sources json.RawMessage) []byte {
	b := append([]byte(`data: {"sources":`), sources...)
	return append(b, "}\n\n"...)
}
