package store

import (
	"context"
	"database/sql"
	"encoding/json"
)

// The reads of retrieval during chat (COMPAT.md §8.8): the files and
// collections a completion request names, filtered by access IN the query,
// with their extracted text. Only files whose processing completed are
// returned (SPEC.md §3: only processed files are used in completions).

// RetrievalFiles returns, in the order of ids, the files among ids that the
// actor may read (owner, admin, or a readable collection holding it) and
// whose processing completed, with their extracted text. Unknown,
// unreadable and unprocessed ids are left out (not an error: Open WebUI
// skips them too). Duplicate ids yield one file.
func (s *Store) RetrievalFiles(ctx context.Context, actor Actor, ids []string) ([]File, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(ids)
	rows, err := s.read.QueryContext(ctx, `SELECT `+fileCols+`, f.content FROM files f
		WHERE f.id IN (SELECT value FROM json_each(@ids)) AND f.complete = 1 AND f.status = 'completed' AND `+fileAccess(PermRead),
		append(actorArgs(actor), sql.Named("ids", string(b)))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := map[string]File{}
	for rows.Next() {
		var content sql.NullString
		f, err := scanFile(rows, &content)
		if err != nil {
			return nil, err
		}
		c := content.String
		f.Content = &c
		byID[f.ID] = f
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]File, 0, len(byID))
	for _, id := range ids {
		if f, ok := byID[id]; ok {
			out = append(out, f)
			delete(byID, id)
		}
	}
	return out, nil
}

// RetrievalKnowledge returns a collection the actor may read (owner, a read
// or write grant, or any admin — as Open WebUI's retrieval checks it) and
// its processed files with their extracted text, in the order they were
// added. A missing collection and one the actor may not read are both
// ErrNotFound: the request item is skipped either way.
func (s *Store) RetrievalKnowledge(ctx context.Context, actor Actor, id string) (Knowledge, error) {
	args := append(actorArgs(actor), sql.Named("id", id))
	k, err := scanKnowledge(s.read.QueryRowContext(ctx, `SELECT `+knowledgeCols+`
		FROM knowledge k WHERE k.id = @id AND (@role = 'admin' OR `+knowledgeReadable+`)`, args...))
	if err != nil {
		return k, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+fileCols+`, f.content FROM knowledge_files kf JOIN files f ON f.id = kf.file_id
		WHERE kf.knowledge_id = ? AND f.complete = 1 AND f.status = 'completed' ORDER BY kf.created_at, kf.rowid`, k.ID)
	if err != nil {
		return k, err
	}
	defer rows.Close()
	k.Files = []File{}
	for rows.Next() {
		var content sql.NullString
		f, err := scanFile(rows, &content)
		if err != nil {
			return k, err
		}
		c := content.String
		f.Content = &c
		k.Files = append(k.Files, f)
	}
	return k, rows.Err()
}
