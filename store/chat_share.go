package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"
)

// ShareChat snapshots the actor's chat into shared_chats (the assembled chat
// JSON as of now) and sets chats.share_id; sharing again refreshes the same
// snapshot under the same token. Later changes to the chat do not reach the
// snapshot until it is shared again.
func (s *Store) ShareChat(ctx context.Context, actor Actor, id string) error {
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		rec, err := s.loadChat(ctx, tx, `c.id = ? AND c.user_id = ?`, id, actor.UserID)
		if err != nil {
			return err
		}
		var token string
		err = tx.QueryRowContext(ctx, `SELECT id FROM shared_chats WHERE chat_id = ?`, id).Scan(&token)
		switch {
		case err == nil:
			_, err = tx.ExecContext(ctx, `UPDATE shared_chats SET title = ?, snapshot = ?, updated_at = ? WHERE id = ?`,
				rec.Title, string(rec.Chat), now, token)
		case errors.Is(err, sql.ErrNoRows):
			token = uuid.NewString()
			_, err = tx.ExecContext(ctx, `INSERT INTO shared_chats (id, chat_id, user_id, title, snapshot, created_at, updated_at)
				VALUES (?,?,?,?,?,?,?)`, token, id, actor.UserID, rec.Title, string(rec.Chat), now, now)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE chats SET share_id = ? WHERE id = ? AND user_id = ?`, token, id, actor.UserID)
		return err
	})
}

// UnshareChat drops the snapshot and the share id of the actor's chat; false
// when the chat was not shared.
func (s *Store) UnshareChat(ctx context.Context, actor Actor, id string) (bool, error) {
	shared := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var share string
		err := tx.QueryRowContext(ctx, `SELECT coalesce(share_id, '') FROM chats WHERE id = ? AND user_id = ?`,
			id, actor.UserID).Scan(&share)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil || share == "" {
			return err
		}
		shared = true
		if _, err := tx.ExecContext(ctx, `DELETE FROM shared_chats WHERE chat_id = ? AND user_id = ?`, id, actor.UserID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE chats SET share_id = NULL WHERE id = ? AND user_id = ?`, id, actor.UserID)
		return err
	})
	return shared, err
}

// DeleteAllShares drops every snapshot of the actor and clears their chats'
// share ids.
func (s *Store) DeleteAllShares(ctx context.Context, actor Actor) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM shared_chats WHERE user_id = ?`, actor.UserID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE chats SET share_id = NULL WHERE user_id = ? AND share_id IS NOT NULL`, actor.UserID)
		return err
	})
}

// GetSharedChat returns a snapshot by its token as a chat: id and share id
// are the token, user_id the owner. The token is the capability: any
// verified caller holding it may read (the route's access level keeps
// pending users out).
func (s *Store) GetSharedChat(ctx context.Context, token string) (ChatRecord, error) {
	var rec ChatRecord
	var snap string
	err := s.read.QueryRowContext(ctx, `SELECT id, user_id, title, snapshot, created_at, updated_at
		FROM shared_chats WHERE id = ?`, token).Scan(&rec.ID, &rec.UserID, &rec.Title, &snap, &rec.CreatedAt, &rec.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, ErrNotFound
	}
	rec.ShareID, rec.Chat, rec.Meta = rec.ID, []byte(snap), []byte("{}")
	return rec, err
}

// SharedChatItem is a row of the actor's share list (SharedChatResponse).
type SharedChatItem struct {
	ChatID    string
	Title     string
	ShareID   string
	UpdatedAt int64
	CreatedAt int64
}

// ListSharedChats lists the actor's shares.
func (s *Store) ListSharedChats(ctx context.Context, actor Actor, f ChatQuery) ([]SharedChatItem, error) {
	where, args, tail, targs := f.sql("s")
	rows, err := s.read.QueryContext(ctx, `SELECT s.chat_id, s.title, s.id, s.updated_at, s.created_at
		FROM shared_chats s WHERE s.user_id = ?`+where+tail, append(append([]any{actor.UserID}, args...), targs...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []SharedChatItem{}
	for rows.Next() {
		var it SharedChatItem
		if err := rows.Scan(&it.ChatID, &it.Title, &it.ShareID, &it.UpdatedAt, &it.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// CloneChat copies a chat for the actor (POST /api/v1/chats/{id}/clone):
// the document plus originalChatId and branchPointMessageId (the current
// message as GET would answer it), title "Clone of <title>" unless given;
// pinned, folder and meta are kept. The message rows are copied by one
// INSERT ... SELECT (same order, bodies never pass through Go). The source
// is the actor's own chat or, with anyOwner (admin fallback of clone/shared),
// any chat; a foreign chat's tags are not copied.
func (s *Store) CloneChat(ctx context.Context, actor Actor, id, title string, anyOwner bool) (string, error) {
	now := s.now().Unix()
	var newID string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var seq int64
		var owner, oldTitle, doc, meta string
		var pinned bool
		var folder sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT seq, user_id, title, doc, pinned, folder_id, meta FROM chats
			WHERE id = ? AND (user_id = ? OR ?)`, id, actor.UserID, anyOwner && actor.IsAdmin()).
			Scan(&seq, &owner, &oldTitle, &doc, &pinned, &folder, &meta)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		cur, err := effectiveCurrentID(ctx, tx, id, seq, []byte(doc))
		if err != nil {
			return err
		}
		if title == "" {
			title = "Clone of " + oldTitle
		}
		branch := []byte("null")
		if cur != "" {
			branch = appendQuoted(nil, cur)
		}
		d := []byte(doc)
		if cur != "" && cur != docCurrentID(d) {
			d = setDocCurrentID(d, branch)
		}
		ms, _ := members(d)
		ms = setMember(ms, "originalChatId", appendQuoted(nil, id))
		ms = setMember(ms, "branchPointMessageId", branch)
		ms = setMember(ms, "title", appendQuoted(nil, title))
		sameOwner := owner == actor.UserID
		if !sameOwner {
			folder, meta = sql.NullString{}, "{}"
		}
		newID = uuid.NewString()
		var newSeq int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO chats (id, user_id, title, doc, pinned, folder_id, meta,
			created_at, updated_at, last_read_at) VALUES (?,?,?,?,?,?,?,?,?,?) RETURNING seq`,
			newID, actor.UserID, title, string(appendObject(nil, ms)), pinned, folder, meta, now, now, now).Scan(&newSeq); err != nil {
			return err
		}
		base := seq << msgSeqBits
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (seq, chat_id, id, parent_id, role, done, timestamp, content, leaf, body)
			SELECT ? + (seq - ?), ?, id, parent_id, role, done, timestamp, content, leaf, body
			FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq`, newSeq<<msgSeqBits, base, newID, base, base+msgSeqSpan); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_lists (chat_id, body) SELECT ?, body FROM chat_lists WHERE chat_id = ?`,
			newID, id); err != nil {
			return err
		}
		if sameOwner {
			_, err = tx.ExecContext(ctx, `INSERT INTO chat_tags (chat_id, user_id, tag_id, created_at)
				SELECT ?, user_id, tag_id, ? FROM chat_tags WHERE chat_id = ?`, newID, now, id)
		}
		return err
	})
	return newID, err
}

// CloneSharedChat copies a share snapshot into a new chat of the actor:
// originalChatId is the token (the snapshot's id, as upstream),
// branchPointMessageId its history.currentId, title "Clone of <title>".
func (s *Store) CloneSharedChat(ctx context.Context, actor Actor, token string) (string, error) {
	rec, err := s.GetSharedChat(ctx, token)
	if err != nil {
		return "", err
	}
	p, err := ParseChat(rec.Chat)
	if err != nil {
		return "", err
	}
	branch := []byte("null")
	if cur := docCurrentID(appendObject(nil, p.top)); cur != "" {
		branch = appendQuoted(nil, cur)
	}
	p.top = setMember(p.top, "originalChatId", appendQuoted(nil, rec.ID))
	p.top = setMember(p.top, "branchPointMessageId", branch)
	p.top = setMember(p.top, "title", appendQuoted(nil, "Clone of "+rec.Title))
	var id string
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = s.insertChat(ctx, tx, actor, NewChat{Chat: p}, false)
		return err
	})
	return id, err
}
