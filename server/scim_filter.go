package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"hearth/store"
)

// SCIM filter and attribute-path parsing (RFC 7644 §3.4.2.2, §3.5.2).
//
// Decision: list filters are compiled to SQL by the store (every value a
// bound parameter, attribute names from a fixed table), not evaluated in Go
// over a page: paging and totalResults must count the filtered set, and
// filtering in Go would need the whole table read for every page. The few
// filters inside PATCH paths (`members[value eq "x"]`) are evaluated in Go
// over one group's members with evalSCIMFilter.
//
// Limits keep a hostile filter cheap: at most scimFilterMaxLen bytes, at most
// scimFilterMaxTerms comparisons and scimFilterMaxDepth nested groups (SQLite
// refuses expressions deeper than 1000, long before Go would care).
const (
	scimFilterMaxLen   = 4096
	scimFilterMaxTerms = 64
	scimFilterMaxDepth = 16
)

type scimTokKind int

const (
	tkEOF scimTokKind = iota
	tkWord
	tkString
	tkLParen
	tkRParen
	tkLBrack
	tkRBrack
)

type scimTok struct {
	kind scimTokKind
	text string // word text, or the decoded string value
	pos  int
}

func scimFilterError(format string, args ...any) error {
	return scimErrorf(http.StatusBadRequest, "invalidFilter", format, args...)
}

// lexSCIM splits a filter into tokens. Strings are JSON strings (RFC 7644
// compValue), so escapes decode exactly as JSON's.
func lexSCIM(s string) ([]scimTok, error) {
	var out []scimTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			out = append(out, scimTok{tkLParen, "(", i})
			i++
		case c == ')':
			out = append(out, scimTok{tkRParen, ")", i})
			i++
		case c == '[':
			out = append(out, scimTok{tkLBrack, "[", i})
			i++
		case c == ']':
			out = append(out, scimTok{tkRBrack, "]", i})
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, scimFilterError("Unterminated string at position %d", i)
			}
			var v string
			if err := json.Unmarshal([]byte(s[i:j+1]), &v); err != nil {
				return nil, scimFilterError("Invalid string at position %d", i)
			}
			out = append(out, scimTok{tkString, v, i})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r()[]\"", rune(s[j])) {
				j++
			}
			out = append(out, scimTok{tkWord, s[i:j], i})
			i = j
		}
	}
	return append(out, scimTok{kind: tkEOF, pos: len(s)}), nil
}

type scimParser struct {
	toks  []scimTok
	i     int
	terms int
	depth int
}

func (p *scimParser) peek() scimTok { return p.toks[p.i] }
func (p *scimParser) next() scimTok {
	t := p.toks[p.i]
	if t.kind != tkEOF {
		p.i++
	}
	return t
}

func (p *scimParser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tkWord && strings.EqualFold(t.text, w)
}

// parseSCIMFilter parses a whole filter.
func parseSCIMFilter(s string) (store.SCIMFilter, error) {
	if len(s) > scimFilterMaxLen {
		return nil, scimFilterError("Filter longer than %d bytes", scimFilterMaxLen)
	}
	toks, err := lexSCIM(s)
	if err != nil {
		return nil, err
	}
	p := &scimParser{toks: toks}
	f, err := p.or("")
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tkEOF {
		return nil, scimFilterError("Unexpected %q at position %d", t.text, t.pos)
	}
	return f, nil
}

// or, and, unary: `or` binds loosest, then `and`, then `not` (RFC 7644
// §3.4.2.2 precedence). prefix is the attribute a [ ] value filter is inside
// ("emails."), so inner attributes become full paths.
func (p *scimParser) or(prefix string) (store.SCIMFilter, error) {
	l, err := p.and(prefix)
	if err != nil {
		return nil, err
	}
	for p.isWord("or") {
		p.next()
		r, err := p.and(prefix)
		if err != nil {
			return nil, err
		}
		l = store.SCIMLogic{Op: "or", Left: l, Right: r}
	}
	return l, nil
}

func (p *scimParser) and(prefix string) (store.SCIMFilter, error) {
	l, err := p.unary(prefix)
	if err != nil {
		return nil, err
	}
	for p.isWord("and") {
		p.next()
		r, err := p.unary(prefix)
		if err != nil {
			return nil, err
		}
		l = store.SCIMLogic{Op: "and", Left: l, Right: r}
	}
	return l, nil
}

func (p *scimParser) enter() error {
	p.depth++
	if p.depth > scimFilterMaxDepth {
		return scimFilterError("Filter nested deeper than %d", scimFilterMaxDepth)
	}
	return nil
}

func (p *scimParser) unary(prefix string) (store.SCIMFilter, error) {
	if p.isWord("not") && p.toks[p.i+1].kind == tkLParen {
		p.next()
		x, err := p.unary(prefix)
		if err != nil {
			return nil, err
		}
		return store.SCIMNot{X: x}, nil
	}
	if p.peek().kind == tkLParen {
		if err := p.enter(); err != nil {
			return nil, err
		}
		p.next()
		f, err := p.or(prefix)
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tkRParen {
			return nil, scimFilterError("Expected ) at position %d", t.pos)
		}
		p.depth--
		return f, nil
	}
	t := p.next()
	if t.kind != tkWord {
		return nil, scimFilterError("Expected an attribute at position %d", t.pos)
	}
	attr, err := scimAttrName(t.text)
	if err != nil {
		return nil, err
	}
	attr = prefix + attr
	if p.peek().kind == tkLBrack { // valuePath: emails[type eq "work"]
		if prefix != "" {
			return nil, scimFilterError("Nested [ ] at position %d", p.peek().pos)
		}
		if err := p.enter(); err != nil {
			return nil, err
		}
		p.next()
		f, err := p.or(attr + ".")
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tkRBrack {
			return nil, scimFilterError("Expected ] at position %d", t.pos)
		}
		p.depth--
		return f, nil
	}
	op := p.next()
	if op.kind != tkWord {
		return nil, scimFilterError("Expected an operator at position %d", op.pos)
	}
	p.terms++
	if p.terms > scimFilterMaxTerms {
		return nil, scimFilterError("Filter has more than %d comparisons", scimFilterMaxTerms)
	}
	switch o := strings.ToLower(op.text); o {
	case "pr":
		return store.SCIMCompare{Attr: attr, Op: o}, nil
	case "eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le":
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		return store.SCIMCompare{Attr: attr, Op: o, Value: v}, nil
	default:
		return nil, scimFilterError("Unknown operator %q at position %d", op.text, op.pos)
	}
}

// value is a compValue: a JSON string, true, false, null or a number.
func (p *scimParser) value() (any, error) {
	t := p.next()
	switch t.kind {
	case tkString:
		return t.text, nil
	case tkWord:
		switch strings.ToLower(t.text) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		if n, err := strconv.ParseFloat(t.text, 64); err == nil {
			return n, nil
		}
	}
	return nil, scimFilterError("Expected a value at position %d", t.pos)
}

// scimAttrName normalizes an attribute path: the schema URN prefix is
// dropped ("urn:ietf:params:scim:schemas:core:2.0:User:userName" is
// "username") and names are lower-cased, as SCIM names are case-insensitive.
func scimAttrName(s string) (string, error) {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" || len(s) > 200 {
		return "", scimFilterError("Invalid attribute name")
	}
	for _, r := range s {
		if !(r == '.' || r == '_' || r == '-' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", scimFilterError("Invalid attribute name %q", s)
		}
	}
	return strings.ToLower(s), nil
}

// scimPath is a PATCH path: attr, an optional value filter and an optional
// sub-attribute after it (`emails[type eq "work"].value`). Attributes inside
// the filter are relative to attr ("value", not "members.value").
type scimPath struct {
	attr   string // lower-case, URN dropped: "members", "name.givenname"
	filter store.SCIMFilter
	sub    string // lower-case sub-attribute after the filter, or ""
}

// parseSCIMPath parses a PATCH operation's path.
func parseSCIMPath(s string) (scimPath, error) {
	bad := func() (scimPath, error) {
		return scimPath{}, scimErrorf(http.StatusBadRequest, "invalidPath", "Invalid path %q", s)
	}
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '[')
	if open < 0 {
		a, err := scimAttrName(s)
		if err != nil {
			return bad()
		}
		return scimPath{attr: a}, nil
	}
	close := strings.LastIndexByte(s, ']')
	if close < open {
		return bad()
	}
	a, err := scimAttrName(s[:open])
	if err != nil {
		return bad()
	}
	f, err := parseSCIMFilter(s[open+1 : close])
	if err != nil {
		return bad()
	}
	p := scimPath{attr: a, filter: f}
	if rest := s[close+1:]; rest != "" {
		if !strings.HasPrefix(rest, ".") {
			return bad()
		}
		if p.sub, err = scimAttrName(rest[1:]); err != nil || strings.Contains(p.sub, ".") {
			return bad()
		}
	}
	return p, nil
}

// evalSCIMFilter evaluates a filter against one value of a multi-valued
// attribute; get returns a sub-attribute's value (string or bool) and
// whether it exists. Strings compare case-insensitively except "value",
// which holds ids.
func evalSCIMFilter(f store.SCIMFilter, get func(attr string) (any, bool)) bool {
	switch f := f.(type) {
	case store.SCIMLogic:
		if f.Op == "or" {
			return evalSCIMFilter(f.Left, get) || evalSCIMFilter(f.Right, get)
		}
		return evalSCIMFilter(f.Left, get) && evalSCIMFilter(f.Right, get)
	case store.SCIMNot:
		return !evalSCIMFilter(f.X, get)
	case store.SCIMCompare:
		v, ok := get(f.Attr)
		if f.Op == "pr" {
			return ok && v != ""
		}
		if !ok {
			return f.Op == "ne" || (f.Op == "eq" && f.Value == nil)
		}
		switch v := v.(type) {
		case bool:
			b, isBool := f.Value.(bool)
			return isBool && ((f.Op == "eq" && v == b) || (f.Op == "ne" && v != b))
		case string:
			want, isStr := f.Value.(string)
			if !isStr {
				return f.Op == "ne"
			}
			if f.Attr != "value" {
				v, want = strings.ToLower(v), strings.ToLower(want)
			}
			switch f.Op {
			case "eq":
				return v == want
			case "ne":
				return v != want
			case "co":
				return strings.Contains(v, want)
			case "sw":
				return strings.HasPrefix(v, want)
			case "ew":
				return strings.HasSuffix(v, want)
			case "gt":
				return v > want
			case "ge":
				return v >= want
			case "lt":
				return v < want
			case "le":
				return v <= want
			}
		}
	}
	return false
}

// filterNames reports whether f compares the attribute named attr.
func filterNames(f store.SCIMFilter, attr string) bool {
	switch f := f.(type) {
	case store.SCIMLogic:
		return filterNames(f.Left, attr) || filterNames(f.Right, attr)
	case store.SCIMNot:
		return filterNames(f.X, attr)
	case store.SCIMCompare:
		return f.Attr == attr
	}
	return false
}
