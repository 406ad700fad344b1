// Package server is Hearth's HTTP surface: routes.go is the one route table,
// one file per API area holds the handlers, and writeError is the one error
// exit.
//
// Request path: global middleware (request id, panic recovery) → the
// ServeMux pattern → the route's wrapper (authenticate, check the route's
// access level, bound the body) → the handler, which returns an error → store
// calls that take the Actor and filter by owner in SQL → JSON.
//
// Access levels mirror Open WebUI's dependencies (COMPAT.md §1.2, §2.6):
// public (no credential; one is still read if present), anyRole (signed in,
// pending included), verified (user or admin; pending gets 401) and admin
// (others get 401, not 403, as Open WebUI answers and clients expect). Two
// more belong to SCIM provisioning (scim.go): scimToken (SCIM_ENABLED and the
// SCIM_TOKEN bearer, compared in constant time; no account credential counts)
// and scimOpen (the discovery documents; SCIM_ENABLED only).
//
// OAuth sign-in (oauth.go) is public: /oauth/{provider}/login binds state,
// nonce and PKCE verifier to a sealed short-lived cookie, and the callback
// signs in only with that cookie and a verified ID token; every failure is
// the redirect /auth?error=<message>, with no session cookie. The provider's
// tokens are stored sealed (auth.Cipher, OAUTH_SESSION_TOKEN_ENCRYPTION_KEY)
// and the browser holds only the opaque oauth_session_id.
//
// Invariants: a handler never loads an object and checks its owner in Go; the
// store cannot return what the actor may not see. Error bodies are always
// {"detail": "..."}, except under /api/v1/scim/v2/, where they are the SCIM
// Error envelope (which carries "detail" too); a 500 says only "internal
// error" and is logged once.
package server
