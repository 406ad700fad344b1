package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the byte-level JSON work of the chat store. A chat arrives
// as one JSON object and is split (see migrations/sqlite/0002_chats.sql):
// the top-level keys and the history keys other than messages go to
// chats.doc, every history.messages entry becomes one messages row whose body
// is the message object byte for byte as sent, and the legacy messages[]
// list goes to chat_lists. GET splices the pieces back together without
// decoding a message body. Nothing here re-marshals a message through a Go
// struct or map: message bodies are sub-slices of the request.

// ErrInvalid marks input the store refuses (a chat that is not an object, a
// history message that is not an object...). Handlers answer 422 with the
// text after the "invalid input: " prefix.
var ErrInvalid = errors.New("invalid input")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// member is one key/value pair of a JSON object. rawKey is the key as it
// appeared (quotes and escapes included), so re-emitting it keeps its bytes;
// key is its decoded text, used for comparisons.
type member struct {
	key    string
	rawKey []byte
	val    []byte
}

// sanitizeJSON makes stored JSON safe to hand out again. Invalid UTF-8 (which
// encoding/json's validator lets through inside strings) becomes U+FFFD, as
// Go's own decoder would read it; and NUL characters escaped as \u0000 are
// removed from strings, as Open WebUI's sanitize_data_for_db does (a raw NUL
// byte is not valid JSON at all and is refused before this point). Both
// passes only run when needed, so well-formed input is returned as is.
func sanitizeJSON(b []byte) []byte {
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	if !bytes.Contains(b, []byte(`\u0000`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inStr {
			if c == '"' {
				inStr = true
			}
			out = append(out, c)
			continue
		}
		switch c {
		case '"':
			inStr = false
			out = append(out, c)
		case '\\':
			if i+5 < len(b) && string(b[i+1:i+6]) == "u0000" {
				i += 5 // drop the escaped NUL
				continue
			}
			if i+1 < len(b) {
				out = append(out, c, b[i+1])
				i++
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at b[i].
// b must be valid JSON (checked once with json.Valid before scanning).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	i++
	for i < len(b) {
		switch b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		}
		i++
	}
	return i
}

// unquote decodes a JSON string literal (quotes included).
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw[1 : len(raw)-1])
	}
	return s
}

// eachMember calls fn for every member of the valid JSON object b, in order
// (duplicates included). It returns false when b is not an object.
func eachMember(b []byte, fn func(rawKey, val []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = skipString(b, i)
		rawKey := b[ks:i]
		i = skipSpace(b, i)
		i = skipSpace(b, i+1) // ':'
		vs := i
		i = skipValue(b, i)
		fn(rawKey, b[vs:i])
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return true
}

// members returns the members of the valid JSON object b in order of first
// appearance; a duplicated key keeps its first position and its last value
// (what a JSON decoder into a map does, and what Python's json does).
func members(b []byte) ([]member, bool) {
	var out []member
	var index map[string]int
	okObj := eachMember(b, func(rawKey, val []byte) {
		key := unquote(rawKey)
		if index == nil && len(out) >= 8 {
			index = make(map[string]int, 16)
			for j, m := range out {
				index[m.key] = j
			}
		}
		if index != nil {
			if j, dup := index[key]; dup {
				out[j].val = val
				return
			}
			index[key] = len(out)
		} else {
			for j := range out {
				if out[j].key == key {
					out[j].val = val
					return
				}
			}
		}
		out = append(out, member{key: key, rawKey: rawKey, val: val})
	})
	return out, okObj
}

// setMember replaces the value of key, or appends the member.
func setMember(ms []member, key string, val []byte) []member {
	for i := range ms {
		if ms[i].key == key {
			ms[i].val = val
			return ms
		}
	}
	return append(ms, member{key: key, rawKey: appendQuoted(nil, key), val: val})
}

func getMember(ms []member, key string) ([]byte, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

func appendObject(dst []byte, ms []member) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.rawKey...)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string. Unlike encoding/json it does not
// escape <, > and & (valid JSON either way; this keeps stored text as sent).
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// isObject reports whether the valid JSON value b is an object.
func isObject(b []byte) bool {
	i := skipSpace(b, 0)
	return i < len(b) && b[i] == '{'
}

func jsonString(b []byte) (string, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", false
	}
	return unquote(b), true
}

// ChatPatch is a chat object (or part of one) as sent by a client, split the
// way the store keeps it. Build it with ParseChat.
type ChatPatch struct {
	top      []member // top-level members; "history" holds the history object without messages, "messages" null
	history  []member // history members other than messages (nil when history was not sent)
	hasHist  bool
	messages []member // history.messages entries: key = message id, val = body as sent
	hasMsgs  bool
	list     []byte // the legacy messages[] value as sent (nil when absent)
}

// ParseChat splits a chat object. Rules for bad input (each is tested):
//   - not valid JSON, or not an object → ErrInvalid (422);
//   - history present but not an object, or history.messages present but not
//     an object → ErrInvalid; so is any history.messages entry that is not an
//     object (nothing is written: the caller has not started a transaction);
//   - a message's id is its key; a body whose "id" is not a string or differs
//     from the key is stored as is (GET returns what was sent);
//   - parentId that is not a string is stored as is (the parent_id column is
//     NULL); parentId cycles are stored as is — no read path walks the tree;
//   - invalid UTF-8 becomes U+FFFD and escaped NULs are stripped (sanitizeJSON);
//   - duplicate keys: the last value wins, at the first key's position;
//   - the legacy messages[] value is kept as sent whatever its type.
func ParseChat(raw []byte) (*ChatPatch, error) {
	raw = sanitizeJSON(bytes.TrimSpace(raw))
	if !json.Valid(raw) {
		return nil, invalidf("chat must be valid JSON")
	}
	top, isObj := members(raw)
	if !isObj {
		return nil, invalidf("chat must be an object")
	}
	p := &ChatPatch{}
	for _, m := range top {
		switch m.key {
		case "messages":
			// The list itself goes to chat_lists; the document keeps
			// "messages":null where it was, so GET puts it back in place.
			p.list = m.val
			m.val = []byte("null")
		case "history":
			hist, ok := members(m.val)
			if !ok {
				return nil, invalidf("chat.history must be an object")
			}
			p.hasHist = true
			p.history = make([]member, 0, len(hist))
			for _, h := range hist {
				if h.key != "messages" {
					p.history = append(p.history, h)
					continue
				}
				msgs, ok := members(h.val)
				if !ok {
					return nil, invalidf("chat.history.messages must be an object")
				}
				for _, msg := range msgs {
					if !isObject(msg.val) {
						return nil, invalidf("chat.history.messages[%q] must be an object", msg.key)
					}
				}
				p.messages, p.hasMsgs = msgs, true
			}
			m.val = appendObject(nil, p.history)
		}
		p.top = append(p.top, m)
	}
	return p, nil
}

// chatTitle is the title column for a document: its "title" when that is a
// non-empty string, else "New Chat" (Open WebUI: chat.get('title') or 'New Chat').
func chatTitle(doc []member) string {
	if v, ok := getMember(doc, "title"); ok {
		if s, ok := jsonString(v); ok && s != "" {
			return s
		}
	}
	return "New Chat"
}

// mergeDoc applies a patch to a stored document: given top-level keys replace
// stored ones (shallow), history keys other than messages are shallow-merged
// into the stored history (currentId included). Only the small document is
// decoded here, never the messages.
func mergeDoc(stored []byte, p *ChatPatch) []member {
	doc, _ := members(stored)
	for _, m := range p.top {
		if m.key != "history" {
			doc = setMember(doc, m.key, m.val)
			continue
		}
		var hist []member
		if old, ok := getMember(doc, "history"); ok {
			hist, _ = members(old)
		}
		for _, h := range p.history {
			hist = setMember(hist, h.key, h.val)
		}
		doc = setMember(doc, "history", appendObject(nil, hist))
	}
	return doc
}

// msgCols are the columns extracted from a message body.
type msgCols struct {
	parentID  any // string or nil
	role      any // string or nil
	done      any // 0/1 or nil
	timestamp any // int64 or nil
	content   string
	leaf      int
}

// extractMessage reads the searchable and structural fields of a message
// body. Fields of an unexpected type become NULL; nothing here fails.
func extractMessage(body []byte) msgCols {
	c := msgCols{leaf: 1}
	var content []byte
	eachMember(body, func(rawKey, val []byte) {
		switch string(rawKey) { // exact, case-sensitive keys as Open WebUI reads them
		case `"parentId"`:
			c.parentID = nil
			if s, ok := jsonString(val); ok {
				c.parentID = s
			}
		case `"role"`:
			c.role = nil
			if s, ok := jsonString(val); ok {
				c.role = s
			}
		case `"done"`:
			switch string(val) {
			case "true":
				c.done = 1
			case "false":
				c.done = 0
			default:
				c.done = nil
			}
		case `"timestamp"`:
			c.timestamp = jsonInt(val)
		case `"content"`:
			content = val
		case `"childrenIds"`:
			c.leaf = 1
			if len(val) > 0 && val[0] == '[' && skipSpace(val, 1) < len(val) && val[skipSpace(val, 1)] != ']' {
				c.leaf = 0
			}
		}
	})
	c.content = contentText(content)
	return c
}

// jsonInt is the integer value of a JSON number (fractions truncated), or
// nil for anything else or out of range.
func jsonInt(val []byte) any {
	if len(val) == 0 || (val[0] != '-' && (val[0] < '0' || val[0] > '9')) {
		return nil
	}
	if n, err := strconv.ParseInt(string(val), 10, 64); err == nil {
		return n
	}
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil || math.IsNaN(f) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return nil
	}
	return int64(f)
}

// contentText is the searchable text of a message's content: the string
// itself, or the text parts of a list of blocks ({"type":"text","text":...}
// or bare strings) joined by newlines.
func contentText(val []byte) string {
	if len(val) == 0 {
		return ""
	}
	switch val[0] {
	case '"':
		return unquote(val)
	case '[':
		var parts []string
		i := skipSpace(val, 1)
		for i < len(val) && val[i] != ']' {
			end := skipValue(val, i)
			item := val[i:end]
			switch item[0] {
			case '"':
				parts = append(parts, unquote(item))
			case '{':
				var typ, text []byte
				eachMember(item, func(rawKey, v []byte) {
					switch string(rawKey) {
					case `"type"`:
						typ = v
					case `"text"`:
						text = v
					}
				})
				if string(typ) == `"text"` {
					if s, ok := jsonString(text); ok {
						parts = append(parts, s)
					}
				}
			}
			i = skipSpace(val, end)
			if i < len(val) && val[i] == ',' {
				i = skipSpace(val, i+1)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// setStringMember sets key to a JSON string in the object body and returns
// the new object; the other members keep their bytes and order. Used by the
// message-content upsert, which touches exactly one body.
func setStringMember(body []byte, key, value string) []byte {
	ms, _ := members(body)
	ms = setMember(ms, key, appendQuoted(nil, value))
	return appendObject(make([]byte, 0, len(body)+len(value)+16), ms)
}

// AppendJSONString appends s as a JSON string (no HTML escaping), for the
// server's hand-built chat responses.
func AppendJSONString(dst []byte, s string) []byte { return appendQuoted(dst, s) }
