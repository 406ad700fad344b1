package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"hearth/store"
)

// groupResponse is Open WebUI's GroupResponse (GroupModel + member_count).
// user_ids is included for admins only: members do not learn who else is in
// their groups from the list.
type groupResponse struct {
	ID          string          `json:"id"`
	UserID      string          `json:"user_id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Data        json.RawMessage `json:"data"`
	Meta        json.RawMessage `json:"meta"`
	Permissions json.RawMessage `json:"permissions"`
	UserIDs     *[]string       `json:"user_ids,omitempty"`
	MemberCount int             `json:"member_count"`
	CreatedAt   int64           `json:"created_at"`
	UpdatedAt   int64           `json:"updated_at"`
}

func toGroupResponse(g store.Group, a store.Actor) groupResponse {
	resp := groupResponse{
		ID: g.ID, UserID: g.UserID, Name: g.Name, Description: g.Description,
		Data: jsonOrNull(g.Data), Meta: jsonOrNull(g.Meta), Permissions: jsonOrNull(g.Permissions),
		MemberCount: len(g.MemberIDs), CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
	}
	if a.IsAdmin() {
		ids := append([]string{}, g.MemberIDs...)
		resp.UserIDs = &ids
	}
	return resp
}

func toGroupResponses(gs []store.Group, a store.Actor) []groupResponse {
	out := make([]groupResponse, 0, len(gs))
	for _, g := range gs {
		out = append(out, toGroupResponse(g, a))
	}
	return out
}

// isNull reports an absent or JSON-null raw value.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// checkGroupPermissions accepts a permission tree: an object of sections,
// each an object of booleans (partial trees are fine).
func checkGroupPermissions(raw json.RawMessage) error {
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tree); err != nil || tree == nil {
		return errorf(http.StatusUnprocessableEntity, `Field "permissions" must be an object of sections, each an object of booleans`)
	}
	for section, leaves := range tree {
		if leaves == nil {
			return errorf(http.StatusUnprocessableEntity, "Permission section %q must be an object of booleans", section)
		}
		for name, v := range leaves {
			if s := strings.TrimSpace(string(v)); s != "true" && s != "false" {
				return errorf(http.StatusUnprocessableEntity, "Permission %s.%s must be a boolean", section, name)
			}
		}
	}
	return nil
}

// groupData checks data (an object; data.config an object; data.config.share
// true, false or "members") and, when withDefault, fills data.config.share
// with DEFAULT_GROUP_SHARE_PERMISSION unless given.
func (s *Server) groupData(raw json.RawMessage, withDefault bool) (json.RawMessage, error) {
	data := map[string]json.RawMessage{}
	if !isNull(raw) {
		if err := json.Unmarshal(raw, &data); err != nil || data == nil {
			return nil, errorf(http.StatusUnprocessableEntity, `Field "data" must be an object`)
		}
	}
	cfg := map[string]json.RawMessage{}
	if c, has := data["config"]; has && !isNull(c) {
		if err := json.Unmarshal(c, &cfg); err != nil || cfg == nil {
			return nil, errorf(http.StatusUnprocessableEntity, `Field "data.config" must be an object`)
		}
	}
	if share, has := cfg["share"]; has {
		switch strings.TrimSpace(string(share)) {
		case "true", "false", `"members"`:
		default:
			return nil, errorf(http.StatusUnprocessableEntity, `Field "data.config.share" must be true, false or "members"`)
		}
	} else if withDefault {
		switch s.cfg().DefaultGroupSharePermission {
		case "true":
			cfg["share"] = json.RawMessage("true")
		case "false":
			cfg["share"] = json.RawMessage("false")
		default:
			cfg["share"] = json.RawMessage(`"members"`)
		}
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, err
		}
		data["config"] = b
	}
	return json.Marshal(data)
}

// groupConflict turns the store's name clash into a readable 400.
func groupConflict(err error, name string) error {
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusBadRequest, "A group named %q already exists. Please choose another name.", name)
	}
	return err
}

// handleListGroups is GET /api/v1/groups/ (verified): admins see every
// group, others the groups they belong to (filtered in the store's SQL).
func (s *Server) handleListGroups(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	gs, err := s.store.ListGroups(r.Context(), a)
	if err != nil {
		return err
	}
	return ok(w, toGroupResponses(gs, a))
}

// handleCreateGroup is POST /api/v1/groups/create (admin).
func (s *Server) handleCreateGroup(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Permissions json.RawMessage `json:"permissions"`
		Data        json.RawMessage `json:"data"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	g := store.Group{Name: strings.TrimSpace(f.Name), Description: f.Description}
	if err := required("name", g.Name); err != nil {
		return err
	}
	if !isNull(f.Permissions) {
		if err := checkGroupPermissions(f.Permissions); err != nil {
			return err
		}
		g.Permissions = f.Permissions
	}
	data, err := s.groupData(f.Data, true)
	if err != nil {
		return err
	}
	g.Data = data
	a := actor(r)
	g, err = s.store.CreateGroup(r.Context(), a, g)
	if err != nil {
		return groupConflict(err, g.Name)
	}
	return ok(w, toGroupResponse(g, a))
}

// handleGetGroup is GET /api/v1/groups/id/{id} (admin).
func (s *Server) handleGetGroup(w http.ResponseWriter, r *http.Request) error {
	a := actor(r)
	g, err := s.store.GetGroup(r.Context(), a, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(w, toGroupResponse(g, a))
}

// handleUpdateGroup is POST /api/v1/groups/id/{id}/update (admin). Given
// fields replace the stored ones (data and permissions whole, as Open WebUI
// does); user_ids, when given, replaces the membership.
func (s *Server) handleUpdateGroup(w http.ResponseWriter, r *http.Request) error {
	var f struct {
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Permissions json.RawMessage `json:"permissions"`
		Data        json.RawMessage `json:"data"`
		UserIDs     *[]string       `json:"user_ids"`
	}
	if err := decode(r, &f); err != nil {
		return err
	}
	p := store.GroupPatch{Description: f.Description, MemberIDs: f.UserIDs}
	if f.Name != nil {
		n := strings.TrimSpace(*f.Name)
		if n == "" {
			return errorf(http.StatusUnprocessableEntity, `Field "name" must not be empty`)
		}
		p.Name = &n
	}
	if !isNull(f.Permissions) {
		if err := checkGroupPermissions(f.Permissions); err != nil {
			return err
		}
		p.Permissions = f.Permissions
	}
	if !isNull(f.Data) {
		data, err := s.groupData(f.Data, false)
		if err != nil {
			return err
		}
		p.Data = data
	}
	a := actor(r)
	g, err := s.store.UpdateGroup(r.Context(), a, r.PathValue("id"), p)
	if err != nil {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		return groupConflict(err, name)
	}
	return ok(w, toGroupResponse(g, a))
}

// handleGroupMembers is POST /api/v1/groups/id/{id}/users (admin): the
// members as UserInfoResponse.
func (s *Server) handleGroupMembers(w http.ResponseWriter, r *http.Request) error {
	ctx, a := r.Context(), actor(r)
	rows, err := s.store.GroupMembers(ctx, a, r.PathValue("id"))
	if err != nil {
		return err
	}
	names, err := s.groupNames(ctx, a)
	if err != nil {
		return err
	}
	return ok(w, toUserInfos(rows, names))
}

type userIDsForm struct {
	UserIDs []string `json:"user_ids"`
}

// handleAddGroupMembers is POST /api/v1/groups/id/{id}/users/add (admin);
// unknown user ids are ignored, as in Open WebUI.
func (s *Server) handleAddGroupMembers(w http.ResponseWriter, r *http.Request) error {
	var f userIDsForm
	if err := decode(r, &f); err != nil {
		return err
	}
	a := actor(r)
	g, err := s.store.ChangeMembers(r.Context(), a, r.PathValue("id"), f.UserIDs, nil)
	if err != nil {
		return err
	}
	return ok(w, toGroupResponse(g, a))
}

// handleRemoveGroupMembers is POST /api/v1/groups/id/{id}/users/remove
// (admin).
func (s *Server) handleRemoveGroupMembers(w http.ResponseWriter, r *http.Request) error {
	var f userIDsForm
	if err := decode(r, &f); err != nil {
		return err
	}
	a := actor(r)
	g, err := s.store.ChangeMembers(r.Context(), a, r.PathValue("id"), nil, f.UserIDs)
	if err != nil {
		return err
	}
	return ok(w, toGroupResponse(g, a))
}

// handleDeleteGroup is DELETE /api/v1/groups/id/{id}/delete (admin) → true.
func (s *Server) handleDeleteGroup(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteGroup(r.Context(), actor(r), r.PathValue("id")); err != nil {
		return err
	}
	return ok(w, true)
}
