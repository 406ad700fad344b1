package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"hearth/chat"
	"hearth/llm"
)

// The local model runtime proxy (SPEC §4, COMPAT.md §6.3): Open WebUI's
// /ollama/* pass-through, served under /ollama and /runtime alike.
//
// Decisions:
//   - A model route (show, generate, chat, embed, embeddings, v1/*,
//     responses) requires Content-Type: application/json; anything else is
//     422 (the status FastAPI gives a body it cannot parse as JSON).
//   - Every model route resolves the model through the registry, with the
//     access check on every hop (the CVE of COMPAT.md §5.4); an unknown, a
//     forbidden or a non-Ollama model is 400 "Model '<name>' was not found"
//     (one text, so existence does not leak).
//   - The upstream answer is always relayed as it arrives (flushed after
//     every read), streamed or not; Content-Type is kept, Content-Encoding,
//     Content-Length and Transfer-Encoding dropped.
//   - A transport failure is 500 "Ollama: <reason>" (Open WebUI's status
//     when there is no upstream response).

const (
	msgOllamaDisabled  = "The Ollama API is disabled. Please enable it to use this feature."
	msgOllamaNoConnect = "WebUI could not connect to Ollama"
	msgOllamaConnError = "Open WebUI: Server Connection Error"
	msgOllamaNoBackend = "No Ollama backend is configured"
)

// runtimeEnabled is the 503 of every runtime route when the API is off.
func (s *Server) runtimeEnabled() error {
	if !s.cfg().EnableOllamaAPI {
		return errorf(http.StatusServiceUnavailable, msgOllamaDisabled)
	}
	return nil
}

// ollamaConns are the enabled Ollama connections, in URL order.
func (s *Server) ollamaConns() []chat.Connection {
	var out []chat.Connection
	for _, c := range s.registryConfig().Connections {
		if c.Kind == chat.KindOllama && c.Enabled {
			out = append(out, c)
		}
	}
	return out
}

// ollamaConnAt is the enabled Ollama connection with this url_idx.
func (s *Server) ollamaConnAt(idx int) (chat.Connection, error) {
	for _, c := range s.ollamaConns() {
		if c.Index == idx {
			return c, nil
		}
	}
	return chat.Connection{}, errorf(http.StatusNotFound, "Ollama backend %d is not configured", idx)
}

// ollamaClient is a client for one connection, with its key and headers.
func (s *Server) ollamaClient(c chat.Connection) *llm.OllamaClient {
	key := c.Key
	if c.AuthType == "none" {
		key = ""
	}
	cl := llm.NewOllamaClient(c.BaseURL, key, s.upstream)
	if len(c.Headers) > 0 {
		h := http.Header{}
		for k, v := range c.Headers {
			if !strings.Contains(v, "{{") {
				h.Set(k, v)
			}
		}
		cl.SetHeader(h)
	}
	return cl
}

// urlIdx is the optional {url_idx} path value.
func urlIdx(r *http.Request) (int, bool, error) {
	v := r.PathValue("url_idx")
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false, errorf(http.StatusUnprocessableEntity, "url_idx must be a non-negative integer")
	}
	return n, true, nil
}

// chosenConn is the connection a management route talks to: the named
// url_idx, else the first enabled backend.
func (s *Server) chosenConn(r *http.Request) (chat.Connection, error) {
	idx, named, err := urlIdx(r)
	if err != nil {
		return chat.Connection{}, err
	}
	if named {
		return s.ollamaConnAt(idx)
	}
	conns := s.ollamaConns()
	if len(conns) == 0 {
		return chat.Connection{}, errorf(http.StatusServiceUnavailable, msgOllamaNoBackend)
	}
	return conns[0], nil
}

// runtimeUpstreamPath is the request path without the /ollama or /runtime
// prefix and without the /{url_idx} suffix.
func runtimeUpstreamPath(r *http.Request) string {
	p := r.URL.Path
	for _, pre := range []string{"/ollama", "/runtime"} {
		if strings.HasPrefix(p, pre+"/") {
			p = p[len(pre):]
			break
		}
	}
	if idx := r.PathValue("url_idx"); idx != "" {
		p = strings.TrimSuffix(p, "/"+idx)
	}
	return p
}

// upstreamErr maps a failed upstream call to the client's error (COMPAT.md
// §6.3): the upstream's JSON error text with its status; its status with
// the generic text; or 500 "Ollama: <reason>".
func upstreamErr(ctx context.Context, err error) error {
	var ue *llm.UpstreamError
	if errors.As(err, &ue) {
		if msg := llm.ErrorMessage(ue.Body); msg != "" {
			return errorf(ue.Status, "%s", msg)
		}
		return errorf(ue.Status, msgOllamaConnError)
	}
	if ctx.Err() != nil {
		return err // the client went away
	}
	return errorf(http.StatusInternalServerError, "Ollama: %s", strings.TrimPrefix(err.Error(), "llm: "))
}

// relay copies an upstream answer to the client as it arrives, flushing
// after every read.
func relay(w http.ResponseWriter, res *llm.Result) {
	defer res.Close()
	h := w.Header()
	for k, vs := range res.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Encoding", "Content-Length", "Transfer-Encoding", "Connection", "Date":
			continue
		}
		h[k] = vs
	}
	w.WriteHeader(res.Status)
	if res.Stream == nil {
		w.Write(res.Body)
		return
	}
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Stream.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// ---- simple routes ----

// handleRuntimeRoot is GET {p}/: {"status": true}.
func (s *Server) handleRuntimeRoot(w http.ResponseWriter, r *http.Request) error {
	if err := s.runtimeEnabled(); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"status": true})
	return nil
}

// handleRuntimeVersion is GET {p}/api/version[/{url_idx}]: the lowest
// version among the backends that answer.
func (s *Server) handleRuntimeVersion(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg().EnableOllamaAPI {
		writeJSON(w, http.StatusOK, map[string]bool{"version": false})
		return nil
	}
	idx, named, err := urlIdx(r)
	if err != nil {
		return err
	}
	conns := s.ollamaConns()
	if named {
		c, err := s.ollamaConnAt(idx)
		if err != nil {
			return err
		}
		conns = []chat.Connection{c}
	}
	versions := make([]string, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			if v, err := s.ollamaClient(c).Version(ctx); err == nil {
				versions[i] = v
			}
		})
	}
	wg.Wait()
	lowest := ""
	for _, v := range versions {
		if v != "" && (lowest == "" || compareVersions(v, lowest) < 0) {
			lowest = v
		}
	}
	if lowest == "" {
		return errorf(http.StatusInternalServerError, msgOllamaNoConnect)
	}
	writeJSON(w, http.StatusOK, map[string]string{"version": lowest})
	return nil
}

// compareVersions compares dotted versions numerically ("0.9.10" > "0.9.2");
// a non-numeric part compares as text.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y string
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, ex := strconv.Atoi(x)
		ny, ey := strconv.Atoi(y)
		switch {
		case ex == nil && ey == nil:
			if nx != ny {
				return nx - ny
			}
		case x != y:
			return strings.Compare(x, y)
		}
	}
	return 0
}

// runtimeModels are the Ollama models of the merged list the caller may see
// (the registry's visibility rules), optionally only those served by idx.
// Each comes with its /api/tags entry (with urls, the prefixed model id,
// tags and connection_type).
func (s *Server) runtimeModels(r *http.Request) ([]*chat.Model, []llm.Object, error) {
	idx, named, err := urlIdx(r)
	if err != nil {
		return nil, nil, err
	}
	if named {
		if _, err := s.ollamaConnAt(idx); err != nil {
			return nil, nil, err
		}
	}
	v, err := s.models.View(r.Context(), false)
	if err != nil {
		return nil, nil, err
	}
	var models []*chat.Model
	var tags []llm.Object
	for _, m := range v.Visible(actor(r)) {
		if m.OwnedBy != "ollama" {
			continue
		}
		entry, err := llm.ParseObject(m.JSON)
		if err != nil {
			continue
		}
		raw := entry.Get("ollama")
		if raw == nil { // a preset: not an Ollama tag
			continue
		}
		tag, err := llm.ParseObject(raw)
		if err != nil {
			continue
		}
		if named {
			var urls []int
			tag.Decode("urls", &urls)
			if !slices.Contains(urls, idx) {
				continue
			}
		}
		models = append(models, m)
		tags = append(tags, tag)
	}
	return models, tags, nil
}

// handleRuntimeTags is GET {p}/api/tags[/{url_idx}].
func (s *Server) handleRuntimeTags(w http.ResponseWriter, r *http.Request) error {
	if err := s.runtimeEnabled(); err != nil {
		return err
	}
	_, tags, err := s.runtimeModels(r)
	if err != nil {
		return err
	}
	if tags == nil {
		tags = []llm.Object{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": tags})
	return nil
}

// handleRuntimeV1Models is GET {p}/v1/models[/{url_idx}].
func (s *Server) handleRuntimeV1Models(w http.ResponseWriter, r *http.Request) error {
	if err := s.runtimeEnabled(); err != nil {
		return err
	}
	models, _, err := s.runtimeModels(r)
	if err != nil {
		return err
	}
	type entry struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	now := time.Now().Unix()
	data := make([]entry, len(models))
	for i, m := range models {
		data[i] = entry{m.ID, "model", now, "openai"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "object": "list"})
	return nil
}

// handleRuntimePS is GET {p}/api/ps (admin): the loaded models of every
// backend, merged, each with the urls that report it.
func (s *Server) handleRuntimePS(w http.ResponseWriter, r *http.Request) error {
	if err := s.runtimeEnabled(); err != nil {
		return err
	}
	conns := s.ollamaConns()
	lists := make([][]llm.Object, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			if ps, err := s.ollamaClient(c).PS(ctx); err == nil {
				lists[i] = ps.Models
			}
		})
	}
	wg.Wait()
	out := []llm.Object{}
	pos := map[string]int{}
	urls := map[string][]int{}
	for i, c := range conns {
		for _, m := range lists[i] {
			id, _ := m.GetString("model")
			if id == "" {
				id, _ = m.GetString("name")
			}
			id = prefixedID(c.PrefixID, id)
			urls[id] = append(urls[id], c.Index)
			if _, dup := pos[id]; dup {
				continue
			}
			m = m.Clone()
			m.SetString("model", id)
			pos[id] = len(out)
			out = append(out, m)
		}
	}
	for id, i := range pos {
		out[i].SetValue("urls", urls[id])
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": out})
	return nil
}

func prefixedID(prefix, id string) string {
	if prefix == "" {
		return id
	}
	return prefix + "." + id
}

// ---- model routes ----

// runtimeBody reads a model route's body: Content-Type application/json
// and a JSON object, else 422.
func runtimeBody(r *http.Request) (llm.Object, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return llm.Object{}, errorf(http.StatusUnprocessableEntity, "Content-Type must be application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return llm.Object{}, errorf(http.StatusRequestEntityTooLarge, "Request body too large (limit %d bytes)", mbe.Limit)
		}
		return llm.Object{}, errorf(http.StatusBadRequest, "Could not read the request body")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return llm.Object{}, errorf(http.StatusUnprocessableEntity, "Request body must be a JSON object")
	}
	o, err := llm.ParseObject(trimmed)
	if err != nil {
		return llm.Object{}, errorf(http.StatusUnprocessableEntity, "Malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return o, nil
}

// runtimeTarget resolves the body's model for the caller (access on every
// hop of the record chain, prefix stripped) and picks the backend: the
// named url_idx, which must serve the model (non-admins), or one of the
// model's urls at random.
func (s *Server) runtimeTarget(r *http.Request, body llm.Object, keys ...string) (*chat.Target, error) {
	var name string
	for _, k := range keys {
		if v, ok := body.GetString(k); ok && v != "" {
			name = v
			break
		}
	}
	if name == "" {
		return nil, errorf(http.StatusUnprocessableEntity, "Field %q is required", keys[0])
	}
	idx, named, err := urlIdx(r)
	if err != nil {
		return nil, err
	}
	notFound := errorf(http.StatusBadRequest, "Model '%s' was not found", name)
	v, err := s.models.View(r.Context(), false)
	if err != nil {
		return nil, err
	}
	a := actor(r)
	t, err := v.Resolve(a, name)
	if errors.Is(err, chat.ErrModelNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if t.Conn.Kind != chat.KindOllama {
		return nil, notFound
	}
	if named {
		var urls []int
		if m := v.Get(prefixedID(t.Conn.PrefixID, t.UpstreamID)); m != nil {
			if e, err := llm.ParseObject(m.JSON); err == nil {
				if tag, err := llm.ParseObject(e.Get("ollama")); err == nil {
					tag.Decode("urls", &urls)
				}
			}
		}
		if !slices.Contains(urls, idx) && !a.IsAdmin() {
			return nil, errorf(http.StatusForbidden, msgAccessProhibited)
		}
		c, err := s.ollamaConnAt(idx)
		if err != nil {
			return nil, err
		}
		t.Conn = c
	}
	return t, nil
}

// proxyModel is a model route: read and check the body, resolve the model,
// let prep adjust the body, forward it and relay the answer.
func (s *Server) proxyModel(w http.ResponseWriter, r *http.Request, prep func(body *llm.Object, t *chat.Target), keys ...string) error {
	if err := s.runtimeEnabled(); err != nil {
		return err
	}
	body, err := runtimeBody(r)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		keys = []string{"model"}
	}
	t, err := s.runtimeTarget(r, body, keys...)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if body.Has(k) {
			body.SetString(k, t.UpstreamID)
		}
	}
	if prep != nil {
		prep(&body, t)
	}
	res, err := s.ollamaClient(t.Conn).Do(r.Context(), http.MethodPost, runtimeUpstreamPath(r), body.AppendJSON(nil))
	if err != nil {
		return upstreamErr(r.Context(), err)
	}
	relay(w, res)
	return nil
}

// handleRuntimeShow is POST {p}/api/show ({model} or {name}).
func (s *Server) handleRuntimeShow(w http.ResponseWriter, r *http.Request) error {
	return s.proxyModel(w, r, nil, "model", "name")
}

// handleRuntimeGenerate is POST {p}/api/generate[/{url_idx}] (always relayed
// as a stream).
func (s *Server) handleRuntimeGenerate(w http.ResponseWriter, r *http.Request) error {
	return s.proxyModel(w, r, nil)
}

// handleRuntimeChat is POST {p}/api/chat[/{url_idx}]: the record's params go
// into options and its system prompt into the messages.
func (s *Server) handleRuntimeChat(w http.ResponseWriter, r *http.Request) error {
	return s.proxyModel(w, r, applyRecordToOllamaChat)
}

// handleRuntimeEmbed is POST {p}/api/embed[/{url_idx}].
func (s *Server) handleRuntimeEmbed(w http.ResponseWriter, r *http.Request) error {
	return s.proxyModel(w, r, nil)
}

// handleRuntimeEmbeddings is POST {p}/api/embeddings[/{url_idx}] (legacy).
func (s *Server) handleRuntimeEmbeddings(w http.ResponseWriter, r *http.Request) error {
	return s.proxyModel(w, r, nil)
}

// handleRuntimeV1 is POST {p}/v1/chat/completions, /v1/completions and
// /v1/messages (each with an optional /{url_idx}).
func (s *Server) handleRuntimeV1(w http.ResponseWriter, r *http.Request) error {
	return s.proxyModel(w, r, nil)
}

// handleRuntimeResponses is POST {p}/v1/responses[/{url_idx}]:
// previous_response_id is forwarded only with ENABLE_RESPONSES_API_STATEFUL.
func (s *Server) handleRuntimeResponses(w http.ResponseWriter, r *http.Request) error {
	stateful := s.cfg().EnableResponsesAPIStateful
	return s.proxyModel(w, r, func(body *llm.Object, _ *chat.Target) {
		if !stateful {
			body.Delete("previous_response_id")
		}
	})
}

// ollamaOptionKeys are the record params that become Ollama options
// (Open WebUI's apply_model_params_to_body_ollama); max_tokens is renamed
// num_predict.
var ollamaOptionKeys = map[string]bool{
	"temperature": true, "top_p": true, "seed": true, "mirostat": true, "mirostat_eta": true,
	"mirostat_tau": true, "num_ctx": true, "num_batch": true, "num_keep": true, "num_predict": true,
	"repeat_last_n": true, "top_k": true, "min_p": true, "repeat_penalty": true,
	"presence_penalty": true, "frequency_penalty": true, "stop": true, "num_gpu": true,
	"use_mmap": true, "use_mlock": true, "num_thread": true,
}

// applyRecordToOllamaChat applies the resolved params (options, the
// record's values winning) and system prompt (prepended to a leading system
// message, else inserted as one) to an /api/chat body.
func applyRecordToOllamaChat(body *llm.Object, t *chat.Target) {
	if t.Params.Len() > 0 {
		opts, err := llm.ParseObject(body.Get("options"))
		if err != nil || !body.Has("options") {
			opts = llm.Object{}
		}
		changed := false
		for _, m := range t.Params.Members() {
			key := m.Key
			if key == "max_tokens" {
				key = "num_predict"
			}
			if !ollamaOptionKeys[key] || string(m.Value) == "null" {
				continue
			}
			opts.Set(key, m.Value)
			changed = true
		}
		if changed {
			body.Set("options", opts.AppendJSON(nil))
		}
	}
	if t.System == "" {
		return
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(body.Get("messages"), &msgs); err != nil {
		msgs = nil
	}
	if len(msgs) > 0 {
		if first, err := llm.ParseObject(msgs[0]); err == nil {
			if role, _ := first.GetString("role"); role == "system" {
				content, _ := first.GetString("content")
				first.SetString("content", t.System+"\n"+content)
				msgs[0] = first.AppendJSON(nil)
				body.SetValue("messages", msgs)
				return
			}
		}
	}
	var sys llm.Object
	sys.SetString("role", "system")
	sys.SetString("content", t.System)
	msgs = append([]json.RawMessage{sys.AppendJSON(nil)}, msgs...)
	body.SetValue("messages", msgs)
}

// ---- admin management ----

// handleRuntimeManage is the admin pass-through of pull, push, create, copy
// and delete: the request goes as it came (method, body) to the named
// backend or the first enabled one, and the answer is relayed (streamed
// when the upstream streams).
func (s *Server) handleRuntimeManage(w http.ResponseWriter, r *http.Request) error {
	if err := s.runtimeEnabled(); err != nil {
		return err
	}
	c, err := s.chosenConn(r)
	if err != nil {
		return err
	}
	var body any
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		body = io.Reader(r.Body)
	}
	res, err := s.ollamaClient(c).Do(r.Context(), r.Method, runtimeUpstreamPath(r), body)
	if err != nil {
		return upstreamErr(r.Context(), err)
	}
	relay(w, res)
	return nil
}

// handleRuntimeUnload is POST {p}/api/unload (admin) {model}: Ollama has no
// unload call; a generate with keep_alive 0 on every backend serving the
// model unloads it (what Open WebUI does). Answers {"status": true}.
func (s *Server) handleRuntimeUnload(w http.ResponseWriter, r *http.Request) error {
	if err := s.runtimeEnabled(); err != nil {
		return err
	}
	body, err := runtimeBody(r)
	if err != nil {
		return err
	}
	t, err := s.runtimeTarget(r, body, "model", "name")
	if err != nil {
		return err
	}
	var conns []chat.Connection
	if v, err := s.models.View(r.Context(), false); err == nil {
		var urls []int
		if m := v.Get(prefixedID(t.Conn.PrefixID, t.UpstreamID)); m != nil {
			if e, err := llm.ParseObject(m.JSON); err == nil {
				if tag, err := llm.ParseObject(e.Get("ollama")); err == nil {
					tag.Decode("urls", &urls)
				}
			}
		}
		for _, i := range urls {
			if c, err := s.ollamaConnAt(i); err == nil {
				conns = append(conns, c)
			}
		}
	}
	if len(conns) == 0 {
		conns = []chat.Connection{t.Conn}
	}
	var req llm.Object
	req.SetString("model", t.UpstreamID)
	req.SetInt("keep_alive", 0)
	req.SetBool("stream", false)
	for _, c := range conns {
		res, err := s.ollamaClient(c).Do(r.Context(), http.MethodPost, "/api/generate", req.AppendJSON(nil))
		if err != nil {
			return upstreamErr(r.Context(), err)
		}
		io.Copy(io.Discard, res.Stream)
		res.Close()
	}
	writeJSON(w, http.StatusOK, map[string]bool{"status": true})
	return nil
}
