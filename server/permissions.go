package server

import (
	"encoding/json"
	"strings"

	"hearth/config"
)

// effectivePermissions is the default tree OR-ed with every group's tree:
// the most permissive grant wins (COMPAT.md §14.3). Group trees may be
// partial or hold junk; only boolean leaves count.
func effectivePermissions(defaults config.Permissions, groups []json.RawMessage) config.Permissions {
	p := defaults.Clone()
	for _, raw := range groups {
		var tree map[string]map[string]any
		if json.Unmarshal(raw, &tree) != nil {
			continue
		}
		for section, leaves := range tree {
			for name, v := range leaves {
				b, isBool := v.(bool)
				if !isBool || !b {
					continue
				}
				if p[section] == nil {
					p[section] = map[string]bool{}
				}
				p[section][name] = true
			}
		}
	}
	return p
}

// permissions is the caller's effective permission tree.
func (s *Server) permissions(id *identity) config.Permissions {
	return effectivePermissions(s.cfg().UserPermissions, id.groupPerms)
}

// defaultPermsJSON caches the encoded default tree per configuration
// snapshot: most callers belong to no group with grants, and encoding the
// nested maps (sorted keys) was a third of an authenticated request.
type defaultPermsJSON struct {
	cfg *config.Config
	b   json.RawMessage
}

// permissionsJSON is the caller's effective permission tree, encoded.
func (s *Server) permissionsJSON(id *identity) json.RawMessage {
	c := s.cfg()
	if len(id.groupPerms) > 0 {
		b, _ := json.Marshal(effectivePermissions(c.UserPermissions, id.groupPerms))
		return b
	}
	if cached := s.permsCache.Load(); cached != nil && cached.cfg == c {
		return cached.b
	}
	b, _ := json.Marshal(c.UserPermissions)
	s.permsCache.Store(&defaultPermsJSON{cfg: c, b: b})
	return b
}

// allowed reports one dotted permission ("features.api_keys") without
// building the whole tree.
func (s *Server) allowed(id *identity, dotted string) bool {
	section, name, _ := strings.Cut(dotted, ".")
	if s.cfg().UserPermissions[section][name] {
		return true
	}
	for _, raw := range id.groupPerms {
		var tree map[string]map[string]any
		if json.Unmarshal(raw, &tree) == nil {
			if b, _ := tree[section][name].(bool); b {
				return true
			}
		}
	}
	return false
}
