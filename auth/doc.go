// Package auth owns credentials: bcrypt passwords, HS256 JWTs signed with
// go-jose, `sk-` API keys (only their SHA-256 is ever stored), the secret key
// file, the sign-in rate limiter, the SCIM bearer-token check, the OIDC
// authorization-code flow (oidc.go: golang.org/x/oauth2 + coreos/go-oidc,
// whose ID-token checks run on go-jose) and Cipher, the encryption of
// secrets kept at rest (provider keys, OAuth tokens).
//
// Invariants:
//   - a password check for an unknown account costs one bcrypt comparison,
//     exactly like a wrong password, so response time does not reveal which
//     e-mail addresses exist;
//   - a JWT carries only the user id, iat, jti and (optionally) exp, as Open
//     WebUI's do; role and permissions are read fresh on every request, so a
//     role change takes effect immediately;
//   - an API key is shown once, at creation; afterwards only its hint exists;
//   - the SCIM token is compared in constant time, and an empty SCIM_TOKEN
//     matches nothing;
//   - an OIDC login is accepted only with the state, nonce and PKCE verifier
//     of the attempt that started it and an ID token whose signature,
//     issuer, audience and expiry verify; the provider's discovery document
//     is fetched at the first login that needs it, never at start-up.
package auth
