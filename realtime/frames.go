package realtime

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Close codes sent to the client (RFC 6455 reserves 4000-4999 for
// applications). A client must not reconnect with the same token after
// CloseUnauthenticated or CloseForbidden.
const (
	CloseUnauthenticated = 4001 // no, invalid, expired or revoked token
	CloseForbidden       = 4003 // account pending or not allowed
	CloseGoingAway       = 1001 // server shutting down
	CloseInternal        = 1011 // the credential could not be checked
)

// clientFrame is every frame a client may send; Type selects the fields
// that matter.
type clientFrame struct {
	Type      string `json:"type"`
	Token     string `json:"token"`      // auth
	ChatID    string `json:"chat_id"`    // resume
	MessageID string `json:"message_id"` // resume
	Since     int64  `json:"since"`      // resume
}

// marshal encodes v as compact JSON without HTML escaping (embeds carry raw
// HTML; escaping it only makes frames longer).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	b, _ := marshal(s) // a string always encodes
	return append(dst, b...)
}

// eventFrame is {"type":"events","seq":n,"chat_id":…,"message_id":…,
// "data":{"type":…,"data":…}}; seq is left out when 0 (an event without a
// message id is not sequenced). data is the already encoded payload.
func eventFrame(seq int64, ev Event, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(ev.ChatID)+len(ev.MessageID)+len(ev.Data.Type)+96)
	b = append(b, `{"type":"events"`...)
	if seq > 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, seq, 10)
	}
	b = append(b, `,"chat_id":`...)
	b = appendString(b, ev.ChatID)
	b = append(b, `,"message_id":`...)
	b = appendString(b, ev.MessageID)
	b = append(b, `,"data":{"type":`...)
	b = appendString(b, ev.Data.Type)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, `}}`...)
}

func readyFrame(userID string) []byte {
	return append(appendString([]byte(`{"type":"ready","user_id":`), userID), '}')
}

var heartbeatFrame = []byte(`{"type":"heartbeat"}`)

func errorFrame(detail string) []byte {
	return append(appendString([]byte(`{"type":"error","detail":`), detail), '}')
}

// resumed is the answer to a resume frame.
type resumed struct {
	chatID, messageID string
	since, seq        int64
	found, truncated  bool
	done              bool
	events            [][]byte // encoded event frames, ascending seq
}

func (r resumed) frame() []byte {
	n := 160 + len(r.chatID) + len(r.messageID)
	for _, e := range r.events {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"type":"resumed","chat_id":`...)
	b = appendString(b, r.chatID)
	b = append(b, `,"message_id":`...)
	b = appendString(b, r.messageID)
	b = append(b, `,"since":`...)
	b = strconv.AppendInt(b, r.since, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, r.seq, 10)
	b = append(b, `,"found":`...)
	b = strconv.AppendBool(b, r.found)
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, r.truncated)
	b = append(b, `,"done":`...)
	b = strconv.AppendBool(b, r.done)
	b = append(b, `,"events":[`...)
	for i, e := range r.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, `]}`...)
}

// topLevel reads the top-level member names of a compact, valid JSON
// object (what marshal produces) without decoding the values, and whether
// "done" is true. ok is false when raw is not an object. A chat:completion
// payload carries the whole answer so far; decoding it just to learn its
// keys would cost an allocation of the full text per token.
func topLevel(raw []byte) (keys []string, done, ok bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return []string{}, false, true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return nil, false, false
		}
		end := skipString(raw, i)
		if end < 0 {
			return nil, false, false
		}
		var key string
		if json.Unmarshal(raw[i:end], &key) != nil {
			return nil, false, false
		}
		i = skipWS(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false, false
		}
		i = skipWS(raw, i+1)
		start := i
		i = skipValue(raw, i)
		if i < 0 {
			return nil, false, false
		}
		if key == "done" && string(raw[start:i]) == "true" {
			done = true
		}
		keys = append(keys, key)
		i = skipWS(raw, i)
		if i >= len(raw) {
			return nil, false, false
		}
		switch raw[i] {
		case ',':
			i = skipWS(raw, i+1)
		case '}':
			return keys, done, true
		default:
			return nil, false, false
		}
	}
	return nil, false, false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"',
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
