package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ErrStreamEndedEarly is returned by the stream readers when the upstream body ended
// before the stream's own terminator (`data: [DONE]` for SSE, a `"done": true` line for
// Ollama NDJSON). It is distinct from io.EOF, which means a clean end.
var ErrStreamEndedEarly = errors.New("llm: upstream stream ended early")

// maxErrorBody bounds how much of an upstream error body is kept.
const maxErrorBody = 64 << 10

// UpstreamError is a provider's refusal: an HTTP status ≥ 400, or an error object sent
// inside a stream that had started fine.
type UpstreamError struct {
	// Status is the upstream HTTP status, or 0 when the error arrived inside a stream
	// (an SSE `{"error": ...}` event or an NDJSON `{"error": "..."}` line).
	Status int
	// Message is the provider's own text: `error.message`, `error` (a string), `detail`
	// or `message`, as Open WebUI extracts it (COMPAT §4.4, §6.2, §6.3); else the body
	// when it is short plain text; else the HTTP status text.
	Message string
	// Body is the raw error body or event data (at most 64 KiB).
	Body []byte
}

func (e *UpstreamError) Error() string {
	if e.Status == 0 {
		return "upstream error in stream: " + e.Message
	}
	return fmt.Sprintf("upstream error %d: %s", e.Status, e.Message)
}

// newUpstreamError builds an UpstreamError from a status and a (possibly truncated) body.
func newUpstreamError(status int, body []byte) *UpstreamError {
	if len(body) > maxErrorBody {
		body = body[:maxErrorBody]
	}
	msg := ErrorMessage(body)
	if msg == "" {
		msg = plainErrorText(body)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d", status)
	}
	return &UpstreamError{Status: status, Message: msg, Body: bytes.Clone(body)}
}

// ErrorMessage extracts the provider's message from a JSON error body or event:
// `{"error": {"message": "..."}}`, `{"error": "..."}`, `{"detail": "..."}` (a non-string
// detail is returned as compact JSON), `{"message": "..."}`. It returns "" when body is
// not such an object.
func ErrorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if m := errorValueMessage(v.Error); m != "" {
		return m
	}
	if m := errorValueMessage(v.Detail); m != "" {
		return m
	}
	return errorValueMessage(v.Message)
}

// errorValueMessage turns the value of an `error`/`detail`/`message` member into text.
func errorValueMessage(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '{':
		var inner struct {
			Message json.RawMessage `json:"message"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(raw, &inner) == nil {
			if m := errorValueMessage(inner.Message); m != "" {
				return m
			}
			if m := errorValueMessage(inner.Error); m != "" {
				return m
			}
		}
	}
	return string(compactRaw(raw))
}

// plainErrorText returns body when it looks like a short human message (not HTML, not
// binary), else "".
func plainErrorText(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" || len(s) > 512 || !utf8.ValidString(s) || strings.HasPrefix(s, "<") {
		return ""
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' {
			return ""
		}
	}
	return s
}

// streamError returns the *UpstreamError carried by an in-stream JSON event, or nil.
// The cheap substring test keeps the common case (a normal chunk) free of a second decode.
func streamError(data []byte, eventName string) *UpstreamError {
	if eventName != "error" && !bytes.Contains(data, []byte(`"error"`)) {
		return nil
	}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &v) != nil {
		return nil
	}
	if len(v.Error) == 0 || string(v.Error) == "null" {
		if eventName != "error" {
			return nil
		}
	}
	msg := ErrorMessage(data)
	if msg == "" {
		msg = "upstream reported an error"
	}
	body := data
	if len(body) > maxErrorBody {
		body = body[:maxErrorBody]
	}
	return &UpstreamError{Status: 0, Message: msg, Body: bytes.Clone(body)}
}
