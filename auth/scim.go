package auth

import (
	"crypto/sha256"
	"crypto/subtle"
)

// SCIMTokenOK reports whether presented is the configured SCIM bearer token.
// An empty configured token matches nothing (SCIM_TOKEN unset must not mean
// "no credential needed"). Both sides are hashed first so the comparison
// takes the same time whatever the lengths, and then compared in constant
// time: a timing difference must not reveal how much of a guess was right.
func SCIMTokenOK(presented, configured string) bool {
	if configured == "" || presented == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(presented)), sha256.Sum256([]byte(configured))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
