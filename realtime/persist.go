package realtime

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"hearth/store"
)

// MessageStore is what the hub needs from the store to persist events.
type MessageStore interface {
	EditMessage(ctx context.Context, actor store.Actor, chatID, msgID string, e store.MessageEdit) error
}

// Persisted reports whether events of type typ are written to the stored
// message (SPEC.md §6 Persistence: only the short names).
func Persisted(typ string) bool {
	switch typ {
	case "status", "message", "replace", "embeds", "files", "source", "citation":
		return true
	}
	return false
}

// editFor maps a short-named event to its change of the stored message
// (COMPAT.md §9.3). ok is false when nothing is to be written: another
// type, or a payload without the field the type needs (such an event is
// still emitted; Open WebUI would fail on it instead).
func editFor(typ string, data []byte) (e store.MessageEdit, ok bool) {
	var obj map[string]json.RawMessage
	isObj := json.Unmarshal(data, &obj) == nil && obj != nil
	switch typ {
	case "status":
		// The whole payload is stored as given; status does not move
		// history.currentId.
		return store.MessageEdit{Append: map[string]json.RawMessage{"statusHistory": arrayOf(data)}}, true
	case "message":
		var s string
		if !isObj || json.Unmarshal(obj["content"], &s) != nil {
			return e, false
		}
		return store.MessageEdit{AppendContent: s, MoveCurrent: true}, true
	case "replace":
		var s string
		if !isObj || json.Unmarshal(obj["content"], &s) != nil {
			return e, false
		}
		return store.MessageEdit{Set: map[string]json.RawMessage{"content": obj["content"]}, MoveCurrent: true}, true
	case "embeds":
		if !isObj || !isArray(obj["embeds"]) {
			return e, false
		}
		if truthy(obj["replace"]) {
			return store.MessageEdit{Set: map[string]json.RawMessage{"embeds": obj["embeds"]}, MoveCurrent: true}, true
		}
		return store.MessageEdit{Prepend: map[string]json.RawMessage{"embeds": obj["embeds"]}, MoveCurrent: true}, true
	case "files":
		if !isObj || !isArray(obj["files"]) {
			return e, false
		}
		return store.MessageEdit{Prepend: map[string]json.RawMessage{"files": obj["files"]}, MoveCurrent: true}, true
	case "source", "citation":
		// Code-execution results carry a type and are live-only.
		if !isObj || !isNull(obj["type"]) {
			return e, false
		}
		return store.MessageEdit{Append: map[string]json.RawMessage{"sources": arrayOf(data)}, MoveCurrent: true}, true
	}
	return e, false
}

func arrayOf(item []byte) json.RawMessage {
	out := make([]byte, 0, len(item)+2)
	out = append(out, '[')
	out = append(out, item...)
	return append(out, ']')
}

func isArray(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '['
}

// isNull: absent or JSON null.
func isNull(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

// truthy follows Python truthiness, as Open WebUI tests data.get("replace").
func truthy(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0, string(v) == "null", string(v) == "false", string(v) == `""`, string(v) == "[]", string(v) == "{}":
		return false
	case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
		var f float64
		return json.Unmarshal(v, &f) == nil && f != 0
	}
	return true
}

// persistable: events of temporary ("local:") chats and events without a
// chat or message are never written.
func persistable(ev Event) bool {
	return ev.ChatID != "" && ev.MessageID != "" && !strings.HasPrefix(ev.ChatID, "local:")
}
