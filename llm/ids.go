package llm

import (
	"crypto/rand"
	"encoding/hex"
)

// Identifier shapes used by Open WebUI's conversions. Every converter takes its ids as
// options (so goldens are deterministic) and falls back to these.

// NewUUID returns a random RFC 4122 version-4 UUID string.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// randomHex returns n random hex digits (n even).
func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewChatCompletionID returns "chatcmpl-<uuid4>" (streamed Ollama conversions).
func NewChatCompletionID() string { return "chatcmpl-" + NewUUID() }

// NewCallID returns "call_<uuid4>" (a tool call Ollama sent without an id).
func NewCallID() string { return "call_" + NewUUID() }

// NewMessageID returns "msg_<24 hex>" (messages-format responses).
func NewMessageID() string { return "msg_" + randomHex(24) }

// NewToolUseID returns "toolu_<24 hex>" (a tool_use block without an upstream id).
func NewToolUseID() string { return "toolu_" + randomHex(24) }

// NewResponseID returns "resp_<48 hex>" (responses-format objects).
func NewResponseID() string { return "resp_" + randomHex(48) }

// callOr returns f() when f is non-nil, else def().
func callOr(f func() string, def func() string) string {
	if f != nil {
		return f()
	}
	return def()
}
