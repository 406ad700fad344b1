package store

import (
	"context"
	"database/sql"
)

// Chunk is one piece of a file's text with its embedding (the float32
// vector as stored: little-endian bytes, see package vector).
type Chunk struct {
	N      int
	Start  int
	Text   string
	Vector []byte
}

// ReplaceChunks replaces every chunk of a file the actor owns (ingest runs
// as the owner) with chunks made by model, in one transaction. A file that
// is not the actor's is ErrNotFound.
func (s *Store) ReplaceChunks(ctx context.Context, actor Actor, fileID, model string, chunks []Chunk) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM files WHERE id = ? AND user_id = ?`, fileID, actor.UserID).Scan(&one); err != nil {
			if err == sql.ErrNoRows {
				return ErrNotFound
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE file_id = ?`, fileID); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, `INSERT INTO chunks (file_id, n, model, start, text, vector) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, c := range chunks {
			if _, err := st.ExecContext(ctx, fileID, i, model, c.Start, c.Text, c.Vector); err != nil {
				return err
			}
		}
		return nil
	})
}

// FileChunks returns the chunks of a file the actor may read that were made
// by model, in order (none: not indexed with that model). withVectors
// false leaves Vector nil (reading texts of hits). A file the actor may
// not read has no chunks.
func (s *Store) FileChunks(ctx context.Context, actor Actor, fileID, model string, withVectors bool) ([]Chunk, error) {
	vec := `NULL`
	if withVectors {
		vec = `c.vector`
	}
	rows, err := s.read.QueryContext(ctx, `SELECT c.n, c.start, c.text, `+vec+` FROM chunks c JOIN files f ON f.id = c.file_id
		WHERE c.file_id = @id AND c.model = @model AND f.complete = 1 AND `+fileAccess(PermRead)+` ORDER BY c.n`,
		append(actorArgs(actor), sql.Named("id", fileID), sql.Named("model", model))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Chunk
	for rows.Next() {
		var c Chunk
		if err := rows.Scan(&c.N, &c.Start, &c.Text, &c.Vector); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
