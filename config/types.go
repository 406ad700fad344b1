package config

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Getenv abstracts the environment so tests and `config explain` can inject it.
// os.LookupEnv satisfies it: config.Load(ctx, os.LookupEnv, st).
type Getenv func(key string) (string, bool)

// Store is what config needs from the database (declared here, implemented by store/).
// Keys are the persistent keys (dotted, Open WebUI style, e.g. "ui.enable_signup"),
// values JSON.
type Store interface {
	LoadConfig(ctx context.Context) (map[string]json.RawMessage, error)
	// SaveConfig upserts exactly these keys in one transaction.
	SaveConfig(ctx context.Context, values map[string]json.RawMessage) error
}

// Source says where a variable's current value came from.
type Source string

const (
	SourceEnv      Source = "env"      // the environment (or one of the variable's aliases)
	SourceDatabase Source = "database" // the persistent config table
	SourceDefault  Source = "default"  // the built-in default
	SourceAdmin    Source = "admin"    // changed at run time and not persisted (lost on restart)
)

// Warning is a non-fatal configuration problem found by Load (an unparsable value that was
// replaced by its default, a stored value that no longer fits its type, ...).
type Warning string

// Kind is the value type of a variable; it decides parsing, validation and the Go type of
// the Config field.
type Kind string

const (
	KindBool        Kind = "bool"         // bool
	KindInt         Kind = "int"          // int, within [Min, Max] (Max 0 = no upper bound)
	KindString      Kind = "string"       // string
	KindEnum        Kind = "enum"         // string, one of Enum (matched case-insensitively)
	KindList        Kind = "list"         // []string, Sep-separated in the environment
	KindJSON        Kind = "json"         // map[string]any (a JSON object)
	KindBanners     Kind = "banners"      // []Banner
	KindOptionalInt Kind = "optional_int" // OptionalInt; empty or negative = unset
	KindPermissions Kind = "permissions"  // Permissions; env from USER_PERMISSIONS_<SECTION>_<NAME>
	KindDuration    Kind = "duration"     // string accepted by ParseDuration (JWT_EXPIRES_IN)
	KindRegex       Kind = "regex"        // string that compiles as a Go (RE2) regexp
)

// Section groups variables. SectionOAuth matters: its persistence is governed by
// ENABLE_OAUTH_PERSISTENT_CONFIG, and all its persistent keys start with "oauth.".
type Section string

const (
	SectionServer        Section = "server"
	SectionGeneral       Section = "general"
	SectionAuth          Section = "auth"
	SectionPermissions   Section = "permissions"
	SectionTrustedHeader Section = "trusted_header"
	SectionSCIM          Section = "scim"
	SectionOAuth         Section = "oauth"
	SectionLimits        Section = "limits"
	SectionConnections   Section = "connections"
	SectionTasks         Section = "tasks"
	SectionRAG           Section = "rag"
)

// Var is the static definition of one configuration variable.
type Var struct {
	Name          string   // environment variable name, also the name used by Set and Value
	Key           string   // persistent key in the config table; "" for env-only variables
	Type          Kind     // value type
	Default       string   // default in environment syntax (parsed like an env value)
	Persistent    bool     // false = env-only: re-read every start, never stored, not settable
	Secret        bool     // redacted in Explain; a store layer should encrypt persistent secrets
	Section       Section  // grouping; SectionOAuth follows ENABLE_OAUTH_PERSISTENT_CONFIG
	RestartNeeded bool     // a change only takes full effect after a restart
	Description   string   // one short line
	Enum          []string // allowed values for KindEnum
	Aliases       []string // older / alternative env names, read when Name is not set
	Sep           string   // list separator for KindList ("," or ";")
	Min, Max      int      // bounds for KindInt; Max 0 = no upper bound
}

// ExplainRow is one line of `config explain`.
type ExplainRow struct {
	Name        string
	Value       string // secrets: "<redacted>" when set, "" when empty
	Source      Source
	Persistent  bool   // static definition: false = env-only
	Stored      bool   // persistence is active for it in this run (false when a flag turned it off)
	Key         string // persistent key or ""
	Section     Section
	Description string
}

// OptionalInt is an integer limit where "empty" means unlimited / not set. It marshals to
// "" when unset (as Open WebUI stores such limits) and to the number when set.
type OptionalInt struct {
	Set bool
	V   int
}

// Limit returns the value and whether it is set.
func (o OptionalInt) Limit() (int, bool) { return o.V, o.Set }

// MarshalJSON writes "" when unset, else the number.
func (o OptionalInt) MarshalJSON() ([]byte, error) {
	if !o.Set {
		return []byte(`""`), nil
	}
	return []byte(strconv.Itoa(o.V)), nil
}

// UnmarshalJSON accepts null, "", a number or a numeric string; negative = unset.
func (o *OptionalInt) UnmarshalJSON(b []byte) error {
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	v, err := toOptionalInt(x)
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// String is the environment form: "" when unset.
func (o OptionalInt) String() string {
	if !o.Set {
		return ""
	}
	return strconv.Itoa(o.V)
}

// Banner is one entry of WEBUI_BANNERS (Open WebUI BannerModel).
type Banner struct {
	ID          string `json:"id"`
	Type        string `json:"type"` // info, success, warning, error
	Title       string `json:"title"`
	Content     string `json:"content"`
	Dismissible bool   `json:"dismissible"`
	Timestamp   int64  `json:"timestamp"`
}

// BannerTypes are the accepted Banner.Type values.
func BannerTypes() []string { return []string{"info", "success", "warning", "error"} }

// VarError is returned by Set for a change that is rejected; Name is the variable.
type VarError struct {
	Name string
	Err  error
}

func (e *VarError) Error() string { return fmt.Sprintf("%s: %v", e.Name, e.Err) }
func (e *VarError) Unwrap() error { return e.Err }
