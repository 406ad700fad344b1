package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Errors of adding a file to a collection that the API answers apart
// (COMPAT.md §8.6 file/add).
var (
	// ErrFileNotReadable: the file exists but the actor may not read it.
	ErrFileNotReadable = fmt.Errorf("file not readable: %w", ErrForbidden)
	// ErrFileMissing: no such file.
	ErrFileMissing = fmt.Errorf("file missing: %w", ErrNotFound)
	// ErrEmptyContent: the file has no extracted text (still processing,
	// failed, or empty).
	ErrEmptyContent = errors.New("file content is empty")
)

// Knowledge is a knowledge collection (COMPAT.md §8.5). Access lives in
// Grants (resource type "knowledge").
type Knowledge struct {
	ID          string
	UserID      string
	Name        string
	Description string
	Meta        json.RawMessage // JSON object or nil (null)
	CreatedAt   int64
	UpdatedAt   int64
	Grants      []Grant

	WriteAccess bool      // whether the actor may change it
	Owner       *UserCard // set by ListKnowledge
	Files       []File    // set by the calls that say so (no content)
}

const knowledgeCols = `k.id, k.user_id, k.name, k.description, coalesce(k.meta, ''), k.created_at, k.updated_at`

func scanKnowledge(row scanner, extra ...any) (Knowledge, error) {
	var k Knowledge
	var meta string
	err := row.Scan(append([]any{&k.ID, &k.UserID, &k.Name, &k.Description, &meta, &k.CreatedAt, &k.UpdatedAt}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	if meta != "" && meta != "null" {
		k.Meta = json.RawMessage(meta)
	}
	return k, err
}

// knowledgeReadable / knowledgeWritable are the SQL conditions on k for the
// actor (@uid, @groups, @role). Writing: admins always, as Open WebUI's
// update/add/remove/delete checks do.
var (
	knowledgeReadable = `(k.user_id = @uid OR ` + grantCond("knowledge", "k.id", PermRead) + `)`
	knowledgeWritable = `(@role = 'admin' OR k.user_id = @uid OR ` + grantCond("knowledge", "k.id", PermWrite) + `)`
)

// CreateKnowledge stores a collection owned by the actor with its grants
// (the caller has checked workspace.knowledge and filtered the grants).
func (s *Store) CreateKnowledge(ctx context.Context, actor Actor, k Knowledge) (Knowledge, error) {
	now := s.now().Unix()
	k.ID, k.UserID, k.CreatedAt, k.UpdatedAt = uuid.NewString(), actor.UserID, now, now
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge (id, user_id, name, description, meta, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, k.ID, k.UserID, k.Name, k.Description, rawArg(k.Meta), now, now); err != nil {
			return err
		}
		var err error
		k.Grants, err = s.replaceGrants(ctx, tx, "knowledge", k.ID, k.Grants)
		return err
	})
	k.WriteAccess = err == nil
	k.Files = []File{}
	return k, err
}

// GetKnowledge reads a collection the actor may read (owner, grant, or any
// admin) with its grants and files. Missing is ErrNotFound, not readable
// ErrForbidden (Open WebUI answers them apart, COMPAT.md §1.4).
func (s *Store) GetKnowledge(ctx context.Context, actor Actor, id string) (Knowledge, error) {
	args := append(actorArgs(actor), sql.Named("id", id))
	var write bool
	k, err := scanKnowledge(s.read.QueryRowContext(ctx, `SELECT `+knowledgeCols+`, `+knowledgeWritable+`
		FROM knowledge k WHERE k.id = @id AND (@role = 'admin' OR `+knowledgeReadable+`)`, args...), &write)
	if errors.Is(err, ErrNotFound) {
		var one int
		err = s.read.QueryRowContext(ctx, `SELECT 1 FROM knowledge WHERE id = ?`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return k, ErrNotFound
		}
		if err != nil {
			return k, err
		}
		return k, fmt.Errorf("knowledge %q: %w", id, ErrForbidden)
	}
	if err != nil {
		return k, err
	}
	k.WriteAccess = write
	if err := fillKnowledge(ctx, s.read, &k); err != nil {
		return k, err
	}
	return k, nil
}

// fillKnowledge loads grants and files of one collection.
func fillKnowledge(ctx context.Context, q querier, k *Knowledge) error {
	g, err := grantsOf(ctx, q, "knowledge", []string{k.ID})
	if err != nil {
		return err
	}
	k.Grants = g[k.ID]
	rows, err := q.QueryContext(ctx, `SELECT `+fileCols+` FROM knowledge_files kf JOIN files f ON f.id = kf.file_id
		WHERE kf.knowledge_id = ? AND f.complete = 1 ORDER BY kf.created_at, kf.rowid`, k.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	k.Files = []File{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return err
		}
		k.Files = append(k.Files, f)
	}
	return rows.Err()
}

// ListKnowledge returns one page of the collections the actor may read
// (every collection with all, for an admin under
// BYPASS_ADMIN_ACCESS_CONTROL), most recently updated first, with grants,
// WriteAccess and the owner's card, and the total count.
func (s *Store) ListKnowledge(ctx context.Context, actor Actor, all bool, limit, offset int) ([]Knowledge, int, error) {
	args := append(actorArgs(actor), sql.Named("all", all && actor.IsAdmin()))
	from := ` FROM knowledge k LEFT JOIN users u ON u.id = k.user_id WHERE (@all OR ` + knowledgeReadable + `)`
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+knowledgeCols+`, `+knowledgeWritable+`,
		u.id, coalesce(u.name, ''), coalesce(u.email, ''), coalesce(u.role, ''), coalesce(u.profile_image_url, '')`+from+`
		ORDER BY k.updated_at DESC, k.id LIMIT @limit OFFSET @offset`, append(args, sql.Named("limit", limit), sql.Named("offset", offset))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Knowledge{}
	var ids []string
	for rows.Next() {
		var write bool
		var uid sql.NullString
		var c UserCard
		k, err := scanKnowledge(rows, &write, &uid, &c.Name, &c.Email, &c.Role, &c.ProfileImageURL)
		if err != nil {
			return nil, 0, err
		}
		k.WriteAccess = write
		if uid.Valid {
			c.ID = uid.String
			k.Owner = &c
		}
		out = append(out, k)
		ids = append(ids, k.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	grants, err := grantsOf(ctx, s.read, "knowledge", append([]string{}, ids...))
	if err != nil {
		return nil, 0, err
	}
	for i := range out {
		out[i].Grants = grants[out[i].ID]
	}
	return out, total, nil
}

// checkKnowledgeWrite is ErrNotFound for a missing collection and
// ErrForbidden for one the actor may not change.
func checkKnowledgeWrite(ctx context.Context, tx *sql.Tx, actor Actor, id string) error {
	return checkWritable(ctx, tx, actor, "knowledge k", "k.id", knowledgeWritable, "knowledge", id)
}

// readKnowledgeTx reads a collection the actor just changed, with grants
// and files.
func readKnowledgeTx(ctx context.Context, tx *sql.Tx, id string) (Knowledge, error) {
	k, err := scanKnowledge(tx.QueryRowContext(ctx, `SELECT `+knowledgeCols+` FROM knowledge k WHERE k.id = ?`, id))
	if err != nil {
		return k, err
	}
	k.WriteAccess = true
	return k, fillKnowledge(ctx, tx, &k)
}

// KnowledgePatch lists what to change; nil keeps the stored value.
type KnowledgePatch struct {
	Name        *string
	Description *string
	Meta        json.RawMessage
	Grants      *[]Grant // replaces every grant
}

// UpdateKnowledge changes a collection (owner, admin or write grant;
// ErrNotFound / ErrForbidden) and returns it with its files.
func (s *Store) UpdateKnowledge(ctx context.Context, actor Actor, id string, p KnowledgePatch) (Knowledge, error) {
	var out Knowledge
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkKnowledgeWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE knowledge SET name = coalesce(@name, name),
			description = coalesce(@desc, description), meta = coalesce(@meta, meta), updated_at = @now WHERE id = @id`,
			sql.Named("name", p.Name), sql.Named("desc", p.Description), sql.Named("meta", rawArg(p.Meta)),
			sql.Named("now", s.now().Unix()), sql.Named("id", id)); err != nil {
			return err
		}
		if p.Grants != nil {
			if _, err := s.replaceGrants(ctx, tx, "knowledge", id, *p.Grants); err != nil {
				return err
			}
		}
		var err error
		out, err = readKnowledgeTx(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteKnowledge removes a collection, its file links and grants; the
// files themselves stay (Open WebUI's delete keeps them).
func (s *Store) DeleteKnowledge(ctx context.Context, actor Actor, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkKnowledgeWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM knowledge WHERE id = ?`, id)
		return err
	})
}

// AddKnowledgeFile links a file to a collection the actor may write. The
// file must be readable by the actor (ErrFileMissing, ErrFileNotReadable)
// and have extracted text (ErrEmptyContent). Adding it again is a no-op.
func (s *Store) AddKnowledgeFile(ctx context.Context, actor Actor, id, fileID string) (Knowledge, error) {
	var out Knowledge
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkKnowledgeWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		var readable, hasText bool
		err := tx.QueryRowContext(ctx, `SELECT `+fileAccess(PermRead)+`, length(coalesce(f.content, '')) > 0
			FROM files f WHERE f.id = @fid AND f.complete = 1`, append(actorArgs(actor), sql.Named("fid", fileID))...).Scan(&readable, &hasText)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrFileMissing
		case err != nil:
			return err
		case !readable:
			return ErrFileNotReadable
		case !hasText:
			return ErrEmptyContent
		}
		now := s.now().Unix()
		if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge_files (id, knowledge_id, file_id, user_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (knowledge_id, file_id) DO NOTHING`, uuid.NewString(), id, fileID, actor.UserID, now, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE knowledge SET updated_at = ? WHERE id = ?`, now, id); err != nil {
			return err
		}
		out, err = readKnowledgeTx(ctx, tx, id)
		return err
	})
	return out, err
}

// RemoveKnowledgeFile unlinks a file from a collection the actor may write
// (a file not in it is ErrFileMissing). With deleteFile, the file itself is
// deleted too when the actor owns it or is an admin (Open WebUI's
// delete_file=true).
func (s *Store) RemoveKnowledgeFile(ctx context.Context, actor Actor, id, fileID string, deleteFile bool) (Knowledge, error) {
	var out Knowledge
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkKnowledgeWrite(ctx, tx, actor, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM knowledge_files WHERE knowledge_id = ? AND file_id = ?`, id, fileID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrFileMissing
		}
		if deleteFile {
			if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE id = @fid AND (@role = 'admin' OR user_id = @uid)`,
				append(actorArgs(actor), sql.Named("fid", fileID))...); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE knowledge SET updated_at = ? WHERE id = ?`, s.now().Unix(), id); err != nil {
			return err
		}
		out, err = readKnowledgeTx(ctx, tx, id)
		return err
	})
	return out, err
}
