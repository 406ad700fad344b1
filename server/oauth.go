package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"hearth/auth"
	"hearth/config"
	"hearth/store"
)

// OAuth / OIDC sign-in (COMPAT.md §12): GET /oauth/{provider}/login sends the
// browser to the identity provider; the provider sends it back to
// /oauth/{provider}/callback (or /login/callback) with a code, which becomes
// an account session exactly like a password sign-in (`token` cookie), plus
// the provider's tokens stored encrypted and named by the httponly
// `oauth_session_id` cookie. Only the generic provider "oidc" exists.

const (
	oidcProvider   = "oidc"
	flowCookie     = "oauth_flow" // sealed auth.FlowState between login and callback
	flowTTL        = 10 * time.Minute
	oauthDoneURL   = "/auth" // where the web client picks up the cookie session (COMPAT.md §12.2 step 8)
	oauthCookiePth = "/oauth"
)

// oauthState is the server's OAuth part (oauth.go).
type oauthState struct {
	oidc *auth.OIDC
	// sessionCipher seals stored token responses; flowCipher seals the flow
	// cookie. Both are keyed from OAUTH_SESSION_TOKEN_ENCRYPTION_KEY (which
	// defaults to WEBUI_SECRET_KEY); nil when neither is set, and then OAuth
	// sign-in is refused rather than storing tokens in clear.
	sessionCipher *auth.Cipher
	flowCipher    *auth.Cipher
}

func (s *Server) initOAuth(d Deps) error {
	s.oidc = auth.NewOIDC(d.OAuthHTTPClient)
	key := s.cfg().OAuthSessionTokenEncryptionKey
	if key == "" {
		return nil
	}
	var err error
	if s.sessionCipher, err = auth.NewCipher([]byte(key), "oauth-session"); err != nil {
		return err
	}
	s.flowCipher, err = auth.NewCipher([]byte(key), "oauth-flow")
	return err
}

// oidcConfig is the generic provider's client as currently configured; ok
// is false when it is not configured (the provider then does not exist).
func (s *Server) oidcConfig() (auth.OIDCConfig, bool) {
	c := s.cfg()
	if c.OAuthClientID == "" || c.OpenIDProviderURL == "" {
		return auth.OIDCConfig{}, false
	}
	redirect := c.OpenIDRedirectURI
	if redirect == "" {
		redirect = strings.TrimRight(c.WebUIURL, "/") + "/oauth/" + oidcProvider + "/callback"
	}
	return auth.OIDCConfig{MetadataURL: c.OpenIDProviderURL, ClientID: c.OAuthClientID, ClientSecret: c.OAuthClientSecret,
		RedirectURL: redirect, Scopes: strings.Fields(c.OAuthScopes), Audience: c.OAuthAudience}, true
}

// oauthProvider is the configured provider named by the path, else 404 (as
// Open WebUI answers for an unknown provider).
func (s *Server) oauthProvider(r *http.Request) (auth.OIDCConfig, error) {
	oc, ok := s.oidcConfig()
	if !ok || r.PathValue("provider") != oidcProvider {
		return oc, errorf(http.StatusNotFound, "Not Found")
	}
	return oc, nil
}

// handleOAuthLogin is GET /oauth/{provider}/login.
func (s *Server) handleOAuthLogin(w http.ResponseWriter, r *http.Request) error {
	oc, err := s.oauthProvider(r)
	if err != nil {
		return err
	}
	if s.flowCipher == nil {
		s.log.Error("OAuth sign-in needs WEBUI_SECRET_KEY or OAUTH_SESSION_TOKEN_ENCRYPTION_KEY")
		return errorf(http.StatusInternalServerError, "internal error")
	}
	fs := auth.NewFlowState(flowTTL)
	target, err := s.oidc.AuthCodeURL(r.Context(), oc, fs)
	if err != nil {
		s.log.Warn("OAuth provider metadata unavailable", slog.Any("err", err))
		oauthFail(w, r, "The identity provider is not reachable. Please try again later.")
		return nil
	}
	raw, err := json.Marshal(fs)
	if err != nil {
		return err
	}
	s.setOAuthCookie(w, flowCookie, s.flowCipher.Seal(raw), oauthCookiePth, int(flowTTL.Seconds()))
	http.Redirect(w, r, target, http.StatusFound)
	return nil
}

// setOAuthCookie sets an httponly cookie with the instance's SameSite and
// Secure settings. SameSite=Strict would drop the flow cookie on the
// provider's cross-site redirect back, so the flow cookie is at most Lax.
func (s *Server) setOAuthCookie(w http.ResponseWriter, name, value, path string, maxAge int) {
	c := s.cfg()
	ck := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, Secure: c.AuthCookieSecure,
		MaxAge: maxAge, SameSite: http.SameSiteLaxMode}
	if strings.EqualFold(c.AuthCookieSameSite, "none") {
		ck.SameSite = http.SameSiteNoneMode
	}
	http.SetCookie(w, ck)
}

// oauthFail ends a login with the redirect Open WebUI makes on any error:
// /auth?error=<message>, which the sign-in page shows.
func oauthFail(w http.ResponseWriter, r *http.Request, msg string) {
	http.Redirect(w, r, oauthDoneURL+"?error="+url.QueryEscape(msg), http.StatusFound)
}

// handleOAuthCallback is GET /oauth/{provider}/callback and
// /oauth/{provider}/login/callback (same handler, COMPAT.md §12.1).
func (s *Server) handleOAuthCallback(w http.ResponseWriter, r *http.Request) error {
	oc, err := s.oauthProvider(r)
	if err != nil {
		return err
	}
	// The flow cookie is single-use whatever happens next.
	s.setOAuthCookie(w, flowCookie, "", oauthCookiePth, -1)
	q := r.URL.Query()
	fs, ok := s.readFlow(r)
	switch {
	case !ok:
		oauthFail(w, r, "The sign-in attempt expired or was not started here. Please try again.")
		return nil
	case q.Get("state") == "" || q.Get("state") != fs.State:
		oauthFail(w, r, "Invalid OAuth state. Please try again.")
		return nil
	case q.Get("error") != "":
		msg := q.Get("error_description")
		if msg == "" {
			msg = q.Get("error")
		}
		oauthFail(w, r, msg)
		return nil
	case q.Get("code") == "":
		oauthFail(w, r, "The identity provider returned no authorization code.")
		return nil
	}
	login, err := s.oidc.Exchange(r.Context(), oc, fs, q.Get("code"))
	if err != nil {
		s.log.Warn("OAuth login failed", slog.String("provider", oidcProvider), slog.Any("err", err))
		oauthFail(w, r, "Invalid credentials from the identity provider. Please try again.")
		return nil
	}
	if err := s.oauthSignin(r.Context(), w, oidcProvider, login); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			oauthFail(w, r, ae.detail)
			return nil
		}
		return err
	}
	http.Redirect(w, r, oauthDoneURL, http.StatusFound)
	return nil
}

// readFlow opens the flow cookie; ok is false when it is missing, forged or
// expired.
func (s *Server) readFlow(r *http.Request) (auth.FlowState, bool) {
	var fs auth.FlowState
	ck, err := r.Cookie(flowCookie)
	if err != nil || ck.Value == "" || s.flowCipher == nil || !auth.IsSealed(ck.Value) {
		return fs, false
	}
	raw, err := s.flowCipher.Open(ck.Value)
	if err != nil || json.Unmarshal(raw, &fs) != nil {
		return fs, false
	}
	return fs, fs.State != "" && time.Now().Unix() <= fs.Expires
}

// oauthSignin finds, links or creates the account for a verified login,
// applies role, group and picture rules, and sets the session cookies
// (COMPAT.md §12.2 steps 3-9). An *apiError becomes the error redirect.
func (s *Server) oauthSignin(ctx context.Context, w http.ResponseWriter, provider string, login auth.OIDCLogin) error {
	c := s.cfg()
	claims := login.Claims
	sub := claimString(claims, "sub")
	email := strings.ToLower(strings.TrimSpace(claimString(claims, "email")))
	if sub == "" || email == "" || !validEmail(email) {
		return errorf(http.StatusBadRequest, "The identity provider did not return a valid e-mail address.")
	}
	u, err := s.store.UserByOAuthSub(ctx, provider, sub)
	if errors.Is(err, store.ErrNotFound) && c.OAuthMergeAccountsByEmail {
		if u, err = s.store.UserByEmail(ctx, email); err == nil {
			err = s.store.LinkOAuth(ctx, u.ID, provider, sub)
		}
	}
	switch {
	case err == nil:
		if !u.Active {
			return errorf(http.StatusForbidden, msgAccessProhibited)
		}
		if err := s.oauthUpdateRole(ctx, &u, claims); err != nil {
			return err
		}
		if pic := s.oauthPicture(claims); pic != "" && pic != u.ProfileImageURL && c.OAuthUpdatePictureOnLogin {
			if err := s.store.SetProfileImage(ctx, u.ID, pic); err != nil {
				return err
			}
			u.ProfileImageURL = pic
		}
	case errors.Is(err, store.ErrNotFound):
		if u, err = s.oauthCreate(ctx, provider, sub, email, claims); err != nil {
			return err
		}
	default:
		return err
	}
	if err := s.oauthSyncGroups(ctx, u, claims); err != nil {
		return err
	}
	return s.oauthSession(ctx, w, u, provider, login)
}

// oauthCreate makes the account of a first OAuth login, when
// ENABLE_OAUTH_SIGNUP allows it.
func (s *Server) oauthCreate(ctx context.Context, provider, sub, email string, claims map[string]any) (store.User, error) {
	c := s.cfg()
	if !c.EnableOAuthSignup {
		return store.User{}, errorf(http.StatusForbidden, msgAccessProhibited)
	}
	if _, err := s.store.UserByEmail(ctx, email); err == nil {
		return store.User{}, errorf(http.StatusBadRequest, msgEmailTaken)
	}
	role, err := s.oauthRole(claims)
	if err != nil {
		return store.User{}, err
	}
	if role == "" {
		role = c.DefaultUserRole
	}
	name := strings.TrimSpace(claimString(claims, "name"))
	if name == "" {
		name = email
	}
	pic := s.oauthPicture(claims)
	if pic == "" {
		pic = "/user.png"
	}
	// No password: an empty hash never matches, so this account signs in
	// only through the provider until a password is set.
	link, err := json.Marshal(map[string]any{provider: map[string]string{"sub": sub}})
	if err != nil {
		return store.User{}, err
	}
	u, err := s.store.CreateUser(ctx, store.NewUser{Email: email, Name: name, Role: role, ProfileImageURL: pic,
		DefaultGroupID: c.DefaultGroupID, OAuth: link})
	if errors.Is(err, store.ErrConflict) {
		return u, errorf(http.StatusBadRequest, msgEmailTaken)
	}
	return u, err
}

// oauthUpdateRole recomputes an existing account's role: the only account
// is admin; with role management the claim decides.
func (s *Server) oauthUpdateRole(ctx context.Context, u *store.User, claims map[string]any) error {
	role, err := s.oauthRole(claims)
	if err != nil {
		return err
	}
	if role == "" && s.cfg().EnableOAuthRoleManagement {
		role = s.cfg().DefaultUserRole
	}
	if n, err := s.store.CountUsers(ctx); err != nil {
		return err
	} else if n == 1 {
		role = "admin"
	}
	if role == "" || role == u.Role {
		return nil
	}
	if err := s.store.SetRole(ctx, u.ID, role); err != nil {
		return err
	}
	u.Role = role
	return nil
}

// oauthRole is the role the roles claim grants under
// ENABLE_OAUTH_ROLE_MANAGEMENT: admin when a role is in OAUTH_ADMIN_ROLES
// (admin wins), user when one is in OAUTH_ALLOWED_ROLES ("*" matches any),
// and a refused login when the token has roles but none matches a
// configured list (COMPAT.md decision 22). "" means the default role: role
// management off, no lists configured (SPEC), or no roles in the token.
func (s *Server) oauthRole(claims map[string]any) (string, error) {
	c := s.cfg()
	if !c.EnableOAuthRoleManagement {
		return "", nil
	}
	sep := c.OAuthRolesSeparator
	allowed, admins := splitList(c.OAuthAllowedRoles, sep), splitList(c.OAuthAdminRoles, sep)
	if len(allowed) == 0 && len(admins) == 0 {
		return "", nil
	}
	if sep == "" {
		sep = ","
	}
	roles := claimList(claimPath(claims, c.OAuthRolesClaim), sep)
	if len(roles) == 0 {
		return "", nil
	}
	role := ""
	for _, r := range roles {
		for _, a := range admins {
			if r == a {
				return "admin", nil
			}
		}
		for _, a := range allowed {
			if a == "*" || r == a {
				role = "user"
			}
		}
	}
	if role == "" {
		return "", errorf(http.StatusForbidden, msgAccessProhibited)
	}
	return role, nil
}

// oauthSyncGroups applies ENABLE_OAUTH_GROUP_MANAGEMENT: when the claim
// names groups, the account belongs to exactly those (created first with
// ENABLE_OAUTH_GROUP_CREATION); an empty claim leaves memberships alone, and
// admins' memberships are not touched (SPEC.md, COMPAT.md decision 21).
func (s *Server) oauthSyncGroups(ctx context.Context, u store.User, claims map[string]any) error {
	c := s.cfg()
	if !c.EnableOAuthGroupManagement || u.Role == "admin" {
		return nil
	}
	names := claimList(claimPath(claims, c.OAuthGroupClaim), ";")
	if len(names) == 0 {
		return nil
	}
	if c.EnableOAuthGroupCreation {
		if err := s.oauthCreateGroups(ctx, names); err != nil {
			return err
		}
	}
	return s.store.SyncGroupsByName(ctx, u.ID, names)
}

func (s *Server) oauthCreateGroups(ctx context.Context, names []string) error {
	owner, err := s.store.FirstAdminID(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil // no admin to own them yet; only existing groups are managed
	}
	if err != nil {
		return err
	}
	admin := store.Actor{UserID: owner, Role: "admin"}
	existing, err := s.store.ListGroups(ctx, admin)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, g := range existing {
		have[strings.ToLower(g.Name)] = true
	}
	share := `"members"`
	switch s.cfg().OAuthGroupDefaultShare {
	case "true", "":
		share = "true"
	case "false":
		share = "false"
	}
	data := json.RawMessage(`{"config":{"share":` + share + `}}`)
	for _, n := range names {
		if have[strings.ToLower(n)] {
			continue
		}
		have[strings.ToLower(n)] = true
		if _, err := s.store.CreateGroup(ctx, admin, store.Group{Name: n, Data: data}); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return nil
}

// oauthPicture is the picture URL of the claims when picture updates apply
// (OAUTH_PICTURE_CLAIM not empty) and the value is an acceptable profile
// image URL; else "". The URL is stored as given, not fetched: Hearth has
// no outbound guard for user-influenced URLs yet.
func (s *Server) oauthPicture(claims map[string]any) string {
	name := s.cfg().OAuthPictureClaim
	if name == "" {
		return ""
	}
	p := strings.TrimSpace(claimString(claims, name))
	if p == "" || len(p) > 2048 || !(strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://")) || !validProfileImageURL(p) {
		return ""
	}
	return p
}

// oauthSession signs u in: the `token` cookie as for a password sign-in, the
// provider's tokens stored sealed (pruned to OAUTH_MAX_SESSIONS_PER_USER),
// the `oauth_session_id` cookie, and the legacy `oauth_id_token` cookie
// when ENABLE_OAUTH_ID_TOKEN_COOKIE.
func (s *Server) oauthSession(ctx context.Context, w http.ResponseWriter, u store.User, provider string, login auth.OIDCLogin) error {
	if !u.Active {
		return errorf(http.StatusForbidden, msgAccessProhibited)
	}
	c := s.cfg()
	if s.sessionCipher == nil {
		return errors.New("oauth: no token encryption key")
	}
	sess, err := s.store.CreateOAuthSession(ctx, u.ID, provider, s.sessionCipher.Seal(login.Raw), login.Expiry(), c.OAuthMaxSessionsPerUser)
	if err != nil {
		return err
	}
	ttl, _, _ := config.ParseDuration(c.JWTExpiresIn)
	tok, claims, err := s.tokens.Issue(u.ID, ttl)
	if err != nil {
		return err
	}
	s.setTokenCookie(w, tok, claims.Exp)
	maxAge := 0
	if claims.Exp != 0 {
		maxAge = int(time.Until(time.Unix(claims.Exp, 0)).Seconds())
	}
	s.setOAuthCookie(w, "oauth_session_id", sess.ID, "/", maxAge)
	if c.EnableOAuthIDTokenCookie {
		if idt, _ := login.Token.Extra("id_token").(string); idt != "" {
			s.setOAuthCookie(w, "oauth_id_token", idt, "/", maxAge)
		}
	}
	return nil
}

// oauthSignout deletes the caller's stored OAuth session (the
// `oauth_session_id` cookie, only when it belongs to userID) and returns the
// provider's end-session URL when one is known, for the sign-out answer.
func (s *Server) oauthSignout(ctx context.Context, r *http.Request, userID string) (string, error) {
	ck, err := r.Cookie("oauth_session_id")
	if err != nil || ck.Value == "" || userID == "" {
		return "", nil
	}
	var idToken string
	if sessions, err := s.store.OAuthSessions(ctx, userID); err == nil && s.sessionCipher != nil {
		for _, o := range sessions {
			if o.ID != ck.Value {
				continue
			}
			if raw, err := s.sessionCipher.Open(o.Token); err == nil {
				var t struct {
					IDToken string `json:"id_token"`
				}
				if json.Unmarshal(raw, &t) == nil {
					idToken = t.IDToken
				}
			}
		}
	}
	if err := s.store.DeleteOAuthSession(ctx, ck.Value, userID); err != nil {
		return "", err
	}
	c := s.cfg()
	end := s.oidc.EndSessionURL(c.OpenIDProviderURL)
	if end == "" || idToken == "" {
		return "", nil
	}
	// COMPAT.md §2: <end_session_endpoint>?id_token_hint=<id_token>
	// [&post_logout_redirect_uri=<WEBUI_AUTH_SIGNOUT_REDIRECT_URL>].
	sep := "?"
	if strings.Contains(end, "?") {
		sep = "&"
	}
	target := end + sep + "id_token_hint=" + url.QueryEscape(idToken)
	if after := c.AuthSignoutRedirectURL; after != "" {
		target += "&post_logout_redirect_uri=" + url.QueryEscape(after)
	}
	return target, nil
}

// claimPath reads a claim by name, walking dots as nesting ("realm.roles"),
// with the flat key as fallback (COMPAT.md §12.3).
func claimPath(claims map[string]any, path string) any {
	if path == "" {
		return nil
	}
	var cur any = claims
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			cur = nil
			break
		}
		cur = m[part]
	}
	if cur == nil {
		return claims[path]
	}
	return cur
}

func claimString(claims map[string]any, name string) string {
	switch v := claimPath(claims, name).(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// claimList turns a claim into names: a list as it is, a string split on
// sep, a number as its text.
func claimList(v any, sep string) []string {
	var out []string
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			switch x := e.(type) {
			case string:
				if x = strings.TrimSpace(x); x != "" {
					out = append(out, x)
				}
			case float64:
				out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
			}
		}
	case string:
		for _, p := range strings.FieldsFunc(t, func(r rune) bool { return strings.ContainsRune(sep, r) }) {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	case float64:
		out = []string{strconv.FormatFloat(t, 'f', -1, 64)}
	}
	return out
}

// splitList splits on commas and on sep, dropping empty items.
func splitList(s, sep string) []string {
	f := func(r rune) bool { return r == ',' || (sep != "" && strings.ContainsRune(sep, r)) }
	var out []string
	for _, p := range strings.FieldsFunc(s, f) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
