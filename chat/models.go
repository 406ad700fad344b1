package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"hearth/llm"
	"hearth/store"
)

// The model registry: the merged list behind GET /api/models (COMPAT.md
// §5.1) and the Resolver of the completion pipeline (§5.3, §5.4).
//
//   - Provider lists are fetched from every enabled connection in parallel,
//     each bounded by FetchTimeout; a connection that fails or hangs
//     contributes nothing (logged at most once a minute per connection).
//     Nothing is fetched at start-up.
//   - The merged provider list is cached for TTL. An expired list is still
//     answered while one background fetch renews it (stale-while-revalidate),
//     so a hanging upstream costs a request nothing after the first fetch; a
//     forced refresh (?refresh=true), a first call and a change of the
//     connections wait for a fetch (at most FetchTimeout). Concurrent callers
//     share one fetch.
//   - Model records are cached in memory and reloaded after every write
//     through InvalidateRecords (and after every provider fetch, so a record
//     written by another process shows up within TTL).
//   - A View (providers × records × configuration) is built once per change
//     of any of the three, with every entry's JSON encoded in advance; a
//     request only filters it for the caller.

// RegistryConfig is the configuration the registry reads: one immutable
// snapshot (the server builds a new one when the settings change). Never
// modify a published one.
type RegistryConfig struct {
	Connections         []Connection
	DefaultModels       []string       // DEFAULT_MODELS, in order
	DefaultMetadata     map[string]any // DEFAULT_MODEL_METADATA
	DefaultParams       map[string]any // DEFAULT_MODEL_PARAMS
	BypassModelAccess   bool           // BYPASS_MODEL_ACCESS_CONTROL
	BypassAdminAccess   bool           // BYPASS_ADMIN_ACCESS_CONTROL
	CustomModelFallback bool           // ENABLE_CUSTOM_MODEL_FALLBACK
}

type configKey struct {
	cfg *RegistryConfig
	key string
}

// key fingerprints cfg's connections, once per snapshot.
func (r *Registry) key(cfg *RegistryConfig) string {
	if k := r.keyCache.Load(); k != nil && k.cfg == cfg {
		return k.key
	}
	k := &configKey{cfg, connectionsKey(cfg.Connections)}
	r.keyCache.Store(k)
	return k.key
}

// RecordSource loads every model record with its grants (store.Store).
type RecordSource interface {
	AllModels(ctx context.Context) ([]store.Model, error)
}

// RegistryOptions configure NewRegistry.
type RegistryOptions struct {
	Config  func() *RegistryConfig // current snapshot; called on every use
	Records RecordSource
	// HTTPClient calls the upstreams (nil: http.DefaultClient); deadlines
	// come from FetchTimeout.
	HTTPClient   *http.Client
	Log          *slog.Logger
	FetchTimeout time.Duration // per connection; 0 = 3 s
	TTL          time.Duration // provider list cache; 0 = 10 s
}

// Registry is the model registry and the chat.Resolver. Safe for
// concurrent use.
type Registry struct {
	config  func() *RegistryConfig
	records RecordSource
	hc      *http.Client
	log     *slog.Logger
	now     func() time.Time

	fetchTimeout atomic.Int64 // ns
	ttl          atomic.Int64 // ns
	keyCache     atomic.Pointer[configKey]

	base     atomic.Pointer[baseSet]
	gen      atomic.Uint64 // bumped by Invalidate: cached lists become stale
	mu       sync.Mutex    // guards inflight, seq
	inflight *fetchCall
	seq      uint64

	logMu  sync.Mutex
	logged map[string]time.Time

	recMu  sync.Mutex
	recs   atomic.Pointer[recordSet]
	recGen atomic.Uint64

	viewMu sync.Mutex
	view   atomic.Pointer[View]
}

// NewRegistry returns a registry; it fetches nothing until first used.
func NewRegistry(o RegistryOptions) *Registry {
	r := &Registry{config: o.Config, records: o.Records, hc: o.HTTPClient, log: o.Log, now: time.Now, logged: map[string]time.Time{}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 3 * time.Second
	}
	if o.TTL <= 0 {
		o.TTL = 10 * time.Second
	}
	r.fetchTimeout.Store(int64(o.FetchTimeout))
	r.ttl.Store(int64(o.TTL))
	return r
}

// SetFetchTimeout changes the per-connection fetch timeout.
func (r *Registry) SetFetchTimeout(d time.Duration) { r.fetchTimeout.Store(int64(d)) }

// SetTTL changes how long a provider list stays fresh.
func (r *Registry) SetTTL(d time.Duration) { r.ttl.Store(int64(d)) }

// Config is the configuration snapshot in use.
func (r *Registry) Config() *RegistryConfig { return r.config() }

// Invalidate marks the provider lists stale (the next use renews them) and
// drops the cached records.
func (r *Registry) Invalidate() {
	r.gen.Add(1)
	r.InvalidateRecords()
}

// InvalidateRecords drops the cached records; call it after every record or
// grant write.
func (r *Registry) InvalidateRecords() {
	r.recGen.Add(1)
	r.recs.Store(nil)
}

// ---- provider lists ----

// baseModel is one provider model (COMPAT.md §5.1 entry shapes).
type baseModel struct {
	ID             string
	Name           string
	OwnedBy        string // "openai" or "ollama"
	ConnectionType string
	Tags           []string   // connection tags
	entry          llm.Object // the base entry, as GET /api/models/base shows it
	json           []byte
	targets        []baseTarget // the connections serving it (Ollama: one per URL)
}

type baseTarget struct {
	conn       Connection
	upstreamID string // the id that connection knows (prefix stripped)
}

type baseSet struct {
	seq  uint64
	gen  uint64
	key  string
	at   time.Time
	list []*baseModel
}

type fetchCall struct {
	key  string
	done chan struct{}
	res  *baseSet
}

// baseFor returns the provider list for cfg: cached, or fetched (see the
// package comment for when a caller waits).
func (r *Registry) baseFor(ctx context.Context, cfg *RegistryConfig, force bool) (*baseSet, error) {
	key := r.key(cfg)
	if !force {
		if b := r.base.Load(); b != nil && b.key == key {
			if b.gen != r.gen.Load() || r.now().Sub(b.at) >= time.Duration(r.ttl.Load()) {
				r.startFetch(cfg)
			}
			return b, nil
		}
	}
	call := r.startFetch(cfg)
	select {
	case <-call.done:
		return call.res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startFetch joins the fetch in flight for the same connections or starts
// one. The fetch does not belong to any request: a caller that goes away
// does not cancel it for the others.
func (r *Registry) startFetch(cfg *RegistryConfig) *fetchCall {
	key := r.key(cfg)
	r.mu.Lock()
	if c := r.inflight; c != nil && c.key == key {
		r.mu.Unlock()
		return c
	}
	r.seq++
	call := &fetchCall{key: key, done: make(chan struct{})}
	seq, gen := r.seq, r.gen.Load()
	r.inflight = call
	r.mu.Unlock()
	go func() {
		b := r.fetch(cfg)
		b.seq, b.gen, b.key = seq, gen, key
		r.mu.Lock()
		if r.inflight == call {
			r.inflight = nil
		}
		if cur := r.base.Load(); cur == nil || cur.seq < seq {
			r.base.Store(b)
		}
		r.mu.Unlock()
		r.InvalidateRecords()
		call.res = b
		close(call.done)
	}()
	return call
}

// fetch asks every enabled connection in parallel and merges the answers:
// OpenAI-compatible models first, then Ollama models (one entry per tag,
// with the indexes of every URL serving it); a later duplicate id replaces
// an earlier one in its place.
func (r *Registry) fetch(cfg *RegistryConfig) *baseSet {
	timeout := time.Duration(r.fetchTimeout.Load())
	conns := cfg.Connections
	results := make([][]llm.Object, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		if !c.Enabled || skipListing(c) {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			list, err := r.fetchOne(ctx, c)
			if err != nil {
				r.logFailure(c, err)
				return
			}
			results[i] = list
		})
	}
	wg.Wait()

	b := &baseSet{at: r.now()}
	pos := map[string]int{}
	add := func(m *baseModel) {
		if i, dup := pos[m.ID]; dup {
			b.list[i] = m
			return
		}
		pos[m.ID] = len(b.list)
		b.list = append(b.list, m)
	}
	for i, c := range conns {
		if c.Kind == KindOpenAI {
			for _, raw := range results[i] {
				if m := openAIModel(c, raw); m != nil {
					add(m)
				}
			}
		}
	}
	var ollama []*baseModel
	byTag := map[string]*baseModel{}
	urls := map[*baseModel][]int{}
	for i, c := range conns {
		if c.Kind != KindOllama {
			continue
		}
		for _, tag := range results[i] {
			id, _ := tag.GetString("model")
			if id == "" {
				id, _ = tag.GetString("name")
			}
			if id == "" || (len(c.ModelIDs) > 0 && !contains(c.ModelIDs, id)) {
				continue
			}
			exposed := prefixed(c.PrefixID, id)
			if m := byTag[exposed]; m != nil {
				m.targets = append(m.targets, baseTarget{c, id})
				urls[m] = append(urls[m], c.Index)
				continue
			}
			raw := tag.Clone()
			raw.SetString("model", exposed)
			m := &baseModel{ID: exposed, OwnedBy: "ollama", ConnectionType: c.ConnectionType, Tags: c.Tags,
				entry: raw, targets: []baseTarget{{c, id}}}
			byTag[exposed], urls[m] = m, []int{c.Index}
			ollama = append(ollama, m)
		}
	}
	for _, m := range ollama {
		raw := m.entry
		raw.SetValue("urls", urls[m])
		raw.SetString("connection_type", m.ConnectionType)
		raw.Set("tags", tagsJSON(m.Tags))
		e := llm.OllamaModelEntry(raw, 0)
		e.SetString("connection_type", m.ConnectionType)
		e.Set("tags", tagsJSON(m.Tags))
		e.SetBool("loaded", raw.Has("expires_at"))
		m.Name, _ = e.GetString("name")
		m.entry = e
		add(m)
	}
	for _, m := range b.list {
		m.json = m.entry.AppendJSON(nil)
	}
	return b
}

// skipListing: api.openai.com without a key can only answer 401, so a
// fresh install (whose default OpenAI connection has no key) does not call
// out to the internet on every model list.
func skipListing(c Connection) bool {
	if c.Kind != KindOpenAI || c.Key != "" || len(c.ModelIDs) > 0 || c.AuthType != "" && c.AuthType != "bearer" {
		return false
	}
	u, err := url.Parse(c.BaseURL)
	return err == nil && u.Hostname() == "api.openai.com"
}

func (r *Registry) fetchOne(ctx context.Context, c Connection) ([]llm.Object, error) {
	key := c.Key
	if c.AuthType == "none" {
		key = ""
	}
	h := http.Header{}
	for k, v := range c.Headers {
		if !strings.Contains(v, "{{") { // per-request templates mean nothing here
			h.Set(k, v)
		}
	}
	switch c.Kind {
	case KindOpenAI:
		if len(c.ModelIDs) > 0 { // the allow-list is the list: no call
			out := make([]llm.Object, 0, len(c.ModelIDs))
			for _, id := range c.ModelIDs {
				var o llm.Object
				o.SetString("id", id)
				o.SetString("name", id)
				out = append(out, o)
			}
			return out, nil
		}
		cl := llm.NewOpenAIClient(c.BaseURL, key, r.hc)
		cl.SetHeader(h)
		return cl.Models(ctx)
	case KindOllama:
		cl := llm.NewOllamaClient(c.BaseURL, key, r.hc)
		cl.SetHeader(h)
		tags, err := cl.Tags(ctx)
		if err != nil {
			return nil, err
		}
		return tags.Models, nil
	}
	return nil, nil
}

// logFailure logs a failed list fetch at most once a minute per connection.
func (r *Registry) logFailure(c Connection, err error) {
	k := c.Kind + "\x00" + c.BaseURL
	now := r.now()
	r.logMu.Lock()
	last, seen := r.logged[k]
	if seen && now.Sub(last) < time.Minute {
		r.logMu.Unlock()
		return
	}
	r.logged[k] = now
	r.logMu.Unlock()
	r.log.Warn("model list unavailable", slog.String("kind", c.Kind), slog.Int("url_idx", c.Index),
		slog.String("url", redactURL(c.BaseURL)), slog.Any("err", err))
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<invalid url>"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// openAIExcluded are hidden on api.openai.com (not chat models).
var openAIExcluded = [...]string{"babbage", "dall-e", "davinci", "embedding", "tts", "whisper"}

func openAIModel(c Connection, raw llm.Object) *baseModel {
	id, _ := raw.GetString("id")
	if id == "" {
		id, _ = raw.GetString("name")
	}
	if id == "" {
		return nil
	}
	if u, err := url.Parse(c.BaseURL); err == nil && u.Hostname() == "api.openai.com" {
		for _, x := range openAIExcluded {
			if strings.Contains(id, x) {
				return nil
			}
		}
	}
	exposed := prefixed(c.PrefixID, id)
	e := raw.Clone()
	e.SetString("id", exposed)
	name, _ := raw.GetString("name")
	if name == "" {
		name = exposed
	}
	e.SetString("name", name)
	e.SetString("owned_by", "openai")
	e.Set("openai", raw.AppendJSON(nil))
	e.SetString("connection_type", c.ConnectionType)
	if c.Provider != "" {
		e.SetString("provider", c.Provider)
	}
	e.SetInt("urlIdx", int64(c.Index))
	e.Set("tags", tagsJSON(c.Tags))
	return &baseModel{ID: exposed, Name: name, OwnedBy: "openai", ConnectionType: c.ConnectionType, Tags: c.Tags,
		entry: e, targets: []baseTarget{{c, id}}}
}

func prefixed(prefix, id string) string {
	if prefix == "" {
		return id
	}
	return prefix + "." + id
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func tagsJSON(names []string) json.RawMessage {
	b := []byte{'['}
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = append(b, mustJSON(n)...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// mustJSON encodes v without HTML escaping; v is always encodable here.
func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// ---- records ----

type recordSet struct {
	list   []*store.Model
	params map[*store.Model]llm.Object // each record's params, parsed once
}

func (r *Registry) recordSet(ctx context.Context) (*recordSet, error) {
	if rs := r.recs.Load(); rs != nil {
		return rs, nil
	}
	r.recMu.Lock()
	defer r.recMu.Unlock()
	if rs := r.recs.Load(); rs != nil {
		return rs, nil
	}
	gen := r.recGen.Load()
	rs := &recordSet{}
	if r.records != nil {
		list, err := r.records.AllModels(ctx)
		if err != nil {
			return nil, err
		}
		rs.list = make([]*store.Model, len(list))
		rs.params = make(map[*store.Model]llm.Object, len(list))
		for i := range list {
			rs.list[i] = &list[i]
			if p, err := llm.ParseObject(list[i].Params); err == nil {
				rs.params[&list[i]] = p
			}
		}
	}
	if r.recGen.Load() == gen { // a write during the load: do not keep what may be old
		r.recs.Store(rs)
	}
	return rs, nil
}

// ---- the merged view ----

// Model is one entry of GET /api/models.
type Model struct {
	ID      string
	Name    string
	OwnedBy string
	// Record is the model record applied to this entry (a preset, or an
	// override of a provider model); nil for a plain provider model.
	Record *store.Model
	// JSON is the entry as GET /api/models shows it.
	JSON []byte

	base           *baseModel // nil for a preset
	connectionType *string
	entry          llm.Object
}

// View is the merged model list for one configuration, provider list and
// set of records. It is immutable.
type View struct {
	cfg    *RegistryConfig
	base   *baseSet
	recs   *recordSet
	models []*Model
	byID   map[string]*Model
	params llm.Object // DEFAULT_MODEL_PARAMS

	listOnce sync.Once
	listJSON []byte
}

// View returns the current merged view; refresh forces a fetch of the
// provider lists and a reload of the records.
func (r *Registry) View(ctx context.Context, refresh bool) (*View, error) {
	cfg := r.config()
	b, err := r.baseFor(ctx, cfg, refresh)
	if err != nil {
		return nil, err
	}
	if refresh {
		r.InvalidateRecords()
	}
	rs, err := r.recordSet(ctx)
	if err != nil {
		return nil, err
	}
	if v := r.view.Load(); v != nil && v.cfg == cfg && v.base == b && v.recs == rs {
		return v, nil
	}
	r.viewMu.Lock()
	defer r.viewMu.Unlock()
	if v := r.view.Load(); v != nil && v.cfg == cfg && v.base == b && v.recs == rs {
		return v, nil
	}
	v := buildView(cfg, b, rs)
	r.view.Store(v)
	return v, nil
}

// All is every entry, sorted by name (then id).
func (v *View) All() []*Model { return v.models }

// ListJSON is {"data": [every entry]}, built once per view (the answer of
// GET /api/models for callers who see everything).
func (v *View) ListJSON() []byte {
	v.listOnce.Do(func() {
		n := 11
		for _, m := range v.models {
			n += len(m.JSON) + 1
		}
		b := make([]byte, 0, n)
		b = append(b, `{"data":[`...)
		for i, m := range v.models {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, m.JSON...)
		}
		v.listJSON = append(b, "]}"...)
	})
	return v.listJSON
}

// Get returns the entry with this id, or nil.
func (v *View) Get(id string) *Model { return v.byID[id] }

// BaseJSON is every provider model as GET /api/models/base shows it.
func (v *View) BaseJSON() [][]byte {
	out := make([][]byte, len(v.base.list))
	for i, m := range v.base.list {
		out[i] = m.json
	}
	return out
}

// Visible filters the list for a caller (COMPAT.md §5.4 model visibility):
// everything under BYPASS_MODEL_ACCESS_CONTROL, and for an admin under
// BYPASS_ADMIN_ACCESS_CONTROL; otherwise the caller's own records and those
// with a read grant for them, their groups or everyone. A provider model
// without a record is visible to admins only (Hearth keeps it visible to an
// admin without BYPASS_ADMIN_ACCESS_CONTROL, who may use it anyway).
func (v *View) Visible(a store.Actor) []*Model {
	if v.cfg.BypassModelAccess || (a.IsAdmin() && v.cfg.BypassAdminAccess) {
		return v.models
	}
	out := make([]*Model, 0, len(v.models))
	for _, m := range v.models {
		if m.Record == nil {
			if a.IsAdmin() {
				out = append(out, m)
			}
		} else if v.mayRead(a, m.Record) {
			out = append(out, m)
		}
	}
	return out
}

func (v *View) mayRead(a store.Actor, rec *store.Model) bool {
	return v.cfg.BypassModelAccess || (a.IsAdmin() && v.cfg.BypassAdminAccess) ||
		(a.UserID != "" && rec.UserID == a.UserID) || store.HasAccess(rec.Grants, a, store.PermRead)
}

// buildView applies the records to the provider list (COMPAT.md §5.1 steps
// 3-6): a record without a base model overrides the provider model with its
// id (for Ollama also the tag's name before ":"), or removes it when
// inactive; an active record with a base model adds a preset entry unless
// its id is taken. DEFAULT_MODEL_METADATA fills each entry's info.meta;
// tags are the union of meta tags and connection tags.
func buildView(cfg *RegistryConfig, b *baseSet, rs *recordSet) *View {
	v := &View{cfg: cfg, base: b, recs: rs, byID: map[string]*Model{}}
	models := make([]*Model, 0, len(b.list)+len(rs.list))
	for _, bm := range b.list {
		ct := bm.ConnectionType
		models = append(models, &Model{ID: bm.ID, Name: bm.Name, OwnedBy: bm.OwnedBy, base: bm, connectionType: &ct, entry: bm.entry.Clone()})
	}
	for _, rec := range rs.list {
		if rec.BaseModelID == "" {
			kept := models[:0]
			for _, m := range models {
				if m.base != nil && (m.ID == rec.ID || (m.OwnedBy == "ollama" && tagName(m.ID) == rec.ID)) {
					if !rec.IsActive {
						continue
					}
					m.Name, m.Record = rec.Name, rec
				}
				kept = append(kept, m)
			}
			models = kept
			continue
		}
		if !rec.IsActive || findModel(models, rec.ID) != nil {
			continue
		}
		owned, ct := "openai", (*string)(nil)
		for _, m := range models {
			if rec.BaseModelID == m.ID || rec.BaseModelID == tagName(m.ID) {
				owned, ct = m.OwnedBy, m.connectionType
				break
			}
		}
		var e llm.Object
		e.SetString("id", rec.ID)
		e.SetString("name", rec.Name)
		e.SetString("object", "model")
		e.SetInt("created", rec.CreatedAt)
		e.SetString("owned_by", owned)
		if ct != nil {
			e.SetString("connection_type", *ct)
		} else {
			e.Set("connection_type", nil)
		}
		e.SetBool("preset", true)
		models = append(models, &Model{ID: rec.ID, Name: rec.Name, OwnedBy: owned, Record: rec, connectionType: ct, entry: e})
	}
	for _, m := range models {
		finishEntry(cfg, m)
		v.byID[m.ID] = m
	}
	sort.SliceStable(models, func(i, j int) bool {
		a, b := strings.ToLower(models[i].Name), strings.ToLower(models[j].Name)
		if a != b {
			return a < b
		}
		return models[i].ID < models[j].ID
	})
	v.models = models
	for _, k := range sortedKeys(cfg.DefaultParams) {
		v.params.Set(k, mustJSON(cfg.DefaultParams[k]))
	}
	return v
}

func findModel(models []*Model, id string) *Model {
	for _, m := range models {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// tagName is an Ollama tag without its ":variant" ("llama3:latest" → "llama3").
func tagName(id string) string {
	name, _, _ := strings.Cut(id, ":")
	return name
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// finishEntry sets name, info, tags, actions and filters and encodes the
// entry.
func finishEntry(cfg *RegistryConfig, m *Model) {
	e := m.entry
	var meta map[string]any
	if m.Record != nil {
		e.SetString("name", m.Record.Name)
		meta = decodeObject(m.Record.Meta)
	}
	if meta != nil || len(cfg.DefaultMetadata) > 0 {
		if meta == nil {
			meta = map[string]any{}
		}
		applyDefaultMetadata(meta, cfg.DefaultMetadata)
		delete(meta, "profile_image_url") // served by /model/profile/image
		e.Set("info", recordInfo(m.Record, meta))
	}
	var tags []string
	for _, t := range cfgTagNames(meta["tags"]) {
		if !contains(tags, t) {
			tags = append(tags, t)
		}
	}
	if m.base != nil {
		for _, t := range m.base.Tags {
			if !contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	e.Set("tags", tagsJSON(tags))
	e.Set("actions", json.RawMessage("[]"))
	e.Set("filters", json.RawMessage("[]"))
	m.entry = e
	m.JSON = e.AppendJSON(nil)
}

// applyDefaultMetadata fills keys the model lacks (or has as null);
// capabilities are merged, the model's own winning.
func applyDefaultMetadata(meta, defaults map[string]any) {
	for k, dv := range defaults {
		if k == "capabilities" {
			caps := map[string]any{}
			if d, ok := dv.(map[string]any); ok {
				for ck, cv := range d {
					caps[ck] = cv
				}
			}
			if own, ok := meta[k].(map[string]any); ok {
				for ck, cv := range own {
					caps[ck] = cv
				}
			}
			meta[k] = caps
			continue
		}
		if cur, ok := meta[k]; !ok || cur == nil {
			meta[k] = dv
		}
	}
}

// recordInfo is a record without its params (params hold system prompts and
// other curated settings readers must not see), or {meta} alone for a model
// without a record.
func recordInfo(rec *store.Model, meta map[string]any) json.RawMessage {
	var o llm.Object
	if rec != nil {
		o.SetString("id", rec.ID)
		o.SetString("user_id", rec.UserID)
		if rec.BaseModelID != "" {
			o.SetString("base_model_id", rec.BaseModelID)
		} else {
			o.Set("base_model_id", nil)
		}
		o.SetString("name", rec.Name)
	}
	o.Set("meta", mustJSON(meta))
	if rec != nil {
		o.Set("access_grants", GrantsJSON(rec.Grants))
		o.SetBool("is_active", rec.IsActive)
		o.SetInt("updated_at", rec.UpdatedAt)
		o.SetInt("created_at", rec.CreatedAt)
	}
	return o.AppendJSON(nil)
}

// GrantsJSON encodes grants as Open WebUI's AccessGrantModel list.
func GrantsJSON(gs []store.Grant) json.RawMessage {
	type grant struct {
		ID            string `json:"id"`
		ResourceType  string `json:"resource_type"`
		ResourceID    string `json:"resource_id"`
		PrincipalType string `json:"principal_type"`
		PrincipalID   string `json:"principal_id"`
		Permission    string `json:"permission"`
		CreatedAt     int64  `json:"created_at"`
	}
	out := make([]grant, len(gs))
	for i, g := range gs {
		out[i] = grant{g.ID, g.ResourceType, g.ResourceID, g.PrincipalType, g.PrincipalID, g.Permission, g.CreatedAt}
	}
	return mustJSON(out)
}

func decodeObject(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// ---- resolution ----

// Resolve implements Resolver (COMPAT.md §5.3, §5.4 "Use"). A record must
// be usable by the actor (owner, a read grant for them, their groups or
// everyone; an admin under BYPASS_ADMIN_ACCESS_CONTROL; anyone under
// BYPASS_MODEL_ACCESS_CONTROL), and so must every record met while
// following base_model_id, so a wrapper never opens a model its caller may
// not use. The chain must end at a provider model; if it does not, with
// ENABLE_CUSTOM_MODEL_FALLBACK the first of DEFAULT_MODELS is resolved
// instead (its Target names it), else ErrModelNotFound. A provider model
// without a record is for admins, and for everyone under
// BYPASS_MODEL_ACCESS_CONTROL.
//
// Params are DEFAULT_MODEL_PARAMS overlaid by the chain's params, innermost
// base first, the named record last (so it wins); "system" is taken out of
// them into System. An Ollama model served by several URLs gets one of
// them at random (Open WebUI's choice; it spreads the load).
func (r *Registry) Resolve(ctx context.Context, a store.Actor, id string) (*Target, error) {
	v, err := r.View(ctx, false)
	if err != nil {
		return nil, err
	}
	return v.Resolve(a, id)
}

// Resolve resolves id in this view (see Registry.Resolve).
func (v *View) Resolve(a store.Actor, id string) (*Target, error) {
	return v.resolve(a, id, true)
}

func (v *View) resolve(a store.Actor, id string, fallback bool) (*Target, error) {
	m := v.byID[id]
	if m == nil {
		return nil, ErrModelNotFound
	}
	if m.Record == nil {
		if !v.cfg.BypassModelAccess && !a.IsAdmin() {
			return nil, ErrModelNotFound
		}
		return v.target(m, m, nil), nil
	}
	var chain []*store.Model
	var seen []*Model
	cur := m
	for {
		seen = append(seen, cur)
		if cur.Record != nil {
			if !v.mayRead(a, cur.Record) {
				return nil, ErrModelNotFound
			}
			chain = append(chain, cur.Record)
		}
		if cur.base != nil {
			break
		}
		next := v.lookupBase(cur.Record.BaseModelID)
		if next == nil || slices.Contains(seen, next) {
			if fallback && v.cfg.CustomModelFallback && len(v.cfg.DefaultModels) > 0 {
				return v.resolve(a, v.cfg.DefaultModels[0], false)
			}
			return nil, ErrModelNotFound
		}
		cur = next
	}
	return v.target(m, cur, chain), nil
}

// lookupBase finds a base model id in the view; an Ollama name without a
// tag means ":latest", as Ollama reads it.
func (v *View) lookupBase(id string) *Model {
	if m := v.byID[id]; m != nil {
		return m
	}
	if id != "" && !strings.Contains(id, ":") {
		return v.byID[id+":latest"]
	}
	return nil
}

func (v *View) target(named, provider *Model, chain []*store.Model) *Target {
	bt := provider.base.targets[0]
	if n := len(provider.base.targets); n > 1 {
		bt = provider.base.targets[rand.IntN(n)]
	}
	t := &Target{ModelID: named.ID, UpstreamID: bt.upstreamID, Conn: bt.conn, Name: named.Name, OwnedBy: provider.base.OwnedBy}
	params := v.params.Clone()
	for i := len(chain) - 1; i >= 0; i-- {
		for _, mem := range v.recs.params[chain[i]].Members() {
			params.Set(mem.Key, mem.Value)
		}
	}
	if raw := params.Delete("system"); raw != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			t.System = s
		}
	}
	t.Params = params
	if named.Record != nil {
		t.Meta = named.Record.Meta
	}
	return t
}
