package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Object is a JSON object kept as its members, in order, each value as compact raw JSON.
//
// It is how this package holds a request it must forward without knowing all of it: the
// chat pipeline consumes a few fields of a chat-completions request and passes every other
// field to the provider untouched (COMPAT §4.1), so the request is not decoded into a struct
// that would drop what it does not name. Typed views (ChatRequest.Messages, Object.Decode)
// decode single members on demand.
//
// Keys are unique: parsing keeps the first position of a repeated key and the last value
// (what Python's json.loads and most JSON parsers do). Lookups are linear, which is the
// fastest choice for the 5-40 members a request has.
type Object struct {
	members []Member
}

// Member is one key and its raw, compact JSON value.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ParseObject parses data, which must be exactly one JSON object.
func ParseObject(data []byte) (Object, error) {
	var o Object
	if !json.Valid(data) {
		return o, errors.New("llm: invalid JSON")
	}
	err := o.UnmarshalJSON(data)
	return o, err
}

// UnmarshalJSON implements json.Unmarshaler. JSON null leaves the object empty.
func (o *Object) UnmarshalJSON(data []byte) error {
	o.members = o.members[:0]
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("llm: JSON value is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("llm: bad object key")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		o.Set(key, compactRaw(raw))
	}
	_, err = dec.Token()
	return err
}

// compactRaw returns raw without insignificant whitespace (so a value can go on an SSE
// data line); raw is reused when it is already compact.
func compactRaw(raw []byte) json.RawMessage {
	if !needsCompact(raw) {
		return raw
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

func needsCompact(raw []byte) bool {
	inStr, esc := false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case inStr:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\n' || c == '\r' || c == '\t':
			return true
		}
	}
	return false
}

// MarshalJSON implements json.Marshaler.
func (o Object) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }

// AppendJSON appends the object as compact JSON (members in order) to dst.
func (o Object) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	for i, m := range o.members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, m.Key)
		dst = append(dst, ':')
		if len(m.Value) == 0 {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, m.Value...)
		}
	}
	return append(dst, '}')
}

// IsZero reports whether the object has no members (used by `omitzero`).
func (o Object) IsZero() bool { return len(o.members) == 0 }

// Len is the number of members.
func (o Object) Len() int { return len(o.members) }

// Members returns the members in order. The slice is the object's own: do not modify it.
func (o Object) Members() []Member { return o.members }

// Keys returns the member keys in order.
func (o Object) Keys() []string {
	keys := make([]string, len(o.members))
	for i, m := range o.members {
		keys[i] = m.Key
	}
	return keys
}

// Has reports whether key is present (with any value, null included).
func (o Object) Has(key string) bool { return o.index(key) >= 0 }

// Get returns the raw value of key, or nil when absent.
func (o Object) Get(key string) json.RawMessage {
	if i := o.index(key); i >= 0 {
		return o.members[i].Value
	}
	return nil
}

// Set sets key to the raw JSON value, in place when present, else appended.
// value must be valid JSON; nil means null.
func (o *Object) Set(key string, value json.RawMessage) {
	if value == nil {
		value = json.RawMessage("null")
	}
	if i := o.index(key); i >= 0 {
		o.members[i].Value = value
		return
	}
	o.members = append(o.members, Member{Key: key, Value: value})
}

// SetValue marshals v and sets it under key.
func (o *Object) SetValue(key string, v any) error {
	raw, err := marshalCompact(v)
	if err != nil {
		return err
	}
	o.Set(key, raw)
	return nil
}

// SetString sets key to a JSON string.
func (o *Object) SetString(key, s string) { o.Set(key, appendString(nil, s)) }

// SetInt sets key to a JSON integer.
func (o *Object) SetInt(key string, n int64) { o.Set(key, strconv.AppendInt(nil, n, 10)) }

// SetBool sets key to a JSON boolean.
func (o *Object) SetBool(key string, b bool) { o.Set(key, strconv.AppendBool(nil, b)) }

// Delete removes key and returns its value (nil when absent).
func (o *Object) Delete(key string) json.RawMessage {
	i := o.index(key)
	if i < 0 {
		return nil
	}
	v := o.members[i].Value
	o.members = append(o.members[:i], o.members[i+1:]...)
	return v
}

// Clone returns a copy whose member list can be changed independently (values are
// shared; they are never modified in place).
func (o Object) Clone() Object {
	return Object{members: append([]Member(nil), o.members...)}
}

// Decode unmarshals the value of key into v. An absent key leaves v unchanged and
// returns nil.
func (o Object) Decode(key string, v any) error {
	raw := o.Get(key)
	if raw == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// GetString returns the value of key when it is a JSON string.
func (o Object) GetString(key string) (string, bool) {
	raw := o.Get(key)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// GetBool returns the value of key when it is a JSON boolean.
func (o Object) GetBool(key string) (value, ok bool) {
	switch string(o.Get(key)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// GetInt returns the value of key when it is a JSON number with an integral value.
func (o Object) GetInt(key string) (int64, bool) {
	raw := o.Get(key)
	if len(raw) == 0 {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// Truthy reports whether the value of key is what Python would call true: present,
// not null, false, 0, "", [] or {}. Upstream code tests request fields this way.
func (o Object) Truthy(key string) bool { return truthy(o.Get(key)) }

func truthy(raw json.RawMessage) bool {
	switch s := string(raw); s {
	case "", "null", "false", `""`, "[]", "{}":
		return false
	default:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f != 0
		}
		return true
	}
}

func (o Object) index(key string) int {
	for i := range o.members {
		if o.members[i].Key == key {
			return i
		}
	}
	return -1
}

// marshalCompact marshals v without HTML escaping (the wire formats here are not HTML).
func marshalCompact(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case json.RawMessage:
		return x, nil
	case Object:
		return x.AppendJSON(nil), nil
	case *Object:
		return x.AppendJSON(nil), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := b.Bytes()
	return out[:len(out)-1], nil // Encode appends a newline
}

// Int is an integer that decodes leniently: from a JSON integer, a float (truncated), a
// numeric string or null (0). Providers disagree on number types (a Python server may send
// "created": 1.7e9), and one odd field must not make a whole chunk unreadable.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) > 1 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = Int(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("llm: not a number: %.40s", b)
	}
	*n = Int(f)
	return nil
}
