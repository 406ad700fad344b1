package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// ErrFolderCycle refuses moving a folder under itself or one of its own
// sub-folders.
var ErrFolderCycle = errors.New("a folder cannot be moved into itself or one of its sub-folders")

// Folder is a user's chat folder (Open WebUI FolderModel). ParentID is ""
// for a top-level folder. Folders are private: every query is scoped to the
// actor's own folders, admins included.
type Folder struct {
	ID         string
	ParentID   string
	UserID     string
	Name       string
	Items      json.RawMessage
	Meta       json.RawMessage
	Data       json.RawMessage
	IsExpanded bool
	CreatedAt  int64
	UpdatedAt  int64
}

// FolderChat is one row of a folder's chat list.
type FolderChat struct {
	ID         string
	Title      string
	UpdatedAt  int64
	LastReadAt *int64
}

const folderCols = `id, coalesce(parent_id, ''), user_id, name, items, meta, data, is_expanded, created_at, updated_at`

func scanFolder(row scanner) (Folder, error) {
	var f Folder
	var items, meta, data sql.NullString
	err := row.Scan(&f.ID, &f.ParentID, &f.UserID, &f.Name, &items, &meta, &data, &f.IsExpanded, &f.CreatedAt, &f.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return f, ErrNotFound
	}
	f.Items, f.Meta, f.Data = rawOrNil(items), rawOrNil(meta), rawOrNil(data)
	return f, err
}

// folderSubtree is a recursive CTE "sub(id)": the actor's folder ?1 (user
// ?2) and all its descendants.
const folderSubtree = `WITH RECURSIVE sub(id) AS (
	SELECT id FROM folders WHERE id = ?1 AND user_id = ?2
	UNION SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id WHERE f.user_id = ?2)`

// actorFolderExists is ErrNotFound unless id is a folder of the actor.
func actorFolderExists(ctx context.Context, q tagsQuerier, actor Actor, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM folders WHERE id = ? AND user_id = ?`, id, actor.UserID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// ListFolders lists the actor's folders, oldest first.
func (s *Store) ListFolders(ctx context.Context, actor Actor) ([]Folder, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+folderCols+` FROM folders WHERE user_id = ?
		ORDER BY created_at, id`, actor.UserID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Folder{}
	for rows.Next() {
		f, err := scanFolder(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// GetFolder reads one of the actor's folders.
func (s *Store) GetFolder(ctx context.Context, actor Actor, id string) (Folder, error) {
	return scanFolder(s.read.QueryRowContext(ctx, `SELECT `+folderCols+` FROM folders WHERE id = ? AND user_id = ?`,
		id, actor.UserID))
}

// NewFolder is what folder creation takes.
type NewFolder struct {
	Name     string
	ParentID string // "" = top level; else one of the actor's folders
	Data     json.RawMessage
	Meta     json.RawMessage
}

// CreateFolder adds a folder for the actor. A parent that is not the
// actor's folder is ErrNotFound; a name taken (case-insensitively) under the
// same parent is ErrConflict.
func (s *Store) CreateFolder(ctx context.Context, actor Actor, nf NewFolder) (Folder, error) {
	now := s.now().Unix()
	id := uuid.NewString()
	var f Folder
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if nf.ParentID != "" {
			if err := actorFolderExists(ctx, tx, actor, nf.ParentID); err != nil {
				return fmt.Errorf("parent folder: %w", err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO folders (id, user_id, parent_id, name, meta, data, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, actor.UserID, nullStr(nf.ParentID), nf.Name, rawArg(nf.Meta), rawArg(nf.Data), now, now)
		if isUnique(err) {
			return fmt.Errorf("folder %q: %w", nf.Name, ErrConflict)
		}
		if err != nil {
			return err
		}
		f, err = scanFolder(tx.QueryRowContext(ctx, `SELECT `+folderCols+` FROM folders WHERE id = ?`, id))
		return err
	})
	return f, err
}

// FolderPatch lists fields to change; nil means unchanged. Data and Meta
// are merged into the stored objects key by key (top level), as Open WebUI
// does.
type FolderPatch struct {
	Name *string
	Data json.RawMessage
	Meta json.RawMessage
}

// mergeFolderObjects overlays the top-level keys of patch on base (both JSON
// objects; a base that is not an object is replaced).
func mergeFolderObjects(base, patch json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(base) > 0 {
		if err := json.Unmarshal(base, &m); err != nil || m == nil {
			m = map[string]json.RawMessage{}
		}
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	for k, v := range p {
		m[k] = v
	}
	return json.Marshal(m)
}

// UpdateFolder renames the actor's folder and/or merges data and meta, in
// one transaction. A name taken under the same parent is ErrConflict.
func (s *Store) UpdateFolder(ctx context.Context, actor Actor, id string, p FolderPatch) (Folder, error) {
	now := s.now().Unix()
	var f Folder
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := scanFolder(tx.QueryRowContext(ctx, `SELECT `+folderCols+` FROM folders WHERE id = ? AND user_id = ?`, id, actor.UserID))
		if err != nil {
			return err
		}
		data, meta := cur.Data, cur.Meta
		if len(p.Data) > 0 {
			if data, err = mergeFolderObjects(cur.Data, p.Data); err != nil {
				return err
			}
		}
		if len(p.Meta) > 0 {
			if meta, err = mergeFolderObjects(cur.Meta, p.Meta); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE folders SET name = coalesce(?, name), data = ?, meta = ?, updated_at = ?
			WHERE id = ? AND user_id = ?`, p.Name, rawArg(data), rawArg(meta), now, id, actor.UserID)
		if isUnique(err) {
			return fmt.Errorf("folder name: %w", ErrConflict)
		}
		if err != nil {
			return err
		}
		f, err = scanFolder(tx.QueryRowContext(ctx, `SELECT `+folderCols+` FROM folders WHERE id = ?`, id))
		return err
	})
	return f, err
}

// MoveFolder gives the actor's folder a new parent ("" = top level). The
// parent must be the actor's folder (else ErrNotFound) and neither the
// folder itself nor one of its descendants (ErrFolderCycle); a name taken
// under the new parent is ErrConflict.
func (s *Store) MoveFolder(ctx context.Context, actor Actor, id, parentID string) (Folder, error) {
	now := s.now().Unix()
	var f Folder
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := actorFolderExists(ctx, tx, actor, id); err != nil {
			return err
		}
		if parentID != "" {
			if err := actorFolderExists(ctx, tx, actor, parentID); err != nil {
				return fmt.Errorf("parent folder: %w", err)
			}
			var inside int
			if err := tx.QueryRowContext(ctx, folderSubtree+` SELECT count(*) FROM sub WHERE id = ?3`,
				id, actor.UserID, parentID).Scan(&inside); err != nil {
				return err
			}
			if inside > 0 {
				return ErrFolderCycle
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE folders SET parent_id = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
			nullStr(parentID), now, id, actor.UserID)
		if isUnique(err) {
			return fmt.Errorf("folder name under the new parent: %w", ErrConflict)
		}
		if err != nil {
			return err
		}
		f, err = scanFolder(tx.QueryRowContext(ctx, `SELECT `+folderCols+` FROM folders WHERE id = ?`, id))
		return err
	})
	return f, err
}

// SetFolderExpanded records whether the actor's folder is open in the
// sidebar.
func (s *Store) SetFolderExpanded(ctx context.Context, actor Actor, id string, expanded bool) (Folder, error) {
	now := s.now().Unix()
	var f Folder
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE folders SET is_expanded = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
			expanded, now, id, actor.UserID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		f, err = scanFolder(tx.QueryRowContext(ctx, `SELECT `+folderCols+` FROM folders WHERE id = ?`, id))
		return err
	})
	return f, err
}

// DeleteFolder deletes the actor's folder and all its sub-folders in one
// transaction. With deleteContents the actor's chats in any of them are
// deleted too (their messages, shares and tag links by cascade; tags no
// chat uses any more are removed) — refused with ErrForbidden when there
// are such chats and mayDeleteChats is false. Without deleteContents the
// chats are moved out to the top level (folder_id NULL).
func (s *Store) DeleteFolder(ctx context.Context, actor Actor, id string, deleteContents, mayDeleteChats bool) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := actorFolderExists(ctx, tx, actor, id); err != nil {
			return err
		}
		inTree := `user_id = ?2 AND folder_id IN (SELECT id FROM sub)`
		if deleteContents {
			rows, err := tx.QueryContext(ctx, folderSubtree+` SELECT DISTINCT ct.tag_id FROM chat_tags ct
				JOIN chats c ON c.id = ct.chat_id WHERE c.user_id = ?2 AND c.folder_id IN (SELECT id FROM sub)`,
				id, actor.UserID)
			if err != nil {
				return err
			}
			var tagIDs []string
			for rows.Next() {
				var t string
				if err := rows.Scan(&t); err != nil {
					rows.Close()
					return err
				}
				tagIDs = append(tagIDs, t)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, folderSubtree+` DELETE FROM chats WHERE `+inTree, id, actor.UserID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 && !mayDeleteChats {
				return fmt.Errorf("delete chats: %w", ErrForbidden)
			}
			if err := dropOrphanTagsTx(ctx, tx, actor.UserID, tagIDs...); err != nil {
				return err
			}
		} else {
			if _, err := tx.ExecContext(ctx, folderSubtree+` UPDATE chats SET folder_id = NULL WHERE `+inTree,
				id, actor.UserID); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, folderSubtree+` DELETE FROM folders WHERE user_id = ?2 AND id IN (SELECT id FROM sub)`,
			id, actor.UserID)
		return err
	})
}

// FolderChats lists a page of the actor's chats in one of their folders
// (not archived, not pinned), newest first. A folder that is not the
// actor's is ErrNotFound.
func (s *Store) FolderChats(ctx context.Context, actor Actor, folderID string, skip, limit int) ([]FolderChat, error) {
	if err := actorFolderExists(ctx, s.read, actor, folderID); err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id, title, updated_at, last_read_at FROM chats
		WHERE user_id = ? AND folder_id = ? AND archived = 0 AND pinned = 0
		ORDER BY updated_at DESC, id LIMIT ? OFFSET ?`, actor.UserID, folderID, limit, skip)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []FolderChat{}
	for rows.Next() {
		var c FolderChat
		var lr sql.NullInt64
		if err := rows.Scan(&c.ID, &c.Title, &c.UpdatedAt, &lr); err != nil {
			return nil, err
		}
		if lr.Valid {
			c.LastReadAt = &lr.Int64
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
