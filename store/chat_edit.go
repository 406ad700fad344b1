package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// MessageEdit changes fields of one stored message body; the other fields
// and the key order are kept. It serves the completion pipeline (the final
// write of an answer) and the event emitter's persistence (SPEC.md §6).
type MessageEdit struct {
	// Set replaces (or adds) top-level members, values as raw JSON.
	Set map[string]json.RawMessage
	// SetOrder lists the keys of Set in the order new members are added
	// (map order is random); keys of Set missing from it are added last,
	// sorted.
	SetOrder []string
	// AppendContent is appended to a string `content` ("message" events).
	AppendContent string
	// Append adds array items after the existing ones (statusHistory,
	// sources); Prepend adds them before (embeds, files: Open WebUI puts new
	// items first). Values are JSON arrays; a missing or non-array field is
	// treated as empty.
	Append  map[string]json.RawMessage
	Prepend map[string]json.RawMessage
	// MoveCurrent sets history.currentId to this message.
	MoveCurrent bool
}

// EditMessage applies e to message msgID of chat chatID (the owner's chat,
// or any chat for an admin). A missing chat or message is ErrNotFound and
// nothing is written. The cost is one message row and, with MoveCurrent,
// the chat's small doc.
func (s *Store) EditMessage(ctx context.Context, actor Actor, chatID, msgID string, e MessageEdit) error {
	for k, v := range e.Set {
		if !json.Valid(v) {
			return fmt.Errorf("message field %q: %w", k, invalidf("not JSON"))
		}
	}
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		chatSeq, doc, err := chatForMessageEdit(ctx, tx, actor, chatID)
		if err != nil {
			return err
		}
		var seq int64
		var body []byte
		err = tx.QueryRowContext(ctx, `SELECT seq, body FROM messages WHERE chat_id = ? AND id = ?`, chatID, msgID).Scan(&seq, &body)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		ms, _ := members(body)
		for _, k := range orderedKeys(e.Set, e.SetOrder) {
			ms = setMember(ms, k, e.Set[k])
		}
		if e.AppendContent != "" {
			cur, _ := getMember(ms, "content")
			text, _ := jsonString(cur)
			ms = setMember(ms, "content", appendQuoted(nil, text+e.AppendContent))
		}
		for k, items := range e.Append {
			cur, _ := getMember(ms, k)
			ms = setMember(ms, k, joinArrays(cur, items))
		}
		for k, items := range e.Prepend {
			cur, _ := getMember(ms, k)
			ms = setMember(ms, k, joinArrays(items, cur))
		}
		if err := writeMessage(ctx, tx, seq, appendObject(nil, ms)); err != nil {
			return err
		}
		if e.MoveCurrent {
			doc = setDocCurrentID(doc, appendQuoted(nil, msgID))
		}
		_, err = tx.ExecContext(ctx, `UPDATE chats SET doc = ?, updated_at = ? WHERE seq = ?`, string(doc), now, chatSeq)
		return err
	})
}

func orderedKeys(set map[string]json.RawMessage, order []string) []string {
	out := make([]string, 0, len(set))
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := set[k]; ok && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range set {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// joinArrays concatenates two JSON arrays; anything that is not an array
// counts as empty.
func joinArrays(a, b []byte) []byte {
	out := []byte{'['}
	n := 0
	for _, arr := range [][]byte{a, b} {
		var items []json.RawMessage
		if json.Unmarshal(arr, &items) != nil {
			continue
		}
		for _, it := range items {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, it...)
			n++
		}
	}
	return append(out, ']')
}
