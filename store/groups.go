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

// Group is a named set of users with a permission tree.
type Group struct {
	ID          string
	UserID      string
	Name        string
	Description string
	Data        json.RawMessage
	Meta        json.RawMessage
	Permissions json.RawMessage
	SCIM        json.RawMessage // {provider: {external_id}}, set by SCIM provisioning
	MemberIDs   []string
	CreatedAt   int64
	UpdatedAt   int64
}

// visibleGroup is the SQL condition for groups the actor may read: admins read
// all groups, everyone else only the groups they belong to.
const visibleGroup = `(? = 'admin' OR EXISTS (SELECT 1 FROM group_members m WHERE m.group_id = g.id AND m.user_id = ?))`

const groupCols = `g.id, g.user_id, g.name, g.description, g.data, g.meta, g.permissions, g.scim, g.created_at, g.updated_at,
	(SELECT group_concat(user_id, ',') FROM (SELECT user_id FROM group_members gm WHERE gm.group_id = g.id ORDER BY created_at, user_id))`

func scanGroup(row scanner) (Group, error) {
	var g Group
	var data, meta, perms, scim, members sql.NullString
	err := row.Scan(&g.ID, &g.UserID, &g.Name, &g.Description, &data, &meta, &perms, &scim, &g.CreatedAt, &g.UpdatedAt, &members)
	if errors.Is(err, sql.ErrNoRows) {
		return g, ErrNotFound
	}
	g.Data, g.Meta, g.Permissions, g.SCIM = rawOrNil(data), rawOrNil(meta), rawOrNil(perms), rawOrNil(scim)
	g.MemberIDs = []string{}
	if members.String != "" {
		g.MemberIDs = strings.Split(members.String, ",")
	}
	return g, err
}

// CreateGroup adds a group (admins only). A taken name is ErrConflict.
func (s *Store) CreateGroup(ctx context.Context, actor Actor, g Group) (Group, error) {
	now := s.now().Unix()
	g.ID, g.UserID, g.CreatedAt, g.UpdatedAt = uuid.NewString(), actor.UserID, now, now
	res, err := s.write.ExecContext(ctx, `INSERT INTO groups (id, user_id, name, description, data, meta, permissions, created_at, updated_at)
		SELECT ?,?,?,?,?,?,?,?,? WHERE ? = 'admin'`,
		g.ID, g.UserID, g.Name, g.Description, rawArg(g.Data), rawArg(g.Meta), rawArg(g.Permissions), now, now, actor.Role)
	if isUnique(err) {
		return g, fmt.Errorf("group %q: %w", g.Name, ErrConflict)
	}
	if err != nil {
		return g, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return g, ErrNotFound
	}
	g.MemberIDs = []string{}
	return g, nil
}

// ListGroups lists the groups the actor may read, by name.
func (s *Store) ListGroups(ctx context.Context, actor Actor) ([]Group, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+groupCols+` FROM groups g WHERE `+visibleGroup+`
		ORDER BY g.name COLLATE NOCASE, g.id`, actor.Role, actor.UserID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// GetGroup reads one group the actor may read.
func (s *Store) GetGroup(ctx context.Context, actor Actor, id string) (Group, error) {
	return scanGroup(s.read.QueryRowContext(ctx, `SELECT `+groupCols+` FROM groups g WHERE g.id = ? AND `+visibleGroup,
		id, actor.Role, actor.UserID))
}

// GroupPatch lists fields to change; nil means unchanged. MemberIDs, when
// not nil, replaces the membership.
type GroupPatch struct {
	Name        *string
	Description *string
	Data        json.RawMessage
	Meta        json.RawMessage
	Permissions json.RawMessage
	MemberIDs   *[]string
}

// UpdateGroup changes a group (admins only), all in one transaction.
func (s *Store) UpdateGroup(ctx context.Context, actor Actor, id string, p GroupPatch) (Group, error) {
	now := s.now().Unix()
	var g Group
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE groups SET name = coalesce(?, name), description = coalesce(?, description),
			data = coalesce(?, data), meta = coalesce(?, meta), permissions = coalesce(?, permissions), updated_at = ?
			WHERE id = ? AND ? = 'admin'`,
			p.Name, p.Description, rawArg(p.Data), rawArg(p.Meta), rawArg(p.Permissions), now, id, actor.Role)
		if isUnique(err) {
			return fmt.Errorf("group name: %w", ErrConflict)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if p.MemberIDs != nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ?`, id); err != nil {
				return err
			}
			if err := addMembers(ctx, tx, id, *p.MemberIDs, now); err != nil {
				return err
			}
		}
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupCols+` FROM groups g WHERE g.id = ?`, id))
		return err
	})
	return g, err
}

// addMembers adds existing users; unknown ids are ignored.
func addMembers(ctx context.Context, tx *sql.Tx, groupID string, userIDs []string, now int64) error {
	for _, uid := range userIDs {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO group_members (group_id, user_id, created_at)
			SELECT ?, id, ? FROM users WHERE id = ?`, groupID, now, uid); err != nil {
			return err
		}
	}
	return nil
}

// ChangeMembers adds or removes users of a group (admins only).
func (s *Store) ChangeMembers(ctx context.Context, actor Actor, id string, add, remove []string) (Group, error) {
	now := s.now().Unix()
	var g Group
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE groups SET updated_at = ? WHERE id = ? AND ? = 'admin'`, now, id, actor.Role)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if err := addMembers(ctx, tx, id, add, now); err != nil {
			return err
		}
		for _, uid := range remove {
			if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ? AND user_id = ?`, id, uid); err != nil {
				return err
			}
		}
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupCols+` FROM groups g WHERE g.id = ?`, id))
		return err
	})
	return g, err
}

// DeleteGroup removes a group and its memberships (admins only).
func (s *Store) DeleteGroup(ctx context.Context, actor Actor, id string) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM groups WHERE id = ? AND ? = 'admin'`, id, actor.Role)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// UserGroups returns the ids and permission trees of a user's groups; used to
// build the Actor and effective permissions at authentication.
func (s *Store) UserGroups(ctx context.Context, userID string) (ids []string, perms []json.RawMessage, err error) {
	rows, err := s.read.QueryContext(ctx, `SELECT g.id, g.permissions FROM group_members m JOIN groups g ON g.id = m.group_id
		WHERE m.user_id = ? ORDER BY g.id`, userID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	ids = []string{}
	for rows.Next() {
		var id string
		var p sql.NullString
		if err := rows.Scan(&id, &p); err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
		if r := rawOrNil(p); r != nil {
			perms = append(perms, r)
		}
	}
	return ids, perms, rows.Err()
}

// SyncGroupsByName makes the user a member of exactly the existing groups
// with these names (case-insensitive) and of no other; no group is created.
// Used by trusted-header and SSO sign-in (strict sync, COMPAT.md §2.8).
func (s *Store) SyncGroupsByName(ctx context.Context, userID string, names []string) error {
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE user_id = ?`, userID); err != nil {
			return err
		}
		for _, n := range names {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO group_members (group_id, user_id, created_at)
				SELECT id, ?, ? FROM groups WHERE name = ? COLLATE NOCASE`, userID, now, n); err != nil {
				return err
			}
		}
		return nil
	})
}

// GroupsOfUser lists, by name, the groups userID belongs to that the actor
// may read: an admin sees all of them, anyone else only groups they share.
func (s *Store) GroupsOfUser(ctx context.Context, actor Actor, userID string) ([]Group, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+groupCols+` FROM groups g
		JOIN group_members x ON x.group_id = g.id AND x.user_id = ?
		WHERE `+visibleGroup+` ORDER BY g.name COLLATE NOCASE, g.id`, userID, actor.Role, actor.UserID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// GroupMembers lists the accounts of a group, in the order they joined
// (admins only: member lists name other people). An unknown group, or an
// actor who is not an admin, is ErrNotFound.
func (s *Store) GroupMembers(ctx context.Context, actor Actor, groupID string) ([]UserRow, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+userCols+`, `+userGroupIDs+` FROM users u
		JOIN group_members x ON x.user_id = u.id AND x.group_id = ?
		WHERE ? = 'admin' ORDER BY x.created_at, u.id`, groupID, actor.Role)
	if err != nil {
		return nil, err
	}
	out, err := scanUserRows(rows)
	if err != nil || len(out) > 0 {
		return out, err
	}
	// No members: tell an empty group from a missing (or hidden) one.
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM groups WHERE id = ? AND ? = 'admin'`,
		groupID, actor.Role).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, ErrNotFound
	}
	return out, nil
}
