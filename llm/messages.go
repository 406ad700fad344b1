package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Messages format (Anthropic-compatible, POST /api/v1/messages): conversions to and from
// chat-completions (COMPAT §7, utils/anthropic.py). The request goes through the normal
// chat pipeline as chat-completions; the answer is converted back.

// messagesBlock is one content block of a messages-format message, system prompt or
// tool result. Polymorphic members stay raw.
type messagesBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Source       json.RawMessage `json:"source"`
	CacheControl json.RawMessage `json:"cache_control"`
	// tool_use
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   json.RawMessage `json:"is_error"`
	// document / search_result
	Title   json.RawMessage `json:"title"`
	Context json.RawMessage `json:"context"`
}

type messagesSource struct {
	Type      string          `json:"type"`
	MediaType string          `json:"media_type"`
	Data      json.RawMessage `json:"data"`
	URL       string          `json:"url"`
}

// MessagesToChat converts a messages-format request body into a chat-completions request
// (COMPAT §7.1):
//
//   - model copied; system (a string, or text blocks) becomes the first message, a list
//     kept as text parts only when a block has cache_control;
//   - string contents are copied; block lists convert text (+cache_control), image
//     (base64 → a data: URL, media type default image/png; url → the URL), tool_use
//     (→ assistant tool_calls with the input as a JSON string; content "" or the text
//     parts) and tool_result (→ a separate role "tool" message placed before the rest of
//     its message: string content kept, block lists converted — text, image, document as
//     "[Document: <title>]\n<context>\n<text>", search_result as
//     "[Search Result: <title>]\nSource: <url>\n<texts>" — and flattened to one string when
//     all text without cache_control; is_error prefixes "Error: ");
//   - a single text part without cache_control collapses to a string;
//   - max_tokens, temperature, top_p, top_k, stream, metadata, service_tier copied;
//     stop_sequences → stop;
//   - tools → function tools (description default "", parameters = input_schema,
//     cache_control kept); tool_choice auto → "auto", any → "required", tool →
//     {type: function, function: {name}}, others dropped;
//   - everything else (thinking, ...) dropped.
//
// It fails only on input that is not a JSON object or whose members have impossible types
// (messages not a list, a block not an object).
func MessagesToChat(body []byte) (*ChatRequest, error) {
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

	var msgs []json.RawMessage // each an encoded chat message
	if sys := in.Get("system"); truthy(sys) {
		content, err := systemContent(sys)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, encodeMessage("system", content, nil, ""))
	}
	if raw := in.Get("messages"); raw != nil && string(raw) != "null" {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, errors.New("llm: messages must be a list")
		}
		for _, item := range list {
			msgs, err = appendConvertedMessage(msgs, item)
			if err != nil {
				return nil, err
			}
		}
	}
	b := []byte{'['}
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	out.Set("messages", append(b, ']'))

	if v := in.Get("max_tokens"); v != nil {
		out.Set("max_tokens", v)
	}
	for _, k := range [...]string{"temperature", "top_p", "top_k", "stop_sequences", "stream", "metadata", "service_tier"} {
		if v := in.Get(k); v != nil {
			if k == "stop_sequences" {
				k = "stop"
			}
			out.Set(k, v)
		}
	}
	if raw := in.Get("tools"); raw != nil && string(raw) != "null" {
		tools, err := convertMessagesTools(raw)
		if err != nil {
			return nil, err
		}
		out.Set("tools", tools)
	}
	if raw := in.Get("tool_choice"); len(raw) > 0 && raw[0] == '{' {
		var tc struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &tc) == nil {
			if tc.Type == "" {
				tc.Type = "auto"
			}
			switch tc.Type {
			case "auto":
				out.Set("tool_choice", json.RawMessage(`"auto"`))
			case "any":
				out.Set("tool_choice", json.RawMessage(`"required"`))
			case "tool":
				b := []byte(`{"type":"function","function":{"name":`)
				b = appendString(b, tc.Name)
				out.Set("tool_choice", append(b, "}}"...))
			}
		}
	}
	return out, nil
}

// systemContent converts the system member: a string as is, a list of text blocks (or
// strings) finalized like message content.
func systemContent(raw json.RawMessage) (json.RawMessage, error) {
	if raw[0] == '"' {
		return raw, nil
	}
	if raw[0] != '[' {
		return TextContent(pyStr(raw)), nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	var parts []ContentPart
	for _, it := range items {
		switch {
		case len(it) > 0 && it[0] == '"':
			var s string
			_ = json.Unmarshal(it, &s)
			parts = append(parts, ContentPart{Type: "text", Text: s})
		case len(it) > 0 && it[0] == '{':
			var blk messagesBlock
			if json.Unmarshal(it, &blk) != nil {
				continue
			}
			if blk.Type == "text" {
				parts = append(parts, ContentPart{Type: "text", Text: blk.Text, CacheControl: nonNull(blk.CacheControl)})
			}
		}
	}
	return finalizeParts(parts), nil
}

// finalizeParts turns converted parts into a content value: "" for none, the text for a
// single text part without cache_control, else the list.
func finalizeParts(parts []ContentPart) json.RawMessage {
	if len(parts) == 0 {
		return TextContent("")
	}
	if len(parts) == 1 && parts[0].Type == "text" && parts[0].CacheControl == nil {
		return TextContent(parts[0].Text)
	}
	return PartsContent(parts)
}

func hasCacheControl(parts []ContentPart) bool {
	for _, p := range parts {
		if p.CacheControl != nil {
			return true
		}
	}
	return false
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// encodeMessage encodes one chat message: role, content, then tool_calls / tool_call_id.
func encodeMessage(role string, content json.RawMessage, toolCalls json.RawMessage, toolCallID string) json.RawMessage {
	b := []byte(`{"role":`)
	b = appendString(b, role)
	if toolCallID != "" || role == "tool" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, toolCallID)
	}
	b = append(b, `,"content":`...)
	b = append(b, content...)
	if toolCalls != nil {
		b = append(b, `,"tool_calls":`...)
		b = append(b, toolCalls...)
	}
	return append(b, '}')
}

// appendConvertedMessage converts one messages-format message; tool results become their
// own messages, appended first.
func appendConvertedMessage(msgs []json.RawMessage, item json.RawMessage) ([]json.RawMessage, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(item) == 0 || item[0] != '{' {
		return nil, errors.New("llm: a message must be an object")
	}
	if err := json.Unmarshal(item, &m); err != nil {
		return nil, fmt.Errorf("llm: bad message: %w", err)
	}
	if m.Role == "" {
		m.Role = "user"
	}
	c := bytes.TrimSpace(m.Content)
	switch {
	case len(c) > 0 && c[0] == '"':
		return append(msgs, encodeMessage(m.Role, c, nil, "")), nil
	case len(c) == 0 || c[0] != '[':
		return append(msgs, encodeMessage(m.Role, TextContent(pyStr(c)), nil, "")), nil
	}

	var blocks []json.RawMessage
	if err := json.Unmarshal(c, &blocks); err != nil {
		return nil, err
	}
	var parts []ContentPart
	var calls []byte // encoded tool_calls elements
	for _, raw := range blocks {
		if len(raw) == 0 || raw[0] != '{' {
			return nil, errors.New("llm: a content block must be an object")
		}
		var blk messagesBlock
		if err := json.Unmarshal(raw, &blk); err != nil {
			return nil, fmt.Errorf("llm: bad content block: %w", err)
		}
		if blk.Type == "" {
			blk.Type = "text"
		}
		switch blk.Type {
		case "text":
			parts = append(parts, ContentPart{Type: "text", Text: blk.Text, CacheControl: nonNull(blk.CacheControl)})
		case "image":
			if p, ok := imagePart(blk); ok {
				parts = append(parts, p)
			}
		case "tool_use":
			if len(calls) > 0 {
				calls = append(calls, ',')
			}
			calls = append(calls, `{"id":`...)
			calls = appendString(calls, blk.ID)
			calls = append(calls, `,"type":"function","function":{"name":`...)
			calls = appendString(calls, blk.Name)
			calls = append(calls, `,"arguments":`...)
			calls = appendString(calls, toolInputText(blk.Input))
			calls = append(calls, "}}"...)
		case "tool_result":
			msgs = append(msgs, encodeMessage("tool", toolResultContent(blk), nil, blk.ToolUseID))
		}
	}
	switch {
	case len(calls) > 0:
		content := TextContent("")
		if len(parts) > 0 {
			content = finalizeParts(parts)
		}
		tc := append(append([]byte{'['}, calls...), ']')
		msgs = append(msgs, encodeMessage(m.Role, content, tc, ""))
	case len(parts) > 0:
		msgs = append(msgs, encodeMessage(m.Role, finalizeParts(parts), nil, ""))
	}
	return msgs, nil
}

// pyStr renders a non-string, non-list content the way upstream's str() fallback does
// closely enough: "" for nothing/null/false, else the JSON text.
func pyStr(raw json.RawMessage) string {
	if !truthy(raw) {
		return ""
	}
	return string(compactRaw(raw))
}

// imagePart converts an image block.
func imagePart(blk messagesBlock) (ContentPart, bool) {
	var src messagesSource
	if len(blk.Source) == 0 || blk.Source[0] != '{' || json.Unmarshal(blk.Source, &src) != nil {
		return ContentPart{}, false
	}
	switch src.Type {
	case "base64":
		mt := src.MediaType
		if mt == "" {
			mt = "image/png"
		}
		data := rawText(src.Data)
		return ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: "data:" + mt + ";base64," + data},
			CacheControl: nonNull(blk.CacheControl)}, true
	case "url":
		return ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: src.URL}, CacheControl: nonNull(blk.CacheControl)}, true
	}
	return ContentPart{}, false
}

// toolInputText renders a tool_use input as the arguments string: an object as compact
// JSON, a string as is, nothing as "{}".
func toolInputText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return "{}"
	case raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	default:
		return string(compactRaw(raw))
	}
}

// toolResultContent converts a tool_result's content.
func toolResultContent(blk messagesBlock) json.RawMessage {
	c := bytes.TrimSpace(blk.Content)
	isErr := truthy(blk.IsError)
	var parts []ContentPart
	switch {
	case len(c) > 0 && c[0] == '"':
		var s string
		_ = json.Unmarshal(c, &s)
		if isErr {
			s = "Error: " + s
		}
		return TextContent(s)
	case len(c) > 0 && c[0] == '[':
		var items []json.RawMessage
		_ = json.Unmarshal(c, &items)
		for _, it := range items {
			var b messagesBlock
			if len(it) == 0 || it[0] != '{' || json.Unmarshal(it, &b) != nil {
				continue
			}
			if b.Type == "" {
				b.Type = "text"
			}
			switch b.Type {
			case "text":
				parts = append(parts, ContentPart{Type: "text", Text: b.Text, CacheControl: nonNull(b.CacheControl)})
			case "image":
				if p, ok := imagePart(b); ok {
					parts = append(parts, p)
				}
			case "document":
				parts = append(parts, ContentPart{Type: "text", Text: documentText(b)})
			case "search_result":
				parts = append(parts, ContentPart{Type: "text", Text: searchResultText(b)})
			}
		}
	}
	allText := true
	for _, p := range parts {
		if p.Type != "text" {
			allText = false
		}
	}
	if allText && !hasCacheControl(parts) {
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Text
		}
		s := strings.Join(texts, "\n")
		if isErr {
			s = "Error: " + s
		}
		return TextContent(s)
	}
	if isErr {
		parts = append([]ContentPart{{Type: "text", Text: "Error: "}}, parts...)
	}
	return PartsContent(parts)
}

func documentText(b messagesBlock) string {
	title := "Document"
	if b.Title != nil {
		title = rawText(b.Title)
	}
	s := "[Document: " + title + "]"
	if ctx := rawText(b.Context); ctx != "" {
		s += "\n" + ctx
	}
	var src messagesSource
	if len(b.Source) > 0 && b.Source[0] == '{' && json.Unmarshal(b.Source, &src) == nil {
		if data := rawText(src.Data); src.Type == "text" && data != "" {
			s += "\n" + data
		}
	}
	return s
}

func searchResultText(b messagesBlock) string {
	s := "[Search Result: " + rawText(b.Title) + "]"
	if url := rawText(b.Source); url != "" {
		s += "\nSource: " + url
	}
	var texts []string
	var items []messagesBlock
	if len(b.Content) > 0 && b.Content[0] == '[' && json.Unmarshal(b.Content, &items) == nil {
		for _, it := range items {
			if it.Type == "text" {
				texts = append(texts, it.Text)
			}
		}
	}
	if body := strings.Join(texts, "\n"); body != "" {
		s += "\n" + body
	}
	return s
}

// convertMessagesTools converts messages-format tools into function tools.
func convertMessagesTools(raw json.RawMessage) (json.RawMessage, error) {
	var tools []json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, errors.New("llm: tools must be a list")
	}
	b := []byte{'['}
	for i, t := range tools {
		var tool struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl json.RawMessage `json:"cache_control"`
		}
		if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &tool) != nil {
			return nil, errors.New("llm: a tool must be an object")
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","function":{"name":`...)
		b = appendString(b, tool.Name)
		b = append(b, `,"description":`...)
		b = appendString(b, tool.Description)
		b = append(b, `,"parameters":`...)
		if s := nonNull(tool.InputSchema); s != nil {
			b = append(b, compactRaw(s)...)
		} else {
			b = append(b, "{}"...)
		}
		b = append(b, '}')
		if cc := nonNull(tool.CacheControl); cc != nil {
			b = append(b, `,"cache_control":`...)
			b = append(b, compactRaw(cc)...)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// StopReason maps a chat-completions finish_reason to a messages stop_reason (COMPAT
// §7.2): stop → end_turn, length → max_tokens, tool_calls → tool_use, anything else
// (content_filter, unknown, none) → end_turn.
func StopReason(finishReason string) string {
	switch finishReason {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	default:
		return "end_turn"
	}
}

// MessagesResponseOptions configure ChatToMessagesResponse.
type MessagesResponseOptions struct {
	// Model is the requested model, written as `model` ("" → the upstream's).
	Model string
	// NewID makes the message id when the upstream id does not start with "msg_"
	// (nil → NewMessageID).
	NewID func() string
	// NewToolUseID makes ids for tool calls without one (nil → NewToolUseID).
	NewToolUseID func() string
	// InputTokens is a pre-counted prompt size, used when the upstream reports none.
	InputTokens int64
}

// ChatToMessagesResponse converts a non-streamed chat.completion into a messages-format
// response (COMPAT §7.2): {id, type: "message", role: "assistant", content: [text block
// unless the text is empty, tool_use blocks with the parsed input ({} when unparsable)],
// model, stop_reason, stop_sequence: null, usage}.
//
// Decisions beyond 0.10.2: the id is always a msg_ id (the upstream's when it already is
// one); a response that carries tool calls but finished with "stop" reports tool_use, as
// Anthropic does, so clients run their tool loop; usage is derived as current Open WebUI
// derives it (see deriveMessagesUsage).
func ChatToMessagesResponse(body []byte, opts MessagesResponseOptions) ([]byte, error) {
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
	id := cc.ID
	if !strings.HasPrefix(id, "msg_") {
		id = callOr(opts.NewID, NewMessageID)
	}
	model := opts.Model
	if model == "" {
		model = cc.Model
	}
	stop := StopReason(finish)
	if len(msg.ToolCalls) > 0 && stop == "end_turn" {
		stop = "tool_use"
	}

	dst := []byte(`{"id":`)
	dst = appendString(dst, id)
	dst = append(dst, `,"type":"message","role":"assistant","content":[`...)
	n := 0
	if text := msg.Text(); text != "" {
		dst = append(dst, `{"type":"text","text":`...)
		dst = appendString(dst, text)
		dst = append(dst, '}')
		n++
	}
	for _, tc := range msg.ToolCalls {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		tid := tc.ID
		if tid == "" {
			tid = callOr(opts.NewToolUseID, NewToolUseID)
		}
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = appendString(dst, tid)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, tc.Function.Name)
		dst = append(dst, `,"input":`...)
		dst = appendToolInput(dst, string(tc.Function.Arguments))
		dst = append(dst, '}')
	}
	dst = append(dst, `],"model":`...)
	dst = appendString(dst, model)
	dst = append(dst, `,"stop_reason":`...)
	dst = appendString(dst, stop)
	dst = append(dst, `,"stop_sequence":null,"usage":`...)
	u := deriveMessagesUsage(cc.Usage, opts.InputTokens)
	dst = u.appendJSON(dst)
	return append(dst, '}'), nil
}

// appendToolInput appends parsed tool arguments: the JSON when the text parses (empty text
// → {}), else {} (upstream: unparsable arguments → input {}). Non-object JSON is kept as
// parsed, as upstream's json.loads keeps it.
func appendToolInput(dst []byte, args string) []byte {
	s := bytes.TrimSpace([]byte(args))
	if len(s) == 0 || !json.Valid(s) {
		return append(dst, "{}"...)
	}
	return append(dst, compactRaw(s)...)
}
