package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
)

// ChatListFilter selects the sidebar list (GET /api/v1/chats/).
type ChatListFilter struct {
	IncludePinned  bool
	IncludeFolders bool
	Limit          int // 0 = all
	Offset         int
}

// ChatQuery selects a page of the archived, shared or per-user lists.
type ChatQuery struct {
	Query     string // title contains, case-insensitive
	OrderBy   string // title, updated_at (default), created_at
	Direction string // asc or desc (default)
	Limit     int    // 0 = all
	Offset    int
}

var chatOrder = map[string]string{"title": "title", "updated_at": "updated_at", "created_at": "created_at"}

func (f ChatQuery) sql(alias string) (where string, args []any, tail string, targs []any) {
	if q := strings.TrimSpace(f.Query); q != "" {
		where = ` AND ` + alias + `.title LIKE ? ESCAPE '\'`
		args = append(args, "%"+escapeLike(q)+"%")
	}
	col, ok := chatOrder[f.OrderBy]
	if !ok {
		col = "updated_at"
	}
	dir := "DESC"
	if strings.EqualFold(f.Direction, "asc") {
		dir = "ASC"
	}
	tie := alias + ".id"
	if alias == "s" {
		tie = alias + ".chat_id"
	}
	return where, args, ` ORDER BY ` + alias + `.` + col + ` ` + dir + `, ` + tie + ` LIMIT ? OFFSET ?`, []any{limitArg(f.Limit), max(f.Offset, 0)}
}

func limitArg(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

const listCols = `c.id, c.title, c.updated_at, c.created_at, c.last_read_at`

func scanList(rows *sql.Rows) ([]ChatListItem, error) {
	defer rows.Close()
	out := []ChatListItem{}
	for rows.Next() {
		var it ChatListItem
		var lr sql.NullInt64
		if err := rows.Scan(&it.ID, &it.Title, &it.UpdatedAt, &it.CreatedAt, &lr); err != nil {
			return nil, err
		}
		if lr.Valid {
			it.LastReadAt = &lr.Int64
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// ListChats is the actor's sidebar list: not archived; pinned chats and
// chats in folders only when asked; newest first. It walks the index
// chats_list (user_id, archived, updated_at DESC, id) in order and stops
// after a page: no sort, no scan of all the user's chats.
func (s *Store) ListChats(ctx context.Context, actor Actor, f ChatListFilter) ([]ChatListItem, error) {
	q := `SELECT ` + listCols + ` FROM chats c WHERE c.user_id = ? AND c.archived = 0`
	if !f.IncludePinned {
		q += ` AND c.pinned = 0`
	}
	if !f.IncludeFolders {
		q += ` AND c.folder_id IS NULL`
	}
	q += ` ORDER BY c.updated_at DESC, c.id LIMIT ? OFFSET ?`
	rows, err := s.read.QueryContext(ctx, q, actor.UserID, limitArg(f.Limit), max(f.Offset, 0))
	if err != nil {
		return nil, err
	}
	return scanList(rows)
}

// ListPinnedChats is the actor's pinned, unarchived chats, newest first.
func (s *Store) ListPinnedChats(ctx context.Context, actor Actor) ([]ChatListItem, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+listCols+` FROM chats c
		WHERE c.user_id = ? AND c.pinned = 1 AND c.archived = 0 ORDER BY c.updated_at DESC, c.id`, actor.UserID)
	if err != nil {
		return nil, err
	}
	return scanList(rows)
}

// ListArchivedChats is a page of the actor's archived chats.
func (s *Store) ListArchivedChats(ctx context.Context, actor Actor, f ChatQuery) ([]ChatListItem, error) {
	where, args, tail, targs := f.sql("c")
	rows, err := s.read.QueryContext(ctx, `SELECT `+listCols+` FROM chats c WHERE c.user_id = ? AND c.archived = 1`+where+tail,
		append(append([]any{actor.UserID}, args...), targs...)...)
	if err != nil {
		return nil, err
	}
	return scanList(rows)
}

// CountArchivedChats counts the actor's archived chats.
func (s *Store) CountArchivedChats(ctx context.Context, actor Actor) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM chats WHERE user_id = ? AND archived = 1`, actor.UserID).Scan(&n)
	return n, err
}

// ListUserChats is a page of another user's chats, archived included; for
// admins only (the rule is in the query). The ENABLE_ADMIN_CHAT_ACCESS
// switch is the handler's.
func (s *Store) ListUserChats(ctx context.Context, actor Actor, userID string, f ChatQuery) ([]ChatListItem, error) {
	where, args, tail, targs := f.sql("c")
	rows, err := s.read.QueryContext(ctx, `SELECT `+listCols+` FROM chats c WHERE c.user_id = ? AND ?`+where+tail,
		append(append([]any{userID, actor.IsAdmin()}, args...), targs...)...)
	if err != nil {
		return nil, err
	}
	return scanList(rows)
}

// ChatSet names a set of chats to stream.
type ChatSet int

const (
	MyChats         ChatSet = iota // every chat of the actor (unarchived first), newest first
	MyArchivedChats                // the actor's archived chats, newest first
	AllUsersChats                  // every chat in the database, oldest first; admins only
)

const exportBatch = 100

// EachChat calls fn for every chat of the set, assembling one chat at a
// time from batches of 100 ids (keyset pagination, a short read per batch
// and per chat), so an export never holds the whole set in memory nor a
// read snapshot for its whole duration. A chat deleted meanwhile is skipped.
func (s *Store) EachChat(ctx context.Context, actor Actor, set ChatSet, fn func(*ChatRecord) error) error {
	if set == AllUsersChats {
		last := int64(-1)
		for {
			seqs, err := s.seqBatch(ctx, `SELECT seq, 0, '' FROM chats WHERE ? AND seq > ? ORDER BY seq LIMIT ?`,
				actor.IsAdmin(), last, exportBatch)
			if err != nil || len(seqs) == 0 {
				return err
			}
			for _, k := range seqs {
				if err := s.emitChat(ctx, fn, `c.seq = ? AND ?`, k.seq, actor.IsAdmin()); err != nil {
					return err
				}
			}
			last = seqs[len(seqs)-1].seq
		}
	}
	phases := []int{0, 1}
	if set == MyArchivedChats {
		phases = []int{1}
	}
	for _, archived := range phases {
		at, id := int64(math.MaxInt64), ""
		for {
			seqs, err := s.seqBatch(ctx, `SELECT seq, updated_at, id FROM chats WHERE user_id = ? AND archived = ?
				AND updated_at <= ? AND (updated_at < ? OR id > ?) ORDER BY updated_at DESC, id LIMIT ?`,
				actor.UserID, archived, at, at, id, exportBatch)
			if err != nil {
				return err
			}
			if len(seqs) == 0 {
				break
			}
			for _, k := range seqs {
				if err := s.emitChat(ctx, fn, `c.seq = ? AND c.user_id = ?`, k.seq, actor.UserID); err != nil {
					return err
				}
			}
			lastK := seqs[len(seqs)-1]
			at, id = lastK.updatedAt, lastK.id
		}
	}
	return nil
}

type seqKey struct {
	seq       int64
	updatedAt int64
	id        string
}

func (s *Store) seqBatch(ctx context.Context, q string, args ...any) ([]seqKey, error) {
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []seqKey
	for rows.Next() {
		var k seqKey
		if err := rows.Scan(&k.seq, &k.updatedAt, &k.id); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func (s *Store) emitChat(ctx context.Context, fn func(*ChatRecord) error, where string, args ...any) error {
	var rec ChatRecord
	err := s.readTx(ctx, func(q queryer) error {
		var err error
		rec, err = s.loadChat(ctx, q, where, args...)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return fn(&rec)
}

// EachFolderChat calls fn for the actor's chats in the folder and its
// sub-folders (GET /api/v1/chats/folder/{id}), newest first; as upstream,
// pinned and archived chats are left out (they show in their own lists). A
// folder that is not the actor's is ErrNotFound.
func (s *Store) EachFolderChat(ctx context.Context, actor Actor, folderID string, fn func(*ChatRecord) error) error {
	var one int
	err := s.read.QueryRowContext(ctx, `SELECT 1 FROM folders WHERE id = ? AND user_id = ?`, folderID, actor.UserID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	seqs, err := s.seqBatch(ctx, `WITH RECURSIVE f(id) AS (
			SELECT id FROM folders WHERE id = ? AND user_id = ?
			UNION SELECT fo.id FROM folders fo JOIN f ON fo.parent_id = f.id WHERE fo.user_id = ?)
		SELECT c.seq, c.updated_at, c.id FROM chats c WHERE c.user_id = ? AND c.folder_id IN (SELECT id FROM f)
			AND c.archived = 0 AND c.pinned = 0 ORDER BY c.updated_at DESC, c.id`,
		folderID, actor.UserID, actor.UserID, actor.UserID)
	if err != nil {
		return err
	}
	for _, k := range seqs {
		if err := s.emitChat(ctx, fn, `c.seq = ? AND c.user_id = ?`, k.seq, actor.UserID); err != nil {
			return err
		}
	}
	return nil
}
