package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Responses format (/v1/responses) ⇄ chat-completions. What exists: the request
// conversion (ResponsesToChat) and the non-streamed answer conversion (ChatToResponse).
// The streamed event sequence (response.created … response.completed, fixture
// 16-v1-responses-stream.http) is left for issue 5.

// responsesItem is one element of a responses `input` list.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments Arguments       `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type responsesPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Refusal  string          `json:"refusal"`
	ImageURL json.RawMessage `json:"image_url"`
	Detail   string          `json:"detail"`
}

// ResponsesToChat converts a /v1/responses request body into a chat-completions request:
//
//   - model copied; instructions → a first system message;
//   - input: a string is one user message; list items convert — messages (role
//     developer → system; string content kept; parts input_text/output_text/refusal →
//     text, input_image → image_url; assistant text parts joined into a string),
//     function_call → an assistant tool call (consecutive calls, and a call right after
//     an assistant message, share one assistant message), function_call_output → a
//     role "tool" message; other item types (reasoning, item_reference, ...) dropped;
//   - max_output_tokens → max_tokens; temperature, top_p, stream, user,
//     parallel_tool_calls, metadata copied; a streaming request also asks for usage
//     (stream_options.include_usage) so the final response can report it;
//   - tools: function tools {type, name, description, parameters, strict} → chat
//     function tools; built-in tools (web_search, file_search, ...) dropped;
//   - tool_choice: strings copied, {type: function, name} → {type: function,
//     function: {name}};
//   - text.format json_schema → response_format json_schema {name, schema, strict},
//     json_object → response_format json_object;
//   - reasoning.effort → reasoning_effort.
//
// Everything else (store, previous_response_id, truncation, include, ...) is dropped.
func ResponsesToChat(body []byte) (*ChatRequest, error) {
	in, err := ParseObject(body)
	if err != nil {
		return nil, err
	}
	out := &ChatRequest{}
	if m := in.Get("model"); m != nil {
		out.Set("model", m)
	} else {
		out.SetString("model", "")
	}

	var msgs []ChatMessage
	if s, ok := in.GetString("instructions"); ok && s != "" {
		msgs = append(msgs, ChatMessage{Role: "system", Content: TextContent(s)})
	}
	input := bytes.TrimSpace(in.Get("input"))
	switch {
	case len(input) == 0 || string(input) == "null":
	case input[0] == '"':
		var s string
		_ = json.Unmarshal(input, &s)
		msgs = append(msgs, ChatMessage{Role: "user", Content: TextContent(s)})
	case input[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(input, &items); err != nil {
			return nil, fmt.Errorf("llm: input: %w", err)
		}
		for _, raw := range items {
			if len(raw) == 0 || raw[0] != '{' {
				return nil, errors.New("llm: an input item must be an object")
			}
			var it responsesItem
			if err := json.Unmarshal(raw, &it); err != nil {
				return nil, fmt.Errorf("llm: bad input item: %w", err)
			}
			msgs = appendResponsesItem(msgs, it)
		}
	default:
		return nil, errors.New("llm: input must be a string or a list")
	}
	if err := out.SetMessages(msgs); err != nil {
		return nil, err
	}

	if v := in.Get("max_output_tokens"); v != nil && string(v) != "null" {
		out.Set("max_tokens", v)
	}
	for _, k := range [...]string{"temperature", "top_p", "stream", "user", "parallel_tool_calls", "metadata"} {
		if v := in.Get(k); v != nil && string(v) != "null" {
			out.Set(k, v)
		}
	}
	if stream, _ := in.GetBool("stream"); stream {
		out.Set("stream_options", json.RawMessage(`{"include_usage":true}`))
	}
	if raw := in.Get("tools"); len(raw) > 0 && raw[0] == '[' {
		var tools []struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      json.RawMessage `json:"strict"`
		}
		if err := json.Unmarshal(raw, &tools); err != nil {
			return nil, fmt.Errorf("llm: tools: %w", err)
		}
		b := []byte{'['}
		n := 0
		for _, t := range tools {
			if t.Type != "function" {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"type":"function","function":{"name":`...)
			b = appendString(b, t.Name)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = appendString(b, t.Description)
			}
			if p := nonNull(t.Parameters); p != nil {
				b = append(b, `,"parameters":`...)
				b = append(b, compactRaw(p)...)
			}
			if s := nonNull(t.Strict); s != nil {
				b = append(b, `,"strict":`...)
				b = append(b, s...)
			}
			b = append(b, "}}"...)
		}
		if n > 0 {
			out.Set("tools", append(b, ']'))
		}
	}
	if raw := in.Get("tool_choice"); len(raw) > 0 {
		switch raw[0] {
		case '"':
			out.Set("tool_choice", raw)
		case '{':
			var tc struct {
				Type string `json:"type"`
				Name string `json:"name"`
			}
			if json.Unmarshal(raw, &tc) == nil && tc.Type == "function" && tc.Name != "" {
				b := []byte(`{"type":"function","function":{"name":`)
				b = appendString(b, tc.Name)
				out.Set("tool_choice", append(b, "}}"...))
			}
		}
	}
	if raw := in.Get("text"); len(raw) > 0 && raw[0] == '{' {
		var text struct {
			Format *struct {
				Type   string          `json:"type"`
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict json.RawMessage `json:"strict"`
			} `json:"format"`
		}
		if json.Unmarshal(raw, &text) == nil && text.Format != nil {
			switch text.Format.Type {
			case "json_schema":
				b := []byte(`{"type":"json_schema","json_schema":{"name":`)
				b = appendString(b, text.Format.Name)
				if s := nonNull(text.Format.Schema); s != nil {
					b = append(b, `,"schema":`...)
					b = append(b, compactRaw(s)...)
				}
				if s := nonNull(text.Format.Strict); s != nil {
					b = append(b, `,"strict":`...)
					b = append(b, s...)
				}
				out.Set("response_format", append(b, "}}"...))
			case "json_object":
				out.Set("response_format", json.RawMessage(`{"type":"json_object"}`))
			}
		}
	}
	if raw := in.Get("reasoning"); len(raw) > 0 && raw[0] == '{' {
		var r struct {
			Effort json.RawMessage `json:"effort"`
		}
		if json.Unmarshal(raw, &r) == nil && nonNull(r.Effort) != nil {
			out.Set("reasoning_effort", r.Effort)
		}
	}
	return out, nil
}

func appendResponsesItem(msgs []ChatMessage, it responsesItem) []ChatMessage {
	switch it.Type {
	case "", "message":
		role := it.Role
		if role == "" {
			role = "user"
		}
		if role == "developer" {
			role = "system"
		}
		return append(msgs, ChatMessage{Role: role, Content: responsesContent(it.Content, role)})
	case "function_call":
		call := ToolCall{ID: it.CallID, Type: "function", Function: FunctionCall{Name: it.Name, Arguments: it.Arguments}}
		if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && msgs[n-1].ToolCallID == "" {
			msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, call)
			if len(msgs[n-1].Content) == 0 || string(msgs[n-1].Content) == "null" {
				msgs[n-1].Content = TextContent("")
			}
			return msgs
		}
		return append(msgs, ChatMessage{Role: "assistant", Content: TextContent(""), ToolCalls: []ToolCall{call}})
	case "function_call_output":
		return append(msgs, ChatMessage{Role: "tool", ToolCallID: it.CallID, Content: TextContent(responsesOutputText(it.Output))})
	}
	return msgs
}

// responsesContent converts a message item's content into chat content.
func responsesContent(raw json.RawMessage, role string) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return TextContent("")
	}
	if raw[0] == '"' {
		return raw
	}
	var parts []responsesPart
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return TextContent("")
	}
	var out []ContentPart
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, ContentPart{Type: "text", Text: p.Text})
		case "refusal":
			out = append(out, ContentPart{Type: "text", Text: p.Refusal})
		case "input_image", "image_url":
			var u ImageURL
			if len(p.ImageURL) > 0 && json.Unmarshal(p.ImageURL, &u) == nil && u.URL != "" {
				if u.Detail == "" {
					u.Detail = p.Detail
				}
				out = append(out, ContentPart{Type: "image_url", ImageURL: &u})
			}
		}
	}
	if role == "assistant" || role == "system" {
		var b strings.Builder
		for _, p := range out {
			b.WriteString(p.Text)
		}
		return TextContent(b.String())
	}
	return finalizeParts(out)
}

// responsesOutputText returns a function_call_output's output as text.
func responsesOutputText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' || raw[0] == '[' {
		return rawText(raw)
	}
	return string(compactRaw(raw))
}

// ResponseOptions configure ChatToResponse.
type ResponseOptions struct {
	// ID of the response ("" → NewResponseID).
	ID string
	// Created is created_at and completed_at (0 → now).
	Created int64
	// Model is written as `model` ("" → the upstream's).
	Model string
	// NewItemID makes output item ids for a prefix ("msg", "fc", "rs"); nil → random
	// "<prefix>_<48 hex>".
	NewItemID func(prefix string) string
	// Request is the original responses request, whose parameters the response echoes
	// (instructions, temperature, top_p, max_output_tokens, tools, tool_choice, text,
	// parallel_tool_calls, metadata); zero means defaults.
	Request Object
}

// ChatToResponse converts a non-streamed chat.completion into a /v1/responses `response`
// object (the shape of fixture 15-v1-responses-nostream.http): output items reasoning
// (from reasoning_content / reasoning), message (output_text), function_call per tool
// call; status "incomplete" with incomplete_details {reason: max_output_tokens |
// content_filter} for finish_reason length / content_filter, else "completed"; usage
// {input_tokens, input_tokens_details.cached_tokens, output_tokens,
// output_tokens_details.reasoning_tokens, total_tokens}.
func ChatToResponse(body []byte, opts ResponseOptions) ([]byte, error) {
	var cc ChatCompletion
	if err := json.Unmarshal(body, &cc); err != nil {
		return nil, err
	}
	var msg ResponseMessage
	finish := ""
	if len(cc.Choices) > 0 {
		msg = cc.Choices[0].Message
		finish = cc.Choices[0].FinishReason
	}
	id := opts.ID
	if id == "" {
		id = NewResponseID()
	}
	created := opts.Created
	if created == 0 {
		created = time.Now().Unix()
	}
	model := opts.Model
	if model == "" {
		model = cc.Model
	}
	newItemID := opts.NewItemID
	if newItemID == nil {
		newItemID = func(prefix string) string { return prefix + "_" + randomHex(48) }
	}
	req := opts.Request
	echo := func(dst []byte, key string, def string) []byte {
		dst = append(dst, ',')
		dst = appendKey(dst, key)
		if v := req.Get(key); v != nil {
			return append(dst, v...)
		}
		return append(dst, def...)
	}

	itemStatus := "completed"
	if finish == "length" || finish == "content_filter" {
		itemStatus = "incomplete"
	}
	dst := []byte(`{"id":`)
	dst = appendString(dst, id)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = appendInt(dst, created)
	switch finish {
	case "length":
		dst = append(dst, `,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}`...)
	case "content_filter":
		dst = append(dst, `,"status":"incomplete","incomplete_details":{"reason":"content_filter"}`...)
	default:
		dst = append(dst, `,"completed_at":`...)
		dst = appendInt(dst, created)
		dst = append(dst, `,"status":"completed","incomplete_details":null`...)
	}
	dst = append(dst, `,"error":null`...)
	dst = echo(dst, "instructions", "null")
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, model)
	dst = append(dst, `,"output":[`...)
	n := 0
	item := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	reasoning := msg.ReasoningContent
	if reasoning == "" {
		reasoning = msg.Reasoning
	}
	if reasoning != "" {
		item()
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, newItemID("rs"))
		dst = append(dst, `,"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":`...)
		dst = appendString(dst, reasoning)
		dst = append(dst, `}]}`...)
	}
	if text := msg.Text(); text != "" || len(msg.ToolCalls) == 0 {
		item()
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, newItemID("msg"))
		dst = append(dst, `,"type":"message","status":`...)
		dst = appendString(dst, itemStatus)
		dst = append(dst, `,"role":"assistant","content":[{"type":"output_text","text":`...)
		dst = appendString(dst, text)
		dst = append(dst, `,"annotations":[],"logprobs":[]}]}`...)
	}
	for _, tc := range msg.ToolCalls {
		item()
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, newItemID("fc"))
		dst = append(dst, `,"type":"function_call","status":"completed","call_id":`...)
		callID := tc.ID
		if callID == "" {
			callID = NewCallID()
		}
		dst = appendString(dst, callID)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, tc.Function.Name)
		dst = append(dst, `,"arguments":`...)
		dst = appendString(dst, string(tc.Function.Arguments))
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	dst = echo(dst, "parallel_tool_calls", "true")
	dst = echo(dst, "temperature", "null")
	dst = echo(dst, "top_p", "null")
	dst = echo(dst, "max_output_tokens", "null")
	dst = echo(dst, "tool_choice", `"auto"`)
	dst = echo(dst, "tools", "[]")
	dst = echo(dst, "text", `{"format":{"type":"text"}}`)
	dst = echo(dst, "metadata", "{}")
	dst = append(dst, `,"usage":`...)
	dst = appendResponsesUsage(dst, cc.Usage)
	return append(dst, '}'), nil
}

func appendResponsesUsage(dst []byte, raw json.RawMessage) []byte {
	var u struct {
		PromptTokens        Int `json:"prompt_tokens"`
		CompletionTokens    Int `json:"completion_tokens"`
		TotalTokens         Int `json:"total_tokens"`
		InputTokens         Int `json:"input_tokens"`
		OutputTokens        Int `json:"output_tokens"`
		PromptTokensDetails struct {
			CachedTokens Int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens Int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
	_ = json.Unmarshal(raw, &u)
	in, out := int64(u.PromptTokens), int64(u.CompletionTokens)
	if in == 0 {
		in = int64(u.InputTokens)
	}
	if out == 0 {
		out = int64(u.OutputTokens)
	}
	total := int64(u.TotalTokens)
	if total == 0 {
		total = in + out
	}
	dst = append(dst, `{"input_tokens":`...)
	dst = appendInt(dst, in)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = appendInt(dst, int64(u.PromptTokensDetails.CachedTokens))
	dst = append(dst, `},"output_tokens":`...)
	dst = appendInt(dst, out)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = appendInt(dst, int64(u.CompletionTokensDetails.ReasoningTokens))
	dst = append(dst, `},"total_tokens":`...)
	dst = appendInt(dst, total)
	return append(dst, '}')
}
