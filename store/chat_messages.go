package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
)

// CompletionTarget is what a stored completion needs to know about the
// message it fills, read without assembling the chat.
type CompletionTarget struct {
	Title string
	// Body is the stored message, nil when the chat has no such message.
	Body []byte
	// ParentID is, for a missing message, the message whose childrenIds
	// lists it ("" when none does).
	ParentID string
}

// CompletionTarget reads message msgID of the actor's own chat chatID for
// the completion pipeline: one chat row and one message row (plus, for a
// missing message, the few candidates of findParent), whatever the size of
// the chat. A chat that is not the actor's is ErrNotFound.
func (s *Store) CompletionTarget(ctx context.Context, actor Actor, chatID, msgID string) (CompletionTarget, error) {
	var t CompletionTarget
	err := s.readTx(ctx, func(q queryer) error {
		var seq int64
		err := q.QueryRowContext(ctx, `SELECT seq, title FROM chats WHERE id = ? AND user_id = ?`, chatID, actor.UserID).Scan(&seq, &t.Title)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		var body string
		err = q.QueryRowContext(ctx, `SELECT body FROM messages WHERE chat_id = ? AND id = ?`, chatID, msgID).Scan(&body)
		switch {
		case err == nil:
			t.Body = []byte(body)
			return nil
		case errors.Is(err, sql.ErrNoRows):
			t.ParentID, _, err = findParent(ctx, q, seq, msgID)
			return err
		default:
			return err
		}
	})
	return t, err
}

// PathMessage is one message on the way from a chat's root to a message.
type PathMessage struct {
	ID, Role string
	Body     []byte
}

// MessagePath returns the messages from the root of the actor's own chat
// chatID down to leafID, root first, following parentId: at most limit of
// them, the ones nearest the leaf (limit 0 = the whole path). Each step is
// one indexed row, so the cost follows the length asked for, not the size
// of the chat. A parentId cycle ends the path where it closes. A chat that
// is not the actor's is ErrNotFound; a missing leaf gives an empty path.
func (s *Store) MessagePath(ctx context.Context, actor Actor, chatID, leafID string, limit int) ([]PathMessage, error) {
	var path []PathMessage
	err := s.readTx(ctx, func(q queryer) error {
		var one int
		err := q.QueryRowContext(ctx, `SELECT 1 FROM chats WHERE id = ? AND user_id = ?`, chatID, actor.UserID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for id := leafID; id != "" && !seen[id] && (limit <= 0 || len(path) < limit); {
			seen[id] = true
			var m PathMessage
			var parent sql.NullString
			var body string
			err := q.QueryRowContext(ctx, `SELECT id, coalesce(role, ''), parent_id, body FROM messages WHERE chat_id = ? AND id = ?`,
				chatID, id).Scan(&m.ID, &m.Role, &parent, &body)
			if errors.Is(err, sql.ErrNoRows) {
				break
			}
			if err != nil {
				return err
			}
			m.Body = []byte(body)
			path = append(path, m)
			id = parent.String
		}
		return nil
	})
	slices.Reverse(path)
	return path, err
}

// chatForMessageEdit finds the chat a message edit applies to: the owner's,
// or any chat for an admin (COMPAT §3.7: admins may update and delete any
// message of any chat, whatever ENABLE_ADMIN_CHAT_ACCESS says).
func chatForMessageEdit(ctx context.Context, tx *sql.Tx, actor Actor, chatID string) (int64, []byte, error) {
	var seq int64
	var doc string
	err := tx.QueryRowContext(ctx, `SELECT seq, doc FROM chats WHERE id = ? AND (user_id = ? OR ?)`,
		chatID, actor.UserID, actor.IsAdmin()).Scan(&seq, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, ErrNotFound
	}
	return seq, []byte(doc), err
}

// writeMessage updates one stored message row from its new body.
func writeMessage(ctx context.Context, tx *sql.Tx, seq int64, body []byte) error {
	c := extractMessage(body)
	_, err := tx.ExecContext(ctx, `UPDATE messages SET parent_id = ?, role = ?, done = ?, timestamp = ?, content = ?,
		leaf = ?, body = ? WHERE seq = ?`, c.parentID, c.role, c.done, c.timestamp, c.content, c.leaf, string(body), seq)
	return err
}

func stringsJSON(ids []string) []byte {
	out := []byte{'['}
	for i, id := range ids {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendQuoted(out, id)
	}
	return append(out, ']')
}

// UpsertMessageContent sets the content of one message (POST
// /api/v1/chats/{id}/messages/{message_id}; owner or admin). An existing
// message keeps every other field and its key order (only that one body is
// decoded and re-encoded). A missing one is created as Open WebUI's upsert
// does: parentId = the message that lists it in childrenIds, childrenIds [],
// role the opposite of the parent's (assistant by default), timestamp now.
// history.currentId moves to the message.
func (s *Store) UpsertMessageContent(ctx context.Context, actor Actor, chatID, msgID, content string) error {
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		chatSeq, doc, err := chatForMessageEdit(ctx, tx, actor, chatID)
		if err != nil {
			return err
		}
		var seq int64
		var body string
		err = tx.QueryRowContext(ctx, `SELECT seq, body FROM messages WHERE chat_id = ? AND id = ?`, chatID, msgID).Scan(&seq, &body)
		switch {
		case err == nil:
			if err := writeMessage(ctx, tx, seq, setStringMember([]byte(body), "content", content)); err != nil {
				return err
			}
		case errors.Is(err, sql.ErrNoRows):
			parent, parentRole, err := findParent(ctx, tx, chatSeq, msgID)
			if err != nil {
				return err
			}
			role := "assistant"
			if parentRole == "assistant" {
				role = "user"
			}
			b := []byte(`{"id":`)
			b = appendQuoted(b, msgID)
			b = append(b, `,"parentId":`...)
			if parent == "" {
				b = append(b, "null"...)
			} else {
				b = appendQuoted(b, parent)
			}
			b = append(b, `,"childrenIds":[],"role":`...)
			b = appendQuoted(b, role)
			b = append(b, `,"content":`...)
			b = appendQuoted(b, content)
			b = append(b, `,"timestamp":`...)
			b = append(b, itoa64(now)...)
			b = append(b, '}')
			if err := upsertMessages(ctx, tx, chatID, chatSeq, []member{{key: msgID, val: b}}); err != nil {
				return err
			}
		default:
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE chats SET doc = ?, updated_at = ? WHERE seq = ?`,
			string(setDocCurrentID(doc, appendQuoted(nil, msgID))), now, chatSeq)
		return err
	})
}

// findParent returns the first message (in history order) whose childrenIds
// lists msgID, and its role. The text search on the quoted id only narrows
// the candidates; each is confirmed by reading its childrenIds.
func findParent(ctx context.Context, tx queryer, chatSeq int64, msgID string) (string, string, error) {
	base := chatSeq << msgSeqBits
	rows, err := tx.QueryContext(ctx, `SELECT id, coalesce(role, ''), body FROM messages
		WHERE seq >= ? AND seq < ? AND leaf = 0 AND instr(body, ?) > 0 ORDER BY seq`,
		base, base+msgSeqSpan, string(appendQuoted(nil, msgID)))
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var id, role string
		var body []byte
		if err := rows.Scan(&id, &role, &body); err != nil {
			return "", "", err
		}
		for _, c := range childrenIDs(body) {
			if c == msgID {
				return id, role, nil
			}
		}
	}
	return "", "", rows.Err()
}

// childrenIDs returns the string entries of a message's childrenIds (last
// occurrence of the key wins).
func childrenIDs(body []byte) []string {
	var val []byte
	eachMember(body, func(rawKey, v []byte) {
		if string(rawKey) == `"childrenIds"` {
			val = v
		}
	})
	return stringArray(val)
}

// DeleteMessage removes a message and its direct children (DELETE
// /api/v1/chats/{id}/messages/{message_id}; owner or admin), as Open WebUI
// does: the grandchildren are re-parented to the deleted message's parent,
// the parent's childrenIds lose the deleted id and gain the grandchildren,
// and history.currentId, when it pointed into the removed part, moves to the
// end of the parent's last branch (or to the most recent leaf). Only the
// rows concerned are decoded; the walk uses the parent_id column and stops
// on cycles.
func (s *Store) DeleteMessage(ctx context.Context, actor Actor, chatID, msgID string) error {
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		chatSeq, doc, err := chatForMessageEdit(ctx, tx, actor, chatID)
		if err != nil {
			return err
		}
		var seq int64
		var parent sql.NullString
		var body []byte
		err = tx.QueryRowContext(ctx, `SELECT seq, parent_id, body FROM messages WHERE chat_id = ? AND id = ?`,
			chatID, msgID).Scan(&seq, &parent, &body)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		base := chatSeq << msgSeqBits

		// The direct children: rows naming it as parent, and ids it lists.
		removed := map[string]int64{msgID: seq}
		listed := childrenIDs(body)
		rows, err := tx.QueryContext(ctx, `SELECT seq, id FROM messages WHERE seq >= ? AND seq < ?
			AND (parent_id = ? OR id IN (SELECT value FROM json_each(?)))`,
			base, base+msgSeqSpan, msgID, string(stringsJSON(listed)))
		if err != nil {
			return err
		}
		for rows.Next() {
			var cs int64
			var cid string
			if err := rows.Scan(&cs, &cid); err != nil {
				rows.Close()
				return err
			}
			removed[cid] = cs
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var children []string
		for id := range removed {
			if id != msgID {
				children = append(children, id)
			}
		}

		// Grandchildren move up to the deleted message's parent.
		newParent := []byte("null")
		if parent.Valid {
			newParent = appendQuoted(nil, parent.String)
		}
		var grand []string
		if len(children) > 0 {
			rows, err := tx.QueryContext(ctx, `SELECT seq, id, body FROM messages WHERE seq >= ? AND seq < ?
				AND parent_id IN (SELECT value FROM json_each(?)) ORDER BY seq`,
				base, base+msgSeqSpan, string(stringsJSON(children)))
			if err != nil {
				return err
			}
			type gc struct {
				seq  int64
				body []byte
			}
			var gcs []gc
			for rows.Next() {
				var g gc
				var gid string
				if err := rows.Scan(&g.seq, &gid, &g.body); err != nil {
					rows.Close()
					return err
				}
				if _, gone := removed[gid]; gone {
					continue
				}
				gcs = append(gcs, g)
				grand = append(grand, gid)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, g := range gcs {
				ms, _ := members(g.body)
				ms = setMember(ms, "parentId", newParent)
				if err := writeMessage(ctx, tx, g.seq, appendObject(nil, ms)); err != nil {
					return err
				}
			}
		}

		// The parent's childrenIds.
		if parent.Valid {
			var ps int64
			var pbody []byte
			err := tx.QueryRowContext(ctx, `SELECT seq, body FROM messages WHERE chat_id = ? AND id = ?`,
				chatID, parent.String).Scan(&ps, &pbody)
			switch {
			case err == nil:
				if _, gone := removed[parent.String]; !gone {
					var kids []string
					have := map[string]bool{}
					for _, c := range childrenIDs(pbody) {
						if c != msgID && !have[c] {
							kids = append(kids, c)
							have[c] = true
						}
					}
					for _, g := range grand {
						if !have[g] {
							kids = append(kids, g)
							have[g] = true
						}
					}
					ms, _ := members(pbody)
					ms = setMember(ms, "childrenIds", stringsJSON(kids))
					if err := writeMessage(ctx, tx, ps, appendObject(nil, ms)); err != nil {
						return err
					}
				}
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}

		for _, rs := range removed {
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE seq = ?`, rs); err != nil {
				return err
			}
		}

		// currentId.
		cur := docCurrentID(doc)
		_, curGone := removed[cur]
		if cur == "" || curGone {
			next, err := branchEnd(ctx, tx, chatSeq, parent)
			if err != nil {
				return err
			}
			val := []byte("null")
			if next != "" {
				val = appendQuoted(nil, next)
			}
			doc = setDocCurrentID(doc, val)
		}
		_, err = tx.ExecContext(ctx, `UPDATE chats SET doc = ?, updated_at = ? WHERE seq = ?`, string(doc), now, chatSeq)
		return err
	})
}

// branchEnd walks from start along the last child (by insertion order,
// using the parent_id column) to a leaf; without a start it is the most
// recent leaf. A visited set stops parentId cycles.
func branchEnd(ctx context.Context, tx *sql.Tx, chatSeq int64, start sql.NullString) (string, error) {
	base := chatSeq << msgSeqBits
	if !start.Valid {
		var leaf string
		err := tx.QueryRowContext(ctx, `SELECT id FROM messages WHERE seq >= ? AND seq < ? AND leaf = 1
			AND coalesce(role, '') <> '' ORDER BY coalesce(timestamp, 0) DESC, seq LIMIT 1`, base, base+msgSeqSpan).Scan(&leaf)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		return leaf, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, parent_id FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq`,
		base, base+msgSeqSpan)
	if err != nil {
		return "", err
	}
	lastChild := map[string]string{}
	exists := map[string]bool{}
	for rows.Next() {
		var id string
		var p sql.NullString
		if err := rows.Scan(&id, &p); err != nil {
			rows.Close()
			return "", err
		}
		exists[id] = true
		if p.Valid {
			lastChild[p.String] = id
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	if !exists[start.String] {
		return branchEnd(ctx, tx, chatSeq, sql.NullString{})
	}
	cur := start.String
	seen := map[string]bool{cur: true}
	for {
		next, ok := lastChild[cur]
		if !ok || seen[next] {
			return cur, nil
		}
		seen[next] = true
		cur = next
	}
}
