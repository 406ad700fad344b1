package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"hearth/llm"
)

// requestOnlyFields are the request members Open WebUI consumes itself
// (COMPAT.md §4.1): they steer the pipeline and never reach the provider.
// `metadata` is on the list because upstream overwrites it with its own and
// pops that before the provider call.
var requestOnlyFields = [...]string{
	"chat_id", "id", "session_id", "background_tasks", "features", "variables",
	"filter_ids", "files", "tool_ids", "tool_servers", "skill_ids", "terminal_id",
	"model_item", "parent_id", "parent_message", "user_message", "message_ids",
	"params", "folder_id", "assistant_message_id", "regeneration_prompt", "metadata",
}

// pipelineOnlyParams are generation params that configure Open WebUI, not
// the model (COMPAT.md §4.1); they are read and removed before the params
// reach the payload.
var pipelineOnlyParams = [...]string{
	"stream_response", "stream_delta_chunk_size", "function_calling",
	"reasoning_tags", "compact_token_threshold", "system", "custom_params",
}

// requestMeta is what the pipeline reads from a request before forwarding
// the rest.
type requestMeta struct {
	ChatID    string
	MessageID string
	SessionID string
	// Background is the request's background_tasks object (nil when absent):
	// title_generation, tags_generation, follow_up_generation.
	Background map[string]json.RawMessage
	Variables  map[string]string
	// ReqParams is the request's `params` object (non-null members only).
	ReqParams llm.Object
}

// prepared is a request ready for the upstream: the provider payload in
// chat-completions shape (converted to Ollama's at call time) and the
// pipeline's settings for this generation.
type prepared struct {
	meta    requestMeta
	payload *llm.ChatRequest
	stream  bool
	// deltaChunk is the batch size of chat:completion events (COMPAT §4.8).
	deltaChunk int
	// tags are the reasoning tag pairs to detect in content; nil disables it.
	tags []tagPair
	// messages is the conversation as sent upstream.
	messages []llm.Object
	// requestMessages is the request's `messages` as sent (the outlet event).
	requestMessages json.RawMessage
	// rag is what retrieval found (nil: no sources).
	rag *retrieval
}

// readMeta pops the pipeline's own fields off body and returns them.
func readMeta(body *llm.ChatRequest) (requestMeta, error) {
	var m requestMeta
	m.ChatID, _ = body.GetString("chat_id")
	m.MessageID, _ = body.GetString("id")
	m.SessionID, _ = body.GetString("session_id")
	if raw := body.Get("background_tasks"); isJSONObject(raw) {
		if err := json.Unmarshal(raw, &m.Background); err != nil {
			return m, badRequest("background_tasks must be an object")
		}
	}
	if raw := body.Get("variables"); isJSONObject(raw) {
		var vars map[string]any
		if err := json.Unmarshal(raw, &vars); err != nil {
			return m, badRequest("variables must be an object")
		}
		m.Variables = make(map[string]string, len(vars))
		for k, v := range vars {
			switch x := v.(type) {
			case string:
				m.Variables[k] = x
			case nil:
			default:
				b, _ := json.Marshal(x)
				m.Variables[k] = string(b)
			}
		}
	}
	if raw := body.Get("params"); isJSONObject(raw) {
		var p llm.Object
		if err := p.UnmarshalJSON(raw); err != nil {
			return m, badRequest("params must be an object")
		}
		for _, mem := range p.Members() {
			if string(mem.Value) != "null" {
				m.ReqParams.Set(mem.Key, mem.Value)
			}
		}
	}
	return m, nil
}

// prepare builds the provider payload for target t (COMPAT.md §4.1, §4.2):
//   - params: t.Params (DEFAULT_MODEL_PARAMS < record chain) < the request's
//     non-null `params`; custom_params (an object or JSON text) deep-merged
//     on top; the pipeline's own params removed. Ollama targets get them as
//     `options` (over any options the request sent), other targets at the
//     top level, overwriting request members. stream_response, when set,
//     replaces `stream`.
//   - system prompt: the request's params.system, else the record chain's
//     (t.System), with variables substituted, put before the content of the
//     first system message (or as a new first message).
//   - variables: the request's `variables` and the built-ins substituted by
//     plain string replace into every system message.
//   - regeneration_prompt: appended as a user message.
//   - model: t.UpstreamID; the pipeline's own fields are removed.
func prepare(body *llm.ChatRequest, meta requestMeta, t *Target, u UserInfo, globalDelta int, now time.Time) (*prepared, error) {
	payload := &llm.ChatRequest{Object: body.Object.Clone()}
	regen, _ := payload.GetString("regeneration_prompt")
	for _, k := range requestOnlyFields {
		payload.Delete(k)
	}

	// Params: target (defaults < records) < request params.
	params := t.Params.Clone()
	for _, mem := range meta.ReqParams.Members() {
		params.Set(mem.Key, mem.Value)
	}
	var nonNull llm.Object
	for _, mem := range params.Members() {
		if string(mem.Value) != "null" {
			nonNull.Set(mem.Key, mem.Value)
		}
	}
	params = nonNull
	if raw := params.Get("custom_params"); raw != nil {
		custom, err := customParams(raw)
		if err != nil {
			return nil, err
		}
		for _, mem := range custom.Members() {
			params.Set(mem.Key, deepMerge(params.Get(mem.Key), mem.Value))
		}
	}

	pr := &prepared{meta: meta, payload: payload}
	pr.deltaChunk = max(globalDelta, 1)
	if n, ok := t.Params.GetInt("stream_delta_chunk_size"); ok {
		pr.deltaChunk = max(pr.deltaChunk, int(n))
	}
	if n, ok := meta.ReqParams.GetInt("stream_delta_chunk_size"); ok {
		pr.deltaChunk = max(pr.deltaChunk, int(n))
	}
	pr.tags = reasoningTags(params.Get("reasoning_tags"))

	system := t.System
	if s, ok := params.GetString("system"); ok && s != "" {
		system = s
	}
	streamOverride, hasStreamOverride := params.GetBool("stream_response")
	for _, k := range pipelineOnlyParams {
		params.Delete(k)
	}

	if params.Len() > 0 {
		if t.Conn.Kind == KindOllama {
			var opts llm.Object
			if raw := payload.Get("options"); isJSONObject(raw) {
				if err := opts.UnmarshalJSON(raw); err != nil {
					return nil, badRequest("options must be an object")
				}
			}
			for _, mem := range params.Members() {
				opts.Set(mem.Key, mem.Value)
			}
			payload.Set("options", opts.AppendJSON(nil))
		} else {
			for _, mem := range params.Members() {
				payload.Set(mem.Key, mem.Value)
			}
		}
	}
	if hasStreamOverride {
		payload.SetBool("stream", streamOverride)
	}
	pr.stream = payload.Stream()

	// Messages: system prompt, variables, regeneration prompt.
	var msgs []llm.Object
	if raw := payload.Get("messages"); raw != nil {
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, badRequest("messages must be a list of objects")
		}
	}
	vars := variables(meta.Variables, u, now)
	changed := false
	if system != "" {
		msgs = addSystemPrompt(msgs, replaceVars(system, vars))
		changed = true
	}
	for i := range msgs {
		if role, _ := msgs[i].GetString("role"); role == "system" {
			if substituteContent(&msgs[i], vars) {
				changed = true
			}
		}
	}
	if regen != "" {
		var m llm.Object
		m.SetString("role", "user")
		m.SetString("content", regen)
		msgs = append(msgs, m)
		changed = true
	}
	if changed {
		raw, err := json.Marshal(msgs)
		if err != nil {
			return nil, err
		}
		payload.Set("messages", raw)
	}
	pr.messages = msgs
	payload.SetString("model", t.UpstreamID)
	return pr, nil
}

// customParams decodes custom_params: an object, or JSON text holding one.
func customParams(raw json.RawMessage) (llm.Object, error) {
	var o llm.Object
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return o, badRequest("params.custom_params is not valid")
		}
		raw = json.RawMessage(s)
	}
	if !isJSONObject(raw) {
		return o, badRequest("params.custom_params must be a JSON object")
	}
	if err := o.UnmarshalJSON(raw); err != nil {
		return o, badRequest("params.custom_params must be a JSON object")
	}
	return o, nil
}

// deepMerge merges over into base when both are objects (recursively);
// otherwise over replaces base.
func deepMerge(base, over json.RawMessage) json.RawMessage {
	if !isJSONObject(base) || !isJSONObject(over) {
		return over
	}
	var b, o llm.Object
	if b.UnmarshalJSON(base) != nil || o.UnmarshalJSON(over) != nil {
		return over
	}
	b = b.Clone()
	for _, mem := range o.Members() {
		b.Set(mem.Key, deepMerge(b.Get(mem.Key), mem.Value))
	}
	return b.AppendJSON(nil)
}

// UserInfo is what the pipeline knows of the caller beyond the Actor: it
// fills the built-in prompt variables.
type UserInfo struct {
	Name     string
	Timezone string
}

// variables returns the substitutions for system prompts: the request's own
// (they win) and the built-ins Open WebUI's prompt_template knows.
func variables(given map[string]string, u UserInfo, now time.Time) map[string]string {
	loc := time.UTC
	if u.Timezone != "" {
		if l, err := time.LoadLocation(u.Timezone); err == nil {
			loc = l
		}
	}
	t := now.In(loc)
	tz := u.Timezone
	if tz == "" {
		tz = "UTC"
	}
	vars := map[string]string{
		"{{USER_NAME}}":        u.Name,
		"{{USER_LANGUAGE}}":    "en-US",
		"{{CURRENT_DATE}}":     t.Format("2006-01-02"),
		"{{CURRENT_TIME}}":     t.Format("15:04:05"),
		"{{CURRENT_DATETIME}}": t.Format("2006-01-02 15:04:05"),
		"{{CURRENT_WEEKDAY}}":  t.Weekday().String(),
		"{{CURRENT_TIMEZONE}}": tz,
	}
	for k, v := range given {
		vars[k] = v
	}
	return vars
}

// replaceVars substitutes every variable present in s (plain replace).
func replaceVars(s string, vars map[string]string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	for k, v := range vars {
		if k != "" && strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, v)
		}
	}
	return s
}

// substituteContent applies vars to a message's content (a string, or the
// text of its text parts) and reports whether it changed.
func substituteContent(m *llm.Object, vars map[string]string) bool {
	raw := m.Get("content")
	if !bytes.Contains(raw, []byte("{{")) {
		return false
	}
	if s, ok := m.GetString("content"); ok {
		if out := replaceVars(s, vars); out != s {
			m.SetString("content", out)
			return true
		}
		return false
	}
	var parts []llm.Object
	if json.Unmarshal(raw, &parts) != nil {
		return false
	}
	changed := false
	for i := range parts {
		if typ, _ := parts[i].GetString("type"); typ != "text" {
			continue
		}
		if s, ok := parts[i].GetString("text"); ok {
			if out := replaceVars(s, vars); out != s {
				parts[i].SetString("text", out)
				changed = true
			}
		}
	}
	if changed {
		b, _ := json.Marshal(parts)
		m.Set("content", b)
	}
	return changed
}

// addSystemPrompt puts prompt before the content of the first message when
// it is a system message (joined by a newline, as Open WebUI's
// add_or_update_system_message), else inserts a system message first.
func addSystemPrompt(msgs []llm.Object, prompt string) []llm.Object {
	if len(msgs) > 0 {
		if role, _ := msgs[0].GetString("role"); role == "system" {
			first := msgs[0].Clone()
			if s, ok := first.GetString("content"); ok {
				first.SetString("content", prompt+"\n"+s)
			} else {
				var parts []json.RawMessage
				if json.Unmarshal(first.Get("content"), &parts) == nil {
					part, _ := json.Marshal(map[string]string{"type": "text", "text": prompt})
					b, _ := json.Marshal(append([]json.RawMessage{part}, parts...))
					first.Set("content", b)
				} else {
					first.SetString("content", prompt)
				}
			}
			msgs[0] = first
			return msgs
		}
	}
	var m llm.Object
	m.SetString("role", "system")
	m.SetString("content", prompt)
	return append([]llm.Object{m}, msgs...)
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// boolMember reads a background_tasks flag: present, and its value.
func boolMember(m map[string]json.RawMessage, key string) (present, value bool) {
	raw, ok := m[key]
	if !ok {
		return false, false
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		// Python truthiness of a non-boolean flag.
		s := strings.TrimSpace(string(raw))
		return true, s != "null" && s != "0" && s != `""` && s != "[]" && s != "{}"
	}
	return true, b
}

// Error is a refusal the caller sees as {"detail": Detail} with Status.
type Error struct {
	Status int
	Detail string
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Detail) }

func badRequest(detail string) error { return &Error{Status: 400, Detail: detail} }
