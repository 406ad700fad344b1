package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"hearth/config"
	"hearth/store"
)

// usersPerPage is Open WebUI's PAGE_ITEM_COUNT for the user lists.
const usersPerPage = 30

// activeWindow is how recent last_active_at must be for a user to count as
// active (Open WebUI's is_user_active: three minutes).
const activeWindow = 3 * time.Minute

// userModel is Open WebUI's UserModel on the wire (COMPAT.md §14.1). It is
// the one place a stored account becomes JSON for admins and for the account
// itself; it has no field for the password hash.
type userModel struct {
	ID                    string          `json:"id"`
	Email                 string          `json:"email"`
	Username              *string         `json:"username"`
	Role                  string          `json:"role"`
	Name                  string          `json:"name"`
	ProfileImageURL       string          `json:"profile_image_url"`
	ProfileBannerImageURL *string         `json:"profile_banner_image_url"`
	Bio                   *string         `json:"bio"`
	Gender                *string         `json:"gender"`
	DateOfBirth           *string         `json:"date_of_birth"`
	Timezone              *string         `json:"timezone"`
	PresenceState         *string         `json:"presence_state"`
	StatusEmoji           *string         `json:"status_emoji"`
	StatusMessage         *string         `json:"status_message"`
	StatusExpiresAt       *int64          `json:"status_expires_at"`
	Info                  json.RawMessage `json:"info"`
	Settings              json.RawMessage `json:"settings"`
	OAuth                 json.RawMessage `json:"oauth"`
	SCIM                  json.RawMessage `json:"scim"`
	LastActiveAt          int64           `json:"last_active_at"`
	UpdatedAt             int64           `json:"updated_at"`
	CreatedAt             int64           `json:"created_at"`
}

// userModelWithGroups is an entry of the admin user list (UserGroupIdsModel).
type userModelWithGroups struct {
	userModel
	GroupIDs []string `json:"group_ids"`
}

// toUserModel converts a stored account to UserModel.
func toUserModel(u store.User) userModel {
	return userModel{
		ID: u.ID, Email: u.Email, Username: strPtr(u.Username), Role: u.Role, Name: u.Name,
		ProfileImageURL: profileURL(u), Bio: strPtr(u.Bio), Gender: strPtr(u.Gender),
		DateOfBirth: strPtr(u.DateOfBirth), Timezone: strPtr(u.Timezone),
		Info: jsonOrNull(u.Info), Settings: jsonOrNull(u.Settings), OAuth: jsonOrNull(u.OAuth), SCIM: jsonOrNull(u.SCIM),
		LastActiveAt: u.LastActiveAt, UpdatedAt: u.UpdatedAt, CreatedAt: u.CreatedAt,
	}
}

// strPtr is nil (JSON null) for an empty string.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// jsonOrNull passes stored JSON through; anything unparsable becomes null
// rather than breaking the whole answer.
func jsonOrNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || !json.Valid(r) {
		return nil
	}
	return r
}

func isActive(lastActiveAt int64) bool {
	return time.Since(time.Unix(lastActiveAt, 0)) <= activeWindow
}

// groupRef is how a user's groups appear in user info answers.
type groupRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// userInfo is Open WebUI's UserInfoResponse (admin views of other accounts:
// /users/all, admin search, group members), with the picture URL added.
type userInfo struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Email           string     `json:"email"`
	Role            string     `json:"role"`
	ProfileImageURL string     `json:"profile_image_url"`
	Bio             *string    `json:"bio"`
	Groups          []groupRef `json:"groups"`
	IsActive        bool       `json:"is_active"`
	StatusEmoji     *string    `json:"status_emoji"`
	StatusMessage   *string    `json:"status_message"`
	StatusExpiresAt *int64     `json:"status_expires_at"`
}

// userCard is what a non-admin learns about another account from search:
// name, e-mail, role and picture (Hearth's decision; Open WebUI also shows
// bio, groups and presence to everyone).
type userCard struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	Email           string  `json:"email"`
	Role            string  `json:"role"`
	ProfileImageURL string  `json:"profile_image_url"`
	StatusEmoji     *string `json:"status_emoji"`
	StatusMessage   *string `json:"status_message"`
	StatusExpiresAt *int64  `json:"status_expires_at"`
}

// groupNames maps the ids of the groups the caller may read to their names.
func (s *Server) groupNames(ctx context.Context, a store.Actor) (map[string]string, error) {
	gs, err := s.store.ListGroups(ctx, a)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(gs))
	for _, g := range gs {
		names[g.ID] = g.Name
	}
	return names, nil
}

func toUserInfos(rows []store.UserRow, names map[string]string) []userInfo {
	out := make([]userInfo, 0, len(rows))
	for _, r := range rows {
		groups := make([]groupRef, 0, len(r.GroupIDs))
		for _, id := range r.GroupIDs {
			if n, ok := names[id]; ok {
				groups = append(groups, groupRef{ID: id, Name: n})
			}
		}
		out = append(out, userInfo{ID: r.ID, Name: r.Name, Email: r.Email, Role: r.Role,
			ProfileImageURL: profileURL(r.User), Bio: strPtr(r.Bio), Groups: groups, IsActive: isActive(r.LastActiveAt)})
	}
	return out
}

// listFilter reads ?query=&order_by=&direction=&page= (page is 1-based; a
// page that is not a number is a 422, as FastAPI answers).
func listFilter(r *http.Request) (store.UserFilter, error) {
	q := r.URL.Query()
	page := 1
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return store.UserFilter{}, errorf(http.StatusUnprocessableEntity, "Query parameter \"page\" must be an integer")
		}
		page = max(n, 1)
	}
	return store.UserFilter{Query: q.Get("query"), OrderBy: q.Get("order_by"), Direction: q.Get("direction"),
		Limit: usersPerPage, Offset: (page - 1) * usersPerPage}, nil
}

// handleListUsers is GET /api/v1/users/ (admin): a page of UserModel plus
// group_ids, and the total that matches the query.
func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request) error {
	f, err := listFilter(r)
	if err != nil {
		return err
	}
	rows, total, err := s.store.ListUsers(r.Context(), actor(r), f)
	if err != nil {
		return err
	}
	users := make([]userModelWithGroups, 0, len(rows))
	for _, u := range rows {
		users = append(users, userModelWithGroups{userModel: toUserModel(u.User), GroupIDs: u.GroupIDs})
	}
	return ok(w, map[string]any{"users": users, "total": total})
}

// handleAllUsers is GET /api/v1/users/all (admin): every account as
// UserInfoResponse.
func (s *Server) handleAllUsers(w http.ResponseWriter, r *http.Request) error {
	ctx, a := r.Context(), actor(r)
	rows, total, err := s.store.ListUsers(ctx, a, store.UserFilter{})
	if err != nil {
		return err
	}
	names, err := s.groupNames(ctx, a)
	if err != nil {
		return err
	}
	return ok(w, map[string]any{"users": toUserInfos(rows, names), "total": total})
}

// handleSearchUsers is GET /api/v1/users/search (verified): a page of
// accounts matching ?query= in name or e-mail. Admins get UserInfoResponse;
// everyone else only the card (id, name, e-mail, role, picture).
func (s *Server) handleSearchUsers(w http.ResponseWriter, r *http.Request) error {
	f, err := listFilter(r)
	if err != nil {
		return err
	}
	ctx, a := r.Context(), actor(r)
	if a.IsAdmin() {
		rows, total, err := s.store.ListUsers(ctx, a, f)
		if err != nil {
			return err
		}
		names, err := s.groupNames(ctx, a)
		if err != nil {
			return err
		}
		return ok(w, map[string]any{"users": toUserInfos(rows, names), "total": total})
	}
	cards, total, err := s.store.SearchUsers(ctx, a, f)
	if err != nil {
		return err
	}
	users := make([]userCard, 0, len(cards))
	for _, c := range cards {
		users = append(users, userCard{ID: c.ID, Name: c.Name, Email: c.Email, Role: c.Role,
			ProfileImageURL: profileURL(store.User{ID: c.ID, ProfileImageURL: c.ProfileImageURL})})
	}
	return ok(w, map[string]any{"users": users, "total": total})
}

// handleMyPermissions is GET /api/v1/users/permissions: the caller's
// effective tree (defaults OR-ed with every group's grants).
func (s *Server) handleMyPermissions(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.permissions(ident(r)))
}

// handleGetDefaultPermissions is GET /api/v1/users/default/permissions
// (admin): the USER_PERMISSIONS tree (persistent key user.permissions).
func (s *Server) handleGetDefaultPermissions(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.cfg().UserPermissions)
}

// handleSetDefaultPermissions is POST /api/v1/users/default/permissions
// (admin). The body is the whole tree; leaves it omits take their
// environment/default value, as Open WebUI's form fills its defaults. A tree
// of the wrong shape is a 422 and changes nothing.
func (s *Server) handleSetDefaultPermissions(w http.ResponseWriter, r *http.Request) error {
	var tree map[string]any
	if err := decode(r, &tree); err != nil {
		return err
	}
	if err := s.settings.Set(r.Context(), map[string]any{"USER_PERMISSIONS": tree}); err != nil {
		if errors.Is(err, config.ErrInvalid) {
			return errorf(http.StatusUnprocessableEntity, "Invalid permissions: %s",
				strings.TrimPrefix(err.Error(), "USER_PERMISSIONS: invalid value: "))
		}
		return err
	}
	return ok(w, s.cfg().UserPermissions)
}

// handleMyGroups is GET /api/v1/users/groups: the caller's groups.
func (s *Server) handleMyGroups(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	gs, err := s.store.GroupsOfUser(r.Context(), a, a.UserID)
	if err != nil {
		return err
	}
	return ok(w, toGroupResponses(gs, a))
}

// handleGetMySettings is GET /api/v1/users/user/settings: the stored
// settings object, or null.
func (s *Server) handleGetMySettings(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	u, err := s.store.GetUser(r.Context(), a, a.UserID)
	if err != nil {
		return err
	}
	return ok(w, jsonOrNull(u.Settings))
}

// decodeObject reads a JSON object body keeping its values raw.
func decodeObject(r *http.Request) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := decode(r, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

// handleUpdateMySettings is POST /api/v1/users/user/settings/update. The
// body's top-level keys replace the stored ones and other keys are kept
// (Open WebUI's dict.update), so saving "ui" does not drop stored function
// or tool valves. "ui" must be an object; its toolServers are dropped for a
// non-admin without features.direct_tool_servers, as Open WebUI does.
func (s *Server) handleUpdateMySettings(w http.ResponseWriter, r *http.Request) error {
	patch, err := decodeObject(r)
	if err != nil {
		return err
	}
	if raw, has := patch["ui"]; has && string(raw) != "null" {
		var ui map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ui); err != nil || ui == nil {
			return errorf(http.StatusUnprocessableEntity, `Field "ui" must be an object`)
		}
		id := ident(r)
		if _, has := ui["toolServers"]; has && !id.actor.IsAdmin() && !s.allowed(id, "features.direct_tool_servers") {
			delete(ui, "toolServers")
			b, err := json.Marshal(ui)
			if err != nil {
				return err
			}
			patch["ui"] = b
		}
	}
	a := actor(r)
	settings, err := s.store.MergeUserSettings(r.Context(), a, a.UserID, patch)
	if err != nil {
		return err
	}
	return ok(w, settings)
}

// handleGetMyInfo is GET /api/v1/users/user/info: the stored info object,
// or null.
func (s *Server) handleGetMyInfo(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	u, err := s.store.GetUser(r.Context(), a, a.UserID)
	if err != nil {
		return err
	}
	return ok(w, jsonOrNull(u.Info))
}

// handleUpdateMyInfo is POST /api/v1/users/user/info/update: merges the
// body's keys into the stored info object ({**info, **body}) and returns it.
func (s *Server) handleUpdateMyInfo(w http.ResponseWriter, r *http.Request) error {
	patch, err := decodeObject(r)
	if err != nil {
		return err
	}
	a := actor(r)
	info, err := s.store.MergeUserInfo(r.Context(), a, a.UserID, patch)
	if err != nil {
		return err
	}
	return ok(w, info)
}

// handleGetUser is GET /api/v1/users/{user_id} (verified): the public face
// of an account. Unknown → 400 USER_NOT_FOUND, as Open WebUI answers.
func (s *Server) handleGetUser(w http.ResponseWriter, r *http.Request) error {
	c, err := s.store.UserCardByID(r.Context(), actor(r), r.PathValue("user_id"))
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusBadRequest, msgNotFound)
	}
	if err != nil {
		return err
	}
	return ok(w, map[string]any{
		"name": c.Name, "profile_image_url": profileURL(store.User{ID: c.ID, ProfileImageURL: c.ProfileImageURL}),
		"active": isActive(c.LastActiveAt), "status_emoji": nil, "status_message": nil, "status_expires_at": nil,
	})
}

// handleUserActive is GET /api/v1/users/{user_id}/active (verified). An
// unknown account is simply not active, as in Open WebUI.
func (s *Server) handleUserActive(w http.ResponseWriter, r *http.Request) error {
	c, err := s.store.UserCardByID(r.Context(), actor(r), r.PathValue("user_id"))
	if errors.Is(err, store.ErrNotFound) {
		return ok(w, map[string]bool{"active": false})
	}
	if err != nil {
		return err
	}
	return ok(w, map[string]bool{"active": isActive(c.LastActiveAt)})
}

// handleUserGroups is GET /api/v1/users/{user_id}/groups (admin).
func (s *Server) handleUserGroups(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	gs, err := s.store.GroupsOfUser(r.Context(), a, r.PathValue("user_id"))
	if err != nil {
		return err
	}
	return ok(w, toGroupResponses(gs, a))
}

// handleUpdateUser is POST /api/v1/users/{user_id}/update (admin). Every
// field is optional here (Open WebUI requires all but password); an empty
// password means "unchanged". The store refuses changes to the primary
// admin by other admins and its demotion (403 ACTION_PROHIBITED).
func (s *Server) handleUpdateUser(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Role            *string `json:"role"`
		Name            *string `json:"name"`
		Email           *string `json:"email"`
		ProfileImageURL *string `json:"profile_image_url"`
		Password        *string `json:"password"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	p := store.UserPatch{Role: f.Role, ProfileImageURL: f.ProfileImageURL}
	if f.Role != nil && !validRole(*f.Role) {
		return errorf(http.StatusBadRequest, "Invalid role %q", *f.Role)
	}
	if f.Name != nil {
		n := strings.TrimSpace(*f.Name)
		if n == "" {
			return errorf(http.StatusUnprocessableEntity, `Field "name" must not be empty`)
		}
		p.Name = &n
	}
	if f.Email != nil {
		if !validEmail(*f.Email) {
			return errorf(http.StatusBadRequest, msgInvalidEmail)
		}
		p.Email = f.Email
	}
	if f.ProfileImageURL != nil && !validProfileImageURL(*f.ProfileImageURL) {
		return errorf(http.StatusBadRequest, "Invalid profile image URL")
	}
	if f.Password != nil && *f.Password != "" {
		if err := s.checkNewPassword(*f.Password); err != nil {
			return err
		}
		hash, err := s.passwords.Hash(*f.Password)
		if err != nil {
			return err
		}
		p.PasswordHash = &hash
	}
	u, err := s.store.UpdateUser(r.Context(), actor(r), r.PathValue("user_id"), p)
	switch {
	case errors.Is(err, store.ErrConflict):
		return errorf(http.StatusBadRequest, msgEmailTaken)
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusBadRequest, msgNotFound)
	case err != nil:
		return err
	}
	return ok(w, toUserModel(u))
}

// handleDeleteUser is DELETE /api/v1/users/{user_id} (admin) → true. The
// account and everything that cascades from it go; its tokens stop working
// on the next request. The primary admin and the caller's own account are
// refused (403), as in Open WebUI; an unknown account is 404.
func (s *Server) handleDeleteUser(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteUser(r.Context(), actor(r), r.PathValue("user_id")); err != nil {
		return err
	}
	return ok(w, true)
}
