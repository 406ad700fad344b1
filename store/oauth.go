package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// UserByOAuthSub finds the account linked to subject sub at provider (the
// `oauth` field {provider: {sub}}, COMPAT.md §12.2 step 4). Used by OAuth
// sign-in, before there is an actor. None is ErrNotFound.
func (s *Store) UserByOAuthSub(ctx context.Context, provider, sub string) (User, error) {
	if sub == "" {
		return User{}, ErrNotFound
	}
	return scanUser(s.read.QueryRowContext(ctx, `SELECT `+userCols+` FROM users u
		WHERE json_extract(u.oauth, ?) = ? ORDER BY u.created_at LIMIT 1`, oauthSubPath(provider), sub))
}

func oauthSubPath(provider string) string { return `$."` + provider + `".sub` }

// LinkOAuth records sub as the account's subject at provider, keeping the
// links to other providers.
func (s *Store) LinkOAuth(ctx context.Context, userID, provider, sub string) error {
	now := s.now().Unix()
	link, err := json.Marshal(map[string]string{"sub": sub})
	if err != nil {
		return err
	}
	res, err := s.write.ExecContext(ctx, `UPDATE users SET oauth = json_set(coalesce(oauth, '{}'), ?, json(?)), updated_at = ?
		WHERE id = ?`, `$."`+provider+`"`, string(link), now, userID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetProfileImage replaces the account's picture on behalf of the identity
// provider (OAUTH_UPDATE_PICTURE_ON_LOGIN), not of an actor.
func (s *Store) SetProfileImage(ctx context.Context, userID, url string) error {
	_, err := s.write.ExecContext(ctx, `UPDATE users SET profile_image_url = ?, updated_at = ? WHERE id = ?`,
		url, s.now().Unix(), userID)
	return err
}

// OAuthSession is one stored sign-in through an identity provider. Token is
// the sealed token response; the store never sees it in clear.
type OAuthSession struct {
	ID        string
	UserID    string
	Provider  string
	Token     string
	ExpiresAt int64 // 0 when unknown
	CreatedAt int64
	UpdatedAt int64
}

// CreateOAuthSession stores a new session and, in the same transaction,
// deletes the user's oldest sessions at that provider so that at most max
// remain (COMPAT.md §12.2 step 9; max < 1 counts as 1).
func (s *Store) CreateOAuthSession(ctx context.Context, userID, provider, sealedToken string, expiresAt int64, max int) (OAuthSession, error) {
	if max < 1 {
		max = 1
	}
	now := s.now().Unix()
	o := OAuthSession{ID: uuid.NewString(), UserID: userID, Provider: provider, Token: sealedToken,
		ExpiresAt: expiresAt, CreatedAt: now, UpdatedAt: now}
	var exp any
	if expiresAt != 0 {
		exp = expiresAt
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// Keep the newest max-1, so the new row makes max.
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_sessions WHERE user_id = ? AND provider = ? AND id NOT IN (
			SELECT id FROM oauth_sessions WHERE user_id = ? AND provider = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
			userID, provider, userID, provider, max-1); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO oauth_sessions (id, user_id, provider, token, expires_at, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?)`, o.ID, userID, provider, sealedToken, exp, now, now)
		if err != nil {
			return fmt.Errorf("oauth session: %w", err)
		}
		return nil
	})
	return o, err
}

// OAuthSessions lists a user's stored sessions, newest first.
func (s *Store) OAuthSessions(ctx context.Context, userID string) ([]OAuthSession, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, user_id, provider, token, coalesce(expires_at, 0), created_at, updated_at
		FROM oauth_sessions WHERE user_id = ? ORDER BY created_at DESC, rowid DESC`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []OAuthSession{}
	for rows.Next() {
		var o OAuthSession
		if err := rows.Scan(&o.ID, &o.UserID, &o.Provider, &o.Token, &o.ExpiresAt, &o.CreatedAt, &o.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// DeleteOAuthSession removes one session (sign-out). Only a session of
// userID is removed, so a cookie copied from another account deletes
// nothing. Deleting a missing session is not an error.
func (s *Store) DeleteOAuthSession(ctx context.Context, id, userID string) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM oauth_sessions WHERE id = ? AND user_id = ?`, id, userID)
	return err
}
