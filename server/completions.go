package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"hearth/chat"
	"hearth/realtime"
	"hearth/store"
)

// The completion pipeline's HTTP surface (COMPAT.md §4): POST
// /api/chat/completions (+ /api/v1), POST /api/chat/completed. The pipeline
// itself is package chat; this file turns requests into chat.Requests and
// chat.Responses into answers.

// pipelineState is the pipeline's state on Server.
type pipelineState struct {
	pipeline *chat.Pipeline

	// Test hooks: when set they replace s.resolver() / s.emitter() (the
	// model registry and the realtime hub are other areas; tests of this
	// one bring fakes). Set them before the first request.
	testResolver chat.Resolver
	testEmitter  chat.Emitter
}

// initPipeline builds the pipeline. Generations of stored chats run on
// tasks derived from ctx (cancelled at shutdown, which stops them with
// their partial answers stored).
func (s *Server) initPipeline(ctx context.Context, d Deps) error {
	s.pipeline = chat.New(chat.Options{
		Store:      d.Store,
		Files:      d.Store,
		Searcher:   s.vindex,
		Resolver:   pipelineResolver{s},
		Emitter:    pipelineEmitter{s},
		HTTPClient: d.HTTPClient,
		Settings:   s.chatSettings,
		Log:        s.log,
		Context:    ctx,
	})
	return nil
}

// WaitTasks waits until every running generation and file processing has
// finished (after the context given to New was cancelled they stop and
// store what they have). Call it after http.Server.Shutdown and before
// closing the store, so no final write of an async task is lost.
func (s *Server) WaitTasks(ctx context.Context) error {
	return errors.Join(s.pipeline.Tasks().Wait(ctx), s.ingest.Wait(ctx))
}

// pipelineResolver resolves through the model registry at call time (or
// the test hook).
type pipelineResolver struct{ s *Server }

func (r pipelineResolver) Resolve(ctx context.Context, a store.Actor, model string) (*chat.Target, error) {
	res := r.s.testResolver
	if res == nil {
		res = r.s.resolver()
	}
	if res == nil {
		return nil, chat.ErrModelNotFound
	}
	return res.Resolve(ctx, a, model)
}

// pipelineEmitter sends through the realtime hub at call time (or the test
// hook); without one events are dropped.
type pipelineEmitter struct{ s *Server }

func (e pipelineEmitter) Emit(userID string, ev realtime.Event) {
	em := e.s.testEmitter
	if em == nil {
		em = e.s.emitter()
	}
	if em != nil {
		em.Emit(userID, ev)
	}
}

// chatSettings is the pipeline's view of the configuration. Prompt
// templates are read by name so they take effect as soon as config defines
// them (it does not yet: the built-in templates apply).
func (s *Server) chatSettings() chat.Settings {
	c := s.cfg()
	maxLine, set := c.ChatStreamResponseChunkMaxBufferSize.Limit()
	if !set || maxLine < 0 {
		maxLine = 0
	}
	return chat.Settings{
		DeltaChunkSize:     c.ChatResponseStreamDeltaChunkSize,
		MaxLineSize:        maxLine,
		RealtimeSave:       c.EnableRealtimeChatSave,
		ReleaseChannel:     c.ReleaseChannel,
		TaskModel:          c.TaskModel,
		TaskModelExternal:  c.TaskModelExternal,
		EnableTitle:        c.EnableTitleGeneration,
		EnableTags:         c.EnableTagsGeneration,
		EnableFollowUps:    c.EnableFollowUpGeneration,
		TitleTemplate:      s.settingString("TITLE_GENERATION_PROMPT_TEMPLATE"),
		TagsTemplate:       s.settingString("TAGS_GENERATION_PROMPT_TEMPLATE"),
		FollowUpTemplate:   s.settingString("FOLLOW_UP_GENERATION_PROMPT_TEMPLATE"),
		RAGTemplate:        c.RAGTemplate,
		RAGSystemContext:   c.RAGSystemContext,
		RAGContextMaxChars: c.RAGContextMaxChars,
		RAGSearch:          !c.RAGFullContext && s.embedConfig().Usable(),
		RAGTopK:            c.RAGTopK,
	}
}

// settingString is a string variable's value, "" when config has none.
func (s *Server) settingString(name string) string {
	v, ok := s.settings.Value(name)
	if !ok {
		return ""
	}
	str, _ := v.(string)
	return str
}

// readBody reads a route's whole body (413 over its limit).
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "Request body too large (limit %d bytes)", mbe.Limit)
		}
		return nil, errorf(http.StatusBadRequest, "Could not read the request body")
	}
	return body, nil
}

// handleChatCompletions is POST /api/chat/completions (and /api/v1/...):
// the three execution modes of COMPAT.md §4.4 (see chat.Pipeline.Complete).
// A streamed answer is SSE whatever the Accept header says (the OpenAI SDK
// sends Accept: application/json on stream requests too).
func (s *Server) handleChatCompletions(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	id := ident(r)
	res, err := s.pipeline.Complete(r.Context(), chat.Request{
		Actor: id.actor,
		User:  chat.UserInfo{Name: id.user.Name, Timezone: id.user.Timezone},
		Body:  body,
	})
	if err != nil {
		return pipelineError(err)
	}
	return s.writePipelineResponse(w, r, res)
}

// pipelineError maps the pipeline's refusals to API errors.
func pipelineError(err error) error {
	var ce *chat.Error
	if errors.As(err, &ce) {
		return errorf(ce.Status, "%s", ce.Detail)
	}
	return err
}

// writePipelineResponse writes a JSON answer, or a stream: headers first
// (flushed at once, so the client's time to first byte is the upstream's),
// then the events. An error after the headers cannot change the status; the
// stream already ended with an error event, so it is only logged.
func (s *Server) writePipelineResponse(w http.ResponseWriter, r *http.Request, res *chat.Response) error {
	for k, vs := range res.Header {
		w.Header()[k] = vs
	}
	if res.Stream == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.Status)
		w.Write(res.Body)
		return nil
	}
	w.WriteHeader(res.Status)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if err := res.Stream(w); err != nil && r.Context().Err() == nil {
		s.log.WarnContext(r.Context(), "completion stream ended with an error", slog.String("request_id", requestID(r)),
			slog.Any("err", err))
	}
	return nil
}

// handleChatCompleted is POST /api/chat/completed: the outlet hook of the
// stable release channel (SPEC §9). It runs the outlet filters on the
// finished conversation and answers the filtered payload; no filters exist
// yet, so the payload comes back unchanged. Lenient (decision 15): chat_id,
// session_id and id may be missing. A named model must exist ("Model not
// found", 400). On the dev channel the endpoint is deprecated (a
// Deprecation header says so) but still works for API callers.
func (s *Server) handleChatCompleted(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var payload map[string]json.RawMessage
	if err := decodeBytes(body, &payload); err != nil {
		return err
	}
	if raw, ok := payload["model"]; ok {
		var model string
		if json.Unmarshal(raw, &model) != nil || model == "" {
			return errorf(http.StatusBadRequest, "Model not found")
		}
		if _, err := (pipelineResolver{s}).Resolve(r.Context(), actor(r), model); err != nil {
			if errors.Is(err, chat.ErrModelNotFound) {
				return errorf(http.StatusBadRequest, "Model not found")
			}
			return err
		}
	}
	if s.cfg().ReleaseChannel == "dev" {
		w.Header().Set("Deprecation", "true")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(strings.TrimSpace(string(body))))
	return nil
}
