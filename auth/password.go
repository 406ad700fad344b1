package auth

import (
	"errors"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// ErrPasswordTooLong: bcrypt reads at most 72 bytes; longer new passwords are
// refused instead of silently truncated (Open WebUI's PASSWORD_TOO_LONG).
var ErrPasswordTooLong = errors.New("password longer than 72 bytes")

// Passwords hashes and checks passwords.
type Passwords struct {
	Cost int
	// dummy is a hash compared against when there is no account, made on
	// first use: hashing at start-up cost ~60 ms of every start.
	dummyOnce sync.Once
	dummy     []byte
}

// NewPasswords prepares a hasher with the given bcrypt cost (0 = default).
func NewPasswords(cost int) *Passwords {
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	return &Passwords{Cost: cost}
}

// Hash returns the bcrypt hash of a new password.
func (p *Passwords) Hash(pw string) (string, error) {
	if len(pw) > 72 {
		return "", ErrPasswordTooLong
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), p.Cost)
	return string(h), err
}

// Check reports whether pw matches hash. An empty hash (unknown account, or
// an account without a password) still costs one comparison.
func (p *Passwords) Check(hash, pw string) bool {
	if len(pw) > 72 {
		pw = pw[:72] // bcrypt compares the first 72 bytes; keep the cost uniform
	}
	if hash == "" {
		p.dummyOnce.Do(func() {
			p.dummy, _ = bcrypt.GenerateFromPassword([]byte("hearth-timing-equaliser"), p.Cost)
		})
		bcrypt.CompareHashAndPassword(p.dummy, []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
