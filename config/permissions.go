package config

import (
	"fmt"
	"sort"
	"strings"
)

// Permissions is the default user permission tree (COMPAT §14.3): section -> name -> allowed.
// It is stored as one JSON value under the persistent key "user.permissions".
// A Permissions taken from a published Config must not be modified; use Clone.
type Permissions map[string]map[string]bool

// DefaultPermissions returns a fresh copy of Open WebUI's DEFAULT_USER_PERMISSIONS tree.
func DefaultPermissions() Permissions {
	return Permissions{
		"workspace": {
			"models": false, "knowledge": false, "prompts": false, "tools": false,
			"skills": false, "models_import": false, "models_export": false,
			"prompts_import": false, "prompts_export": false, "tools_import": false,
			"tools_export": false, "skills_import": false, "skills_export": false,
		},
		"sharing": {
			"models": false, "public_models": false, "knowledge": false,
			"public_knowledge": false, "prompts": false, "public_prompts": false,
			"tools": false, "public_tools": false, "skills": false, "public_skills": false,
			"notes": false, "public_notes": false, "folders": false, "public_chats": false,
			"public_calendars": false,
		},
		"access_grants": {"allow_users": true},
		"chat": {
			"controls": true, "valves": true, "system_prompt": true, "params": true,
			"file_upload": true, "web_upload": true, "delete": true, "delete_message": true,
			"continue_response": true, "regenerate_response": true, "rate_response": true,
			"edit": true, "share": true, "export": true, "import": true, "stt": true,
			"tts": true, "call": true, "multiple_models": true, "temporary": true,
			"temporary_enforced": false,
		},
		"features": {
			// Hearth decision: API keys are on by default for every user
			// (Open WebUI ships false; COMPAT.md's decision table turns keys on).
			"api_keys": true, "notes": true, "folders": true, "channels": true,
			"direct_tool_servers": false, "web_search": true, "image_generation": true,
			"code_interpreter": true, "memories": true, "automations": false,
			"calendar": true, "webhooks": false,
		},
		"settings": {"interface": true},
	}
}

// Clone returns a deep copy.
func (p Permissions) Clone() Permissions {
	out := make(Permissions, len(p))
	for sec, leaves := range p {
		m := make(map[string]bool, len(leaves))
		for k, v := range leaves {
			m[k] = v
		}
		out[sec] = m
	}
	return out
}

// Allowed reports the value of a dotted key such as "features.api_keys" (false when absent).
func (p Permissions) Allowed(dotted string) bool {
	sec, name, ok := strings.Cut(dotted, ".")
	if !ok {
		return false
	}
	return p[sec][name]
}

// PermissionEnvName is the env variable that overrides one leaf of the default tree,
// e.g. ("workspace", "models_import") -> USER_PERMISSIONS_WORKSPACE_MODELS_IMPORT.
func PermissionEnvName(section, name string) string {
	return "USER_PERMISSIONS_" + strings.ToUpper(section) + "_" + strings.ToUpper(name)
}

// permissionsFromEnv builds the env-derived tree: defaults with every leaf overridable.
// fromEnv reports whether at least one leaf came from the environment.
func permissionsFromEnv(env Getenv) (p Permissions, fromEnv bool, warns []Warning) {
	p = DefaultPermissions()
	for _, sec := range sortedKeys(p) {
		for _, name := range sortedKeys(p[sec]) {
			envName := PermissionEnvName(sec, name)
			raw, ok := env(envName)
			if !ok || strings.TrimSpace(raw) == "" {
				continue
			}
			b, known := parseBool(raw)
			if !known {
				warns = append(warns, Warning(fmt.Sprintf("%s: %q is not a recognised boolean; treated as false", envName, raw)))
			}
			p[sec][name] = b
			fromEnv = true
		}
	}
	return p, fromEnv, warns
}

// mergePermissions validates a decoded JSON tree and lays it over base (a fresh copy is
// returned; base is not modified). Leaves missing from x keep base's value, so a stored tree
// from an older version gains new permissions with their env/default values. Unknown
// sections and leaves are kept (the UI may know permissions this server does not).
func mergePermissions(base Permissions, x any) (Permissions, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be a JSON object of sections")
	}
	out := base.Clone()
	for _, sec := range sortedKeys(m) {
		leaves, ok := m[sec].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("section %q must be an object of booleans", sec)
		}
		if out[sec] == nil {
			out[sec] = make(map[string]bool, len(leaves))
		}
		for _, name := range sortedKeys(leaves) {
			b, ok := leaves[name].(bool)
			if !ok {
				return nil, fmt.Errorf("%s.%s must be a boolean", sec, name)
			}
			out[sec][name] = b
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
