package server

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"hearth/store"
)

// Task endpoints (COMPAT.md §4.10, decision 18) over the pipeline's task
// registry, and the background-task settings (/api/v1/tasks/config).

// handleListTasks is GET /api/tasks (admin): every running task id.
func (s *Server) handleListTasks(w http.ResponseWriter, r *http.Request) error {
	return ok(w, map[string]any{"tasks": s.pipeline.Tasks().List()})
}

// handleChatTasks is GET /api/tasks/chat/{chat_id}: the chat's running
// tasks — the caller's own, or all for an admin; anyone else sees none. It
// is how API clients poll for the end of a generation.
func (s *Server) handleChatTasks(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	ids := s.pipeline.Tasks().ChatTasks(r.PathValue("chat_id"), a.UserID, a.IsAdmin())
	return ok(w, map[string]any{"task_ids": ids})
}

// handleStopChatTasks is POST /api/tasks/chat/{chat_id}/stop: the owner (or
// an admin) stops the chat's generations; each keeps what it generated
// (done=true) and emits chat:tasks:cancel. The answer comes once they have
// stored it. A chat that is not the caller's is 404 like a missing one.
func (s *Server) handleStopChatTasks(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	chatID := r.PathValue("chat_id")
	tasks := s.pipeline.Tasks()
	if len(tasks.ChatTasks(chatID, a.UserID, a.IsAdmin())) == 0 {
		if _, err := s.store.GetChat(r.Context(), a, chatID, a.IsAdmin()); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return errorf(http.StatusNotFound, msgNotFound)
			}
			return err
		}
		return ok(w, map[string]any{"status": true, "message": "No tasks found for item " + chatID + "."})
	}
	if tasks.StopChat(r.Context(), chatID, a.UserID, a.IsAdmin()) == 0 {
		return ok(w, map[string]any{"status": true, "message": "No tasks found for item " + chatID + "."})
	}
	return ok(w, map[string]any{"status": true, "message": "All tasks for item " + chatID + " stopped."})
}

// handleStopTask is POST /api/tasks/stop/{task_id} (admin). An unknown id
// is 200 with status false, as upstream.
func (s *Server) handleStopTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("task_id")
	if !s.pipeline.Tasks().Stop(r.Context(), id) {
		return ok(w, map[string]any{"status": false, "message": "Task with ID " + id + " not found."})
	}
	return ok(w, map[string]any{"status": true, "message": "Task " + id + " successfully stopped."})
}

// taskConfigKeys are the members of Open WebUI's TaskConfigForm, with the
// value Hearth reports when its config has no such variable (features not
// implemented are off; templates "" = the built-in ones).
var taskConfigKeys = []struct {
	name string
	def  any
}{
	{"TASK_MODEL", ""},
	{"TASK_MODEL_EXTERNAL", ""},
	{"ENABLE_TITLE_GENERATION", true},
	{"TITLE_GENERATION_PROMPT_TEMPLATE", ""},
	{"IMAGE_PROMPT_GENERATION_PROMPT_TEMPLATE", ""},
	{"ENABLE_AUTOCOMPLETE_GENERATION", false},
	{"AUTOCOMPLETE_GENERATION_INPUT_MAX_LENGTH", -1},
	{"TAGS_GENERATION_PROMPT_TEMPLATE", ""},
	{"FOLLOW_UP_GENERATION_PROMPT_TEMPLATE", ""},
	{"ENABLE_FOLLOW_UP_GENERATION", true},
	{"ENABLE_TAGS_GENERATION", true},
	{"ENABLE_SEARCH_QUERY_GENERATION", false},
	{"ENABLE_RETRIEVAL_QUERY_GENERATION", false},
	{"QUERY_GENERATION_PROMPT_TEMPLATE", ""},
	{"TOOLS_FUNCTION_CALLING_PROMPT_TEMPLATE", ""},
	{"VOICE_MODE_PROMPT_TEMPLATE", ""},
}

func (s *Server) taskConfig() map[string]any {
	out := make(map[string]any, len(taskConfigKeys))
	for _, k := range taskConfigKeys {
		if v, ok := s.settings.Value(k.name); ok {
			out[k.name] = v
		} else {
			out[k.name] = k.def
		}
	}
	return out
}

// handleGetTaskConfig is GET /api/v1/tasks/config (admin).
func (s *Server) handleGetTaskConfig(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.taskConfig())
}

// handleSetTaskConfig is POST /api/v1/tasks/config/update (admin): the
// members that are configuration variables are applied in one all-or-nothing
// Settings.Set. Members Hearth has no variable for are accepted when they
// hold the reported value (the UI posts the whole form back) and refused
// with 400 otherwise, so an edit is never silently dropped. Unknown members
// are 400.
func (s *Server) handleSetTaskConfig(w http.ResponseWriter, r *http.Request) error {
	var body map[string]any
	if err := decode(r, &body); err != nil {
		return err
	}
	known := map[string]any{}
	for _, k := range taskConfigKeys {
		known[k.name] = k.def
	}
	if err := unknownKeys(body, func(k string) bool { _, ok := known[k]; return ok }); err != nil {
		return err
	}
	changes := map[string]any{}
	var unsupported []string
	for k, v := range body {
		if _, ok := s.settings.Value(k); ok {
			changes[k] = v
			continue
		}
		if !sameValue(v, known[k]) {
			unsupported = append(unsupported, k)
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		return errorf(http.StatusBadRequest, "Not supported by this server: %s", strings.Join(unsupported, ", "))
	}
	if err := s.applySettings(r, changes, http.StatusBadRequest); err != nil {
		return err
	}
	return ok(w, s.taskConfig())
}

// sameValue compares a decoded JSON value with a default (numbers decode as
// float64).
func sameValue(v, def any) bool {
	switch d := def.(type) {
	case int:
		f, ok := v.(float64)
		return ok && f == float64(d)
	case nil:
		return v == nil
	}
	if v == nil {
		s, isStr := def.(string)
		return isStr && s == ""
	}
	return v == def
}
