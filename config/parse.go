package config

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file turns text from the environment, and JSON values from the store or the admin
// API, into the exact Go type of a variable's Config field. Every converter returns a
// fresh value (never an alias of its input), which is what keeps published snapshots
// immutable.

// parseBool follows Open WebUI: "true", "1", "yes", "on" (any case) are true and everything
// else is false. known is false for text that is not a recognised boolean at all, so Load
// can warn about typos such as "ture" instead of silently switching a feature off.
func parseBool(raw string) (value, known bool) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off", "":
		return false, true
	}
	return false, false
}

// parseEnv parses an environment value for v. On invalid input it returns the reason; the
// caller then falls back to the default. A few kinds (bool) always produce a value and may
// still return a note worth a warning.
func parseEnv(v *Var, raw string) (val any, problem string) {
	s := strings.TrimSpace(raw)
	switch v.Type {
	case KindBool:
		b, known := parseBool(s)
		if !known {
			return false, fmt.Sprintf("%q is not a recognised boolean; treated as false", raw)
		}
		return b, ""
	case KindInt:
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Sprintf("%q is not an integer", raw)
		}
		if err := checkBounds(v, n); err != nil {
			return nil, err.Error()
		}
		return n, ""
	case KindString:
		return raw, "" // kept verbatim: spaces may matter (e.g. OAUTH_SCOPES)
	case KindEnum:
		e, err := toEnum(v, s)
		if err != nil {
			return nil, err.Error()
		}
		return e, ""
	case KindList:
		return splitList(s, v.Sep), ""
	case KindJSON:
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, "invalid JSON: " + err.Error()
		}
		m, ok := x.(map[string]any)
		if !ok {
			return nil, "must be a JSON object"
		}
		return m, ""
	case KindBanners:
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, "invalid JSON: " + err.Error()
		}
		b, err := toBanners(x)
		if err != nil {
			return nil, err.Error()
		}
		return b, ""
	case KindOptionalInt:
		o, err := toOptionalInt(s)
		if err != nil {
			return nil, err.Error()
		}
		return o, ""
	case KindDuration:
		if _, _, err := ParseDuration(s); err != nil {
			return nil, err.Error()
		}
		return s, ""
	case KindRegex:
		if _, err := regexp.Compile(raw); err != nil {
			return nil, "not a valid Go (RE2) regular expression: " + err.Error()
		}
		return raw, ""
	}
	return nil, "unsupported type " + string(v.Type)
}

// fromJSON converts a decoded JSON value (from Set or from the store) for v. base is the
// env-derived value, used by permissions to fill leaves the input leaves out. admin selects
// the stricter admin-endpoint rules (JWT_EXPIRES_IN single pair).
func fromJSON(v *Var, x any, base any, admin bool) (any, error) {
	switch v.Type {
	case KindBool:
		switch t := x.(type) {
		case bool:
			return t, nil
		case string:
			// Unlike the environment, an admin edit must be unambiguous.
			if strings.TrimSpace(t) != "" {
				if b, known := parseBool(t); known {
					return b, nil
				}
			}
		}
		return nil, fmt.Errorf("boolean expected, got %s", describe(x))
	case KindInt:
		n, err := toInt(x)
		if err != nil {
			return nil, err
		}
		if err := checkBounds(v, n); err != nil {
			return nil, err
		}
		return n, nil
	case KindString:
		switch t := x.(type) {
		case nil:
			return "", nil
		case string:
			return t, nil
		}
		return nil, fmt.Errorf("string expected, got %s", describe(x))
	case KindEnum:
		switch t := x.(type) {
		case string:
			return toEnum(v, t)
		case bool: // DEFAULT_GROUP_SHARE_PERMISSION and friends: true/false are enum members
			return toEnum(v, strconv.FormatBool(t))
		}
		return nil, fmt.Errorf("one of %s expected, got %s", strings.Join(v.Enum, ", "), describe(x))
	case KindList:
		switch t := x.(type) {
		case nil:
			return []string{}, nil
		case string:
			return splitList(t, v.Sep), nil
		case []any:
			out := make([]string, 0, len(t))
			for i, e := range t {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("item %d: string expected, got %s", i, describe(e))
				}
				out = append(out, s)
			}
			return out, nil
		}
		return nil, fmt.Errorf("list of strings expected, got %s", describe(x))
	case KindJSON:
		switch t := x.(type) {
		case nil:
			return map[string]any{}, nil
		case map[string]any:
			return t, nil
		case string:
			var y any
			if err := json.Unmarshal([]byte(t), &y); err == nil {
				if m, ok := y.(map[string]any); ok {
					return m, nil
				}
			}
		}
		return nil, fmt.Errorf("JSON object expected, got %s", describe(x))
	case KindBanners:
		if s, ok := x.(string); ok {
			var y any
			if err := json.Unmarshal([]byte(s), &y); err != nil {
				return nil, fmt.Errorf("invalid JSON: %v", err)
			}
			x = y
		}
		return toBanners(x)
	case KindOptionalInt:
		return toOptionalInt(x)
	case KindPermissions:
		b, _ := base.(Permissions)
		if b == nil {
			b = DefaultPermissions()
		}
		return mergePermissions(b, x)
	case KindDuration:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("duration string expected, got %s", describe(x))
		}
		s = strings.TrimSpace(s)
		check := func(s string) error { _, _, err := ParseDuration(s); return err }
		if admin {
			check = validAdminJWTExpiry
		}
		if err := check(s); err != nil {
			return nil, err
		}
		return s, nil
	case KindRegex:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("string expected, got %s", describe(x))
		}
		if _, err := regexp.Compile(s); err != nil {
			return nil, fmt.Errorf("not a valid Go (RE2) regular expression: %v", err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("unsupported type %s", v.Type)
}

// normalizeJSON turns any Go value into its decoded-JSON form (bool, float64, string, []any,
// map[string]any, nil). It also deep-copies, so a caller that keeps mutating the map it
// passed to Set cannot reach into a published snapshot.
func normalizeJSON(x any) (any, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func checkBounds(v *Var, n int) error {
	if n < v.Min {
		return fmt.Errorf("%d is below the minimum %d", n, v.Min)
	}
	if v.Max != 0 && n > v.Max {
		return fmt.Errorf("%d is above the maximum %d", n, v.Max)
	}
	return nil
}

func toEnum(v *Var, s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(v.Enum, s) {
		return s, nil
	}
	return "", fmt.Errorf("%q is not one of %s", s, strings.Join(v.Enum, ", "))
}

// toInt accepts a JSON number that is a whole number, or a string holding an integer.
func toInt(x any) (int, error) {
	switch t := x.(type) {
	case float64:
		if t != math.Trunc(t) || t < math.MinInt64 || t >= math.MaxInt64 {
			return 0, fmt.Errorf("integer expected, got %v", t)
		}
		return int(t), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return 0, fmt.Errorf("integer expected, got %q", t)
		}
		return n, nil
	}
	return 0, fmt.Errorf("integer expected, got %s", describe(x))
}

// toOptionalInt: nil or "" = unset; a negative number = unset (SPEC §8 "empty or negative
// means no limit"); otherwise the number.
func toOptionalInt(x any) (OptionalInt, error) {
	if x == nil {
		return OptionalInt{}, nil
	}
	if s, ok := x.(string); ok && strings.TrimSpace(s) == "" {
		return OptionalInt{}, nil
	}
	n, err := toInt(x)
	if err != nil {
		return OptionalInt{}, fmt.Errorf("empty or an integer expected: %v", err)
	}
	if n < 0 {
		return OptionalInt{}, nil
	}
	return OptionalInt{Set: true, V: n}, nil
}

// splitList splits an env-style list. ";" lists are positional (OPENAI_API_KEYS[i] belongs
// to OPENAI_API_BASE_URLS[i]) so empty entries are kept; "," lists drop empty entries.
func splitList(s, sep string) []string {
	out := []string{}
	if strings.TrimSpace(s) == "" {
		return out
	}
	for _, part := range strings.Split(s, sep) {
		part = strings.TrimSpace(part)
		if part == "" && sep != ";" {
			continue
		}
		out = append(out, part)
	}
	return out
}

// toBanners validates a decoded JSON list of banners. id, type and content are required;
// title, dismissible and timestamp are optional but must have the right type when present.
// Unknown fields are ignored.
func toBanners(x any) ([]Banner, error) {
	if x == nil {
		return []Banner{}, nil
	}
	list, ok := x.([]any)
	if !ok {
		return nil, fmt.Errorf("JSON list of banners expected, got %s", describe(x))
	}
	out := make([]Banner, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("banner %d: object expected, got %s", i, describe(e))
		}
		var b Banner
		var err error
		if b.ID, err = bannerString(m, "id", true); err != nil {
			return nil, fmt.Errorf("banner %d: %w", i, err)
		}
		if b.Type, err = bannerString(m, "type", true); err != nil {
			return nil, fmt.Errorf("banner %d: %w", i, err)
		}
		if !slices.Contains(BannerTypes(), b.Type) {
			return nil, fmt.Errorf("banner %d: type %q is not one of %s", i, b.Type, strings.Join(BannerTypes(), ", "))
		}
		if b.Title, err = bannerString(m, "title", false); err != nil {
			return nil, fmt.Errorf("banner %d: %w", i, err)
		}
		if b.Content, err = bannerString(m, "content", true); err != nil {
			return nil, fmt.Errorf("banner %d: %w", i, err)
		}
		switch d := m["dismissible"].(type) {
		case nil:
		case bool:
			b.Dismissible = d
		default:
			return nil, fmt.Errorf("banner %d: dismissible must be a boolean", i)
		}
		if ts, present := m["timestamp"]; present && ts != nil {
			n, err := toInt(ts)
			if _, isString := ts.(string); err != nil || isString {
				return nil, fmt.Errorf("banner %d: timestamp must be an integer", i)
			}
			b.Timestamp = int64(n)
		}
		out = append(out, b)
	}
	return out, nil
}

func bannerString(m map[string]any, field string, required bool) (string, error) {
	switch t := m[field].(type) {
	case string:
		return t, nil
	case nil:
		if !required {
			return "", nil
		}
		return "", fmt.Errorf("%s is required", field)
	}
	return "", fmt.Errorf("%s must be a string", field)
}

func describe(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return reflect.TypeOf(x).String()
}
