package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"hearth/llm"
	"hearth/realtime"
	"hearth/store"
)

// Store is what the pipeline needs of the chat store (*store.Store has it).
type Store interface {
	CompletionTarget(ctx context.Context, actor store.Actor, chatID, msgID string) (store.CompletionTarget, error)
	MessagePath(ctx context.Context, actor store.Actor, chatID, leafID string, limit int) ([]store.PathMessage, error)
	UpdateChat(ctx context.Context, actor store.Actor, id string, p *store.ChatPatch) error
	EditMessage(ctx context.Context, actor store.Actor, chatID, msgID string, e store.MessageEdit) error
	AddChatTag(ctx context.Context, actor store.Actor, chatID, name string) ([]store.Tag, error)
	CreateChat(ctx context.Context, actor store.Actor, nc store.NewChat) (string, error)
}

// Settings are the configuration values the pipeline reads, taken as one
// snapshot per request (the pipeline does not import config).
type Settings struct {
	// DeltaChunkSize is CHAT_RESPONSE_STREAM_DELTA_CHUNK_SIZE.
	DeltaChunkSize int
	// MaxLineSize is CHAT_STREAM_RESPONSE_CHUNK_MAX_BUFFER_SIZE (0 = none).
	MaxLineSize int
	// RealtimeSave is ENABLE_REALTIME_CHAT_SAVE.
	RealtimeSave bool
	// ReleaseChannel is RELEASE_CHANNEL ("stable" or "dev").
	ReleaseChannel string

	TaskModel, TaskModelExternal             string
	EnableTitle, EnableTags, EnableFollowUps bool
	// Prompt templates of the background tasks; "" = the built-in ones.
	TitleTemplate, TagsTemplate, FollowUpTemplate string

	// Retrieval (COMPAT §8.8). RAGTemplate is RAG_TEMPLATE ("" = the
	// built-in one); RAGSystemContext is RAG_SYSTEM_CONTEXT;
	// RAGContextMaxChars is RAG_CONTEXT_MAX_CHARS (<= 0 = the default).
	RAGTemplate        string
	RAGSystemContext   bool
	RAGContextMaxChars int
	// RAGSearch: an embedding engine is usable and RAG_FULL_CONTEXT is off,
	// so items get their RAGTopK (RAG_TOP_K) nearest chunks.
	RAGSearch bool
	RAGTopK   int
}

// Options configure a Pipeline.
type Options struct {
	Store    Store
	Resolver Resolver
	// Files gives retrieval the request's files and collections; nil: the
	// request's `files` are ignored.
	Files FileStore
	// Searcher finds chunks for Settings.RAGSearch (nil: whole documents).
	Searcher Searcher
	// Emitter may be nil: events are then dropped.
	Emitter    Emitter
	HTTPClient *http.Client
	Settings   func() Settings
	Log        *slog.Logger
	// Context is the base of server-side tasks; cancel it at shutdown.
	Context context.Context
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Pipeline runs chat completions (COMPAT.md §4).
type Pipeline struct {
	o     Options
	log   *slog.Logger
	tasks *Tasks
}

// New returns a pipeline.
func New(o Options) *Pipeline {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Settings == nil {
		o.Settings = func() Settings { return Settings{DeltaChunkSize: 1} }
	}
	return &Pipeline{o: o, log: o.Log, tasks: NewTasks(o.Context)}
}

// Tasks is the pipeline's task registry.
func (p *Pipeline) Tasks() *Tasks { return p.tasks }

// Request is one POST /api/chat/completions.
type Request struct {
	Actor store.Actor
	User  UserInfo
	// Body is the request body as sent.
	Body []byte
}

// Response is the answer to write. Either Body (JSON) or Stream (an SSE
// body: call it once with the response writer, after the headers; it
// releases the upstream connection).
type Response struct {
	Status int
	// Header holds headers to add (the upstream's, for a relayed stream).
	Header http.Header
	Body   []byte
	Stream func(w io.Writer) error
}

// Literal answers.
const (
	msgModelNotFound    = "Model not found"
	msgChatNotFound     = "Something went wrong :/"
	msgConnectionFailed = "Open WebUI: Server Connection Error"
)

// Complete runs one completion in the mode the request asks for (COMPAT.md
// §4.4):
//   - chat_id and id with session_id: async task mode — the generation runs
//     as a server-side task and the answer is at once {status, task_ids,
//     task_id, chat_id};
//   - chat_id and id without session_id: stored synchronous mode — the
//     generation is stored, then the completion JSON (non-streaming) or
//     JSON null (streaming) is answered;
//   - otherwise API-only mode: the provider's answer relayed (converted from
//     Ollama), nothing stored.
//
// Refusals are *Error values (400 model not found, 404 chat not found, the
// upstream's failure); other errors are internal.
func (p *Pipeline) Complete(ctx context.Context, req Request) (*Response, error) {
	body, err := llm.ParseChatRequest(req.Body)
	if err != nil {
		return nil, &Error{Status: http.StatusUnprocessableEntity, Detail: "Request body must be a JSON object"}
	}
	meta, err := readMeta(body)
	if err != nil {
		return nil, err
	}
	t, err := p.resolve(ctx, req.Actor, body.Model())
	if err != nil {
		return nil, err
	}
	s := p.o.Settings()
	pr, err := prepare(body, meta, t, req.User, s.DeltaChunkSize, p.o.Now())
	if err != nil {
		return nil, err
	}
	pr.requestMessages = body.Get("messages")
	if pr.rag, err = p.retrieve(ctx, req.Actor, body.Get("files"), t, pr, s); err != nil {
		return nil, err
	}
	if meta.ChatID == "" && string(body.Get("parent_id")) == "null" {
		if err := p.createChat(ctx, req.Actor, t, body, pr); err != nil {
			return nil, err
		}
		meta = pr.meta
	}
	if meta.ChatID != "" && meta.MessageID != "" {
		return p.stored(ctx, req.Actor, t, pr, s)
	}
	return p.direct(ctx, t, pr, s)
}

// resolve resolves a model id; unknown and forbidden are the same 400.
func (p *Pipeline) resolve(ctx context.Context, actor store.Actor, model string) (*Target, error) {
	if model == "" || p.o.Resolver == nil {
		return nil, &Error{Status: http.StatusBadRequest, Detail: msgModelNotFound}
	}
	t, err := p.o.Resolver.Resolve(ctx, actor, model)
	if errors.Is(err, ErrModelNotFound) {
		return nil, &Error{Status: http.StatusBadRequest, Detail: msgModelNotFound}
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// temporaryChat reports a chat id Open WebUI never stores (COMPAT §4.1).
func temporaryChat(id string) bool {
	return strings.HasPrefix(id, "local:") || strings.HasPrefix(id, "channel:")
}

// stored runs modes 1 and 2. Both run the generation as a registered task
// on a context of its own: in mode 2 the handler waits for it, but a client
// that goes away does not cut the answer short (it is stored and can be
// polled), and it can be stopped through the task endpoints.
func (p *Pipeline) stored(ctx context.Context, actor store.Actor, t *Target, pr *prepared, s Settings) (*Response, error) {
	meta := pr.meta
	g := &generation{
		p: p, actor: actor, chatID: meta.ChatID, msgID: meta.MessageID,
		persist: !temporaryChat(meta.ChatID), async: meta.SessionID != "",
		target: t, pr: pr, s: s, acc: newAccumulator(pr.tags, p.o.Now),
	}
	if g.persist {
		title, err := p.prepareMessage(ctx, actor, meta.ChatID, meta.MessageID, t)
		if errors.Is(err, store.ErrNotFound) {
			return nil, &Error{Status: http.StatusNotFound, Detail: msgChatNotFound}
		}
		if err != nil {
			return nil, err
		}
		g.title = title
	}
	task := p.tasks.Start(meta.ChatID, actor.UserID, g.run)
	if g.async {
		b, _ := json.Marshal(map[string]any{"status": true, "task_ids": []string{task.ID}, "task_id": task.ID, "chat_id": meta.ChatID})
		return jsonResponse(b), nil
	}
	select {
	case <-task.Done():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if g.failure != nil {
		return nil, g.failure
	}
	if pr.stream || g.completion == nil {
		return jsonResponse([]byte("null")), nil
	}
	return jsonResponse(withSources(g.completion, pr.rag.sourcesJSON())), nil
}

func jsonResponse(b []byte) *Response { return &Response{Status: http.StatusOK, Body: b} }

// prepareMessage checks that chatID is the actor's (not found and not yours
// are the same ErrNotFound, decision 28) and readies the assistant message:
// a missing one is created under the message that lists it as a child; an
// existing one keeps its parentId (decision 26) and is reset only when it
// holds a finished answer (a regeneration). It returns the chat's title.
func (p *Pipeline) prepareMessage(ctx context.Context, actor store.Actor, chatID, msgID string, t *Target) (string, error) {
	target, err := p.o.Store.CompletionTarget(ctx, actor, chatID, msgID)
	if err != nil {
		return "", err
	}
	now := p.o.Now().Unix()
	if target.Body != nil {
		var m struct {
			Done bool `json:"done"`
		}
		json.Unmarshal(target.Body, &m)
		if !m.Done {
			return target.Title, nil
		}
		err := p.o.Store.EditMessage(ctx, actor, chatID, msgID, store.MessageEdit{
			Set: map[string]json.RawMessage{
				"role": json.RawMessage(`"assistant"`), "content": json.RawMessage(`""`),
				"done": json.RawMessage("false"), "model": quote(t.ModelID), "error": json.RawMessage("null"),
				"timestamp": json.RawMessage(itoa(now)),
			},
			SetOrder:    []string{"role", "content", "done", "model", "timestamp", "error"},
			MoveCurrent: true,
		})
		return target.Title, err
	}
	parent := json.RawMessage("null")
	if target.ParentID != "" {
		parent = quote(target.ParentID)
	}
	var b bytes.Buffer
	b.WriteString(`{"history":{"messages":{`)
	b.Write(quote(msgID))
	b.WriteString(`:{"id":`)
	b.Write(quote(msgID))
	b.WriteString(`,"parentId":`)
	b.Write(parent)
	b.WriteString(`,"childrenIds":[],"role":"assistant","content":"","done":false,"model":`)
	b.Write(quote(t.ModelID))
	b.WriteString(`,"timestamp":`)
	b.WriteString(itoa(now))
	b.WriteString(`}},"currentId":`)
	b.Write(quote(msgID))
	b.WriteString(`}}`)
	patch, err := store.ParseChat(b.Bytes())
	if err != nil {
		return "", err
	}
	return target.Title, p.o.Store.UpdateChat(ctx, actor, chatID, patch)
}

// createChat handles `parent_id: null` without a chat_id (COMPAT §4.3,
// SPEC §7): a new chat of the caller is created holding the user message
// (the request's user_message, else the last user message of `messages`)
// and the assistant placeholder (the request's id, else a new one); the
// request then proceeds as a stored completion of that chat.
func (p *Pipeline) createChat(ctx context.Context, actor store.Actor, t *Target, body *llm.ChatRequest, pr *prepared) error {
	now := p.o.Now()
	var user llm.Object
	if raw := body.Get("user_message"); isJSONObject(raw) {
		if err := user.UnmarshalJSON(raw); err != nil {
			return badRequest("user_message must be an object")
		}
		user = user.Clone()
	} else {
		var msgs []llm.Object
		json.Unmarshal(pr.requestMessages, &msgs)
		for i := len(msgs) - 1; i >= 0; i-- {
			if role, _ := msgs[i].GetString("role"); role == "user" {
				user.Set("content", msgs[i].Get("content"))
				break
			}
		}
		if !user.Has("content") {
			user.SetString("content", "")
		}
	}
	userID, _ := user.GetString("id")
	if userID == "" {
		userID = llm.NewUUID()
		user.SetString("id", userID)
	}
	asstID := pr.meta.MessageID
	if asstID == "" {
		asstID = llm.NewUUID()
	}
	user.Set("parentId", json.RawMessage("null"))
	user.SetString("role", "user")
	user.Set("childrenIds", mustMarshal([]string{asstID}))
	if !user.Has("timestamp") {
		user.SetInt("timestamp", now.Unix())
	}
	if !user.Has("models") {
		user.Set("models", mustMarshal([]string{t.ModelID}))
	}
	asst := map[string]any{"id": asstID, "parentId": userID, "childrenIds": []string{}, "role": "assistant",
		"content": "", "done": false, "model": t.ModelID, "timestamp": now.Unix()}
	doc := map[string]any{
		"title": "New Chat", "models": []string{t.ModelID},
		"history":  map[string]any{"currentId": asstID, "messages": map[string]any{userID: user, asstID: asst}},
		"messages": []any{map[string]any{"id": userID, "role": "user", "content": user.Get("content")}},
		"files":    []any{}, "tags": []any{}, "timestamp": now.UnixMilli(),
	}
	raw, err := marshalJSON(doc)
	if err != nil {
		return err
	}
	patch, err := store.ParseChat(raw)
	if err != nil {
		return err
	}
	folder, _ := body.GetString("folder_id")
	id, err := p.o.Store.CreateChat(ctx, actor, store.NewChat{Chat: patch, FolderID: folder})
	if errors.Is(err, store.ErrNotFound) && folder != "" {
		id, err = p.o.Store.CreateChat(ctx, actor, store.NewChat{Chat: patch})
	}
	if err != nil {
		return err
	}
	pr.meta.ChatID, pr.meta.MessageID = id, asstID
	return nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// direct runs mode 3: the provider's answer for the caller, nothing stored.
func (p *Pipeline) direct(ctx context.Context, t *Target, pr *prepared, s Settings) (*Response, error) {
	res, err := p.callUpstream(ctx, t, pr.payload)
	if err != nil {
		return nil, upstreamFailure(err)
	}
	if !res.Streaming() {
		body, err := completionBody(res.Body, t.Conn.Kind)
		if err != nil {
			return nil, upstreamFailure(err)
		}
		return jsonResponse(withSources(body, pr.rag.sourcesJSON())), nil
	}
	if !pr.stream {
		// The upstream streamed although we did not ask: gather the answer.
		defer res.Close()
		acc := newAccumulator(nil, p.o.Now)
		src := newSource(res.Stream, t.Conn.Kind, s.MaxLineSize)
		for {
			d, err := src.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, upstreamFailure(err)
			}
			acc.apply(d)
		}
		acc.finishAll()
		return jsonResponse(withSources(buildCompletion(acc, t.UpstreamID, p.o.Now()), pr.rag.sourcesJSON())), nil
	}
	h := relayHeader(res.Header)
	kind, maxLine := t.Conn.Kind, s.MaxLineSize
	sources := pr.rag.sourcesJSON()
	return &Response{Status: http.StatusOK, Header: h, Stream: func(w io.Writer) error {
		defer res.Close()
		if len(sources) > 0 {
			// The sources go first, as their own event (COMPAT §4.4).
			if _, err := w.Write(sourcesEvent(sources)); err != nil {
				return err
			}
		}
		if kind == KindOllama {
			return llm.StreamOllamaAsOpenAI(w, res.Stream, llm.OllamaToOpenAIOptions{}, llm.NDJSONOptions{})
		}
		return relaySSE(w, res.Stream, maxLine)
	}}, nil
}

// relayHeader is the upstream's header minus what must not be relayed
// (COMPAT §4.4: Content-Encoding/Length, Transfer-Encoding; Hearth also
// drops hop-by-hop headers, cookies and the upstream's Date/Server), with
// the event-stream content type.
func relayHeader(up http.Header) http.Header {
	h := http.Header{}
	for k, vs := range up {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Encoding", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
			"Set-Cookie", "Date", "Server", "Content-Type", "Alt-Svc", "Strict-Transport-Security", "X-Request-Id":
			continue
		}
		h[k] = append([]string(nil), vs...)
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	return h
}

type flusher interface{ Flush() }

// relaySSE relays an OpenAI-compatible event stream: each data event as
// received (oversized lines as `data: {}`, COMPAT §4.5), then `data:
// [DONE]`. An upstream error or a cut stream ends with an error event
// instead of [DONE].
func relaySSE(w io.Writer, src io.Reader, maxLine int) error {
	r := llm.NewSSEReader(src, llm.SSEOptions{MaxLineSize: maxLine})
	f, _ := w.(flusher)
	buf := make([]byte, 0, 4096)
	for {
		ev, err := r.Next()
		switch {
		case err == io.EOF:
			buf = llm.AppendSSEDone(buf[:0])
		case err != nil:
			buf = llm.AppendOpenAIErrorEvent(buf[:0], streamFailure(err))
		default:
			buf = llm.AppendSSEEvent(buf[:0], ev)
		}
		if _, werr := w.Write(buf); werr != nil {
			return werr
		}
		if f != nil {
			f.Flush()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// streamFailure is the text shown for a stream that failed after it began.
func streamFailure(err error) string {
	var ue *llm.UpstreamError
	switch {
	case errors.As(err, &ue):
		return ue.Message
	case errors.Is(err, llm.ErrStreamEndedEarly):
		return "The model's answer ended early (upstream stream cut)"
	default:
		return "The model's answer failed (upstream stream error)"
	}
}

// upstreamFailure maps a failed upstream call to the caller's answer
// (Hearth's decision, COMPAT §4.4/§6.2): {"detail": <provider message>}
// with the provider's status — except 401/403/407, which describe Hearth's
// own credentials for the connection and would read as the caller's; they
// become 400. An error inside a stream (no status) is 400; a connection
// failure is 502 "Open WebUI: Server Connection Error".
func upstreamFailure(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ue *llm.UpstreamError
	if errors.As(err, &ue) {
		status := ue.Status
		switch status {
		case 0, http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired:
			status = http.StatusBadRequest
		}
		if status < 400 || status > 599 {
			status = http.StatusBadRequest
		}
		return &Error{Status: status, Detail: ue.Message}
	}
	if errors.Is(err, llm.ErrStreamEndedEarly) {
		return &Error{Status: http.StatusBadRequest, Detail: streamFailure(err)}
	}
	if errors.Is(err, llm.ErrBodyTooLarge) {
		return &Error{Status: http.StatusBadGateway, Detail: "The model's answer is too large"}
	}
	return &Error{Status: http.StatusBadGateway, Detail: msgConnectionFailed}
}

// callUpstream sends payload to the target's connection: Ollama targets get
// it converted to /api/chat (COMPAT §6.4), others as chat-completions.
func (p *Pipeline) callUpstream(ctx context.Context, t *Target, payload *llm.ChatRequest) (*llm.Result, error) {
	var hdr http.Header
	if len(t.Conn.Headers) > 0 {
		hdr = http.Header{}
		for k, v := range t.Conn.Headers {
			if !strings.Contains(v, "{{") { // per-user header templates are not supported yet
				hdr.Set(k, v)
			}
		}
	}
	key := t.Conn.Key
	if t.Conn.AuthType == "none" {
		key = ""
	}
	if t.Conn.Kind == KindOllama {
		oreq, err := llm.ChatToOllama(payload)
		if err != nil {
			return nil, &Error{Status: http.StatusBadRequest, Detail: err.Error()}
		}
		c := llm.NewOllamaClient(t.Conn.BaseURL, key, p.o.HTTPClient)
		if hdr != nil {
			c.SetHeader(hdr)
		}
		return c.Chat(ctx, oreq)
	}
	c := llm.NewOpenAIClient(t.Conn.BaseURL, key, p.o.HTTPClient)
	if hdr != nil {
		c.SetHeader(hdr)
	}
	return c.ChatCompletion(ctx, payload)
}

// completionBody returns a non-streamed answer as a chat.completion: the
// OpenAI body as is, Ollama's converted (COMPAT §6.5). A 200 answer that is
// an error object is the provider's error.
func completionBody(body []byte, kind string) ([]byte, error) {
	if kind == KindOllama {
		var r llm.OllamaChatResponse
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, &llm.UpstreamError{Status: http.StatusBadGateway, Message: "The model's answer is not valid JSON", Body: body}
		}
		if msg := llm.ErrorMessage(body); msg != "" && r.Message.Role == "" && r.Message.Content == "" {
			return nil, &llm.UpstreamError{Status: http.StatusBadRequest, Message: msg, Body: body}
		}
		return llm.OllamaChatToOpenAI(&r, llm.OllamaToOpenAIOptions{}), nil
	}
	var probe struct {
		Choices json.RawMessage `json:"choices"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, &llm.UpstreamError{Status: http.StatusBadGateway, Message: "The model's answer is not valid JSON", Body: body}
	}
	if probe.Choices == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return nil, &llm.UpstreamError{Status: http.StatusBadRequest, Message: llm.ErrorMessage(body), Body: body}
	}
	return body, nil
}

// buildCompletion writes a chat.completion from a gathered answer.
func buildCompletion(acc *accumulator, model string, now time.Time) []byte {
	msg := map[string]any{"role": "assistant", "content": acc.Content()}
	if r := acc.Reasoning(); r != "" {
		msg["reasoning_content"] = r
	}
	var calls []map[string]any
	for i, it := range acc.items {
		if it.kind == itemFunction {
			calls = append(calls, map[string]any{"index": i, "id": it.callID, "type": "function",
				"function": map[string]any{"name": it.name, "arguments": string(it.args)}})
		}
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	finish := acc.finish
	if finish == "" {
		finish = "stop"
	}
	out := map[string]any{
		"id": llm.NewChatCompletionID(), "object": "chat.completion", "created": now.Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if len(acc.usage) > 0 {
		out["usage"] = acc.usage
	}
	b, _ := json.Marshal(out)
	return b
}

// emit sends one event to the user's browsers.
func (p *Pipeline) emit(userID, chatID, msgID, typ string, data any) {
	if p.o.Emitter == nil {
		return
	}
	p.o.Emitter.Emit(userID, realtime.Event{ChatID: chatID, MessageID: msgID, Data: realtime.Data{Type: typ, Data: data}})
}

func quote(s string) json.RawMessage { return store.AppendJSONString(nil, s) }

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
