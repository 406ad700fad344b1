package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// NewAPIKey returns a fresh key "sk-" + 32 lowercase hex characters (Open
// WebUI's format), its SHA-256 for storage and a hint safe to show later.
func NewAPIKey() (key string, hash []byte, hint string) {
	var b [16]byte
	rand.Read(b[:])
	key = "sk-" + hex.EncodeToString(b[:])
	return key, HashAPIKey(key), key[:5] + "…" + key[len(key)-4:]
}

// HashAPIKey is the stored form of a key.
func HashAPIKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// IsAPIKey tells an API key from a JWT.
func IsAPIKey(token string) bool { return strings.HasPrefix(token, "sk-") }
