package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Model is a model record (Open WebUI's `model` table, COMPAT.md §5.2):
// a preset wrapping a provider model (BaseModelID set) or an override of
// the provider model with the same id (BaseModelID ""). Access lives in
// Grants.
type Model struct {
	ID          string
	UserID      string
	BaseModelID string // "" = none
	Name        string
	Params      json.RawMessage // JSON object
	Meta        json.RawMessage // JSON object
	IsActive    bool
	CreatedAt   int64
	UpdatedAt   int64
	Grants      []Grant

	// Set by GetModel and ListModels: whether the actor may change it.
	WriteAccess bool
	// Set by ListModels: the owner's card (nil when the owner is gone).
	Owner *UserCard
}

const modelCols = `m.id, m.user_id, coalesce(m.base_model_id, ''), m.name, m.params, m.meta, m.is_active, m.created_at, m.updated_at`

func scanModel(row scanner, extra ...any) (Model, error) {
	var m Model
	var params, meta string
	err := row.Scan(append([]any{&m.ID, &m.UserID, &m.BaseModelID, &m.Name, &params, &meta, &m.IsActive, &m.CreatedAt, &m.UpdatedAt}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return m, ErrNotFound
	}
	m.Params, m.Meta = objectOrEmpty(params), objectOrEmpty(meta)
	return m, err
}

func objectOrEmpty(s string) json.RawMessage {
	if s == "" || s == "null" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

func objectArg(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return "{}"
	}
	return string(r)
}

// modelReadable is the SQL condition "the actor (@uid, @groups) owns the
// model m or holds a read (or write) grant on it".
var modelReadable = `(m.user_id = @uid OR ` + grantCond("model", "m.id", PermRead) + `)`

// modelWritable is the SQL condition for changing a record: admins always
// (Open WebUI's update/toggle/delete checks ignore
// BYPASS_ADMIN_ACCESS_CONTROL), the owner, or a write grant.
var modelWritable = `(@role = 'admin' OR m.user_id = @uid OR ` + grantCond("model", "m.id", PermWrite) + `)`

// AllModels returns every record with its grants, oldest first. It feeds
// the in-memory model map (chat.Registry), which merges records with the
// provider model lists and filters per caller on every request (a record
// decides who sees a provider model, so the merge cannot happen in SQL);
// API endpoints use GetModel and ListModels, which filter in the query.
func (s *Store) AllModels(ctx context.Context) ([]Model, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+modelCols+` FROM models m ORDER BY m.created_at, m.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Model
	for rows.Next() {
		m, err := scanModel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	grants, err := grantsOf(ctx, s.read, "model", nil)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Grants = grants[out[i].ID]
	}
	return out, nil
}

// GetModel reads one record the actor may read: the owner, a read or write
// grant, or an admin when adminAll (BYPASS_ADMIN_ACCESS_CONTROL). A missing
// record is ErrNotFound, one the actor may not read ErrForbidden (Open
// WebUI answers them differently, COMPAT.md §1.4). WriteAccess is set.
func (s *Store) GetModel(ctx context.Context, actor Actor, id string, adminAll bool) (Model, error) {
	args := append(actorArgs(actor), sql.Named("id", id), sql.Named("all", adminAll && actor.IsAdmin()))
	var write bool
	m, err := scanModel(s.read.QueryRowContext(ctx, `SELECT `+modelCols+`,
		(@all OR m.user_id = @uid OR `+grantCond("model", "m.id", PermWrite)+`)
		FROM models m WHERE m.id = @id AND (@all OR `+modelReadable+`)`, args...), &write)
	if errors.Is(err, ErrNotFound) {
		var one int
		err = s.read.QueryRowContext(ctx, `SELECT 1 FROM models WHERE id = ?`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return m, ErrNotFound
		}
		if err != nil {
			return m, err
		}
		return m, fmt.Errorf("model %q: %w", id, ErrForbidden)
	}
	if err != nil {
		return m, err
	}
	m.WriteAccess = write
	g, err := grantsOf(ctx, s.read, "model", []string{m.ID})
	m.Grants = g[m.ID]
	return m, err
}

// CreateModel stores a new record owned by the actor with its grants (the
// caller has checked workspace.models and filtered the grants). A taken id
// is ErrConflict.
func (s *Store) CreateModel(ctx context.Context, actor Actor, m Model) (Model, error) {
	now := s.now().Unix()
	m.UserID, m.CreatedAt, m.UpdatedAt = actor.UserID, now, now
	m.Params, m.Meta = objectOrEmpty(string(m.Params)), objectOrEmpty(string(m.Meta))
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO models (id, user_id, base_model_id, name, params, meta, is_active, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.UserID, nullStr(m.BaseModelID), m.Name, objectArg(m.Params), objectArg(m.Meta), m.IsActive, now, now)
		if isUnique(err) {
			return fmt.Errorf("model %q: %w", m.ID, ErrConflict)
		}
		if err != nil {
			return err
		}
		m.Grants, err = s.replaceGrants(ctx, tx, "model", m.ID, m.Grants)
		return err
	})
	m.WriteAccess = err == nil
	return m, err
}

// checkModelWrite is ErrNotFound for a missing record and ErrForbidden for
// one the actor may not change.
func checkModelWrite(ctx context.Context, tx *sql.Tx, actor Actor, id string) error {
	return checkWritable(ctx, tx, actor, "models m", "m.id", modelWritable, "model", id)
}

// checkWritable is ErrNotFound when `from` (a table and its alias) has no
// row whose idCol is id, and ErrForbidden when the actor may not change it
// (writable: an SQL expression over the alias and actorArgs). It runs
// inside the write transaction, so the check and the change see the same
// row. The SQL pieces are constants of this package, never input.
func checkWritable(ctx context.Context, tx *sql.Tx, actor Actor, from, idCol, writable, what, id string) error {
	var ok bool
	err := tx.QueryRowContext(ctx, `SELECT `+writable+` FROM `+from+` WHERE `+idCol+` = @id`,
		append(actorArgs(actor), sql.Named("id", id))...).Scan(&ok)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s %q: %w", what, id, ErrForbidden)
	}
	return nil
}

// readModelTx reads a record with its grants inside a transaction.
func readModelTx(ctx context.Context, tx *sql.Tx, id string) (Model, error) {
	m, err := scanModel(tx.QueryRowContext(ctx, `SELECT `+modelCols+` FROM models m WHERE m.id = ?`, id))
	if err != nil {
		return m, err
	}
	g, err := grantsOf(ctx, tx, "model", []string{id})
	m.Grants, m.WriteAccess = g[id], true
	return m, err
}

// ModelPatch lists the fields of a record to change; nil keeps the stored
// value. BaseModelID "" clears the base model.
type ModelPatch struct {
	BaseModelID *string
	Name        *string
	Params      json.RawMessage
	Meta        json.RawMessage
	IsActive    *bool
	Grants      *[]Grant // replaces every grant
}

// UpdateModel changes a record (owner, admin or write grant; ErrNotFound /
// ErrForbidden) and returns it.
func (s *Store) UpdateModel(ctx context.Context, actor Actor, id string, p ModelPatch) (Model, error) {
	var out Model
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkModelWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		var base sql.NullString
		if p.BaseModelID != nil {
			base = nullStr(*p.BaseModelID)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE models SET
			base_model_id = CASE WHEN @setbase THEN @base ELSE base_model_id END,
			name = coalesce(@name, name), params = coalesce(@params, params), meta = coalesce(@meta, meta),
			is_active = coalesce(@active, is_active), updated_at = @now
			WHERE id = @id`,
			sql.Named("setbase", p.BaseModelID != nil), sql.Named("base", base), sql.Named("name", p.Name),
			sql.Named("params", rawArg(p.Params)), sql.Named("meta", rawArg(p.Meta)), sql.Named("active", p.IsActive),
			sql.Named("now", s.now().Unix()), sql.Named("id", id)); err != nil {
			return err
		}
		if p.Grants != nil {
			if _, err := s.replaceGrants(ctx, tx, "model", id, *p.Grants); err != nil {
				return err
			}
		}
		var err error
		out, err = readModelTx(ctx, tx, id)
		return err
	})
	return out, err
}

// ToggleModel flips a record's active flag (owner, admin or write grant).
func (s *Store) ToggleModel(ctx context.Context, actor Actor, id string) (Model, error) {
	var out Model
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkModelWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE models SET is_active = NOT is_active, updated_at = ? WHERE id = ?`, s.now().Unix(), id); err != nil {
			return err
		}
		var err error
		out, err = readModelTx(ctx, tx, id)
		return err
	})
	return out, err
}

// SetModelGrants replaces a record's grants (owner, admin or write grant)
// and bumps updated_at.
func (s *Store) SetModelGrants(ctx context.Context, actor Actor, id string, grants []Grant) (Model, error) {
	var out Model
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkModelWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		if _, err := s.replaceGrants(ctx, tx, "model", id, grants); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE models SET updated_at = ? WHERE id = ?`, s.now().Unix(), id); err != nil {
			return err
		}
		var err error
		out, err = readModelTx(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteModel removes a record and its grants (owner, admin or write grant).
func (s *Store) DeleteModel(ctx context.Context, actor Actor, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkModelWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM models WHERE id = ?`, id)
		return err
	})
}

// ModelFilter selects records for the workspace list (Open WebUI
// search_models): presets only (records with a base model).
type ModelFilter struct {
	Query      string // matches name, base model id, owner name/e-mail/username
	ViewOption string // "created" (the actor's own) or "shared" (others')
	Tag        string // a meta tag name, case-insensitive
	OrderBy    string // name, created_at, updated_at (default created_at)
	Direction  string // asc or desc (default desc)
	// All lists every record (an admin under BYPASS_ADMIN_ACCESS_CONTROL);
	// otherwise only the actor's own and those they may read.
	All    bool
	Limit  int
	Offset int
}

var modelOrder = map[string]string{"name": "m.name", "created_at": "m.created_at", "updated_at": "m.updated_at"}

// ListModels returns one page of the records the actor may see, the total
// count, each with grants, WriteAccess and the owner's card.
func (s *Store) ListModels(ctx context.Context, actor Actor, f ModelFilter) ([]Model, int, error) {
	args := append(actorArgs(actor), sql.Named("all", f.All && actor.IsAdmin()))
	where := `m.base_model_id IS NOT NULL AND (@all OR ` + modelReadable + `)`
	if q := strings.TrimSpace(f.Query); q != "" {
		where += ` AND (m.name LIKE @q ESCAPE '\' OR m.base_model_id LIKE @q ESCAPE '\' OR u.name LIKE @q ESCAPE '\'
			OR u.email LIKE @q ESCAPE '\' OR coalesce(u.username, '') LIKE @q ESCAPE '\')`
		args = append(args, sql.Named("q", "%"+escapeLike(q)+"%"))
	}
	switch f.ViewOption {
	case "created":
		where += ` AND m.user_id = @uid`
	case "shared":
		where += ` AND m.user_id != @uid`
	}
	if t := strings.TrimSpace(f.Tag); t != "" {
		where += ` AND EXISTS (SELECT 1 FROM json_each(m.meta, '$.tags') jt
			WHERE lower(coalesce(json_extract(jt.value, '$.name'), jt.value)) = lower(@tag))`
		args = append(args, sql.Named("tag", t))
	}
	from := ` FROM models m LEFT JOIN users u ON u.id = m.user_id WHERE ` + where
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	col, ok := modelOrder[f.OrderBy]
	if !ok {
		col = "m.created_at"
	}
	dir := "DESC"
	if strings.EqualFold(f.Direction, "asc") {
		dir = "ASC"
	}
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	args = append(args, sql.Named("limit", limit), sql.Named("offset", max(f.Offset, 0)))
	rows, err := s.read.QueryContext(ctx, `SELECT `+modelCols+`,
		(@all OR m.user_id = @uid OR `+grantCond("model", "m.id", PermWrite)+`),
		u.id, u.name, u.email, u.role, u.profile_image_url, u.last_active_at`+from+`
		ORDER BY `+col+` `+dir+`, m.id LIMIT @limit OFFSET @offset`, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Model{}
	var ids []string
	for rows.Next() {
		var uid, name, email, role, pic sql.NullString
		var active sql.NullInt64
		var write bool
		m, err := scanModel(rows, &write, &uid, &name, &email, &role, &pic, &active)
		if err != nil {
			return nil, 0, err
		}
		m.WriteAccess = write
		if uid.Valid {
			m.Owner = &UserCard{ID: uid.String, Name: name.String, Email: email.String, Role: role.String,
				ProfileImageURL: pic.String, LastActiveAt: active.Int64}
		}
		out = append(out, m)
		ids = append(ids, m.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	grants, err := grantsOf(ctx, s.read, "model", append([]string{}, ids...))
	if err != nil {
		return nil, 0, err
	}
	for i := range out {
		out[i].Grants = grants[out[i].ID]
	}
	return out, total, nil
}
