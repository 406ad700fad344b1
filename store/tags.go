package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
)

// Tag is a user's chat label (Open WebUI TagModel). Its ID is the
// normalized name (NormalizeTagID); (UserID, ID) is the key.
type Tag struct {
	ID     string
	Name   string
	UserID string
	Meta   json.RawMessage
}

// TaggedChat is one row of the chats-by-tag list (ChatTitleIdResponse).
type TaggedChat struct {
	ID         string
	Title      string
	UpdatedAt  int64
	CreatedAt  int64
	LastReadAt *int64
}

// NormalizeTagID is how Open WebUI derives a tag id from its name: spaces
// become "_" and the result is lower-cased ("My Tag" → "my_tag"). Hearth
// also trims surrounding white space first, so " x" and "x" are one tag.
func NormalizeTagID(name string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), " ", "_"))
}

// chatTagCols reads a chat's tags from chat_tags (the single source of
// truth) joined to the user's tag rows; a chat_tags row without a tag row
// (written by some other path) still shows, named by its id.
const chatTagCols = `ct.tag_id, coalesce(t.name, ct.tag_id), c.user_id, t.meta`

func scanTags(rows *sql.Rows) ([]Tag, error) {
	defer rows.Close()
	out := []Tag{}
	for rows.Next() {
		var t Tag
		var meta sql.NullString
		if err := rows.Scan(&t.ID, &t.Name, &t.UserID, &meta); err != nil {
			return nil, err
		}
		t.Meta = rawOrNil(meta)
		out = append(out, t)
	}
	return out, rows.Err()
}

type tagsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ownChatForTags is ErrNotFound unless chatID is a chat of the actor.
func ownChatForTags(ctx context.Context, q tagsQuerier, actor Actor, chatID string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM chats WHERE id = ? AND user_id = ?`, chatID, actor.UserID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// tagRowsOfChat lists the tags of a chat of the actor, oldest first.
func tagRowsOfChat(ctx context.Context, q tagsQuerier, actor Actor, chatID string) ([]Tag, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+chatTagCols+` FROM chat_tags ct
		JOIN chats c ON c.id = ct.chat_id AND c.user_id = ?
		LEFT JOIN tags t ON t.user_id = c.user_id AND t.id = ct.tag_id
		WHERE ct.chat_id = ? ORDER BY ct.created_at, ct.tag_id`, actor.UserID, chatID)
	if err != nil {
		return nil, err
	}
	return scanTags(rows)
}

// ChatTags lists the tags of one of the actor's chats. Another user's chat
// (admins included) is ErrNotFound, the same as a missing one.
func (s *Store) ChatTags(ctx context.Context, actor Actor, chatID string) ([]Tag, error) {
	if err := ownChatForTags(ctx, s.read, actor, chatID); err != nil {
		return nil, err
	}
	return tagRowsOfChat(ctx, s.read, actor, chatID)
}

// ensureTagTx creates the actor's tag row for name unless one with the same
// id exists (the first spelling of a name is kept).
func ensureTagTx(ctx context.Context, tx *sql.Tx, userID, name string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO tags (id, user_id, name) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		NormalizeTagID(name), userID, strings.TrimSpace(name))
	return err
}

// dropOrphanTagsTx deletes the user's tag rows among ids that no chat_tags
// row of theirs uses any more (archived chats count as users of a tag).
func dropOrphanTagsTx(ctx context.Context, tx *sql.Tx, userID string, ids ...string) error {
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tags WHERE user_id = ?1 AND id = ?2
			AND NOT EXISTS (SELECT 1 FROM chat_tags WHERE user_id = ?1 AND tag_id = ?2)`, userID, id); err != nil {
			return err
		}
	}
	return nil
}

// AddChatTag tags one of the actor's chats with name, creating the actor's
// tag row when missing, and returns the chat's tags. Nothing else of the
// chat changes (updated_at included). The caller refuses empty and "None"
// names.
func (s *Store) AddChatTag(ctx context.Context, actor Actor, chatID, name string) ([]Tag, error) {
	now := s.now().Unix()
	var out []Tag
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := ownChatForTags(ctx, tx, actor, chatID); err != nil {
			return err
		}
		if err := ensureTagTx(ctx, tx, actor.UserID, name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_tags (chat_id, user_id, tag_id, created_at)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, chatID, actor.UserID, NormalizeTagID(name), now); err != nil {
			return err
		}
		var err error
		out, err = tagRowsOfChat(ctx, tx, actor, chatID)
		return err
	})
	return out, err
}

// RemoveChatTag takes name off one of the actor's chats (a tag the chat
// does not have is not an error), deletes the tag row when no chat of the
// actor uses it any more, and returns the chat's remaining tags.
func (s *Store) RemoveChatTag(ctx context.Context, actor Actor, chatID, name string) ([]Tag, error) {
	id := NormalizeTagID(name)
	var out []Tag
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := ownChatForTags(ctx, tx, actor, chatID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_tags WHERE chat_id = ? AND tag_id = ?`, chatID, id); err != nil {
			return err
		}
		if err := dropOrphanTagsTx(ctx, tx, actor.UserID, id); err != nil {
			return err
		}
		var err error
		out, err = tagRowsOfChat(ctx, tx, actor, chatID)
		return err
	})
	return out, err
}

// ListTags lists the actor's tags by id.
func (s *Store) ListTags(ctx context.Context, actor Actor) ([]Tag, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, user_id, meta FROM tags WHERE user_id = ? ORDER BY id`, actor.UserID)
	if err != nil {
		return nil, err
	}
	return scanTags(rows)
}

// ChatsByTag lists the actor's non-archived chats tagged name, newest
// first. When the page is empty and no chat of the actor carries the tag
// any more, the tag row is deleted (Open WebUI deletes it whenever the
// answer is empty; Hearth only when it is really unused, so a page past the
// end cannot delete a tag in use).
func (s *Store) ChatsByTag(ctx context.Context, actor Actor, name string, skip, limit int) ([]TaggedChat, error) {
	id := NormalizeTagID(name)
	rows, err := s.read.QueryContext(ctx, `SELECT c.id, c.title, c.updated_at, c.created_at, c.last_read_at
		FROM chat_tags ct JOIN chats c ON c.id = ct.chat_id
		WHERE ct.user_id = ?1 AND ct.tag_id = ?2 AND c.user_id = ?1 AND c.archived = 0
		ORDER BY c.updated_at DESC, c.id LIMIT ?3 OFFSET ?4`, actor.UserID, id, limit, skip)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []TaggedChat{}
	for rows.Next() {
		var c TaggedChat
		var lr sql.NullInt64
		if err := rows.Scan(&c.ID, &c.Title, &c.UpdatedAt, &c.CreatedAt, &lr); err != nil {
			return nil, err
		}
		if lr.Valid {
			c.LastReadAt = &lr.Int64
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		err = s.tx(ctx, func(tx *sql.Tx) error { return dropOrphanTagsTx(ctx, tx, actor.UserID, id) })
	}
	return out, err
}
