package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// PieceSize is the size of one stored piece of a file's bytes. Uploads and
// downloads hold at most one piece in memory.
const PieceSize = 1 << 20

// File processing states (SPEC.md §2 "File processing status").
const (
	FilePending   = "pending"
	FileCompleted = "completed"
	FileFailed    = "failed"
)

// ErrTooLarge is returned by FileUpload.Write when the bytes exceed the
// limit the upload was started with; nothing of the file is kept.
var ErrTooLarge = errors.New("file too large")

// File is a stored file (Open WebUI's `file` table, COMPAT.md §8.1).
// Content is set only by the calls that say so.
type File struct {
	ID        string
	UserID    string
	Filename  string
	Meta      json.RawMessage // JSON object: name, content_type, size, file_hash, data
	Hash      string          // sha256 of the extracted text; "" = none yet
	Status    string          // "" (not processed), pending, completed, failed
	Error     string
	Content   *string // extracted text; nil when not loaded or none
	Size      int64
	CreatedAt int64
	UpdatedAt int64
}

const fileCols = `f.id, f.user_id, f.filename, f.meta, coalesce(f.hash, ''), coalesce(f.status, ''), coalesce(f.error, ''), f.size, f.created_at, f.updated_at`

func scanFile(row scanner, extra ...any) (File, error) {
	var f File
	var meta string
	err := row.Scan(append([]any{&f.ID, &f.UserID, &f.Filename, &meta, &f.Hash, &f.Status, &f.Error, &f.Size, &f.CreatedAt, &f.UpdatedAt}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return f, ErrNotFound
	}
	f.Meta = objectOrEmpty(meta)
	return f, err
}

// fileAccess is the SQL condition "the actor may <perm> the file f": an
// admin, the owner, or a grant on a knowledge collection that holds the
// file (Open WebUI's has_access_to_file). Needs actorArgs.
func fileAccess(perm string) string {
	return `(@role = 'admin' OR f.user_id = @uid OR EXISTS (SELECT 1 FROM knowledge_files kf JOIN knowledge k ON k.id = kf.knowledge_id
		WHERE kf.file_id = f.id AND (k.user_id = @uid OR ` + grantCond("knowledge", "k.id", perm) + `)))`
}

// FileUpload is a file being written. Pieces are stored in short
// transactions as the bytes arrive, on a row nobody can see until Commit;
// Abort (or a crash, swept by DeleteIncompleteFiles) removes it whole.
type FileUpload struct {
	s     *Store
	id    string
	owner string
	limit int64 // 0 = none
	n     int   // next piece number
	size  int64
	hash  [sha256.Size]byte
	done  bool
}

// NewFileUpload starts a file owned by the actor. limit bounds its size in
// bytes (0 = unlimited).
func (s *Store) NewFileUpload(ctx context.Context, actor Actor, id, filename string, limit int64) (*FileUpload, error) {
	now := s.now().Unix()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO files (id, user_id, filename, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			id, actor.UserID, filename, now, now)
		if isUnique(err) {
			return fmt.Errorf("file %q: %w", id, ErrConflict)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &FileUpload{s: s, id: id, owner: actor.UserID, limit: limit}, nil
}

// Write stores everything r yields, one piece per transaction, and returns
// the number of bytes stored. More than the limit is ErrTooLarge.
func (u *FileUpload) Write(ctx context.Context, r io.Reader) (int64, error) {
	buf := make([]byte, PieceSize)
	h := sha256.New()
	var total int64
	for {
		k, err := io.ReadFull(r, buf)
		if k > 0 {
			if u.limit > 0 && u.size+int64(k) > u.limit {
				return total, ErrTooLarge
			}
			piece := buf[:k]
			h.Write(piece)
			werr := u.s.tx(ctx, func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO file_pieces (file_id, n, data) VALUES (?, ?, ?)`, u.id, u.n, piece); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `UPDATE files SET size = size + ?, updated_at = ? WHERE id = ?`, k, u.s.now().Unix(), u.id)
				return err
			})
			if werr != nil {
				return total, werr
			}
			u.n++
			u.size += int64(k)
			total += int64(k)
		}
		// ReadFull's own end markers, compared by identity: a reader's
		// failure that wraps io.ErrUnexpectedEOF (a body cut short) is an
		// error, not the end.
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			copy(u.hash[:], h.Sum(nil))
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Size is the number of bytes stored so far.
func (u *FileUpload) Size() int64 { return u.size }

// SHA256 is the hex sha256 of the bytes, valid after Write returned nil.
func (u *FileUpload) SHA256() string { return hex.EncodeToString(u.hash[:]) }

// Commit makes the file visible with its meta and processing status ("" =
// not processed) and returns it.
func (u *FileUpload) Commit(ctx context.Context, meta json.RawMessage, status string) (File, error) {
	var f File
	err := u.s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE files SET meta = ?, status = ?, complete = 1, updated_at = ? WHERE id = ?`,
			objectArg(meta), nullStr(status), u.s.now().Unix(), u.id); err != nil {
			return err
		}
		var err error
		f, err = scanFile(tx.QueryRowContext(ctx, `SELECT `+fileCols+` FROM files f WHERE f.id = ?`, u.id))
		return err
	})
	if err == nil {
		u.done = true
	}
	return f, err
}

// Abort removes an uncommitted upload and its pieces. It runs even when
// ctx is already cancelled (the client went away), so nothing is left
// behind; after Commit it does nothing.
func (u *FileUpload) Abort(ctx context.Context) error {
	if u.done {
		return nil
	}
	u.done = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return u.s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM files WHERE id = ? AND complete = 0`, u.id)
		return err
	})
}

// DeleteIncompleteFiles removes uploads that never committed and were last
// written before the cutoff (left by a crash); serve calls it at start.
func (s *Store) DeleteIncompleteFiles(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM files WHERE complete = 0 AND updated_at < ?`, before.Unix())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// GetFile reads a file the actor may read (owner, admin, or through a
// readable knowledge collection); anything else is ErrNotFound. With
// withContent the extracted text is loaded too.
func (s *Store) GetFile(ctx context.Context, actor Actor, id string, withContent bool) (File, error) {
	var content sql.NullString
	extra := `, NULL`
	if withContent {
		extra = `, f.content`
	}
	f, err := scanFile(s.read.QueryRowContext(ctx, `SELECT `+fileCols+extra+` FROM files f
		WHERE f.id = @id AND f.complete = 1 AND `+fileAccess(PermRead), append(actorArgs(actor), sql.Named("id", id))...), &content)
	if content.Valid {
		f.Content = &content.String
	}
	return f, err
}

// FileFilter selects files for ListFiles.
type FileFilter struct {
	All         bool // every user's files (admins only)
	WithContent bool
	Limit       int // 0 = no limit
	Offset      int
}

// ListFiles returns the actor's files (every file for an admin with All),
// newest first, and the total count.
func (s *Store) ListFiles(ctx context.Context, actor Actor, ff FileFilter) ([]File, int, error) {
	args := append(actorArgs(actor), sql.Named("all", ff.All && actor.IsAdmin()))
	where := ` FROM files f WHERE f.complete = 1 AND (@all OR f.user_id = @uid)`
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*)`+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	extra := `, NULL`
	if ff.WithContent {
		extra = `, f.content`
	}
	limit := ff.Limit
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+fileCols+extra+where+` ORDER BY f.created_at DESC, f.id LIMIT @limit OFFSET @offset`,
		append(args, sql.Named("limit", limit), sql.Named("offset", ff.Offset))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []File{}
	for rows.Next() {
		var content sql.NullString
		f, err := scanFile(rows, &content)
		if err != nil {
			return nil, 0, err
		}
		if content.Valid {
			f.Content = &content.String
		}
		out = append(out, f)
	}
	return out, total, rows.Err()
}

// DeleteFile removes a file the actor may write (owner, admin, or a write
// grant on a collection holding it), its bytes and its collection links.
func (s *Store) DeleteFile(ctx context.Context, actor Actor, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM files AS f WHERE f.id = @id AND f.complete = 1 AND `+fileAccess(PermWrite),
			append(actorArgs(actor), sql.Named("id", id))...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// DeleteAllFiles removes every file (the admin's DELETE /files/all).
func (s *Store) DeleteAllFiles(ctx context.Context, actor Actor) error {
	if !actor.IsAdmin() {
		return ErrForbidden
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM files`)
		return err
	})
}

// FileStatus is the processing state of a file the actor may read
// (ErrNotFound otherwise).
func (s *Store) FileStatus(ctx context.Context, actor Actor, id string) (status, errMsg string, err error) {
	err = s.read.QueryRowContext(ctx, `SELECT coalesce(f.status, ''), coalesce(f.error, '') FROM files f
		WHERE f.id = @id AND f.complete = 1 AND `+fileAccess(PermRead), append(actorArgs(actor), sql.Named("id", id))...).Scan(&status, &errMsg)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", ErrNotFound
	}
	return status, errMsg, err
}

// PendingFile names a file waiting to be processed and its owner.
type PendingFile struct{ ID, UserID string }

// PendingFiles lists files whose processing had not finished, oldest first
// (ingest resumes them at start after a restart).
func (s *Store) PendingFiles(ctx context.Context) ([]PendingFile, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, user_id FROM files WHERE status = 'pending' AND complete = 1 ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PendingFile
	for rows.Next() {
		var p PendingFile
		if err := rows.Scan(&p.ID, &p.UserID); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// SetFileResult records the end of processing of the actor's file: with
// failMsg "" the file is completed with the extracted text (hash = its
// sha256, as Open WebUI sets it); otherwise it failed, with the message,
// and the hash is cleared. A previous error is kept on success, as Open
// WebUI's shallow data merge keeps it (COMPAT.md §8.4).
func (s *Store) SetFileResult(ctx context.Context, actor Actor, id, content, failMsg string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var res sql.Result
		var err error
		now := s.now().Unix()
		if failMsg == "" {
			sum := sha256.Sum256([]byte(content))
			res, err = tx.ExecContext(ctx, `UPDATE files SET status = 'completed', content = ?, hash = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
				content, hex.EncodeToString(sum[:]), now, id, actor.UserID)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE files SET status = 'failed', error = ?, hash = NULL, updated_at = ? WHERE id = ? AND user_id = ?`,
				failMsg, now, id, actor.UserID)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// FileContent reads a stored file's bytes piece by piece; it holds at most
// one piece in memory. It implements io.Reader, io.ReaderAt and io.Seeker.
type FileContent struct {
	s      *Store
	ctx    context.Context
	id     string
	size   int64
	off    int64  // Read position
	cached []byte // the last piece read
	cn     int64  // its number, -1 = none
}

// OpenFileContent opens the bytes of a file the actor may read
// (ErrNotFound otherwise). Reads use ctx.
func (s *Store) OpenFileContent(ctx context.Context, actor Actor, id string) (*FileContent, error) {
	var size int64
	err := s.read.QueryRowContext(ctx, `SELECT f.size FROM files f WHERE f.id = @id AND f.complete = 1 AND `+fileAccess(PermRead),
		append(actorArgs(actor), sql.Named("id", id))...).Scan(&size)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &FileContent{s: s, ctx: ctx, id: id, size: size, cn: -1}, nil
}

// Size is the file's length in bytes.
func (c *FileContent) Size() int64 { return c.size }

func (c *FileContent) piece(n int64) ([]byte, error) {
	if n == c.cn {
		return c.cached, nil
	}
	var b []byte
	err := c.s.read.QueryRowContext(c.ctx, `SELECT data FROM file_pieces WHERE file_id = ? AND n = ?`, c.id, n).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("file %s: piece %d missing: %w", c.id, n, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, err
	}
	c.cached, c.cn = b, n
	return b, nil
}

// ReadAt implements io.ReaderAt.
func (c *FileContent) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(p) {
		if off >= c.size {
			return n, io.EOF
		}
		b, err := c.piece(off / PieceSize)
		if err != nil {
			return n, err
		}
		in := off % PieceSize
		if in >= int64(len(b)) {
			return n, io.ErrUnexpectedEOF
		}
		k := copy(p[n:], b[in:])
		n += k
		off += int64(k)
	}
	return n, nil
}

// Read implements io.Reader.
func (c *FileContent) Read(p []byte) (int, error) {
	if c.off >= c.size {
		return 0, io.EOF
	}
	if rest := c.size - c.off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.ReadAt(p, c.off)
	c.off += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

// Seek implements io.Seeker (http.ServeContent uses it for ranges).
func (c *FileContent) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += c.off
	case io.SeekEnd:
		offset += c.size
	default:
		return 0, errors.New("bad whence")
	}
	if offset < 0 {
		return 0, errors.New("negative position")
	}
	c.off = offset
	return offset, nil
}

// WebCollectionFiles lists the ids of the actor's own files that POST
// /retrieval/process/web wrote into the named web collection
// (meta.collection_name, meta.source set), by creation time (seconds), then id.
func (s *Store) WebCollectionFiles(ctx context.Context, actor Actor, name string) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM files WHERE user_id = ? AND complete = 1
		AND json_valid(meta) AND json_extract(meta, '$.collection_name') = ? AND json_extract(meta, '$.source') IS NOT NULL
		ORDER BY created_at, id`, actor.UserID, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
