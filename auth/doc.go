// Package auth owns credentials: bcrypt passwords, HS256 JWTs signed with
// go-jose, `sk-` API keys (only their SHA-256 is ever stored), the secret key
// file, the sign-in rate limiter and the SCIM bearer-token check.
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
//     matches nothing.
package auth
