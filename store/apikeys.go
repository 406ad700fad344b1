package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"
)

// APIKey is a stored key: never the key itself, only its hash and a hint.
type APIKey struct {
	ID         string
	UserID     string
	Name       string
	Hint       string
	CreatedAt  int64
	LastUsedAt int64
	ExpiresAt  int64
}

// CreateAPIKey stores a new key for the actor. When replace is true, the
// actor's keys with the same name are removed in the same transaction (Open
// WebUI's one-key-per-user endpoint replaces the old key).
func (s *Store) CreateAPIKey(ctx context.Context, actor Actor, name string, hash []byte, hint string, replace bool) (APIKey, error) {
	k := APIKey{ID: uuid.NewString(), UserID: actor.UserID, Name: name, Hint: hint, CreatedAt: s.now().Unix()}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if replace {
			if _, err := tx.ExecContext(ctx, `DELETE FROM api_keys WHERE user_id = ? AND name = ?`, actor.UserID, name); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, user_id, name, key_hash, hint, created_at)
			SELECT ?, id, ?, ?, ?, ? FROM users WHERE id = ?`, k.ID, name, hash, hint, k.CreatedAt, actor.UserID)
		return err
	})
	return k, err
}

const keyCols = `k.id, k.user_id, k.name, k.hint, k.created_at, coalesce(k.last_used_at,0), coalesce(k.expires_at,0)`

func scanKey(row scanner) (APIKey, error) {
	var k APIKey
	err := row.Scan(&k.ID, &k.UserID, &k.Name, &k.Hint, &k.CreatedAt, &k.LastUsedAt, &k.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	return k, err
}

// ListAPIKeys lists the actor's own keys, newest first.
func (s *Store) ListAPIKeys(ctx context.Context, actor Actor) ([]APIKey, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+keyCols+` FROM api_keys k WHERE k.user_id = ?
		ORDER BY k.created_at DESC, k.id`, actor.UserID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// DeleteAPIKey revokes one of the actor's keys.
func (s *Store) DeleteAPIKey(ctx context.Context, actor Actor, id string) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM api_keys WHERE id = ? AND user_id = ?`, id, actor.UserID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteAPIKeysNamed revokes the actor's keys with this name.
func (s *Store) DeleteAPIKeysNamed(ctx context.Context, actor Actor, name string) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM api_keys WHERE user_id = ? AND name = ?`, actor.UserID, name)
	return err
}

// UserForAPIKey authenticates a key hash: the owner and the key, or
// ErrNotFound for an unknown or expired key.
func (s *Store) UserForAPIKey(ctx context.Context, hash []byte) (User, APIKey, error) {
	row := s.read.QueryRowContext(ctx, `SELECT `+userCols+`, `+keyCols+` FROM api_keys k
		JOIN users u ON u.id = k.user_id
		WHERE k.key_hash = ? AND (k.expires_at IS NULL OR k.expires_at > ?)`, hash, s.now().Unix())
	var u User
	var k APIKey
	var info, settings, oauth, scim sql.NullString
	err := row.Scan(&u.ID, &u.Email, &u.Username, &u.Role, &u.Name, &u.PasswordHash, &u.Active,
		&u.ProfileImageURL, &u.Bio, &u.Gender, &u.DateOfBirth, &u.Timezone, &info, &settings, &oauth, &scim,
		&u.LastActiveAt, &u.CreatedAt, &u.UpdatedAt,
		&k.ID, &k.UserID, &k.Name, &k.Hint, &k.CreatedAt, &k.LastUsedAt, &k.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return u, k, ErrNotFound
	}
	u.Info, u.Settings, u.OAuth, u.SCIM = rawOrNil(info), rawOrNil(settings), rawOrNil(oauth), rawOrNil(scim)
	return u, k, err
}

// TouchAPIKey records use; callers throttle it.
func (s *Store) TouchAPIKey(ctx context.Context, id string, at int64) error {
	_, err := s.write.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, at, id)
	return err
}
