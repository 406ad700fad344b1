package store

import (
	"context"
	"database/sql"
	"encoding/json"
)

// LoadConfig returns every stored setting (dotted key → JSON value).
func (s *Store) LoadConfig(ctx context.Context) (map[string]json.RawMessage, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT key, value FROM config`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]json.RawMessage{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = json.RawMessage(v)
	}
	return out, rows.Err()
}

// SaveConfig upserts the given settings in one transaction.
func (s *Store) SaveConfig(ctx context.Context, values map[string]json.RawMessage) error {
	now := s.now().Unix()
	return s.tx(ctx, func(tx *sql.Tx) error {
		for k, v := range values {
			if _, err := tx.ExecContext(ctx, `INSERT INTO config (key, value, updated_at) VALUES (?,?,?)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
				k, string(v), now); err != nil {
				return err
			}
		}
		return nil
	})
}

// RevokeToken records a signed-out JWT id until its expiry (0 = never expires).
func (s *Store) RevokeToken(ctx context.Context, jti string, expiresAt int64) error {
	if expiresAt == 0 {
		expiresAt = 1<<62 - 1
	}
	_, err := s.write.ExecContext(ctx, `INSERT OR IGNORE INTO revoked_tokens (jti, expires_at) VALUES (?, ?)`, jti, expiresAt)
	return err
}

// RevokedTokens returns the revoked JWT ids that have not expired yet, and
// deletes the ones that have.
func (s *Store) RevokedTokens(ctx context.Context) (map[string]int64, error) {
	now := s.now().Unix()
	if _, err := s.write.ExecContext(ctx, `DELETE FROM revoked_tokens WHERE expires_at <= ?`, now); err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT jti, expires_at FROM revoked_tokens`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var j string
		var e int64
		if err := rows.Scan(&j, &e); err != nil {
			return nil, err
		}
		out[j] = e
	}
	return out, rows.Err()
}
