package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// Grant is one access grant on a resource (COMPAT.md §5.4, Open WebUI's
// access_grant table): a user, a group, or everyone (principal type "user",
// id "*") may read or write it.
type Grant struct {
	ID            string
	ResourceType  string // "model", later "knowledge", "prompt", ...
	ResourceID    string
	PrincipalType string // "user" or "group"
	PrincipalID   string // user id, group id, or "*"
	Permission    string // "read" or "write"
	CreatedAt     int64
}

// Grant principals and permissions.
const (
	PrincipalUser  = "user"
	PrincipalGroup = "group"
	Everyone       = "*"
	PermRead       = "read"
	PermWrite      = "write"
)

// NormalizeGrants keeps the valid grants (principal type user|group,
// permission read|write, non-empty principal id) once per (type, id,
// permission), as Open WebUI's normalize_access_grants does: the first
// position, the last value.
func NormalizeGrants(gs []Grant) []Grant {
	out := make([]Grant, 0, len(gs))
	at := map[[3]string]int{}
	for _, g := range gs {
		if (g.PrincipalType != PrincipalUser && g.PrincipalType != PrincipalGroup) ||
			(g.Permission != PermRead && g.Permission != PermWrite) || g.PrincipalID == "" {
			continue
		}
		k := [3]string{g.PrincipalType, g.PrincipalID, g.Permission}
		if i, dup := at[k]; dup {
			out[i] = g
			continue
		}
		at[k] = len(out)
		out = append(out, g)
	}
	return out
}

// HasAccess reports whether grants give the actor the permission: a grant to
// everyone, to the actor, or to one of the actor's groups. A write grant
// also gives read (Hearth's decision: Open WebUI's UI always pairs them, and
// an editor who cannot see the object makes no sense). Ownership and the
// admin role are the caller's business.
func HasAccess(grants []Grant, a Actor, permission string) bool {
	for _, g := range grants {
		if g.Permission != permission && !(permission == PermRead && g.Permission == PermWrite) {
			continue
		}
		switch g.PrincipalType {
		case PrincipalUser:
			if g.PrincipalID == Everyone || (a.UserID != "" && g.PrincipalID == a.UserID) {
				return true
			}
		case PrincipalGroup:
			for _, id := range a.Groups {
				if id == g.PrincipalID {
					return true
				}
			}
		}
	}
	return false
}

// grantCond is the SQL condition "the actor holds perm on the resource
// whose id is the column idCol", with the named parameters @uid (actor's
// user id) and @groups (JSON array of the actor's group ids). It mirrors
// HasAccess.
func grantCond(resourceType, idCol, perm string) string {
	perms := `'write'`
	if perm == PermRead {
		perms = `'read', 'write'`
	}
	return `EXISTS (SELECT 1 FROM access_grants ag WHERE ag.resource_type = '` + resourceType + `' AND ag.resource_id = ` + idCol + `
		AND ag.permission IN (` + perms + `)
		AND ((ag.principal_type = 'user' AND ag.principal_id IN ('*', @uid))
		  OR (ag.principal_type = 'group' AND ag.principal_id IN (SELECT value FROM json_each(@groups)))))`
}

// actorArgs are the named parameters grantCond needs (plus @role).
func actorArgs(a Actor) []any {
	groups := a.Groups
	if groups == nil {
		groups = []string{}
	}
	b, _ := json.Marshal(groups)
	return []any{sql.Named("uid", a.UserID), sql.Named("groups", string(b)), sql.Named("role", a.Role)}
}

// replaceGrants replaces every grant of a resource, in the caller's
// transaction, and returns what was stored.
func (s *Store) replaceGrants(ctx context.Context, tx *sql.Tx, resourceType, resourceID string, gs []Grant) ([]Grant, error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM access_grants WHERE resource_type = ? AND resource_id = ?`, resourceType, resourceID); err != nil {
		return nil, err
	}
	now := s.now().Unix()
	out := NormalizeGrants(gs)
	for i := range out {
		g := &out[i]
		g.ID, g.ResourceType, g.ResourceID, g.CreatedAt = uuid.NewString(), resourceType, resourceID, now
		if _, err := tx.ExecContext(ctx, `INSERT INTO access_grants (id, resource_type, resource_id, principal_type, principal_id, permission, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, g.ID, resourceType, resourceID, g.PrincipalType, g.PrincipalID, g.Permission, now); err != nil {
			return nil, fmt.Errorf("store grant: %w", err)
		}
	}
	return out, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// grantsOf loads the grants of the given resources (all resources of the
// type when ids is nil), by resource id, oldest first.
func grantsOf(ctx context.Context, q querier, resourceType string, ids []string) (map[string][]Grant, error) {
	query := `SELECT id, resource_type, resource_id, principal_type, principal_id, permission, created_at
		FROM access_grants WHERE resource_type = ?`
	args := []any{resourceType}
	if ids != nil {
		if len(ids) == 0 {
			return map[string][]Grant{}, nil
		}
		b, _ := json.Marshal(ids)
		query += ` AND resource_id IN (SELECT value FROM json_each(?))`
		args = append(args, string(b))
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY created_at, rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]Grant{}
	for rows.Next() {
		var g Grant
		if err := rows.Scan(&g.ID, &g.ResourceType, &g.ResourceID, &g.PrincipalType, &g.PrincipalID, &g.Permission, &g.CreatedAt); err != nil {
			return nil, err
		}
		out[g.ResourceID] = append(out[g.ResourceID], g)
	}
	return out, rows.Err()
}
