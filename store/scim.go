package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// SCIM provisioning (SPEC.md §4 "Provisioning (SCIM)"). The identity provider
// acts through an admin Actor built by the server; every query here still
// takes that Actor and matches nothing for anyone who is not an admin, like
// the rest of the admin surface.

// ErrExternalIDTaken is returned when another user or group already holds an
// externalId under the same provider. It is an ErrConflict.
var ErrExternalIDTaken = fmt.Errorf("externalId in use: %w", ErrConflict)

// ErrInvalidFilter marks a SCIM filter the store cannot compile: an unknown
// attribute, or an operator or value that does not fit the attribute's type.
var ErrInvalidFilter = errors.New("invalid filter")

// SCIMFilter is a parsed SCIM filter expression (RFC 7644 §3.4.2.2): a
// SCIMCompare, SCIMLogic or SCIMNot. The server parses; the store compiles it
// to SQL with every value bound as a parameter.
type SCIMFilter interface{ isSCIMFilter() }

// SCIMCompare is `attr op value`. Attr is the lower-cased attribute path
// ("username", "name.givenname", "emails.value"); Op is one of eq ne co sw ew
// pr gt ge lt le; Value is a string, bool, float64 or nil (JSON null), unused
// for pr.
type SCIMCompare struct {
	Attr  string
	Op    string
	Value any
}

// SCIMLogic is `left and right` or `left or right`.
type SCIMLogic struct {
	Op          string // "and" or "or"
	Left, Right SCIMFilter
}

// SCIMNot is `not (x)`.
type SCIMNot struct{ X SCIMFilter }

func (SCIMCompare) isSCIMFilter() {}
func (SCIMLogic) isSCIMFilter()   {}
func (SCIMNot) isSCIMFilter()     {}

// SCIMQuery selects a page of users or groups.
type SCIMQuery struct {
	Filter   SCIMFilter // nil: everything
	Provider string     // SCIM_AUTH_PROVIDER: where externalId lives
	Offset   int
	Limit    int
}

type attrKind int

const (
	kindString attrKind = iota
	kindBool
	kindTime
)

// scimAttr is how one SCIM attribute maps onto SQL. expr is a fixed SQL
// expression from the tables below (never caller text); args are its bound
// parameters. exists, when set, wraps the comparison: the attribute is
// multi-valued and the filter matches when any value matches.
type scimAttr struct {
	expr      string
	args      []any
	kind      attrKind
	caseExact bool
	exists    string // "EXISTS (... AND %s)"
}

// Display names are one column; SCIM's name parts are its first word and the
// rest, the same split the server uses when it answers.
const (
	givenExpr  = `(CASE WHEN instr(u.name, ' ') > 0 THEN substr(u.name, 1, instr(u.name, ' ') - 1) ELSE u.name END)`
	familyExpr = `(CASE WHEN instr(u.name, ' ') > 0 THEN substr(u.name, instr(u.name, ' ') + 1) ELSE '' END)`
	// SCIM "active" is "may use the account": the active flag, and not
	// waiting for an admin's approval.
	userActiveExpr = `(u.active = 1 AND u.role <> 'pending')`
)

// providerPath is the JSON path of a provider's external id in a scim
// column. It is a bound parameter, never spliced into the SQL.
func providerPath(provider string) string { return `$."` + provider + `".external_id` }

func userAttr(name, provider string) (scimAttr, bool) {
	switch name {
	case "id":
		return scimAttr{expr: "u.id", caseExact: true}, true
	case "username", "emails", "emails.value":
		return scimAttr{expr: "u.email"}, true
	case "emails.type":
		return scimAttr{expr: "'work'"}, true
	case "emails.primary":
		return scimAttr{expr: "1", kind: kindBool}, true
	case "displayname", "name.formatted":
		return scimAttr{expr: "u.name"}, true
	case "name.givenname":
		return scimAttr{expr: givenExpr}, true
	case "name.familyname":
		return scimAttr{expr: familyExpr}, true
	case "active":
		return scimAttr{expr: userActiveExpr, kind: kindBool}, true
	case "meta.created":
		return scimAttr{expr: "u.created_at", kind: kindTime}, true
	case "meta.lastmodified":
		return scimAttr{expr: "u.updated_at", kind: kindTime}, true
	case "externalid":
		// The SCIM id under the provider, else the OAuth subject under the
		// same provider name: that links accounts made by OAuth sign-in to
		// the identity provider's records (SPEC.md "External id lookup").
		p := providerPath(provider)
		return scimAttr{expr: `coalesce(json_extract(u.scim, ?), json_extract(u.oauth, ?))`,
			args: []any{p, `$."` + provider + `".sub`}, caseExact: true}, true
	case "groups", "groups.value":
		return scimAttr{expr: "gm.group_id", caseExact: true,
			exists: `EXISTS (SELECT 1 FROM group_members gm WHERE gm.user_id = u.id AND %s)`}, true
	case "groups.display":
		return scimAttr{expr: "gg.name",
			exists: `EXISTS (SELECT 1 FROM group_members gm JOIN groups gg ON gg.id = gm.group_id WHERE gm.user_id = u.id AND %s)`}, true
	}
	return scimAttr{}, false
}

func groupAttr(name, provider string) (scimAttr, bool) {
	switch name {
	case "id":
		return scimAttr{expr: "g.id", caseExact: true}, true
	case "displayname":
		return scimAttr{expr: "g.name"}, true
	case "externalid":
		return scimAttr{expr: `json_extract(g.scim, ?)`, args: []any{providerPath(provider)}, caseExact: true}, true
	case "meta.created":
		return scimAttr{expr: "g.created_at", kind: kindTime}, true
	case "meta.lastmodified":
		return scimAttr{expr: "g.updated_at", kind: kindTime}, true
	case "members", "members.value":
		return scimAttr{expr: "gm.user_id", caseExact: true,
			exists: `EXISTS (SELECT 1 FROM group_members gm WHERE gm.group_id = g.id AND %s)`}, true
	case "members.display":
		return scimAttr{expr: "mu.name",
			exists: `EXISTS (SELECT 1 FROM group_members gm JOIN users mu ON mu.id = gm.user_id WHERE gm.group_id = g.id AND %s)`}, true
	}
	return scimAttr{}, false
}

// compileSCIMFilter turns a filter into a SQL condition and its parameters.
// Comparisons stay bare (no function around the column), so `userName eq`
// and `displayName eq`, the lookups providers make on every sync, use the
// unique NOCASE indexes on users.email and groups.name.
func compileSCIMFilter(f SCIMFilter, attr func(string) (scimAttr, bool)) (string, []any, error) {
	switch f := f.(type) {
	case SCIMLogic:
		l, la, err := compileSCIMFilter(f.Left, attr)
		if err != nil {
			return "", nil, err
		}
		r, ra, err := compileSCIMFilter(f.Right, attr)
		if err != nil {
			return "", nil, err
		}
		op := "AND"
		if f.Op == "or" {
			op = "OR"
		} else if f.Op != "and" {
			return "", nil, fmt.Errorf("%w: logical operator %q", ErrInvalidFilter, f.Op)
		}
		return "(" + l + " " + op + " " + r + ")", append(la, ra...), nil
	case SCIMNot:
		x, xa, err := compileSCIMFilter(f.X, attr)
		if err != nil {
			return "", nil, err
		}
		// A comparison is NULL where the attribute is missing; WHERE
		// treats that as false, and so must `not`, hence the coalesce.
		return "(NOT coalesce(" + x + ", 0))", xa, nil
	case SCIMCompare:
		a, ok := attr(f.Attr)
		if !ok {
			return "", nil, fmt.Errorf("%w: unknown attribute %q", ErrInvalidFilter, f.Attr)
		}
		cond, args, err := compileCompare(a, f.Op, f.Value)
		if err != nil {
			return "", nil, err
		}
		if a.exists != "" {
			return "(" + strings.Replace(a.exists, "%s", cond, 1) + ")", args, nil
		}
		return cond, args, nil
	case nil:
		return "1", nil, nil
	}
	return "", nil, fmt.Errorf("%w: unknown node %T", ErrInvalidFilter, f)
}

// compileCompare is one comparison on attribute a (its expression's own
// parameters come first, added by the caller). String attributes compare
// case-insensitively unless SCIM defines them case-exact (ids, externalId).
func compileCompare(a scimAttr, op string, v any) (string, []any, error) {
	cond, vals, err := compareTemplate(a, op, v)
	if err != nil {
		return "", nil, err
	}
	sql, args := expandTemplate(cond, a, vals)
	return sql, args, nil
}

// expandTemplate puts the attribute's expression in place of each {E} of a
// comparison template, and binds parameters in the order they appear: the
// expression's own for each {E}, the comparison's values for each ?.
func expandTemplate(tmpl string, a scimAttr, vals []any) (string, []any) {
	var b strings.Builder
	var args []any
	for i := 0; i < len(tmpl); {
		switch {
		case strings.HasPrefix(tmpl[i:], "{E}"):
			b.WriteString(a.expr)
			args = append(args, a.args...)
			i += 3
		case tmpl[i] == '?':
			b.WriteByte('?')
			args = append(args, vals[0])
			vals = vals[1:]
			i++
		default:
			b.WriteByte(tmpl[i])
			i++
		}
	}
	return b.String(), args
}

// compareTemplate is one comparison with {E} standing for the attribute's
// expression and ? for the values it returns, in order.
func compareTemplate(a scimAttr, op string, v any) (string, []any, error) {
	e := "{E}"
	bad := func() (string, []any, error) {
		return "", nil, fmt.Errorf("%w: %s with %T value", ErrInvalidFilter, op, v)
	}
	if op == "pr" {
		if a.kind == kindString {
			return "(" + e + " IS NOT NULL AND " + e + " <> '')", nil, nil
		}
		return "(" + e + " IS NOT NULL)", nil, nil
	}
	if v == nil { // `eq null` is "not present", `ne null` is "present"
		switch op {
		case "eq":
			return "(" + e + " IS NULL OR " + e + " = '')", nil, nil
		case "ne":
			return "(" + e + " IS NOT NULL AND " + e + " <> '')", nil, nil
		}
		return bad()
	}
	cmp := map[string]string{"eq": "=", "ne": "IS NOT", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
	switch a.kind {
	case kindBool:
		b, ok := v.(bool)
		if !ok || (op != "eq" && op != "ne") {
			return bad()
		}
		return "(" + e + " " + cmp[op] + " ?)", []any{b}, nil
	case kindTime:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %q is not an RFC 3339 date-time", ErrInvalidFilter, s)
		}
		c, ok := cmp[op]
		if !ok {
			return bad()
		}
		// Stored times are whole seconds: a fractional bound moves to the
		// whole second on the right side of it.
		sec := t.Unix()
		if t.Nanosecond() != 0 {
			switch op {
			case "eq":
				return "0", nil, nil
			case "ne":
				return "1", nil, nil
			case "gt", "ge":
				sec, c = sec+1, ">="
			case "lt", "le":
				c = "<="
			}
		}
		return "(" + e + " " + c + " ?)", []any{sec}, nil
	}
	s, ok := v.(string)
	if !ok {
		return bad()
	}
	coll, low := " COLLATE NOCASE", func(x string) string { return "lower(" + x + ")" }
	if a.caseExact {
		coll, low = "", func(x string) string { return x }
	}
	if s == "" && (op == "co" || op == "sw" || op == "ew") {
		return "(" + e + " IS NOT NULL)", nil, nil
	}
	switch op {
	case "eq", "ne", "gt", "ge", "lt", "le":
		if op == "ne" {
			return "(" + e + " IS NOT ?" + coll + ")", []any{s}, nil
		}
		return "(" + e + " " + cmp[op] + " ?" + coll + ")", []any{s}, nil
	case "co":
		return "(instr(" + low(e) + ", " + low("?") + ") > 0)", []any{s}, nil
	case "sw":
		return "(substr(" + low(e) + ", 1, length(?)) = " + low("?") + ")", []any{s, s}, nil
	case "ew":
		return "(length(" + e + ") >= length(?) AND substr(" + low(e) + ", -length(?)) = " + low("?") + ")",
			[]any{s, s, s}, nil
	}
	return "", nil, fmt.Errorf("%w: unknown operator %q", ErrInvalidFilter, op)
}

// SCIMUsers returns a page of accounts matching q, newest first (Open
// WebUI's order), and the total. Admins only.
func (s *Store) SCIMUsers(ctx context.Context, actor Actor, q SCIMQuery) ([]UserRow, int, error) {
	cond, args, err := compileSCIMFilter(q.Filter, func(n string) (scimAttr, bool) { return userAttr(n, q.Provider) })
	if err != nil {
		return nil, 0, err
	}
	where := `WHERE ? = 'admin' AND ` + cond
	args = append([]any{actor.Role}, args...)
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM users u `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+userCols+`, `+userGroupIDs+` FROM users u `+where+
		` ORDER BY u.created_at DESC, u.id LIMIT ? OFFSET ?`, append(args, q.Limit, max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	out, err := scanUserRows(rows)
	return out, total, err
}

// SCIMGroups returns a page of groups matching q, newest first, and the
// total. Admins only. (Open WebUI orders by last change; creation order
// keeps pages stable while the provider updates groups between pages.)
func (s *Store) SCIMGroups(ctx context.Context, actor Actor, q SCIMQuery) ([]Group, int, error) {
	cond, args, err := compileSCIMFilter(q.Filter, func(n string) (scimAttr, bool) { return groupAttr(n, q.Provider) })
	if err != nil {
		return nil, 0, err
	}
	where := `WHERE ? = 'admin' AND ` + cond
	args = append([]any{actor.Role}, args...)
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM groups g `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+groupCols+` FROM groups g `+where+
		` ORDER BY g.created_at DESC, g.id LIMIT ? OFFSET ?`, append(args, q.Limit, max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, g)
	}
	return out, total, rows.Err()
}

// FirstAdminID is the oldest admin account: the creator recorded for groups
// the identity provider makes (Open WebUI's rule). None is ErrNotFound.
func (s *Store) FirstAdminID(ctx context.Context) (string, error) {
	var id string
	err := s.read.QueryRowContext(ctx, `SELECT id FROM users WHERE role = 'admin' ORDER BY created_at, rowid LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// UserNames maps account ids to display names (admins only); unknown ids
// are left out. Used to name group members in one query per page.
func (s *Store) UserNames(ctx context.Context, actor Actor, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT u.id, u.name FROM users u
		WHERE u.id IN (SELECT value FROM json_each(?)) AND ? = 'admin'`, string(b), actor.Role)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = name
	}
	return out, rows.Err()
}

// setExternalID returns the scim map cur with provider's external id set
// (or removed when id is empty).
func setExternalID(cur json.RawMessage, provider, id string) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(cur) > 0 && (json.Unmarshal(cur, &m) != nil || m == nil) {
		m = map[string]json.RawMessage{} // not an object: never written by Hearth
	}
	if id == "" {
		delete(m, provider)
	} else {
		v, _ := json.Marshal(map[string]string{"external_id": id})
		m[provider] = v
	}
	if len(m) == 0 {
		return nil, nil
	}
	return json.Marshal(m)
}

// externalIDTaken reports whether another row of table holds id under
// provider. table is "users" or "groups", never caller input.
func externalIDTaken(ctx context.Context, tx *sql.Tx, table, provider, id, self string) error {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE json_extract(scim, ?) = ? AND id <> ?`,
		providerPath(provider), id, self).Scan(&n)
	if err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("%s %q: %w", table, id, ErrExternalIDTaken)
	}
	return nil
}

// SCIMNewUser is an account created by the identity provider.
type SCIMNewUser struct {
	Email           string
	Name            string
	ProfileImageURL string
	Active          bool
	Provider        string // with ExternalID: stored as scim[Provider].external_id
	ExternalID      string
}

// CreateSCIMUser adds an account for the identity provider (admins only).
// It has no password (sign-in comes from the provider) and the role `user`:
// never admin, even as the first account, since the provider cannot be
// trusted with that (Open WebUI gives `user` too). A taken e-mail is
// ErrConflict; a taken externalId ErrExternalIDTaken.
func (s *Store) CreateSCIMUser(ctx context.Context, actor Actor, nu SCIMNewUser) (User, error) {
	if !actor.IsAdmin() {
		return User{}, ErrNotFound
	}
	now := s.now().Unix()
	u := User{
		ID: uuid.NewString(), Email: strings.ToLower(strings.TrimSpace(nu.Email)), Name: nu.Name, Role: "user",
		Active: nu.Active, ProfileImageURL: nu.ProfileImageURL, LastActiveAt: now, CreatedAt: now, UpdatedAt: now,
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if nu.ExternalID != "" {
			if err := externalIDTaken(ctx, tx, "users", nu.Provider, nu.ExternalID, ""); err != nil {
				return err
			}
			scim, err := setExternalID(nil, nu.Provider, nu.ExternalID)
			if err != nil {
				return err
			}
			u.SCIM = scim
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO users (id, email, role, name, password_hash, active,
			profile_image_url, scim, last_active_at, created_at, updated_at)
			SELECT ?,?,?,?,'',?,?,?,?,?,? WHERE ? = 'admin'`,
			u.ID, u.Email, u.Role, u.Name, u.Active, u.ProfileImageURL, rawArg(u.SCIM), now, now, now, actor.Role)
		if isUnique(err) {
			return fmt.Errorf("user %s: %w", u.Email, ErrConflict)
		}
		return err
	})
	return u, err
}

// SCIMUserPatch lists what the identity provider changes; nil is unchanged.
type SCIMUserPatch struct {
	Email           *string
	Name            *string
	ProfileImageURL *string
	Active          *bool
	Provider        string
	ExternalID      *string // "" removes it
}

// UpdateSCIMUser changes an account for the identity provider (admins only).
//
// Active false sets the account's active flag to 0 and nothing else: the
// role and all data stay, sign-in is refused and every request with the
// user's JWTs or API keys gets 401 (the server re-reads the account on every
// request). Active true sets the flag back and lifts a pending account to
// `user` (the provider assigning someone is the approval; Open WebUI maps
// active to role the same way); an admin stays admin, as SCIM never demotes.
// The primary admin cannot be deactivated (ErrForbidden): that would lock
// the deployment's owner out.
func (s *Store) UpdateSCIMUser(ctx context.Context, actor Actor, id string, p SCIMUserPatch) (User, error) {
	if !actor.IsAdmin() {
		return User{}, ErrNotFound
	}
	var u User
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.id = ? AND ? = 'admin'`, id, actor.Role))
		if err != nil {
			return err
		}
		var sets []string
		var args []any
		if p.Email != nil {
			sets, args = append(sets, "email = ?"), append(args, strings.ToLower(strings.TrimSpace(*p.Email)))
		}
		if p.Name != nil {
			sets, args = append(sets, "name = ?"), append(args, *p.Name)
		}
		if p.ProfileImageURL != nil {
			sets, args = append(sets, "profile_image_url = ?"), append(args, *p.ProfileImageURL)
		}
		if p.Active != nil {
			if *p.Active {
				sets = append(sets, "active = 1", "role = CASE WHEN role = 'pending' THEN 'user' ELSE role END")
			} else {
				var primary, role string
				if err := tx.QueryRowContext(ctx, `SELECT id, role FROM users ORDER BY created_at, rowid LIMIT 1`).Scan(&primary, &role); err != nil {
					return err
				}
				if id == primary && role == "admin" {
					return fmt.Errorf("deactivating the primary admin: %w", ErrForbidden)
				}
				sets = append(sets, "active = 0")
			}
		}
		if p.ExternalID != nil {
			if *p.ExternalID != "" {
				if err := externalIDTaken(ctx, tx, "users", p.Provider, *p.ExternalID, id); err != nil {
					return err
				}
			}
			scim, err := setExternalID(cur.SCIM, p.Provider, *p.ExternalID)
			if err != nil {
				return err
			}
			sets, args = append(sets, "scim = ?"), append(args, rawArg(scim))
		}
		sets, args = append(sets, "updated_at = ?"), append(args, s.now().Unix())
		_, err = tx.ExecContext(ctx, `UPDATE users SET `+strings.Join(sets, ", ")+` WHERE id = ?`, append(args, id)...)
		if isUnique(err) {
			return fmt.Errorf("e-mail: %w", ErrConflict)
		}
		if err != nil {
			return err
		}
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.id = ?`, id))
		return err
	})
	return u, err
}

// SCIMGroupPatch lists what the identity provider changes in a group; nil
// is unchanged. Members, when not nil, replaces the membership; Add and
// Remove are applied after it.
type SCIMGroupPatch struct {
	Name        *string
	Members     *[]string
	Add, Remove []string
	Provider    string
	ExternalID  *string // "" removes it
}

// CreateSCIMGroup adds a group with its members in one transaction (admins
// only; the actor becomes its creator). Unknown member ids are ignored, as
// the admin API ignores them. A taken name is ErrConflict, a taken
// externalId ErrExternalIDTaken.
func (s *Store) CreateSCIMGroup(ctx context.Context, actor Actor, g Group, provider, externalID string, members []string) (Group, error) {
	if !actor.IsAdmin() {
		return Group{}, ErrNotFound
	}
	now := s.now().Unix()
	g.ID, g.UserID, g.CreatedAt, g.UpdatedAt = uuid.NewString(), actor.UserID, now, now
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if externalID != "" {
			if err := externalIDTaken(ctx, tx, "groups", provider, externalID, ""); err != nil {
				return err
			}
			scim, err := setExternalID(nil, provider, externalID)
			if err != nil {
				return err
			}
			g.SCIM = scim
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO groups (id, user_id, name, description, data, meta, permissions, scim, created_at, updated_at)
			SELECT ?,?,?,?,?,?,?,?,?,? WHERE ? = 'admin'`,
			g.ID, g.UserID, g.Name, g.Description, rawArg(g.Data), rawArg(g.Meta), rawArg(g.Permissions), rawArg(g.SCIM), now, now, actor.Role)
		if isUnique(err) {
			return fmt.Errorf("group %q: %w", g.Name, ErrConflict)
		}
		if err != nil {
			return err
		}
		if err := addMembers(ctx, tx, g.ID, members, now); err != nil {
			return err
		}
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupCols+` FROM groups g WHERE g.id = ?`, g.ID))
		return err
	})
	return g, err
}

// UpdateSCIMGroup changes a group for the identity provider (admins only),
// all in one transaction.
func (s *Store) UpdateSCIMGroup(ctx context.Context, actor Actor, id string, p SCIMGroupPatch) (Group, error) {
	if !actor.IsAdmin() {
		return Group{}, ErrNotFound
	}
	now := s.now().Unix()
	var g Group
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupCols+` FROM groups g WHERE g.id = ? AND ? = 'admin'`, id, actor.Role))
		if err != nil {
			return err
		}
		scim := cur.SCIM
		if p.ExternalID != nil {
			if *p.ExternalID != "" {
				if err := externalIDTaken(ctx, tx, "groups", p.Provider, *p.ExternalID, id); err != nil {
					return err
				}
			}
			if scim, err = setExternalID(cur.SCIM, p.Provider, *p.ExternalID); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE groups SET name = coalesce(?, name), scim = ?, updated_at = ? WHERE id = ?`,
			p.Name, rawArg(scim), now, id)
		if isUnique(err) {
			return fmt.Errorf("group name: %w", ErrConflict)
		}
		if err != nil {
			return err
		}
		if p.Members != nil {
			// Keep the rows of members who stay, so their join order
			// (created_at) survives a provider that always sends the full set.
			keep, err := json.Marshal(*p.Members)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ?
				AND user_id NOT IN (SELECT value FROM json_each(?))`, id, string(keep)); err != nil {
				return err
			}
			if err := addMembers(ctx, tx, id, *p.Members, now); err != nil {
				return err
			}
		}
		if err := addMembers(ctx, tx, id, p.Add, now); err != nil {
			return err
		}
		for _, uid := range p.Remove {
			if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ? AND user_id = ?`, id, uid); err != nil {
				return err
			}
		}
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupCols+` FROM groups g WHERE g.id = ?`, id))
		return err
	})
	return g, err
}
