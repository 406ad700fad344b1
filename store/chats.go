package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"strconv"

	"github.com/google/uuid"
)

// Chats (issue 3). A chat is stored split (see 0002_chats.sql and
// chat_json.go): chats.doc, one messages row per history message, and
// chat_lists for the legacy messages[] list. A turn writes only the messages
// it sends; a read splices raw bytes back together.
//
// Authorization is in the SQL of every statement: `user_id = ?` with the
// actor, or the admin rule spelled out in the WHERE clause. Not found and not
// yours are the same ErrNotFound.

// msgSeqBits: messages.seq = chats.seq<<msgSeqBits | n. A chat holds at most
// 2^20 (about a million) messages; its messages are one rowid range.
const msgSeqBits = 20

const msgSeqSpan = int64(1) << msgSeqBits

// ChatRecord is a chat as the API returns it. Chat is the assembled chat
// object (JSON) and Meta the meta object with tags rendered from chat_tags.
type ChatRecord struct {
	ID         string
	UserID     string
	Title      string
	Chat       []byte
	ShareID    string
	Archived   bool
	Pinned     bool
	Meta       []byte
	FolderID   string
	CreatedAt  int64
	UpdatedAt  int64
	LastReadAt *int64
}

// ChatListItem is a row of the chat lists (Open WebUI's ChatTitleIdResponse).
type ChatListItem struct {
	ID         string
	Title      string
	UpdatedAt  int64
	CreatedAt  int64
	LastReadAt *int64
	Snippet    *string
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const chatCols = `c.seq, c.id, c.user_id, c.title, c.doc, c.archived, c.pinned, coalesce(c.folder_id, ''),
	coalesce(c.share_id, ''), c.meta, c.created_at, c.updated_at, c.last_read_at`

type chatRow struct {
	seq  int64
	doc  []byte
	meta []byte
	rec  ChatRecord
}

func scanChatRow(row scanner) (chatRow, error) {
	var cr chatRow
	var lastRead sql.NullInt64
	var doc, meta string
	err := row.Scan(&cr.seq, &cr.rec.ID, &cr.rec.UserID, &cr.rec.Title, &doc, &cr.rec.Archived, &cr.rec.Pinned,
		&cr.rec.FolderID, &cr.rec.ShareID, &meta, &cr.rec.CreatedAt, &cr.rec.UpdatedAt, &lastRead)
	if errors.Is(err, sql.ErrNoRows) {
		return cr, ErrNotFound
	}
	if lastRead.Valid {
		cr.rec.LastReadAt = &lastRead.Int64
	}
	cr.doc, cr.meta = []byte(doc), []byte(meta)
	return cr, err
}

// readTx runs fn in one read transaction, so the pieces of a chat come from
// one snapshot.
func (s *Store) readTx(ctx context.Context, fn func(q queryer) error) error {
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// loadChat reads one chat selected by where (which must carry the
// authorization rule) and assembles it.
func (s *Store) loadChat(ctx context.Context, q queryer, where string, args ...any) (ChatRecord, error) {
	cr, err := scanChatRow(q.QueryRowContext(ctx, `SELECT `+chatCols+` FROM chats c WHERE `+where, args...))
	if err != nil {
		return ChatRecord{}, err
	}
	if err := s.assemble(ctx, q, &cr); err != nil {
		return ChatRecord{}, err
	}
	return cr.rec, nil
}

// assemble builds rec.Chat and rec.Meta from the stored pieces: the
// document, the message bodies in insertion order (one rowid range), the
// legacy list and the tags. Message bodies are copied, never
// decoded. When history.currentId is missing or names no stored message,
// the answer carries the most recent leaf instead (Open WebUI's repair on
// read), chosen from the extracted columns; the row is not rewritten.
func (s *Store) assemble(ctx context.Context, q queryer, cr *chatRow) error {
	doc, _ := members(cr.doc)
	var hist []member
	if h, ok := getMember(doc, "history"); ok {
		hist, _ = members(h)
	}
	var current string
	hasCurrent := false
	if v, ok := getMember(hist, "currentId"); ok {
		current, hasCurrent = jsonString(v)
	}

	msgs, n, err := messageMembers(ctx, q, cr.seq)
	if err != nil {
		return err
	}
	// Repair on read: only when currentId names no stored message (one
	// index lookup) is the most recent leaf looked for.
	found := false
	if hasCurrent {
		var one int
		err := q.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE chat_id = ? AND id = ?`, cr.rec.ID, current).Scan(&one)
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	var leafID string
	haveLeaf := false
	if !found && n > 0 {
		base := cr.seq << msgSeqBits
		err := q.QueryRowContext(ctx, `SELECT id FROM messages WHERE seq >= ? AND seq < ? AND leaf = 1
			AND coalesce(role, '') <> '' ORDER BY coalesce(timestamp, 0) DESC, seq LIMIT 1`, base, base+msgSeqSpan).Scan(&leafID)
		switch {
		case err == nil:
			haveLeaf = true
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}

	var list []byte
	hasList := false
	var listStr string
	switch err := q.QueryRowContext(ctx, `SELECT body FROM chat_lists WHERE chat_id = ?`, cr.rec.ID).Scan(&listStr); {
	case err == nil:
		list, hasList = []byte(listStr), true
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}

	tags, err := chatTagIDs(ctx, q, cr.rec.ID)
	if err != nil {
		return err
	}
	cr.rec.Meta = renderMeta(cr.meta, tags)

	repair := !found && haveLeaf && (!hasCurrent || current != leafID)
	out := make([]byte, 0, len(cr.doc)+len(msgs)+len(list)+64)
	out = append(out, '{')
	wroteHist := false
	first := true
	writeHist := func() {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, `"history":{`...)
		hfirst := true
		for _, h := range hist {
			if !hfirst {
				out = append(out, ',')
			}
			hfirst = false
			out = append(out, h.rawKey...)
			out = append(out, ':')
			if repair && h.key == "currentId" {
				out = appendQuoted(out, leafID)
				repair = false
				continue
			}
			out = append(out, h.val...)
		}
		if repair {
			if !hfirst {
				out = append(out, ',')
			}
			hfirst = false
			out = append(out, `"currentId":`...)
			out = appendQuoted(out, leafID)
		}
		if !hfirst {
			out = append(out, ',')
		}
		out = append(out, `"messages":{`...)
		out = append(out, msgs...)
		out = append(out, "}}"...)
		wroteHist = true
	}
	for _, m := range doc {
		switch m.key {
		case "history":
			writeHist() // a stored history is always an object (ParseChat)
			continue
		case "messages": // position marker of the legacy list
			if hasList {
				m.val = list
				hasList = false
			}
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, m.rawKey...)
		out = append(out, ':')
		out = append(out, m.val...)
	}
	if !wroteHist && (n > 0 || repair) {
		writeHist()
	}
	if hasList {
		if !first {
			out = append(out, ',')
		}
		out = append(out, `"messages":`...)
		out = append(out, list...)
	}
	out = append(out, '}')
	cr.rec.Chat = out
	return nil
}

// messageMembers returns the members of history.messages, `"<id>":<body>`
// joined by commas in insertion order, and their number. SQLite splices them
// into one string (one row crosses into Go instead of one per message; the
// bodies are concatenated as stored, never parsed): 1.5 ms for 2,000
// messages against 5 ms row by row. The rows come from a rowid range scan,
// already in seq order, through an ordered sub-query; the aggregate's own
// ORDER BY would sort copies of every body in a temporary b-tree (twice the
// time at 10,000 messages). TestMessageOrderPlan pins both the order and
// the plan, so an SQLite upgrade that changed either fails a test. A chat
// too large for one SQLite string falls back to reading row by row.
const messageMembersSQL = `SELECT group_concat(m, ','), count(*) FROM (
	SELECT json_quote(id) || ':' || body AS m FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq)`

func messageMembers(ctx context.Context, q queryer, chatSeq int64) ([]byte, int, error) {
	base := chatSeq << msgSeqBits
	var joined sql.NullString
	var n int
	err := q.QueryRowContext(ctx, messageMembersSQL, base, base+msgSeqSpan).Scan(&joined, &n)
	if err == nil {
		return []byte(joined.String), n, nil
	}
	return messageMembersByRow(ctx, q, chatSeq)
}

// messageMembersByRow is messageMembers one row at a time.
func messageMembersByRow(ctx context.Context, q queryer, chatSeq int64) ([]byte, int, error) {
	base := chatSeq << msgSeqBits
	rows, err := q.QueryContext(ctx, `SELECT id, body FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq`, base, base+msgSeqSpan)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []byte
	n := 0
	for rows.Next() {
		var id string
		var body sql.RawBytes
		if err := rows.Scan(&id, &body); err != nil {
			return nil, 0, err
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = appendQuoted(out, id)
		out = append(out, ':')
		out = append(out, body...)
		n++
	}
	return out, n, rows.Err()
}

func chatTagIDs(ctx context.Context, q queryer, chatID string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT tag_id FROM chat_tags WHERE chat_id = ? ORDER BY created_at, tag_id`, chatID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tags []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		tags = append(tags, t)
	}
	return tags, rows.Err()
}

// renderMeta is the stored meta object with "tags" taken from chat_tags
// (present only when the chat has tags). Stored junk becomes {}.
func renderMeta(meta []byte, tags []string) []byte {
	ms, ok := members(meta)
	if !ok {
		ms = nil
	}
	out := ms[:0:0]
	for _, m := range ms {
		if m.key != "tags" {
			out = append(out, m)
		}
	}
	if len(tags) > 0 {
		arr := []byte{'['}
		for i, t := range tags {
			if i > 0 {
				arr = append(arr, ',')
			}
			arr = appendQuoted(arr, t)
		}
		arr = append(arr, ']')
		out = append(out, member{key: "tags", rawKey: []byte(`"tags"`), val: arr})
	}
	return appendObject(nil, out)
}

// GetChat returns a chat the actor owns or, when adminAccess is true
// (ENABLE_ADMIN_CHAT_ACCESS) and the actor is an admin, any chat.
func (s *Store) GetChat(ctx context.Context, actor Actor, id string, adminAccess bool) (ChatRecord, error) {
	var rec ChatRecord
	err := s.readTx(ctx, func(q queryer) error {
		var err error
		rec, err = s.loadChat(ctx, q, `c.id = ? AND (c.user_id = ? OR ?)`, id, actor.UserID, actor.IsAdmin() && adminAccess)
		return err
	})
	return rec, err
}

// NewChat is a chat to create. The import-only fields are ignored by
// CreateChat.
type NewChat struct {
	Chat     *ChatPatch
	FolderID string

	Meta      []byte // JSON object; meta.tags become chat_tags rows
	Pinned    bool
	Archived  bool
	CreatedAt int64 // 0 = now
	UpdatedAt int64 // 0 = now
}

// CreateChat stores a new chat of the actor (POST /api/v1/chats/new). A
// folder that is not the actor's is ErrNotFound.
func (s *Store) CreateChat(ctx context.Context, actor Actor, nc NewChat) (string, error) {
	var id string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = s.insertChat(ctx, tx, actor, NewChat{Chat: nc.Chat, FolderID: nc.FolderID}, false)
		return err
	})
	return id, err
}

// ImportChats stores chats all-or-nothing in one transaction. A folder id
// that is not the actor's is cleared (Open WebUI drops dangling ones).
func (s *Store) ImportChats(ctx context.Context, actor Actor, ncs []NewChat) ([]string, error) {
	ids := make([]string, 0, len(ncs))
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, nc := range ncs {
			id, err := s.insertChat(ctx, tx, actor, nc, true)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

func (s *Store) ownFolder(ctx context.Context, tx *sql.Tx, actor Actor, folderID string) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM folders WHERE id = ? AND user_id = ?`, folderID, actor.UserID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s *Store) insertChat(ctx context.Context, tx *sql.Tx, actor Actor, nc NewChat, clearBadFolder bool) (string, error) {
	if nc.Chat == nil {
		return "", invalidf("chat is required")
	}
	now := s.now().Unix()
	folder := nc.FolderID
	if folder != "" {
		ok, err := s.ownFolder(ctx, tx, actor, folder)
		if err != nil {
			return "", err
		}
		if !ok {
			if !clearBadFolder {
				return "", fmt.Errorf("folder %s: %w", folder, ErrNotFound)
			}
			folder = ""
		}
	}
	created, updated := now, now
	if nc.CreatedAt > 0 {
		created = nc.CreatedAt
	}
	if nc.UpdatedAt > 0 {
		updated = nc.UpdatedAt
	}
	meta, tags := splitMeta(nc.Meta)
	id := uuid.NewString()
	doc := appendObject(nil, nc.Chat.top)
	var seq int64
	err := tx.QueryRowContext(ctx, `INSERT INTO chats (id, user_id, title, doc, archived, pinned, folder_id, meta,
		created_at, updated_at, last_read_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING seq`,
		id, actor.UserID, chatTitle(nc.Chat.top), string(doc), nc.Archived, nc.Pinned, nullStr(folder), string(meta),
		created, updated, now).Scan(&seq)
	if err != nil {
		return "", err
	}
	if err := upsertMessages(ctx, tx, id, seq, nc.Chat.messages); err != nil {
		return "", err
	}
	if nc.Chat.list != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_lists (chat_id, body) VALUES (?, ?)`, id, string(nc.Chat.list)); err != nil {
			return "", err
		}
	}
	for _, t := range tags {
		// The tags area's rules (tags.go): normalized ids, "none" is no tag.
		tid := NormalizeTagID(t)
		if tid == "" || tid == "none" {
			continue
		}
		if err := ensureTagTx(ctx, tx, actor.UserID, t); err != nil {
			return "", err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO chat_tags (chat_id, user_id, tag_id, created_at) VALUES (?, ?, ?, ?)`,
			id, actor.UserID, tid, now); err != nil {
			return "", err
		}
	}
	return id, nil
}

// splitMeta separates meta.tags (strings) from the rest of an imported meta
// object; tags live in chat_tags. Anything that is not an object is {}.
func splitMeta(meta []byte) ([]byte, []string) {
	if len(meta) == 0 {
		return []byte("{}"), nil
	}
	meta = sanitizeJSON(meta)
	ms, ok := members(meta)
	if !ok {
		return []byte("{}"), nil
	}
	var tags []string
	rest := ms[:0:0]
	for _, m := range ms {
		if m.key == "tags" {
			tags = stringArray(m.val)
			continue
		}
		rest = append(rest, m)
	}
	return appendObject(nil, rest), tags
}

// stringArray returns the string elements of a JSON array (others skipped).
func stringArray(val []byte) []string {
	if len(val) == 0 || val[0] != '[' {
		return nil
	}
	var out []string
	i := skipSpace(val, 1)
	for i < len(val) && val[i] != ']' {
		end := skipValue(val, i)
		if val[i] == '"' {
			out = append(out, unquote(val[i:end]))
		}
		i = skipSpace(val, end)
		if i < len(val) && val[i] == ',' {
			i = skipSpace(val, i+1)
		}
	}
	return out
}

// nextMessageSeq is the seq the chat's next new message gets.
func nextMessageSeq(ctx context.Context, tx *sql.Tx, chatSeq int64) (int64, error) {
	// ORDER BY ... LIMIT 1 seeks to the end of the chat's rowid range; an
	// aggregate max() over the range would read every message of the chat.
	base := chatSeq << msgSeqBits
	var last int64
	err := tx.QueryRowContext(ctx, `SELECT seq FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq DESC LIMIT 1`,
		base, base+msgSeqSpan).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return base, nil
	}
	return last + 1, err
}

const upsertMessageSQL = `INSERT INTO messages (seq, chat_id, id, parent_id, role, done, timestamp, content, leaf, body)
	VALUES (?,?,?,?,?,?,?,?,?,?)
	ON CONFLICT (chat_id, id) DO UPDATE SET parent_id = excluded.parent_id, role = excluded.role,
		done = excluded.done, timestamp = excluded.timestamp, content = excluded.content,
		leaf = excluded.leaf, body = excluded.body
	RETURNING seq`

// upsertMessages writes the given history messages: an existing id is
// replaced wholesale (keeping its place in the order), a new id is appended.
// Only these rows are touched.
func upsertMessages(ctx context.Context, tx *sql.Tx, chatID string, chatSeq int64, msgs []member) error {
	if len(msgs) == 0 {
		return nil
	}
	next, err := nextMessageSeq(ctx, tx, chatSeq)
	if err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, upsertMessageSQL)
	if err != nil {
		return err
	}
	defer stmt.Close()
	limit := (chatSeq + 1) << msgSeqBits
	for _, m := range msgs {
		if next >= limit {
			return invalidf("a chat holds at most %d messages", msgSeqSpan)
		}
		c := extractMessage(m.val)
		var got int64
		if err := stmt.QueryRowContext(ctx, next, chatID, m.key, c.parentID, c.role, c.done, c.timestamp,
			c.content, c.leaf, string(m.val)).Scan(&got); err != nil {
			return err
		}
		if got == next {
			next++
		}
	}
	return nil
}

// UpdateChat merges a partial chat into the actor's chat (POST
// /api/v1/chats/{id}; owner only, as upstream). Top-level keys replace
// stored ones; history.messages entries are upserted by id (the new object
// replaces the stored one wholesale, childrenIds exactly as sent); messages
// not sent are kept; other history keys, currentId included, are
// shallow-merged; a legacy messages[] replaces the stored list. One write
// transaction touching only the messages sent, the small document and the
// chats row: the cost of a turn does not grow with the chat.
func (s *Store) UpdateChat(ctx context.Context, actor Actor, id string, p *ChatPatch) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var seq int64
		var doc string
		err := tx.QueryRowContext(ctx, `SELECT seq, doc FROM chats WHERE id = ? AND user_id = ?`, id, actor.UserID).Scan(&seq, &doc)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		merged := mergeDoc([]byte(doc), p)
		if err := upsertMessages(ctx, tx, id, seq, p.messages); err != nil {
			return err
		}
		if p.list != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chat_lists (chat_id, body) VALUES (?, ?)
				ON CONFLICT (chat_id) DO UPDATE SET body = excluded.body`, id, string(p.list)); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE chats SET doc = ?, title = ?, updated_at = ? WHERE seq = ?`,
			string(appendObject(make([]byte, 0, len(doc)+64), merged)), chatTitle(merged), s.now().Unix(), seq)
		return err
	})
}

// DeleteChat deletes a chat: the owner's, or any chat for an admin (Open
// WebUI checks no ENABLE_ADMIN_CHAT_ACCESS here). Messages, the list, tags
// links and share snapshots go with it (foreign keys); tags of the owner
// that no chat uses any more are removed (archived chats count as users of
// a tag, so their tags survive; the rule of tags.go).
func (s *Store) DeleteChat(ctx context.Context, actor Actor, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT user_id FROM chats WHERE id = ? AND (user_id = ? OR ?)`,
			id, actor.UserID, actor.IsAdmin()).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		tags, err := chatTagIDs(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chats WHERE id = ?`, id); err != nil {
			return err
		}
		return dropOrphanTagsTx(ctx, tx, owner, tags...)
	})
}

// DeleteAllChats deletes every chat of the actor.
func (s *Store) DeleteAllChats(ctx context.Context, actor Actor) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT tag_id FROM chat_tags WHERE user_id = ?`, actor.UserID)
		if err != nil {
			return err
		}
		var tags []string
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return err
			}
			tags = append(tags, t)
		}
		rows.Close()
		if _, err := tx.ExecContext(ctx, `DELETE FROM chats WHERE user_id = ?`, actor.UserID); err != nil {
			return err
		}
		return dropOrphanTagsTx(ctx, tx, actor.UserID, tags...)
	})
}

func affected(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// ArchiveChat toggles archived, takes the chat out of its folder and bumps
// updated_at and last_read_at (Open WebUI's toggle_chat_archive_by_id).
func (s *Store) ArchiveChat(ctx context.Context, actor Actor, id string) error {
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		return affected(tx.ExecContext(ctx, `UPDATE chats SET archived = 1 - archived, folder_id = NULL,
			updated_at = ?, last_read_at = ? WHERE id = ? AND user_id = ?`, now, now, id, actor.UserID))
	})
}

// SetAllArchived archives or unarchives every chat of the actor.
func (s *Store) SetAllArchived(ctx context.Context, actor Actor, archived bool) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE chats SET archived = ? WHERE user_id = ? AND archived <> ?`,
			archived, actor.UserID, archived)
		return err
	})
}

// PinChat toggles pinned and bumps updated_at.
func (s *Store) PinChat(ctx context.Context, actor Actor, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return affected(tx.ExecContext(ctx, `UPDATE chats SET pinned = 1 - pinned, updated_at = ?
			WHERE id = ? AND user_id = ?`, s.now().Unix(), id, actor.UserID))
	})
}

// ChatPinned reports whether the actor's chat is pinned.
func (s *Store) ChatPinned(ctx context.Context, actor Actor, id string) (bool, error) {
	var pinned bool
	err := s.read.QueryRowContext(ctx, `SELECT pinned FROM chats WHERE id = ? AND user_id = ?`, id, actor.UserID).Scan(&pinned)
	if errors.Is(err, sql.ErrNoRows) {
		return false, ErrNotFound
	}
	return pinned, err
}

// MoveChatToFolder puts the actor's chat into one of the actor's folders
// (folderID "" takes it out). As upstream: the chat is unpinned, a chat moved
// into a folder is unarchived (folders list only unarchived chats), and the
// timestamps are bumped. A folder that is not the actor's is ErrNotFound.
func (s *Store) MoveChatToFolder(ctx context.Context, actor Actor, id, folderID string) error {
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		if folderID != "" {
			ok, err := s.ownFolder(ctx, tx, actor, folderID)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("folder %s: %w", folderID, ErrNotFound)
			}
		}
		return affected(tx.ExecContext(ctx, `UPDATE chats SET folder_id = ?, pinned = 0,
			archived = CASE WHEN ? THEN 0 ELSE archived END, updated_at = ?, last_read_at = ?
			WHERE id = ? AND user_id = ?`, nullStr(folderID), folderID != "", now, now, id, actor.UserID))
	})
}

// docCurrentID is history.currentId of a stored document ("" when absent or
// not a string).
func docCurrentID(doc []byte) string {
	ms, _ := members(doc)
	h, ok := getMember(ms, "history")
	if !ok {
		return ""
	}
	hist, _ := members(h)
	v, _ := getMember(hist, "currentId")
	s, _ := jsonString(v)
	return s
}

// setDocCurrentID returns doc with history.currentId set (val is raw JSON).
func setDocCurrentID(doc []byte, val []byte) []byte {
	ms, _ := members(doc)
	var hist []member
	if h, ok := getMember(ms, "history"); ok {
		hist, _ = members(h)
	}
	hist = setMember(hist, "currentId", val)
	ms = setMember(ms, "history", appendObject(nil, hist))
	return appendObject(make([]byte, 0, len(doc)+32), ms)
}

// effectiveCurrentID is the currentId GET answers with: the stored one when
// it names a stored message, else the most recent leaf, else "".
func effectiveCurrentID(ctx context.Context, q queryer, chatID string, chatSeq int64, doc []byte) (string, error) {
	cur := docCurrentID(doc)
	if cur != "" {
		var one int
		err := q.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE chat_id = ? AND id = ?`, chatID, cur).Scan(&one)
		if err == nil {
			return cur, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return "", err
		}
	}
	base := chatSeq << msgSeqBits
	var leaf string
	err := q.QueryRowContext(ctx, `SELECT id FROM messages WHERE seq >= ? AND seq < ? AND leaf = 1
		AND coalesce(role, '') <> '' ORDER BY coalesce(timestamp, 0) DESC, seq LIMIT 1`, base, base+msgSeqSpan).Scan(&leaf)
	if errors.Is(err, sql.ErrNoRows) {
		return cur, nil
	}
	return leaf, err
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
