package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Errors wrapped in the VarError values returned by Set.
var (
	ErrUnknownVar = errors.New("unknown configuration variable")
	ErrEnvOnly    = errors.New("env-only variable: set it in the environment and restart")
	ErrInvalid    = errors.New("invalid value")
)

// Settings is the live configuration. Readers get an immutable snapshot through Get
// (lock-free atomic load); writers copy the current snapshot, modify the copy and swap it
// in, serialised by mu. The store write happens under mu before the swap, so memory and
// database never disagree about the order of edits.
type Settings struct {
	mu   sync.Mutex // serialises Set
	snap atomic.Pointer[snapshot]

	st           Store
	defs         []Var          // definitions(), never modified
	byName       map[string]int // var name -> index in defs
	field        map[string]int // var name -> Config field index
	persistAll   bool           // ENABLE_PERSISTENT_CONFIG and a store is present
	persistOAuth bool           // ENABLE_OAUTH_PERSISTENT_CONFIG
	envValues    map[string]any // env/default value per var (base for permission merges)
}

// snapshot pairs a Config with the source of each of its values so Explain is consistent.
type snapshot struct {
	cfg *Config
	src map[string]Source
}

// Load parses every variable from env (typed, defaults), then applies the persistent
// overlay (SPEC §1 rules 1-6):
//   - ENABLE_PERSISTENT_CONFIG (env only, default true) true: keys missing in the store are
//     seeded with the env/default value (one SaveConfig, only the missing keys); keys present
//     in the store win over env.
//   - ENABLE_PERSISTENT_CONFIG false: the store is ignored entirely (not read, not written);
//     env always wins.
//   - ENABLE_OAUTH_PERSISTENT_CONFIG (env only, default true) false: every oauth-section
//     variable behaves as env-only (never seeded, never read from the store, admin edits in
//     memory only).
//   - env-only variables are re-read every start and never stored.
//
// A stored value that no longer parses for its type is ignored with a Warning. st may be nil
// (no database, e.g. a dry `config explain`): then nothing is read or written.
func Load(ctx context.Context, env Getenv, st Store) (*Settings, []Warning, error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	s, err := newSettings(st)
	if err != nil {
		return nil, nil, err
	}
	cfg := new(Config)
	src := make(map[string]Source, len(s.defs))
	var warns []Warning

	for i := range s.defs {
		d := &s.defs[i]
		val, source, w := readEnv(d, env)
		warns = append(warns, w...)
		s.setField(cfg, d.Name, val)
		src[d.Name] = source
		s.envValues[d.Name] = val
	}

	s.persistAll = cfg.EnablePersistentConfig && st != nil
	s.persistOAuth = cfg.EnableOAuthPersistentConfig

	if s.persistAll {
		stored, err := st.LoadConfig(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("config: load stored settings: %w", err)
		}
		seed := make(map[string]json.RawMessage)
		for i := range s.defs {
			d := &s.defs[i]
			if !s.persisted(d) {
				continue
			}
			raw, ok := stored[d.Key]
			if !ok {
				b, err := json.Marshal(s.getField(cfg, d.Name))
				if err != nil {
					return nil, nil, fmt.Errorf("config: encode %s: %w", d.Name, err)
				}
				seed[d.Key] = b
				continue
			}
			val, err := decodeStored(d, raw, s.envValues[d.Name])
			if err != nil {
				// Keep the row: an admin may still fix it, and overwriting would lose it.
				warns = append(warns, Warning(fmt.Sprintf("%s: stored value for %q ignored (%v); using the %s value", d.Name, d.Key, err, src[d.Name])))
				continue
			}
			s.setField(cfg, d.Name, val)
			src[d.Name] = SourceDatabase
		}
		if len(seed) > 0 {
			if err := st.SaveConfig(ctx, seed); err != nil {
				return nil, nil, fmt.Errorf("config: seed settings: %w", err)
			}
		}
	}

	warns = append(warns, startupWarnings(cfg)...)
	s.snap.Store(&snapshot{cfg: cfg, src: src})
	return s, warns, nil
}

// newSettings binds the definition table to Config's fields. A mismatch is a programming
// error in this package (the tests catch it); it is returned rather than panicking.
func newSettings(st Store) (*Settings, error) {
	s := &Settings{
		st:        st,
		defs:      definitions(),
		byName:    make(map[string]int),
		field:     make(map[string]int),
		envValues: make(map[string]any),
	}
	t := reflect.TypeFor[Config]()
	tags := make(map[string]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		if name := t.Field(i).Tag.Get("env"); name != "" {
			tags[name] = i
		}
	}
	for i, d := range s.defs {
		fi, ok := tags[d.Name]
		if !ok {
			return nil, fmt.Errorf("config: no Config field tagged env:%q", d.Name)
		}
		if want, got := goType(d.Type), t.Field(fi).Type; want != got {
			return nil, fmt.Errorf("config: field %s is %v, %s needs %v", t.Field(fi).Name, got, d.Name, want)
		}
		s.byName[d.Name] = i
		s.field[d.Name] = fi
	}
	if len(tags) != len(s.defs) {
		return nil, fmt.Errorf("config: %d tagged fields but %d variables", len(tags), len(s.defs))
	}
	return s, nil
}

// goType is the Config field type for each Kind.
func goType(k Kind) reflect.Type {
	switch k {
	case KindBool:
		return reflect.TypeFor[bool]()
	case KindInt:
		return reflect.TypeFor[int]()
	case KindString, KindEnum, KindDuration, KindRegex:
		return reflect.TypeFor[string]()
	case KindList:
		return reflect.TypeFor[[]string]()
	case KindJSON:
		return reflect.TypeFor[map[string]any]()
	case KindBanners:
		return reflect.TypeFor[[]Banner]()
	case KindOptionalInt:
		return reflect.TypeFor[OptionalInt]()
	case KindPermissions:
		return reflect.TypeFor[Permissions]()
	}
	return nil
}

// readEnv resolves one variable from the environment: its name first, then its aliases.
// An empty value counts as "not set", except for non-secret strings, where "" is a real
// value (OAUTH_PICTURE_CLAIM="" disables picture updates).
func readEnv(d *Var, env Getenv) (any, Source, []Warning) {
	if d.Type == KindPermissions {
		p, fromEnv, warns := permissionsFromEnv(env)
		if fromEnv {
			return p, SourceEnv, warns
		}
		return p, SourceDefault, warns
	}
	def := defaultValue(d)
	for _, name := range append([]string{d.Name}, d.Aliases...) {
		raw, ok := env(name)
		if !ok || (raw == "" && (d.Type != KindString || d.Secret)) {
			continue
		}
		val, problem := parseEnv(d, raw)
		if problem != "" {
			w := Warning(fmt.Sprintf("%s: %s", name, problem))
			if val == nil {
				w = Warning(fmt.Sprintf("%s: %s; using the default %q", name, problem, d.Default))
				return def, SourceDefault, []Warning{w}
			}
			return val, SourceEnv, []Warning{w}
		}
		return val, SourceEnv, nil
	}
	return def, SourceDefault, nil
}

// defaultValue parses the Default text; every default parses (tested).
func defaultValue(d *Var) any {
	if d.Type == KindPermissions {
		return DefaultPermissions()
	}
	val, _ := parseEnv(d, d.Default)
	return val
}

// decodeStored converts one stored JSON value, using the storage (lenient) rules.
func decodeStored(d *Var, raw json.RawMessage, base any) (any, error) {
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return fromJSON(d, x, base, false)
}

// startupWarnings flags setups that start but will not work as the admin expects.
func startupWarnings(c *Config) []Warning {
	var w []Warning
	if c.SCIMEnabled && c.SCIMToken == "" {
		w = append(w, "SCIM_ENABLED is true but SCIM_TOKEN is empty: every SCIM request will get 401")
	}
	if c.SCIMEnabled && c.SCIMAuthProvider == "" {
		w = append(w, "SCIM_ENABLED is true but SCIM_AUTH_PROVIDER is empty: operations with externalId will fail")
	}
	return w
}

// persisted reports whether d is read from and written to the store in this run.
func (s *Settings) persisted(d *Var) bool {
	if !d.Persistent || !s.persistAll {
		return false
	}
	return d.Section != SectionOAuth || s.persistOAuth
}

func (s *Settings) setField(c *Config, name string, val any) {
	reflect.ValueOf(c).Elem().Field(s.field[name]).Set(reflect.ValueOf(val))
}

func (s *Settings) getField(c *Config, name string) any {
	return reflect.ValueOf(c).Elem().Field(s.field[name]).Interface()
}

// Get returns the current snapshot. It is cheap and lock-free; call it once per request
// and read fields from the returned value. Never modify it.
func (s *Settings) Get() *Config { return s.snap.Load().cfg }

// Set applies admin edits given by env variable name, values as decoded JSON (bool,
// float64, string, []any, map[string]any, nil); other Go values are accepted if they
// marshal to such JSON. Strings are accepted for ints and bools.
//
// Every value is validated first; if any is invalid (or names an unknown or env-only
// variable) Set returns the VarErrors joined and changes nothing. Variables whose
// persistence is on are written with one SaveConfig; if that fails nothing changes either.
// Then the new snapshot is published. Values not persisted get Source "admin".
func (s *Settings) Set(ctx context.Context, changes map[string]any) error {
	if len(changes) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	names := sortedKeys(changes)
	vals := make(map[string]any, len(changes))
	var errs []error
	for _, name := range names {
		val, err := s.validate(name, changes[name])
		if err != nil {
			errs = append(errs, &VarError{Name: name, Err: err})
			continue
		}
		vals[name] = val
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}

	cur := s.snap.Load()
	next := *cur.cfg // shallow copy: reference fields are replaced, never modified
	for _, name := range names {
		s.setField(&next, name, vals[name])
	}
	if _, touched := vals["ENABLE_OAUTH_SIGNUP"]; touched {
		if err := next.Validate(); err != nil {
			return &VarError{Name: "ENABLE_OAUTH_SIGNUP", Err: fmt.Errorf("%w: %v", ErrInvalid, err)}
		}
	}

	src := make(map[string]Source, len(cur.src))
	for k, v := range cur.src {
		src[k] = v
	}
	save := make(map[string]json.RawMessage)
	for _, name := range names {
		d := &s.defs[s.byName[name]]
		if !s.persisted(d) {
			src[name] = SourceAdmin
			continue
		}
		b, err := json.Marshal(vals[name])
		if err != nil {
			return &VarError{Name: name, Err: fmt.Errorf("%w: %v", ErrInvalid, err)}
		}
		save[d.Key] = b
		src[name] = SourceDatabase
	}
	if len(save) > 0 {
		if err := s.st.SaveConfig(ctx, save); err != nil {
			return fmt.Errorf("config: save settings: %w", err)
		}
	}
	s.snap.Store(&snapshot{cfg: &next, src: src})
	return nil
}

// validate converts one admin edit to its field value without touching any state.
func (s *Settings) validate(name string, x any) (any, error) {
	i, ok := s.byName[name]
	if !ok {
		return nil, ErrUnknownVar
	}
	d := &s.defs[i]
	if !d.Persistent {
		return nil, ErrEnvOnly
	}
	norm, err := normalizeJSON(x)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	val, err := fromJSON(d, norm, s.envValues[name], true)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return val, nil
}

// Value returns a variable's current value by env name as a JSON-able Go value (a copy),
// for admin GET endpoints. Secrets are NOT redacted here.
func (s *Settings) Value(name string) (any, bool) {
	if _, ok := s.byName[name]; !ok {
		return nil, false
	}
	return copyValue(s.getField(s.Get(), name)), true
}

// Source returns where a variable's current value came from.
func (s *Settings) Source(name string) (Source, bool) {
	src, ok := s.snap.Load().src[name]
	return src, ok
}

// Persisted reports whether name is read from and written to the store in this run
// (false for env-only variables and when a persistence flag is off).
func (s *Settings) Persisted(name string) bool {
	i, ok := s.byName[name]
	return ok && s.persisted(&s.defs[i])
}

// Explain lists every variable in table order, with secrets redacted.
func (s *Settings) Explain() []ExplainRow {
	snap := s.snap.Load()
	rows := make([]ExplainRow, 0, len(s.defs))
	for i := range s.defs {
		d := &s.defs[i]
		rows = append(rows, ExplainRow{
			Name:        d.Name,
			Value:       explainValue(d, s.getField(snap.cfg, d.Name)),
			Source:      snap.src[d.Name],
			Persistent:  d.Persistent,
			Stored:      s.persisted(d),
			Key:         d.Key,
			Section:     d.Section,
			Description: d.Description,
		})
	}
	return rows
}

// explainValue renders a value in environment syntax.
func explainValue(d *Var, val any) string {
	var out string
	switch t := val.(type) {
	case bool:
		out = strconv.FormatBool(t)
	case int:
		out = strconv.Itoa(t)
	case string:
		out = t
	case []string:
		if len(t) > 0 {
			out = strings.Join(t, d.Sep)
			if strings.Trim(out, d.Sep) == "" && d.Secret {
				out = "" // only empty keys: nothing to hide
			}
		}
	case OptionalInt:
		out = t.String()
	default:
		b, err := json.Marshal(t)
		if err != nil {
			out = "<unprintable>"
		} else {
			out = string(b)
		}
	}
	if d.Secret && out != "" {
		return "<redacted>"
	}
	return out
}

// copyValue deep-copies the reference types a Config holds.
func copyValue(val any) any {
	switch t := val.(type) {
	case []string:
		return append([]string{}, t...)
	case []Banner:
		return append([]Banner{}, t...)
	case Permissions:
		return t.Clone()
	case map[string]any:
		c, err := normalizeJSON(t)
		if err != nil {
			return map[string]any{}
		}
		return c
	}
	return val
}

// WithOverrides returns a Getenv that answers from over first, then from env. main uses it
// to feed a generated WEBUI_SECRET_KEY (DATA_DIR/secret_key) into Load, so the encryption
// keys that default to it follow.
func WithOverrides(env Getenv, over map[string]string) Getenv {
	o := make(map[string]string, len(over))
	for k, v := range over {
		o[k] = v
	}
	return func(key string) (string, bool) {
		if v, ok := o[key]; ok {
			return v, true
		}
		if env == nil {
			return "", false
		}
		return env(key)
	}
}
