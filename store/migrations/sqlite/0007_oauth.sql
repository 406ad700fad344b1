-- OAuth / OIDC sign-in sessions (SPEC.md §3 "OAuth sessions", COMPAT.md §12.2 step 9).
--
-- One row per browser sign-in through an identity provider. `token` is the
-- provider's whole token response (access, refresh and ID tokens), sealed by
-- auth.Cipher before it reaches this table: a copied hearth.db does not hand
-- out provider credentials. The browser holds only the row id, in the
-- httponly `oauth_session_id` cookie. The account's link to the provider
-- (`users.oauth`, {provider: {sub}}) exists since 0001.
CREATE TABLE oauth_sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    provider   TEXT NOT NULL,
    token      TEXT NOT NULL, -- sealed JSON of the token response
    expires_at INTEGER,       -- access-token expiry (unix s), NULL when unknown
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX oauth_sessions_user ON oauth_sessions (user_id, provider, created_at);
