package auth

import (
	"crypto/sha256"
	"errors"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
)

// Claims are the claims of a session token, the same as Open WebUI's.
type Claims struct {
	ID  string `json:"id"`
	JTI string `json:"jti"`
	IAT int64  `json:"iat"`
	Exp int64  `json:"exp,omitempty"`
}

// ErrBadToken covers undecodable, wrongly signed and expired tokens.
var ErrBadToken = errors.New("bad token")

// Tokens issues and verifies HS256 JWTs.
type Tokens struct {
	key    []byte
	signer jose.Signer
	now    func() time.Time
}

// NewTokens builds a token issuer from the secret key.
func NewTokens(secret []byte) (*Tokens, error) {
	if len(secret) == 0 {
		return nil, errors.New("empty secret key")
	}
	// go-jose refuses HS256 keys shorter than the hash (32 bytes); a short
	// WEBUI_SECRET_KEY is stretched to 32 bytes with SHA-256 instead of
	// being refused, so any configured secret works.
	if len(secret) < 32 {
		sum := sha256.Sum256(secret)
		secret = sum[:]
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	return &Tokens{key: secret, signer: s, now: time.Now}, nil
}

// Issue signs a token for the user. ttl <= 0 means no expiry (no exp claim).
func (t *Tokens) Issue(userID string, ttl time.Duration) (string, Claims, error) {
	now := t.now()
	c := Claims{ID: userID, JTI: uuid.NewString(), IAT: now.Unix()}
	if ttl > 0 {
		c.Exp = now.Add(ttl).Unix()
	}
	s, err := jwt.Signed(t.signer).Claims(c).Serialize()
	return s, c, err
}

// Verify checks signature and expiry and returns the claims.
func (t *Tokens) Verify(token string) (Claims, error) {
	var c Claims
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return c, ErrBadToken
	}
	if err := tok.Claims(t.key, &c); err != nil || c.ID == "" {
		return c, ErrBadToken
	}
	if c.Exp != 0 && t.now().Unix() >= c.Exp {
		return c, ErrBadToken
	}
	return c, nil
}
