package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"hearth/store"
)

// SCIM PATCH (RFC 7644 §3.5.2): add, replace and remove, with a path or with
// a value object and no path (the form Entra ID sends). Operations apply in
// order to an in-memory copy of the resource; the handler then writes the
// difference in one store call, so a request fails or applies whole.
//
// Attributes Hearth does not keep (enterprise extension, title, phone
// numbers, ...) are accepted and ignored, as Open WebUI ignores them: a
// provider syncing them must not see every update fail. A path that does
// not parse is 400 invalidPath; a wrong value type is 400 invalidValue.

type scimPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

type scimPatchBody struct {
	Schemas    []string      `json:"schemas"`
	Operations []scimPatchOp `json:"Operations"`
}

func patchKind(op string) (string, error) {
	switch k := strings.ToLower(strings.TrimSpace(op)); k {
	case "add", "replace", "remove":
		return k, nil
	}
	return "", scimErrorf(http.StatusBadRequest, "invalidSyntax", "Unknown PATCH op %q", op)
}

// valueObject decodes a path-less operation's value: an object whose keys
// are attribute paths (possibly dotted, "name.givenName"), in key order so
// the result does not depend on map iteration.
func valueObject(v json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
		return nil, nil, scimErrorf(http.StatusBadRequest, "invalidValue", "An operation without a path needs an object value")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, obj, nil
}

func isNullValue(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

func rawString(v json.RawMessage, attr string) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", scimErrorf(http.StatusBadRequest, "invalidValue", "%s must be a string", attr)
	}
	return s, nil
}

// multiValue reads a multi-valued attribute's value: an array of
// {value, primary}, one such object, or a bare string.
func multiValue(v json.RawMessage, attr string) (string, error) {
	var list []scimMultiValue
	if json.Unmarshal(v, &list) == nil {
		return primaryValue(list), nil
	}
	var one scimMultiValue
	if json.Unmarshal(v, &one) == nil {
		return one.Value, nil
	}
	return rawString(v, attr)
}

func scimRequired(attr string) error {
	return scimErrorf(http.StatusBadRequest, "mutability", "%s is required and cannot be removed", attr)
}

// scimUserState is the part of an account SCIM can change.
type scimUserState struct {
	email, name, photo, externalID string
	active                         bool
}

func newSCIMUserState(u store.User, provider string) *scimUserState {
	st := &scimUserState{email: u.Email, name: u.Name, photo: u.ProfileImageURL, active: u.Active && u.Role != "pending"}
	if id := externalIDOf(u.SCIM, provider); id != nil {
		st.externalID = *id
	}
	return st
}

func (st *scimUserState) setEmail(attr, v string) error {
	if err := checkSCIMEmail(attr, v); err != nil {
		return err
	}
	st.email = strings.ToLower(strings.TrimSpace(v))
	return nil
}

func (st *scimUserState) apply(op scimPatchOp) error {
	kind, err := patchKind(op.Op)
	if err != nil {
		return err
	}
	if strings.TrimSpace(op.Path) == "" {
		if kind == "remove" {
			return scimErrorf(http.StatusBadRequest, "noTarget", "A remove operation needs a path")
		}
		keys, obj, err := valueObject(op.Value)
		if err != nil {
			return err
		}
		for _, k := range keys {
			p, err := parseSCIMPath(k)
			if err != nil {
				return err
			}
			if err := st.set(kind, p.attr, obj[k]); err != nil {
				return err
			}
		}
		return nil
	}
	p, err := parseSCIMPath(op.Path)
	if err != nil {
		return err
	}
	attr := p.attr
	if p.sub != "" {
		attr += "." + p.sub
	}
	// Hearth keeps one address and one picture, so a value filter
	// (emails[type eq "work"]) always selects that one.
	return st.set(kind, attr, op.Value)
}

func (st *scimUserState) set(kind, attr string, v json.RawMessage) error {
	remove := kind == "remove"
	switch attr {
	case "active":
		if remove {
			return scimRequired("active")
		}
		var b scimBool
		if err := json.Unmarshal(v, &b); err != nil {
			return scimErrorf(http.StatusBadRequest, "invalidValue", "active must be a boolean")
		}
		st.active = bool(b)
	case "username", "emails", "emails.value":
		if remove {
			return scimRequired("userName")
		}
		s, err := multiValue(v, attr)
		if err != nil {
			return err
		}
		return st.setEmail(attr, s)
	case "displayname", "name.formatted":
		if remove {
			return scimRequired("displayName")
		}
		s, err := rawString(v, attr)
		if err != nil {
			return err
		}
		if s = strings.TrimSpace(s); s == "" {
			return scimErrorf(http.StatusBadRequest, "invalidValue", "%s cannot be empty", attr)
		}
		st.name = s
	case "name":
		if remove {
			return scimRequired("name")
		}
		var n scimName
		if err := json.Unmarshal(v, &n); err != nil {
			return scimErrorf(http.StatusBadRequest, "invalidValue", "name must be an object")
		}
		if s := nameFrom(nil, &n); s != "" {
			st.name = s
		}
	case "name.givenname", "name.familyname":
		given, family := splitName(st.name)
		s := ""
		if !remove {
			var err error
			if s, err = rawString(v, attr); err != nil {
				return err
			}
		}
		if attr == "name.givenname" {
			given = s
		} else {
			family = s
		}
		name := strings.TrimSpace(strings.TrimSpace(given) + " " + strings.TrimSpace(family))
		if name == "" {
			return scimRequired("name")
		}
		st.name = name
	case "externalid":
		if remove || isNullValue(v) {
			st.externalID = ""
			return nil
		}
		s, err := rawString(v, attr)
		if err != nil {
			return err
		}
		st.externalID = s
	case "photos", "photos.value":
		if remove {
			st.photo = "/user.png"
			return nil
		}
		s, err := multiValue(v, attr)
		if err != nil {
			return err
		}
		if err := checkSCIMPhoto(s); err != nil {
			return err
		}
		st.photo = s
	}
	return nil
}

// scimGroupState is the part of a group SCIM can change; members keep
// their order.
type scimGroupState struct {
	name          string
	members       []string
	externalID    string
	externalIDSet bool
}

func newSCIMGroupState(g store.Group) *scimGroupState {
	return &scimGroupState{name: g.Name, members: append([]string{}, g.MemberIDs...)}
}

func (st *scimGroupState) memberList() []string { return append([]string{}, st.members...) }

// memberValues reads members from an operation value: an array of
// {value}, or one {value} object.
func memberValues(v json.RawMessage) ([]string, error) {
	if isNullValue(v) {
		return nil, nil
	}
	var list []scimMemberRef
	if json.Unmarshal(v, &list) == nil {
		return memberIDs(list), nil
	}
	var one scimMemberRef
	if json.Unmarshal(v, &one) == nil {
		return memberIDs([]scimMemberRef{one}), nil
	}
	return nil, scimErrorf(http.StatusBadRequest, "invalidValue", "members must be a list of {\"value\": id}")
}

func (st *scimGroupState) add(ids []string) {
	have := map[string]bool{}
	for _, m := range st.members {
		have[m] = true
	}
	for _, id := range ids {
		if !have[id] {
			have[id] = true
			st.members = append(st.members, id)
		}
	}
}

func (st *scimGroupState) removeIf(drop func(id string) bool) {
	kept := st.members[:0]
	for _, m := range st.members {
		if !drop(m) {
			kept = append(kept, m)
		}
	}
	st.members = kept
}

func (st *scimGroupState) apply(op scimPatchOp) error {
	kind, err := patchKind(op.Op)
	if err != nil {
		return err
	}
	if strings.TrimSpace(op.Path) == "" {
		if kind == "remove" {
			return scimErrorf(http.StatusBadRequest, "noTarget", "A remove operation needs a path")
		}
		keys, obj, err := valueObject(op.Value)
		if err != nil {
			return err
		}
		for _, k := range keys {
			p, err := parseSCIMPath(k)
			if err != nil {
				return err
			}
			if err := st.set(kind, p, obj[k]); err != nil {
				return err
			}
		}
		return nil
	}
	p, err := parseSCIMPath(op.Path)
	if err != nil {
		return err
	}
	return st.set(kind, p, op.Value)
}

func (st *scimGroupState) set(kind string, p scimPath, v json.RawMessage) error {
	remove := kind == "remove"
	switch p.attr {
	case "displayname":
		if remove {
			return scimRequired("displayName")
		}
		s, err := rawString(v, "displayName")
		if err != nil {
			return err
		}
		if s = strings.TrimSpace(s); s == "" {
			return scimErrorf(http.StatusBadRequest, "invalidValue", "displayName cannot be empty")
		}
		st.name = s
	case "members":
		if p.filter != nil || p.sub != "" {
			if !remove || p.sub != "" {
				return scimErrorf(http.StatusBadRequest, "invalidPath", "A filtered members path supports remove only")
			}
			st.removeIf(func(id string) bool {
				return evalSCIMFilter(p.filter, func(attr string) (any, bool) {
					if attr == "value" {
						return id, true
					}
					return nil, false
				})
			})
			return nil
		}
		ids, err := memberValues(v)
		if err != nil {
			return err
		}
		switch {
		case kind == "add":
			st.add(ids)
		case kind == "replace":
			st.members = nil
			st.add(ids)
		case len(ids) == 0: // remove without a value: every member
			st.members = nil
		default:
			drop := map[string]bool{}
			for _, id := range ids {
				drop[id] = true
			}
			st.removeIf(func(id string) bool { return drop[id] })
		}
	case "externalid":
		st.externalIDSet = true
		if remove || isNullValue(v) {
			st.externalID = ""
			return nil
		}
		s, err := rawString(v, "externalId")
		if err != nil {
			return err
		}
		st.externalID = s
	}
	return nil
}
