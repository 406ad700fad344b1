package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"hearth/auth"
	"hearth/config"
	"hearth/store"
)

// emailRe is Open WebUI's sign-up check (COMPAT.md §2.4).
var emailRe = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)

func validEmail(e string) bool {
	e = strings.TrimSpace(e)
	return len(e) <= 254 && emailRe.MatchString(e) && !strings.HasSuffix(strings.ToLower(e), "@localhost")
}

// sessionResponse is SessionUserResponse (COMPAT.md §2.4).
type sessionResponse struct {
	Token           string             `json:"token"`
	TokenType       string             `json:"token_type"`
	ExpiresAt       *int64             `json:"expires_at"`
	ID              string             `json:"id"`
	Email           string             `json:"email"`
	Name            string             `json:"name"`
	Role            string             `json:"role"`
	ProfileImageURL string             `json:"profile_image_url"`
	Permissions     config.Permissions `json:"permissions"`
}

// issueSession signs a token for u, sets the `token` cookie and builds the
// session answer.
func (s *Server) issueSession(w http.ResponseWriter, u store.User, perms config.Permissions) (sessionResponse, error) {
	c := s.cfg()
	ttl, _, _ := config.ParseDuration(c.JWTExpiresIn)
	tok, claims, err := s.tokens.Issue(u.ID, ttl)
	if err != nil {
		return sessionResponse{}, err
	}
	s.setTokenCookie(w, tok, claims.Exp)
	return sessionResponse{
		Token: tok, TokenType: "Bearer", ExpiresAt: expiresAt(claims),
		ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role,
		ProfileImageURL: "/api/v1/users/" + u.ID + "/profile/image", Permissions: perms,
	}, nil
}

func expiresAt(c auth.Claims) *int64 {
	if c.Exp == 0 {
		return nil
	}
	e := c.Exp
	return &e
}

func (s *Server) setTokenCookie(w http.ResponseWriter, tok string, exp int64) {
	c := s.cfg()
	ck := &http.Cookie{Name: "token", Value: tok, Path: "/", HttpOnly: true, Secure: c.AuthCookieSecure}
	switch strings.ToLower(c.AuthCookieSameSite) {
	case "strict":
		ck.SameSite = http.SameSiteStrictMode
	case "none":
		ck.SameSite = http.SameSiteNoneMode
	default:
		ck.SameSite = http.SameSiteLaxMode
	}
	if exp != 0 {
		ck.Expires = time.Unix(exp, 0)
		ck.MaxAge = int(time.Until(ck.Expires).Seconds())
	}
	http.SetCookie(w, ck)
}

// answerSession signs u in: a new token, the cookie, and the session answer
// with the user's effective permissions (sign-in, sign-up, trusted header).
func (s *Server) answerSession(ctx context.Context, w http.ResponseWriter, u store.User) error {
	// A deactivated account (SCIM DELETE or active=false) gets no session
	// by any sign-in path; password sign-in refuses it earlier with the
	// wrong-password answer, so this guards trusted-header sign-in.
	if !u.Active {
		return errorf(http.StatusForbidden, msgAccessProhibited)
	}
	_, gp, err := s.store.UserGroups(ctx, u.ID)
	if err != nil {
		return err
	}
	resp, err := s.issueSession(w, u, effectivePermissions(s.cfg().UserPermissions, gp))
	if err != nil {
		return err
	}
	return ok(w, resp)
}

type signinForm struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// handleSignin is POST /api/v1/auths/signin.
func (s *Server) handleSignin(w http.ResponseWriter, r *http.Request) error {
	var f signinForm
	if err := decode(r, &f); err != nil {
		return err
	}
	c := s.cfg()
	// Trusted-header sign-in keeps working when password sign-in is off
	// (COMPAT.md decision 1): only passwords are refused.
	if c.TrustedEmailHeader != "" {
		return s.trustedSignin(w, r)
	}
	if !c.EnablePasswordAuth {
		return errorf(http.StatusForbidden, msgActionProhibited)
	}
	email := strings.ToLower(strings.TrimSpace(f.Email))
	ip := clientIP(r)
	if s.signinByIP.Blocked(ip) || !s.signinByAccount.Allow(email) {
		return errorf(http.StatusTooManyRequests, msgRateLimited)
	}
	u, err := s.store.UserByEmail(r.Context(), email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	// An unknown account still costs one bcrypt comparison (empty hash).
	if !s.passwords.Check(u.PasswordHash, f.Password) || !u.Active {
		s.signinByIP.Allow(ip)
		return errorf(http.StatusBadRequest, msgInvalidCred)
	}
	return s.answerSession(r.Context(), w, u)
}

// trustedSignin signs in the user named by the trusted e-mail header,
// creating the account on first sight (COMPAT.md §2.8).
func (s *Server) trustedSignin(w http.ResponseWriter, r *http.Request) error {
	c := s.cfg()
	ctx := r.Context()
	email := strings.ToLower(strings.TrimSpace(r.Header.Get(c.TrustedEmailHeader)))
	if email == "" {
		return errorf(http.StatusBadRequest, msgTrustedHeader)
	}
	u, err := s.store.UserByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		name := email
		if h := c.TrustedNameHeader; h != "" {
			if v := r.Header.Get(h); v != "" {
				if d, err := url.QueryUnescape(v); err == nil {
					v = d
				}
				name = v
			}
		}
		u, err = s.store.CreateUser(ctx, store.NewUser{Email: email, Name: name, Role: c.DefaultUserRole,
			ProfileImageURL: "/user.png", DefaultGroupID: c.DefaultGroupID})
		if errors.Is(err, store.ErrConflict) { // created concurrently
			u, err = s.store.UserByEmail(ctx, email)
		}
	}
	if err != nil {
		return err
	}
	if h := c.TrustedGroupsHeader; h != "" {
		var names []string
		for _, n := range strings.Split(r.Header.Get(h), ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			if err := s.store.SyncGroupsByName(ctx, u.ID, names); err != nil {
				return err
			}
		}
	}
	if h := c.TrustedRoleHeader; h != "" {
		if v := strings.ToLower(strings.TrimSpace(r.Header.Get(h))); v != "" {
			switch v {
			case "admin", "user", "pending":
				if v != u.Role {
					if err := s.store.SetRole(ctx, u.ID, v); err != nil {
						return err
					}
					u.Role = v
				}
			default:
				s.log.Warn("trusted role header has an invalid value; role unchanged", slog.String("value", v))
			}
		}
	}
	return s.answerSession(ctx, w, u)
}

type signupForm struct {
	Name                 string  `json:"name"`
	Email                string  `json:"email"`
	Password             string  `json:"password"`
	ConfirmPassword      *string `json:"confirm_password"`
	ProfileImageURL      string  `json:"profile_image_url"`
	Role                 string  `json:"role"` // admin "add user" only
	PasswordConfirmation *string `json:"password_confirmation"`
}

// checkNewPassword applies the length and optional pattern rules.
func (s *Server) checkNewPassword(pw string) error {
	if pw == "" {
		return errorf(http.StatusUnprocessableEntity, `Field "password" is required`)
	}
	if len(pw) > 72 {
		return errorf(http.StatusBadRequest, msgPasswordTooLong)
	}
	c := s.cfg()
	if !c.EnablePasswordValidation {
		return nil
	}
	valid := strongPassword(pw)
	if c.PasswordValidationRegexPattern != "" {
		re, err := regexp.Compile(c.PasswordValidationRegexPattern) // validated by config
		valid = err == nil && re.MatchString(pw)
	}
	if !valid {
		hint := c.PasswordValidationHint
		if hint == "" {
			hint = "The password does not meet the required validation criteria."
		}
		return errorf(http.StatusBadRequest, "%s", hint)
	}
	return nil
}

// strongPassword is Open WebUI's default rule (lower, upper, digit, symbol,
// at least 8 characters), written out because its pattern needs look-aheads
// Go's RE2 does not have.
func strongPassword(pw string) bool {
	var lower, upper, digit, symbol bool
	for _, r := range pw {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		case !unicode.IsSpace(r):
			symbol = true
		}
	}
	return lower && upper && digit && symbol && utf8.RuneCountInString(pw) >= 8
}

// validateSignup checks a sign-up or add-user form.
func (s *Server) validateSignup(f *signupForm) error {
	if err := required("name", f.Name, "email", f.Email); err != nil {
		return err
	}
	if !validEmail(f.Email) {
		return errorf(http.StatusBadRequest, msgInvalidEmail)
	}
	if err := s.checkNewPassword(f.Password); err != nil {
		return err
	}
	if f.ProfileImageURL == "" {
		f.ProfileImageURL = "/user.png"
	}
	if !validProfileImageURL(f.ProfileImageURL) {
		return errorf(http.StatusBadRequest, "Invalid profile image URL")
	}
	return nil
}

// handleSignup is POST /api/v1/auths/signup.
func (s *Server) handleSignup(w http.ResponseWriter, r *http.Request) error {
	var f signupForm
	if err := decode(r, &f); err != nil {
		return err
	}
	c := s.cfg()
	ctx := r.Context()
	n, err := s.store.CountUsers(ctx)
	if err != nil {
		return err
	}
	if n > 0 && (!c.EnableSignup || !c.EnableLoginForm) {
		return errorf(http.StatusForbidden, msgAccessProhibited)
	}
	if n == 0 && !c.EnableLoginForm && !c.EnableInitialAdminSignup {
		return errorf(http.StatusForbidden, msgAccessProhibited)
	}
	if err := s.validateSignup(&f); err != nil {
		return err
	}
	// The confirmation is checked whenever the client sends one; the UI
	// sends it when ENABLE_SIGNUP_PASSWORD_CONFIRMATION is on.
	for _, confirm := range []*string{f.ConfirmPassword, f.PasswordConfirmation} {
		if confirm != nil && *confirm != f.Password {
			return errorf(http.StatusBadRequest, "The passwords do not match.")
		}
	}
	if c.EnableSignupPasswordConfirmation && f.ConfirmPassword == nil && f.PasswordConfirmation == nil {
		return errorf(http.StatusUnprocessableEntity, `Field "confirm_password" is required`)
	}
	hash, err := s.passwords.Hash(f.Password)
	if err != nil {
		return err
	}
	u, err := s.store.CreateUser(ctx, store.NewUser{Email: f.Email, Name: strings.TrimSpace(f.Name), PasswordHash: hash,
		Role: c.DefaultUserRole, ProfileImageURL: f.ProfileImageURL, DefaultGroupID: c.DefaultGroupID})
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusBadRequest, msgEmailTaken)
	}
	if err != nil {
		return err
	}
	return s.answerSession(ctx, w, u)
}

// handleAddUser is POST /api/v1/auths/add (admin): creates an account with a
// role, without signing the admin out.
func (s *Server) handleAddUser(w http.ResponseWriter, r *http.Request) error {
	var f signupForm
	if err := decode(r, &f); err != nil {
		return err
	}
	if err := s.validateSignup(&f); err != nil {
		return err
	}
	if f.Role == "" {
		f.Role = "pending"
	}
	if !validRole(f.Role) {
		return errorf(http.StatusBadRequest, "Invalid role %q", f.Role)
	}
	hash, err := s.passwords.Hash(f.Password)
	if err != nil {
		return err
	}
	u, err := s.store.CreateUser(r.Context(), store.NewUser{Email: f.Email, Name: strings.TrimSpace(f.Name), PasswordHash: hash,
		Role: f.Role, ProfileImageURL: f.ProfileImageURL, DefaultGroupID: s.cfg().DefaultGroupID, ForceRole: true})
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusBadRequest, msgEmailTaken)
	}
	if err != nil {
		return err
	}
	ttl, _, _ := config.ParseDuration(s.cfg().JWTExpiresIn)
	tok, _, err := s.tokens.Issue(u.ID, ttl)
	if err != nil {
		return err
	}
	return ok(w, map[string]any{"token": tok, "token_type": "Bearer", "id": u.ID, "email": u.Email,
		"name": u.Name, "role": u.Role, "profile_image_url": u.ProfileImageURL})
}

func validRole(r string) bool { return r == "pending" || r == "user" || r == "admin" }

// sessionUser is the answer of GET /api/v1/auths/: the session response
// plus profile fields (COMPAT.md §2.4).
type sessionUser struct {
	Token           string          `json:"token"`
	TokenType       string          `json:"token_type"`
	ExpiresAt       *int64          `json:"expires_at"`
	ID              string          `json:"id"`
	Email           string          `json:"email"`
	Name            string          `json:"name"`
	Role            string          `json:"role"`
	ProfileImageURL string          `json:"profile_image_url"`
	Permissions     json.RawMessage `json:"permissions"`
	Bio             any             `json:"bio"`
	Gender          any             `json:"gender"`
	DateOfBirth     any             `json:"date_of_birth"`
	StatusEmoji     any             `json:"status_emoji"`
	StatusMessage   any             `json:"status_message"`
	StatusExpiresAt any             `json:"status_expires_at"`
}

// handleSessionUser is GET /api/v1/auths/: the caller's session (any role).
func (s *Server) handleSessionUser(w http.ResponseWriter, r *http.Request) error {
	id := ident(r)
	u := id.user
	tok := s.credential(r)
	resp := sessionUser{
		Token: tok, TokenType: "Bearer", ExpiresAt: expiresAt(id.claims),
		ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role,
		ProfileImageURL: profileURL(u), Permissions: s.permissionsJSON(id),
		Bio: nullable(u.Bio), Gender: nullable(u.Gender), DateOfBirth: nullable(u.DateOfBirth),
	}
	if id.viaKey {
		resp.ExpiresAt = nil
	} else {
		// Refresh the cookie for browser sessions (Open WebUI does the same).
		s.setTokenCookie(w, tok, id.claims.Exp)
	}
	return ok(w, resp)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// profileURL is the stored profile image URL, or the image endpoint when none
// is stored (COMPAT.md §14.1).
func profileURL(u store.User) string {
	if u.ProfileImageURL == "" {
		return "/api/v1/users/" + u.ID + "/profile/image"
	}
	return u.ProfileImageURL
}

// handleSignout is POST /api/v1/auths/signout: revokes the presented JWT
// (kept in the database until it would have expired) and clears cookies.
func (s *Server) handleSignout(w http.ResponseWriter, r *http.Request) error {
	redirect := ""
	if tok := s.credential(r); tok != "" && !auth.IsAPIKey(tok) {
		if c, err := s.tokens.Verify(tok); err == nil {
			// The stored OAuth session goes with the session token; only
			// a session of the token's own account is deleted.
			var err error
			if redirect, err = s.oauthSignout(r.Context(), r, c.ID); err != nil {
				return err
			}
			if err := s.store.RevokeToken(r.Context(), c.JTI, c.Exp); err != nil {
				return err
			}
			s.revokedMu.Lock()
			s.revoked[c.JTI] = c.Exp
			s.revokedMu.Unlock()
		}
	}
	for _, name := range []string{"token", "oui-session", "oauth_id_token", "oauth_session_id"} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	}
	resp := map[string]any{"status": true}
	if u := s.cfg().AuthSignoutRedirectURL; u != "" {
		resp["redirect_url"] = u
	}
	if redirect != "" { // the provider's end_session_endpoint, then back here
		resp["redirect_url"] = redirect
	}
	return ok(w, resp)
}

// handleLDAP is POST /api/v1/auths/ldap.
func (s *Server) handleLDAP(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	if !s.cfg().EnablePasswordAuth {
		return errorf(http.StatusForbidden, msgActionProhibited)
	}
	// LDAP directory sign-in is not built yet: with ENABLE_LDAP off (the
	// default) Open WebUI answers exactly this.
	return errorf(http.StatusBadRequest, "LDAP authentication is not enabled")
}

// handleUpdateProfile is POST /api/v1/auths/update/profile.
func (s *Server) handleUpdateProfile(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Name            *string `json:"name"`
		ProfileImageURL *string `json:"profile_image_url"`
		Bio             *string `json:"bio"`
		Gender          *string `json:"gender"`
		DateOfBirth     *string `json:"date_of_birth"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	if f.Name != nil && strings.TrimSpace(*f.Name) == "" {
		return errorf(http.StatusUnprocessableEntity, `Field "name" must not be empty`)
	}
	if f.ProfileImageURL != nil && !validProfileImageURL(*f.ProfileImageURL) {
		return errorf(http.StatusBadRequest, "Invalid profile image URL")
	}
	a := actor(r)
	u, err := s.store.UpdateUser(r.Context(), a, a.UserID, store.UserPatch{Name: f.Name, ProfileImageURL: f.ProfileImageURL,
		Bio: f.Bio, Gender: f.Gender, DateOfBirth: f.DateOfBirth})
	if err != nil {
		return err
	}
	return ok(w, map[string]any{"id": u.ID, "name": u.Name, "role": u.Role, "email": u.Email, "profile_image_url": profileURL(u)})
}

// handleUpdateTimezone is POST /api/v1/auths/update/timezone.
func (s *Server) handleUpdateTimezone(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Timezone string `json:"timezone"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	if _, err := time.LoadLocation(f.Timezone); err != nil || f.Timezone == "" || len(f.Timezone) > 64 {
		return errorf(http.StatusBadRequest, "Invalid timezone")
	}
	a := actor(r)
	if _, err := s.store.UpdateUser(r.Context(), a, a.UserID, store.UserPatch{Timezone: &f.Timezone}); err != nil {
		return err
	}
	return ok(w, map[string]bool{"status": true})
}

// handleUpdatePassword is POST /api/v1/auths/update/password.
func (s *Server) handleUpdatePassword(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Password    string `json:"password"`
		NewPassword string `json:"new_password"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	if s.cfg().TrustedEmailHeader != "" {
		return errorf(http.StatusBadRequest, msgActionProhibited)
	}
	id := ident(r)
	if !s.passwords.Check(id.user.PasswordHash, f.Password) {
		return errorf(http.StatusBadRequest, msgIncorrectPassword)
	}
	if err := s.checkNewPassword(f.NewPassword); err != nil {
		return err
	}
	hash, err := s.passwords.Hash(f.NewPassword)
	if err != nil {
		return err
	}
	if _, err := s.store.UpdateUser(r.Context(), id.actor, id.actor.UserID, store.UserPatch{PasswordHash: &hash}); err != nil {
		return err
	}
	return ok(w, true)
}

// handleAdminDetails is GET /api/v1/auths/admin/details.
func (s *Server) handleAdminDetails(w http.ResponseWriter, r *http.Request) error {
	c := s.cfg()
	if !c.ShowAdminDetails {
		return errorf(http.StatusBadRequest, msgActionProhibited)
	}
	ctx := r.Context()
	var u store.User
	var err error
	if c.AdminEmail != "" {
		u, err = s.store.UserByEmail(ctx, c.AdminEmail)
	}
	if c.AdminEmail == "" || errors.Is(err, store.ErrNotFound) {
		var pid string
		if pid, err = s.store.PrimaryAdminID(ctx); err == nil {
			u, err = s.store.UserByID(ctx, pid)
		}
	}
	if err != nil {
		return err
	}
	return ok(w, map[string]string{"name": u.Name, "email": u.Email})
}
