package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// User is a stored account. JSON fields hold raw JSON (nil when unset).
type User struct {
	ID              string
	Email           string
	Username        string
	Role            string
	Name            string
	PasswordHash    string
	Active          bool
	ProfileImageURL string
	Bio             string
	Gender          string
	DateOfBirth     string
	Timezone        string
	Info            json.RawMessage
	Settings        json.RawMessage
	OAuth           json.RawMessage
	SCIM            json.RawMessage
	LastActiveAt    int64
	CreatedAt       int64
	UpdatedAt       int64
}

const userCols = `u.id, u.email, coalesce(u.username,''), u.role, u.name, u.password_hash, u.active,
	u.profile_image_url, coalesce(u.bio,''), coalesce(u.gender,''), coalesce(u.date_of_birth,''),
	coalesce(u.timezone,''), u.info, u.settings, u.oauth, u.scim, u.last_active_at, u.created_at, u.updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanUser(row scanner) (User, error) {
	var u User
	var info, settings, oauth, scim sql.NullString
	err := row.Scan(&u.ID, &u.Email, &u.Username, &u.Role, &u.Name, &u.PasswordHash, &u.Active,
		&u.ProfileImageURL, &u.Bio, &u.Gender, &u.DateOfBirth, &u.Timezone, &info, &settings, &oauth, &scim,
		&u.LastActiveAt, &u.CreatedAt, &u.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	u.Info, u.Settings, u.OAuth, u.SCIM = rawOrNil(info), rawOrNil(settings), rawOrNil(oauth), rawOrNil(scim)
	return u, err
}

func rawOrNil(s sql.NullString) json.RawMessage {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.RawMessage(s.String)
}

func rawArg(r json.RawMessage) any {
	if len(r) == 0 {
		return nil
	}
	return string(r)
}

// NewUser is what account creation needs.
type NewUser struct {
	Email           string
	Name            string
	PasswordHash    string
	Role            string // role for a user who is not the first
	ProfileImageURL string
	DefaultGroupID  string // joined when it names an existing group
	// OAuth is the account's provider links ({provider: {sub}}), set for an
	// account made by OAuth sign-in in the same insert; nil for none.
	OAuth json.RawMessage
	// ForceRole skips the first-user-becomes-admin rule (admin "add user").
	ForceRole bool
}

// CreateUser inserts an account. The first account ever created becomes admin
// (counted after the insert, inside the same write transaction, so two
// concurrent first sign-ups cannot both become admin). A taken e-mail address
// (case-insensitive) is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, nu NewUser) (User, error) {
	now := s.now().Unix()
	u := User{
		ID: uuid.NewString(), Email: strings.ToLower(strings.TrimSpace(nu.Email)), Name: nu.Name,
		Role: nu.Role, PasswordHash: nu.PasswordHash, Active: true, ProfileImageURL: nu.ProfileImageURL,
		OAuth: nu.OAuth, LastActiveAt: now, CreatedAt: now, UpdatedAt: now,
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (id, email, role, name, password_hash, active,
			profile_image_url, oauth, last_active_at, created_at, updated_at) VALUES (?,?,?,?,?,1,?,?,?,?,?)`,
			u.ID, u.Email, u.Role, u.Name, u.PasswordHash, u.ProfileImageURL, rawArg(nu.OAuth), now, now, now)
		if isUnique(err) {
			return fmt.Errorf("user %s: %w", u.Email, ErrConflict)
		}
		if err != nil {
			return err
		}
		if !nu.ForceRole {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
				return err
			}
			if n == 1 {
				u.Role = "admin"
				if _, err := tx.ExecContext(ctx, `UPDATE users SET role='admin' WHERE id=?`, u.ID); err != nil {
					return err
				}
			}
		}
		if nu.DefaultGroupID != "" {
			_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO group_members (group_id, user_id, created_at)
				SELECT id, ?, ? FROM groups WHERE id = ?`, u.ID, now, nu.DefaultGroupID)
			return err
		}
		return nil
	})
	return u, err
}

// CountUsers counts all accounts.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

// UserByEmail finds an account by e-mail (case-insensitive). Used by sign-in,
// before there is an actor.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	return scanUser(s.read.QueryRowContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.email = ?`,
		strings.ToLower(strings.TrimSpace(email))))
}

// UserByID loads an account by id. Used to authenticate a token's subject.
func (s *Store) UserByID(ctx context.Context, id string) (User, error) {
	return scanUser(s.read.QueryRowContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.id = ?`, id))
}

// PrimaryAdminID is the first account ever created; other admins may not
// change or delete it (Open WebUI's rule).
func (s *Store) PrimaryAdminID(ctx context.Context) (string, error) {
	var id string
	err := s.read.QueryRowContext(ctx, `SELECT id FROM users ORDER BY created_at, rowid LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// UserFilter selects a page of the admin user list.
type UserFilter struct {
	Query     string // matches name or e-mail, case-insensitive
	OrderBy   string // name, email, created_at, last_active_at, updated_at, role
	Direction string // asc or desc
	Limit     int
	Offset    int
}

// UserRow is a user with the ids of their groups.
type UserRow struct {
	User
	GroupIDs []string
}

var userOrder = map[string]string{
	"name": "u.name COLLATE NOCASE", "email": "u.email", "created_at": "u.created_at",
	"last_active_at": "u.last_active_at", "updated_at": "u.updated_at", "role": "u.role",
}

// userQuery builds the WHERE (after the actor condition) and ORDER/LIMIT
// clauses shared by ListUsers and SearchUsers.
func userQuery(f UserFilter) (where string, args []any, tail string, tailArgs []any) {
	if q := strings.TrimSpace(f.Query); q != "" {
		where = ` AND (u.name LIKE ? ESCAPE '\' OR u.email LIKE ? ESCAPE '\')`
		like := "%" + escapeLike(q) + "%"
		args = append(args, like, like)
	}
	order, ok := userOrder[f.OrderBy]
	if !ok {
		order = "u.created_at"
	}
	dir := "DESC"
	if strings.EqualFold(f.Direction, "asc") {
		dir = "ASC"
	}
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	return where, args, ` ORDER BY ` + order + ` ` + dir + `, u.id LIMIT ? OFFSET ?`, []any{limit, max(f.Offset, 0)}
}

// ListUsers returns a page of accounts and the total. Admins only: for any
// other actor the query matches nothing.
func (s *Store) ListUsers(ctx context.Context, actor Actor, f UserFilter) ([]UserRow, int, error) {
	cond, args, tail, tailArgs := userQuery(f)
	where := `WHERE ? = 'admin'` + cond
	args = append([]any{actor.Role}, args...)
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM users u `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+userCols+`, `+userGroupIDs+` FROM users u `+where+tail,
		append(args, tailArgs...)...)
	if err != nil {
		return nil, 0, err
	}
	out, err := scanUserRows(rows)
	return out, total, err
}

// userGroupIDs is the column of a user's group ids, comma-separated.
const userGroupIDs = `(SELECT group_concat(group_id, ',') FROM group_members gm WHERE gm.user_id = u.id)`

// scanUserRows reads rows of userCols + userGroupIDs and closes them.
func scanUserRows(rows *sql.Rows) ([]UserRow, error) {
	defer rows.Close()
	out := []UserRow{}
	for rows.Next() {
		var gids sql.NullString
		var u User
		var info, settings, oauth, scim sql.NullString
		if err := rows.Scan(&u.ID, &u.Email, &u.Username, &u.Role, &u.Name, &u.PasswordHash, &u.Active,
			&u.ProfileImageURL, &u.Bio, &u.Gender, &u.DateOfBirth, &u.Timezone, &info, &settings, &oauth, &scim,
			&u.LastActiveAt, &u.CreatedAt, &u.UpdatedAt, &gids); err != nil {
			return nil, err
		}
		u.Info, u.Settings, u.OAuth, u.SCIM = rawOrNil(info), rawOrNil(settings), rawOrNil(oauth), rawOrNil(scim)
		r := UserRow{User: u, GroupIDs: []string{}}
		if gids.String != "" {
			r.GroupIDs = strings.Split(gids.String, ",")
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// UserCard is what any verified user may see of another account: enough to
// pick someone (name, e-mail, role, picture) and show whether they are
// around. Nothing private (settings, info, OAuth links, bio) is in it.
type UserCard struct {
	ID              string
	Name            string
	Email           string
	Role            string
	ProfileImageURL string
	LastActiveAt    int64
}

const cardCols = `u.id, u.name, u.email, u.role, u.profile_image_url, u.last_active_at`

// verifiedActor is the SQL condition "the actor is a user or an admin";
// pending accounts see no one.
const verifiedActor = `? IN ('user', 'admin')`

func scanCard(row scanner) (UserCard, error) {
	var c UserCard
	err := row.Scan(&c.ID, &c.Name, &c.Email, &c.Role, &c.ProfileImageURL, &c.LastActiveAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	return c, err
}

// UserCardByID reads the card of any account; only verified actors (user,
// admin) get one.
func (s *Store) UserCardByID(ctx context.Context, actor Actor, id string) (UserCard, error) {
	return scanCard(s.read.QueryRowContext(ctx, `SELECT `+cardCols+` FROM users u WHERE u.id = ? AND `+verifiedActor,
		id, actor.Role))
}

// SearchUsers returns a page of account cards matching the filter, and the
// total; only verified actors (user, admin) match anything.
func (s *Store) SearchUsers(ctx context.Context, actor Actor, f UserFilter) ([]UserCard, int, error) {
	cond, args, tail, tailArgs := userQuery(f)
	where := `WHERE ` + verifiedActor + cond
	args = append([]any{actor.Role}, args...)
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM users u `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+cardCols+` FROM users u `+where+tail, append(args, tailArgs...)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []UserCard{}
	for rows.Next() {
		c, err := scanCard(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// GetUser reads one account: admins read anyone, others only themselves.
func (s *Store) GetUser(ctx context.Context, actor Actor, id string) (User, error) {
	return scanUser(s.read.QueryRowContext(ctx, `SELECT `+userCols+` FROM users u
		WHERE u.id = ? AND (u.id = ? OR ? = 'admin')`, id, actor.UserID, actor.Role))
}

// UserPatch lists the fields to change; nil means unchanged.
type UserPatch struct {
	Name            *string
	Email           *string
	Role            *string
	ProfileImageURL *string
	PasswordHash    *string
	Bio             *string
	Gender          *string
	DateOfBirth     *string
	Timezone        *string
	Settings        json.RawMessage
	Info            json.RawMessage
}

// UpdateUser changes an account. Actors change themselves (never their role);
// admins change anyone. Another admin may not change the primary admin, and
// the primary admin may not demote itself. A taken e-mail is ErrConflict; a
// target the actor may not change is ErrNotFound.
func (s *Store) UpdateUser(ctx context.Context, actor Actor, id string, p UserPatch) (User, error) {
	if p.Role != nil && !actor.IsAdmin() {
		return User{}, ErrNotFound
	}
	var sets []string
	var args []any
	add := func(col string, v *string) {
		if v != nil {
			sets = append(sets, col+" = ?")
			args = append(args, *v)
		}
	}
	if p.Email != nil {
		e := strings.ToLower(strings.TrimSpace(*p.Email))
		p.Email = &e
	}
	add("name", p.Name)
	add("email", p.Email)
	add("role", p.Role)
	add("profile_image_url", p.ProfileImageURL)
	add("password_hash", p.PasswordHash)
	add("bio", p.Bio)
	add("gender", p.Gender)
	add("date_of_birth", p.DateOfBirth)
	add("timezone", p.Timezone)
	if p.Settings != nil {
		sets = append(sets, "settings = ?")
		args = append(args, string(p.Settings))
	}
	if p.Info != nil {
		sets = append(sets, "info = ?")
		args = append(args, string(p.Info))
	}
	sets = append(sets, "updated_at = ?")
	args = append(args, s.now().Unix())
	var u User
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var primary string
		if err := tx.QueryRowContext(ctx, `SELECT id FROM users ORDER BY created_at, rowid LIMIT 1`).Scan(&primary); err != nil {
			return ErrNotFound
		}
		if id == primary && actor.UserID != primary && actor.IsAdmin() {
			return fmt.Errorf("primary admin: %w", ErrForbidden)
		}
		if id == primary && p.Role != nil && *p.Role != "admin" {
			return fmt.Errorf("primary admin role: %w", ErrForbidden)
		}
		q := `UPDATE users SET ` + strings.Join(sets, ", ") + ` WHERE id = ? AND (id = ? OR ? = 'admin')`
		res, err := tx.ExecContext(ctx, q, append(args, id, actor.UserID, actor.Role)...)
		if isUnique(err) {
			return fmt.Errorf("e-mail: %w", ErrConflict)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.id = ?`, id))
		return err
	})
	return u, err
}

// ErrForbidden marks an action the actor may name but not perform (the
// primary admin rule). Handlers map it to 403.
var ErrForbidden = errors.New("forbidden")

// DeleteUser removes an account and everything that cascades from it. Admins
// only (anyone else gets ErrNotFound, whoever the target is); the primary
// admin cannot be deleted and an admin cannot delete themselves (ErrForbidden,
// as Open WebUI refuses both).
func (s *Store) DeleteUser(ctx context.Context, actor Actor, id string) error {
	if !actor.IsAdmin() {
		return ErrNotFound
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var primary string
		if err := tx.QueryRowContext(ctx, `SELECT id FROM users ORDER BY created_at, rowid LIMIT 1`).Scan(&primary); err != nil {
			return ErrNotFound
		}
		if id == primary {
			return fmt.Errorf("primary admin: %w", ErrForbidden)
		}
		if id == actor.UserID {
			return fmt.Errorf("self-deletion: %w", ErrForbidden)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ? AND ? = 'admin'`, id, actor.Role)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// MergeUserSettings sets top-level keys of an account's settings object and
// keeps the others (Open WebUI's dict.update), so a UI save of "ui" leaves
// e.g. stored valves alone. Actors change their own settings, admins anyone's.
// It returns the stored object.
func (s *Store) MergeUserSettings(ctx context.Context, actor Actor, id string, patch map[string]json.RawMessage) (json.RawMessage, error) {
	return s.mergeUserJSON(ctx, actor, id, "settings", patch)
}

// MergeUserInfo is MergeUserSettings for the info object.
func (s *Store) MergeUserInfo(ctx context.Context, actor Actor, id string, patch map[string]json.RawMessage) (json.RawMessage, error) {
	return s.mergeUserJSON(ctx, actor, id, "info", patch)
}

// mergeUserJSON reads and rewrites one JSON object column in one write
// transaction, so concurrent merges cannot lose each other's keys. col is one
// of the two constants above, never caller input.
func (s *Store) mergeUserJSON(ctx context.Context, actor Actor, id, col string, patch map[string]json.RawMessage) (json.RawMessage, error) {
	var out json.RawMessage
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var cur sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT `+col+` FROM users WHERE id = ? AND (id = ? OR ? = 'admin')`,
			id, actor.UserID, actor.Role).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		obj := map[string]json.RawMessage{}
		if cur.Valid && cur.String != "" {
			// A stored value that is not an object (never written by Hearth)
			// is replaced rather than failing every later save.
			if json.Unmarshal([]byte(cur.String), &obj) != nil || obj == nil {
				obj = map[string]json.RawMessage{}
			}
		}
		for k, v := range patch {
			if len(v) == 0 {
				v = json.RawMessage("null")
			}
			obj[k] = v
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", col, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET `+col+` = ? WHERE id = ?`, string(b), id); err != nil {
			return err
		}
		out = b
		return nil
	})
	return out, err
}

// TouchUser records activity; callers throttle it.
func (s *Store) TouchUser(ctx context.Context, id string, at int64) error {
	_, err := s.write.ExecContext(ctx, `UPDATE users SET last_active_at = ? WHERE id = ? AND last_active_at < ?`, at, id, at)
	return err
}

// SetRole changes a role on behalf of a trusted identity source (trusted
// header, SSO role claims) rather than an actor.
func (s *Store) SetRole(ctx context.Context, userID, role string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE users SET role = ?, updated_at = ? WHERE id = ?`, role, s.now().Unix(), userID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
