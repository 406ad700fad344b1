package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chat search (GET /api/v1/chats/search). SQLite FTS5 only: message_fts
// over the text of every message, chat_title_fts over titles, both kept in
// step by triggers. No LIKE scan of JSON.
//
// The text is lower-cased and split on white space (as Open WebUI does).
// Words starting with tag:, folder:, pinned:, archived:, shared: are filters
// (COMPAT §3.5); the other words are cut into tokens the way FTS5's
// unicode61 tokenizer cuts them (letters and digits), and every token becomes
// a quoted prefix term ("tok"*), so no user text can be FTS syntax. A chat
// matches when every term is in its title or in one of its messages. Words
// that yield no token at all (punctuation only) match nothing.

// searchQuery is a parsed search text.
type searchQuery struct {
	tokens   []string // FTS tokens (lower-case)
	noText   bool     // no free-text words: filters only
	tags     []string
	tagNone  bool
	folders  []string
	pinned   *bool
	archived *bool
	shared   *bool
}

func boolWord(w, prefix string) (*bool, bool) {
	switch w {
	case prefix + "true":
		b := true
		return &b, true
	case prefix + "false":
		b := false
		return &b, true
	}
	return nil, false
}

func parseSearch(text string) searchQuery {
	var q searchQuery
	text = strings.ReplaceAll(strings.ToValidUTF8(text, "\uFFFD"), "\x00", "")
	free := 0
	for _, w := range strings.Fields(strings.ToLower(text)) {
		switch {
		case strings.HasPrefix(w, "tag:"):
			if t := strings.TrimPrefix(w, "tag:"); t == "none" {
				q.tagNone = true
			} else if t != "" {
				q.tags = append(q.tags, t)
			}
		case strings.HasPrefix(w, "folder:"):
			q.folders = append(q.folders, strings.TrimPrefix(w, "folder:"))
		case strings.HasPrefix(w, "pinned:"):
			if b, ok := boolWord(w, "pinned:"); ok {
				q.pinned = b
			}
		case strings.HasPrefix(w, "archived:"):
			if b, ok := boolWord(w, "archived:"); ok {
				q.archived = b
			}
		case strings.HasPrefix(w, "shared:"):
			if b, ok := boolWord(w, "shared:"); ok {
				q.shared = b
			}
		default:
			free++
			q.tokens = append(q.tokens, ftsTokens(w)...)
		}
	}
	q.noText = free == 0
	q.tokens = slices.Compact(q.tokens)
	return q
}

// ftsTokens cuts a word like unicode61 does: runs of letters, digits and
// private-use characters.
func ftsTokens(w string) []string {
	return strings.FieldsFunc(w, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.IsMark(r))
	})
}

// ftsTerm is a token as an FTS5 prefix query: a quoted string (quotes
// doubled, though tokens never contain any) followed by *.
func ftsTerm(tok string) string { return `"` + strings.ReplaceAll(tok, `"`, `""`) + `"*` }

// filterSQL is the WHERE part shared by both search plans (alias c).
func (q *searchQuery) filterSQL(actor Actor) (string, []any) {
	var b strings.Builder
	args := []any{actor.UserID}
	b.WriteString(` c.user_id = ? AND c.archived = ?`)
	args = append(args, q.archived != nil && *q.archived)
	if q.pinned != nil {
		b.WriteString(` AND c.pinned = ?`)
		args = append(args, *q.pinned)
	}
	if q.shared != nil {
		if *q.shared {
			b.WriteString(` AND c.share_id IS NOT NULL`)
		} else {
			b.WriteString(` AND c.share_id IS NULL`)
		}
	}
	if len(q.folders) > 0 {
		b.WriteString(` AND c.folder_id IN (SELECT id FROM folders WHERE user_id = ? AND name COLLATE NOCASE IN (SELECT value FROM json_each(?)))`)
		args = append(args, actor.UserID, string(stringsJSON(q.folders)))
	}
	if q.tagNone {
		b.WriteString(` AND NOT EXISTS (SELECT 1 FROM chat_tags WHERE chat_id = c.id)`)
	}
	for _, t := range q.tags {
		b.WriteString(` AND EXISTS (SELECT 1 FROM chat_tags WHERE chat_id = c.id AND tag_id = ?)`)
		args = append(args, t)
	}
	return b.String(), args
}

// smallSetLimit: up to this many matching chats (all users), the page is
// read by looking each one up; above it, the user's chats are walked in list
// order and tested against the match set until the page is full.
const smallSetLimit = 2000

// SearchChats is a page of the actor's chats matching text (archived chats
// only with archived:true), newest first, each with a snippet of its first
// matching message. Scoped to the actor in SQL.
func (s *Store) SearchChats(ctx context.Context, actor Actor, text string, limit, offset int) ([]ChatListItem, error) {
	q := parseSearch(text)
	where, args := q.filterSQL(actor)
	if q.noText {
		rows, err := s.read.QueryContext(ctx, `SELECT `+listCols+` FROM chats c WHERE`+where+
			` ORDER BY c.updated_at DESC, c.id LIMIT ? OFFSET ?`, append(args, limitArg(limit), max(offset, 0))...)
		if err != nil {
			return nil, err
		}
		return scanList(rows)
	}
	if len(q.tokens) == 0 {
		return []ChatListItem{}, nil
	}

	// Per term: the chats it matches (sorted chat seqs) and the message
	// rowids that matched (sorted; for snippets). A message rowid names its
	// chat: rowid >> msgSeqBits.
	var match []int64
	var msgHits [][]int64
	for i, tok := range q.tokens {
		term := ftsTerm(tok)
		msgRows, err := s.rowidList(ctx, `SELECT group_concat(rowid) FROM message_fts WHERE message_fts MATCH ?`, term)
		if err != nil {
			return nil, err
		}
		titleRows, err := s.rowidList(ctx, `SELECT group_concat(rowid) FROM chat_title_fts WHERE chat_title_fts MATCH ?`, term)
		if err != nil {
			return nil, err
		}
		msgHits = append(msgHits, msgRows)
		chats := make([]int64, 0, len(msgRows)+len(titleRows))
		for _, r := range msgRows {
			if cs := r >> msgSeqBits; len(chats) == 0 || chats[len(chats)-1] != cs {
				chats = append(chats, cs)
			}
		}
		chats = unionSorted(chats, titleRows)
		if i == 0 {
			match = chats
		} else {
			match = intersectSorted(match, chats)
		}
		if len(match) == 0 {
			return []ChatListItem{}, nil
		}
	}

	type hit struct {
		seq int64
		it  ChatListItem
	}
	var page []hit
	scan := func(rows *sql.Rows, test bool) error {
		defer rows.Close()
		skipped := 0
		for rows.Next() {
			var h hit
			var lr sql.NullInt64
			if err := rows.Scan(&h.seq, &h.it.ID, &h.it.Title, &h.it.UpdatedAt, &h.it.CreatedAt, &lr); err != nil {
				return err
			}
			if test {
				if _, ok := slices.BinarySearch(match, h.seq); !ok {
					continue
				}
				if skipped < offset {
					skipped++
					continue
				}
			}
			if lr.Valid {
				h.it.LastReadAt = &lr.Int64
			}
			page = append(page, h)
			if test && len(page) >= limit && limit > 0 {
				break
			}
		}
		return rows.Err()
	}
	if len(match) <= smallSetLimit {
		rows, err := s.read.QueryContext(ctx, `SELECT c.seq, `+listCols+` FROM chats c
			WHERE c.seq IN (SELECT value FROM json_each(?)) AND`+where+` ORDER BY c.updated_at DESC, c.id LIMIT ? OFFSET ?`,
			append(append([]any{int64sJSON(match)}, args...), limitArg(limit), max(offset, 0))...)
		if err != nil {
			return nil, err
		}
		if err := scan(rows, false); err != nil {
			return nil, err
		}
	} else {
		rows, err := s.read.QueryContext(ctx, `SELECT c.seq, `+listCols+` FROM chats c WHERE`+where+
			` ORDER BY c.updated_at DESC, c.id`, args...)
		if err != nil {
			return nil, err
		}
		if err := scan(rows, true); err != nil {
			return nil, err
		}
	}

	// Snippets: the first matching message of each chat on the page.
	first := make(map[int64]int64, len(page))
	var want []int64
	for _, h := range page {
		best := int64(-1)
		lo, hi := h.seq<<msgSeqBits, (h.seq+1)<<msgSeqBits
		for _, hits := range msgHits {
			i, _ := slices.BinarySearch(hits, lo)
			if i < len(hits) && hits[i] < hi && (best < 0 || hits[i] < best) {
				best = hits[i]
			}
		}
		if best >= 0 {
			first[h.seq] = best
			want = append(want, best)
		}
	}
	contents := map[int64]string{}
	if len(want) > 0 {
		rows, err := s.read.QueryContext(ctx, `SELECT seq, content FROM messages WHERE seq IN (SELECT value FROM json_each(?))`, int64sJSON(want))
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var seq int64
			var content string
			if err := rows.Scan(&seq, &content); err != nil {
				rows.Close()
				return nil, err
			}
			contents[seq] = content
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]ChatListItem, 0, len(page))
	for _, h := range page {
		if r, ok := first[h.seq]; ok {
			if c, ok := contents[r]; ok {
				sn := snippet(c, q.tokens)
				h.it.Snippet = &sn
			}
		}
		out = append(out, h.it)
	}
	return out, nil
}

// rowidList runs a query returning one group_concat of rowids and parses it
// into a sorted slice. One row crosses into Go instead of one per match.
func (s *Store) rowidList(ctx context.Context, q string, args ...any) ([]int64, error) {
	var list sql.NullString
	if err := s.read.QueryRowContext(ctx, q, args...).Scan(&list); err != nil {
		return nil, err
	}
	if !list.Valid || list.String == "" {
		return nil, nil
	}
	str := list.String
	out := make([]int64, 0, strings.Count(str, ",")+1)
	var n int64
	for i := 0; i < len(str); i++ {
		c := str[i]
		if c == ',' {
			out = append(out, n)
			n = 0
			continue
		}
		n = n*10 + int64(c-'0')
	}
	out = append(out, n)
	if !slices.IsSorted(out) {
		slices.Sort(out)
	}
	return out, nil
}

func unionSorted(a, b []int64) []int64 {
	if len(b) == 0 {
		return a
	}
	out := make([]int64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var v int64
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			v = a[i]
			i++
		case i >= len(a) || b[j] < a[i]:
			v = b[j]
			j++
		default:
			v = a[i]
			i++
			j++
		}
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func intersectSorted(a, b []int64) []int64 {
	out := a[:0:0]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case b[j] < a[i]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

func int64sJSON(v []int64) string {
	b := make([]byte, 0, len(v)*8+2)
	b = append(b, '[')
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(append(b, ']'))
}

// snippet is the text around the first word of content that starts with one
// of the tokens (case-insensitive), about 160 bytes, cut at rune and word
// boundaries, "..." marking a cut. When no token is found as written (e.g.
// diacritics folded by the index), the start of the message is used.
func snippet(content string, tokens []string) string {
	const before, span = 60, 160
	content = strings.Join(strings.Fields(content), " ")
	pos := 0
	lower := strings.ToLower(content)
	if len(lower) == len(content) {
		best := -1
		for _, t := range tokens {
			for from := 0; from < len(lower); {
				i := strings.Index(lower[from:], t)
				if i < 0 {
					break
				}
				i += from
				r, _ := utf8.DecodeLastRuneInString(lower[:i])
				if i == 0 || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
					if best < 0 || i < best {
						best = i
					}
					break
				}
				from = i + 1
			}
		}
		if best > 0 {
			pos = best
		}
	}
	start := max(0, pos-before)
	if start > 0 {
		if sp := strings.IndexByte(content[start:pos], ' '); sp >= 0 {
			start += sp + 1
		}
		for start < len(content) && !utf8.RuneStart(content[start]) {
			start++
		}
	}
	end := min(len(content), start+span)
	if end < len(content) {
		if sp := strings.LastIndexByte(content[pos:end], ' '); sp > 0 {
			end = pos + sp
		}
		for end > start && !utf8.RuneStart(content[end]) {
			end--
		}
	}
	out := content[start:end]
	if start > 0 {
		out = "..." + out
	}
	if end < len(content) {
		out += "..."
	}
	return out
}
