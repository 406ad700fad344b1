package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// sealedPrefix marks an encrypted value, so plain values stored by an older
// version (or before a key was set) are still read.
const sealedPrefix = "enc:v1:"

// Cipher encrypts secrets kept at rest (provider API keys, OAuth client
// secrets and tokens) with AES-256-GCM under a key derived from the
// configured secret and a purpose label, so one secret never keys two uses.
type Cipher struct {
	aead cipher.AEAD
}

// NewCipher derives the key for purpose from secret.
func NewCipher(secret []byte, purpose string) (*Cipher, error) {
	if len(secret) == 0 {
		return nil, errors.New("empty secret")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "hearth:"+purpose, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Cipher{aead: aead}, nil
}

// Seal encrypts plain text into a printable string.
func (c *Cipher) Seal(plain []byte) string {
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plain)+c.aead.Overhead())
	rand.Read(nonce)
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(c.aead.Seal(nonce, nonce, plain, nil))
}

// ErrSealed means a sealed value could not be opened: wrong secret or
// tampered data.
var ErrSealed = errors.New("cannot decrypt stored secret (was WEBUI_SECRET_KEY changed?)")

// Open decrypts a value made by Seal; a value without the prefix is returned
// as it is (stored before encryption).
func (c *Cipher) Open(s string) ([]byte, error) {
	if !IsSealed(s) {
		return []byte(s), nil
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(s, sealedPrefix))
	n := c.aead.NonceSize()
	if err != nil || len(raw) < n {
		return nil, ErrSealed
	}
	plain, err := c.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return nil, ErrSealed
	}
	return plain, nil
}

// IsSealed reports whether s was made by Seal.
func IsSealed(s string) bool { return strings.HasPrefix(s, sealedPrefix) }
