package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"hearth/auth"
	"hearth/store"
)

// SCIM 2.0 provisioning (SPEC.md §4 "Provisioning (SCIM)", COMPAT.md §11 and
// decisions 3-8) under scimBase. The identity provider authenticates with
// SCIM_TOKEN only: a user's JWT or API key is no SCIM credential, whoever
// owns it. Every SCIM error, authentication included, is the SCIM Error
// envelope (decision 6), which keeps Open WebUI's "detail" key and texts.

const (
	scimBase          = "/api/v1/scim/v2"
	scimUserSchema    = "urn:ietf:params:scim:schemas:core:2.0:User"
	scimGroupSchema   = "urn:ietf:params:scim:schemas:core:2.0:Group"
	scimListSchema    = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	scimErrorSchema   = "urn:ietf:params:scim:api:messages:2.0:Error"
	scimPatchSchema   = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	scimContentType   = "application/scim+json"
	scimDefaultCount  = 20  // Open WebUI's default page
	scimMaxCount      = 100 // Open WebUI clamps count to [0, 100]
	msgSCIMNoProvider = "SCIM_AUTH_PROVIDER environment variable is required when SCIM is enabled"
)

// isSCIMPath reports whether the SCIM error envelope applies to path.
func isSCIMPath(path string) bool {
	return path == scimBase || strings.HasPrefix(path, scimBase+"/")
}

// scimError is an error with a SCIM scimType (RFC 7644 §3.12).
type scimError struct {
	status   int
	scimType string
	detail   string
}

func (e *scimError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.scimType, e.detail) }

func scimErrorf(status int, scimType, format string, args ...any) error {
	if len(args) == 0 {
		return &scimError{status, scimType, format}
	}
	return &scimError{status, scimType, fmt.Sprintf(format, args...)}
}

// scimErrorBody is the SCIM Error envelope; status is a string (RFC 7644).
type scimErrorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	Detail   string   `json:"detail"`
	ScimType string   `json:"scimType,omitempty"`
}

// writeSCIMError is writeError's branch for SCIM paths: the same mapping of
// errors to statuses, written as the SCIM envelope. A failed body validation
// (422 elsewhere) is 400 invalidSyntax, the status SCIM clients expect.
func (s *Server) writeSCIMError(w http.ResponseWriter, r *http.Request, err error) {
	var se *scimError
	var ae *apiError
	switch {
	case errors.As(err, &se):
	case errors.As(err, &ae):
		se = &scimError{status: ae.status, detail: ae.detail}
		if ae.status == http.StatusUnprocessableEntity {
			se.status, se.scimType = http.StatusBadRequest, "invalidSyntax"
		}
	case errors.Is(err, store.ErrInvalidFilter):
		se = &scimError{http.StatusBadRequest, "invalidFilter", strings.TrimPrefix(err.Error(), "invalid filter: ")}
	case errors.Is(err, store.ErrNotFound):
		se = &scimError{http.StatusNotFound, "invalidValue", "Resource not found"}
	case errors.Is(err, store.ErrConflict):
		se = &scimError{http.StatusConflict, "uniqueness", "Resource already exists"}
	case errors.Is(err, store.ErrForbidden):
		se = &scimError{http.StatusForbidden, "", msgActionProhibited}
	default:
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method,
			"path", r.URL.Path, "request_id", requestID(r), "err", err)
		se = &scimError{http.StatusInternalServerError, "", msgInternal}
	}
	if se.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	writeSCIM(w, se.status, scimErrorBody{Schemas: []string{scimErrorSchema}, Status: strconv.Itoa(se.status),
		Detail: se.detail, ScimType: se.scimType})
}

// writeSCIM writes v with SCIM's media type.
func writeSCIM(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", scimContentType)
	w.WriteHeader(status)
	w.Write(b)
	return nil
}

// scimAuth checks a SCIM request (COMPAT.md §11.1 texts). Disabled SCIM is
// 401 like a bad token (decision 3), so a scanner learns nothing more from
// a disabled endpoint. needToken is false for the discovery documents,
// which Open WebUI serves without a credential once SCIM is on.
func (s *Server) scimAuth(r *http.Request, needToken bool) error {
	c := s.cfg()
	if !c.SCIMEnabled {
		return scimErrorf(http.StatusUnauthorized, "", "SCIM is not enabled")
	}
	if !needToken {
		return nil
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return scimErrorf(http.StatusUnauthorized, "", "Authorization header required")
	}
	parts := strings.Split(h, " ")
	if len(parts) != 2 {
		return scimErrorf(http.StatusUnauthorized, "", "Invalid authorization format. Expected: Bearer <token>")
	}
	if !strings.EqualFold(parts[0], "bearer") {
		return scimErrorf(http.StatusUnauthorized, "", "Invalid authentication scheme")
	}
	if !auth.SCIMTokenOK(parts[1], c.SCIMToken) {
		return scimErrorf(http.StatusUnauthorized, "", "Invalid SCIM token")
	}
	return nil
}

// scimActor is who SCIM acts as: an admin without an account. Store queries
// check the role in SQL like for any admin; nothing is owned by it except
// groups, which get the first admin as their creator (scimGroupOwner).
func scimActor() store.Actor { return store.Actor{Role: "admin"} }

// scimBaseURL is the request's own base ("http://host/"), as Open WebUI uses
// request.base_url for meta.location and $ref.
func scimBaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/"
}

// scimTime formats Unix seconds as Python's isoformat of a UTC datetime.
func scimTime(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("2006-01-02T15:04:05+00:00")
}

// externalIDOf picks the externalId to show from a scim map: the
// configured provider's, else (provider unset, or nothing under it) the
// first provider's in name order; nil when there is none.
func externalIDOf(raw json.RawMessage, provider string) *string {
	var m map[string]struct {
		ExternalID *string `json:"external_id"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if v, ok := m[provider]; ok && v.ExternalID != nil {
		return v.ExternalID
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if m[k].ExternalID != nil {
			return m[k].ExternalID
		}
	}
	return nil
}

// needProvider is the 500 of SPEC.md §7 for an externalId operation while
// SCIM_AUTH_PROVIDER is unset.
func (s *Server) needProvider() (string, error) {
	p := s.cfg().SCIMAuthProvider
	if p == "" {
		return "", scimErrorf(http.StatusInternalServerError, "", msgSCIMNoProvider)
	}
	return p, nil
}

// ---- wire types (COMPAT.md §11.3, §11.5) ----

type scimName struct {
	Formatted       *string `json:"formatted"`
	FamilyName      *string `json:"familyName"`
	GivenName       *string `json:"givenName"`
	MiddleName      *string `json:"middleName"`
	HonorificPrefix *string `json:"honorificPrefix"`
	HonorificSuffix *string `json:"honorificSuffix"`
}

type scimMultiValue struct {
	Value   string   `json:"value"`
	Type    *string  `json:"type"`
	Primary scimBool `json:"primary"`
	Display *string  `json:"display"`
}

type scimGroupRef struct {
	Value   string `json:"value"`
	Display string `json:"display"`
	Ref     string `json:"$ref"`
	Type    string `json:"type"`
}

type scimMeta struct {
	ResourceType string  `json:"resourceType"`
	Created      string  `json:"created"`
	LastModified string  `json:"lastModified"`
	Location     string  `json:"location"`
	Version      *string `json:"version"`
}

type scimUser struct {
	Schemas     []string         `json:"schemas"`
	ID          string           `json:"id"`
	ExternalID  *string          `json:"externalId"`
	UserName    string           `json:"userName"`
	Name        scimName         `json:"name"`
	DisplayName string           `json:"displayName"`
	Emails      []scimMultiValue `json:"emails"`
	Active      bool             `json:"active"`
	Photos      []scimMultiValue `json:"photos"`
	Groups      []scimGroupRef   `json:"groups"`
	Meta        scimMeta         `json:"meta"`
}

type scimMember struct {
	Value   string `json:"value"`
	Ref     string `json:"$ref"`
	Type    string `json:"type"`
	Display string `json:"display"`
}

type scimGroup struct {
	Schemas     []string     `json:"schemas"`
	ID          string       `json:"id"`
	DisplayName string       `json:"displayName"`
	ExternalID  *string      `json:"externalId"`
	Members     []scimMember `json:"members"`
	Meta        scimMeta     `json:"meta"`
}

type scimList struct {
	Schemas      []string `json:"schemas"`
	TotalResults int      `json:"totalResults"`
	ItemsPerPage int      `json:"itemsPerPage"`
	StartIndex   int      `json:"startIndex"`
	Resources    any      `json:"Resources"`
}

// scimBool is a boolean that also accepts "True"/"false" strings, which
// Entra ID sends for active in some PATCH requests.
type scimBool bool

func (b *scimBool) UnmarshalJSON(data []byte) error {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(string(data)), `"`)) {
	case "true":
		*b = true
	case "false", "null":
		*b = false
	default:
		return scimErrorf(http.StatusBadRequest, "invalidValue", "Expected a boolean, got %.40s", data)
	}
	return nil
}

// splitName is SCIM's name parts of a display name: the first word and the
// rest (the store's filter uses the same split).
func splitName(name string) (given, family string) {
	given, family, _ = strings.Cut(name, " ")
	return given, family
}

func (s *Server) toSCIMUser(r *http.Request, u store.User, groups []scimGroupRef) scimUser {
	base := scimBaseURL(r)
	given, family := splitName(u.Name)
	name := u.Name
	work := "work"
	out := scimUser{
		Schemas: []string{scimUserSchema}, ID: u.ID, ExternalID: externalIDOf(u.SCIM, s.cfg().SCIMAuthProvider),
		UserName: u.Email, DisplayName: u.Name,
		Name:   scimName{Formatted: &name, GivenName: &given, FamilyName: &family},
		Emails: []scimMultiValue{{Value: u.Email, Type: &work, Primary: true}},
		Active: u.Active && u.Role != "pending",
		Groups: groups,
		Meta: scimMeta{ResourceType: "User", Created: scimTime(u.CreatedAt), LastModified: scimTime(u.UpdatedAt),
			Location: base + "api/v1/scim/v2/Users/" + u.ID},
	}
	if out.Groups == nil {
		out.Groups = []scimGroupRef{}
	}
	if u.ProfileImageURL != "" {
		photo := "photo"
		out.Photos = []scimMultiValue{{Value: u.ProfileImageURL, Type: &photo, Primary: true}}
	}
	return out
}

func groupRefs(r *http.Request, ids []string, names map[string]string) []scimGroupRef {
	base := scimBaseURL(r)
	out := make([]scimGroupRef, 0, len(ids))
	for _, id := range ids {
		out = append(out, scimGroupRef{Value: id, Display: names[id], Ref: base + "api/v1/scim/v2/Groups/" + id, Type: "direct"})
	}
	return out
}

func (s *Server) toSCIMGroup(r *http.Request, g store.Group, names map[string]string) scimGroup {
	base := scimBaseURL(r)
	out := scimGroup{
		Schemas: []string{scimGroupSchema}, ID: g.ID, DisplayName: g.Name,
		ExternalID: externalIDOf(g.SCIM, s.cfg().SCIMAuthProvider), Members: []scimMember{},
		Meta: scimMeta{ResourceType: "Group", Created: scimTime(g.CreatedAt), LastModified: scimTime(g.UpdatedAt),
			Location: base + "api/v1/scim/v2/Groups/" + g.ID},
	}
	for _, id := range g.MemberIDs {
		out.Members = append(out.Members, scimMember{Value: id, Ref: base + "api/v1/scim/v2/Users/" + id, Type: "User", Display: names[id]})
	}
	return out
}

// scimUserOut loads what the user resource shows besides the account: its
// groups with their names.
func (s *Server) scimUserOut(r *http.Request, u store.User) (scimUser, error) {
	gs, err := s.store.GroupsOfUser(r.Context(), scimActor(), u.ID)
	if err != nil {
		return scimUser{}, err
	}
	ids, names := make([]string, 0, len(gs)), map[string]string{}
	for _, g := range gs {
		ids, names[g.ID] = append(ids, g.ID), g.Name
	}
	return s.toSCIMUser(r, u, groupRefs(r, ids, names)), nil
}

func (s *Server) scimGroupOut(r *http.Request, g store.Group) (scimGroup, error) {
	names, err := s.store.UserNames(r.Context(), scimActor(), g.MemberIDs)
	if err != nil {
		return scimGroup{}, err
	}
	return s.toSCIMGroup(r, g, names), nil
}

// ---- paging ----

// scimPage reads startIndex (1-based; < 1 is 1) and count ([0, 100],
// default 20) as Open WebUI does.
func scimPage(r *http.Request) (start, count int, err error) {
	start, count = 1, scimDefaultCount
	q := r.URL.Query()
	if v := q.Get("startIndex"); v != "" {
		if start, err = strconv.Atoi(v); err != nil {
			return 0, 0, scimErrorf(http.StatusBadRequest, "invalidValue", "startIndex must be an integer")
		}
	}
	if v := q.Get("count"); v != "" {
		if count, err = strconv.Atoi(v); err != nil {
			return 0, 0, scimErrorf(http.StatusBadRequest, "invalidValue", "count must be an integer")
		}
	}
	return max(start, 1), min(max(count, 0), scimMaxCount), nil
}

// scimQuery parses the page and filter of a list request.
func (s *Server) scimQuery(r *http.Request) (store.SCIMQuery, int, error) {
	start, count, err := scimPage(r)
	if err != nil {
		return store.SCIMQuery{}, 0, err
	}
	q := store.SCIMQuery{Provider: s.cfg().SCIMAuthProvider, Offset: start - 1, Limit: count}
	if f := strings.TrimSpace(r.URL.Query().Get("filter")); f != "" {
		if q.Filter, err = parseSCIMFilter(f); err != nil {
			return q, 0, err
		}
		if filterNames(q.Filter, "externalid") {
			if _, err := s.needProvider(); err != nil {
				return q, 0, err
			}
		}
	}
	return q, start, nil
}

// ---- users ----

// scimUserBody is a SCIM User in a POST or PUT body (COMPAT.md §11.4);
// attribute names match case-insensitively, as SCIM's do.
type scimUserBody struct {
	Schemas     []string         `json:"schemas"`
	ExternalID  *string          `json:"externalId"`
	UserName    *string          `json:"userName"`
	Name        *scimName        `json:"name"`
	DisplayName *string          `json:"displayName"`
	Emails      []scimMultiValue `json:"emails"`
	Active      *scimBool        `json:"active"`
	Photos      []scimMultiValue `json:"photos"`
}

// primaryValue is the value of the primary entry, else the first.
func primaryValue(vs []scimMultiValue) string {
	for _, v := range vs {
		if v.Primary && v.Value != "" {
			return v.Value
		}
	}
	for _, v := range vs {
		if v.Value != "" {
			return v.Value
		}
	}
	return ""
}

// nameFrom is the display name a SCIM body gives: displayName, else
// name.formatted, else "givenName familyName".
func nameFrom(displayName *string, n *scimName) string {
	if displayName != nil && strings.TrimSpace(*displayName) != "" {
		return strings.TrimSpace(*displayName)
	}
	if n == nil {
		return ""
	}
	if n.Formatted != nil && strings.TrimSpace(*n.Formatted) != "" {
		return strings.TrimSpace(*n.Formatted)
	}
	var parts []string
	for _, p := range []*string{n.GivenName, n.FamilyName} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	return strings.Join(parts, " ")
}

// checkSCIMEmail is decision 8: userName (and any e-mail) must be valid.
func checkSCIMEmail(attr, v string) error {
	if !validEmail(v) {
		return scimErrorf(http.StatusBadRequest, "invalidValue", "%s must be a valid e-mail address", attr)
	}
	return nil
}

func checkSCIMPhoto(v string) error {
	if !validProfileImageURL(v) {
		return scimErrorf(http.StatusBadRequest, "invalidValue", "photos value is not an accepted image URL")
	}
	return nil
}

// conflict turns a store conflict into Open WebUI's 409 texts.
func userConflict(err error, email, externalID string) error {
	switch {
	case errors.Is(err, store.ErrExternalIDTaken):
		return scimErrorf(http.StatusConflict, "uniqueness", "User with externalId %s already exists", externalID)
	case errors.Is(err, store.ErrConflict):
		return scimErrorf(http.StatusConflict, "uniqueness", "User with email %s already exists", email)
	}
	return err
}

// handleSCIMCreateUser is POST /Users: 201 with the user. The e-mail is the
// primary emails value, else userName; the account has no password and the
// role user (store.CreateSCIMUser).
func (s *Server) handleSCIMCreateUser(w http.ResponseWriter, r *http.Request) error {
	var b scimUserBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.UserName == nil || strings.TrimSpace(*b.UserName) == "" {
		return scimErrorf(http.StatusBadRequest, "invalidValue", "userName is required")
	}
	if err := checkSCIMEmail("userName", *b.UserName); err != nil {
		return err
	}
	email := *b.UserName
	if v := primaryValue(b.Emails); v != "" {
		if err := checkSCIMEmail("emails.value", v); err != nil {
			return err
		}
		email = v
	}
	email = strings.ToLower(strings.TrimSpace(email))
	nu := store.SCIMNewUser{Email: email, Name: nameFrom(b.DisplayName, b.Name), ProfileImageURL: "/user.png",
		Active: b.Active == nil || bool(*b.Active)}
	if nu.Name == "" {
		nu.Name = email
	}
	if v := primaryValue(b.Photos); v != "" {
		if err := checkSCIMPhoto(v); err != nil {
			return err
		}
		nu.ProfileImageURL = v
	}
	if b.ExternalID != nil && *b.ExternalID != "" {
		p, err := s.needProvider()
		if err != nil {
			return err
		}
		nu.Provider, nu.ExternalID = p, *b.ExternalID
	}
	u, err := s.store.CreateSCIMUser(r.Context(), scimActor(), nu)
	if err != nil {
		return userConflict(err, email, nu.ExternalID)
	}
	out, err := s.scimUserOut(r, u)
	if err != nil {
		return err
	}
	w.Header().Set("Location", out.Meta.Location)
	return writeSCIM(w, http.StatusCreated, out)
}

// scimUser loads a user or answers Open WebUI's 404.
func (s *Server) scimLoadUser(r *http.Request) (store.User, error) {
	id := r.PathValue("id")
	u, err := s.store.GetUser(r.Context(), scimActor(), id)
	if errors.Is(err, store.ErrNotFound) {
		return u, scimErrorf(http.StatusNotFound, "invalidValue", "User %s not found", id)
	}
	return u, err
}

// handleSCIMGetUser is GET /Users/{id}.
func (s *Server) handleSCIMGetUser(w http.ResponseWriter, r *http.Request) error {
	u, err := s.scimLoadUser(r)
	if err != nil {
		return err
	}
	out, err := s.scimUserOut(r, u)
	if err != nil {
		return err
	}
	return writeSCIM(w, http.StatusOK, out)
}

// handleSCIMListUsers is GET /Users?filter=&startIndex=&count=.
func (s *Server) handleSCIMListUsers(w http.ResponseWriter, r *http.Request) error {
	q, start, err := s.scimQuery(r)
	if err != nil {
		return err
	}
	rows, total, err := s.store.SCIMUsers(r.Context(), scimActor(), q)
	if err != nil {
		return err
	}
	names := map[string]string{}
	if len(rows) > 0 {
		gs, err := s.store.ListGroups(r.Context(), scimActor())
		if err != nil {
			return err
		}
		for _, g := range gs {
			names[g.ID] = g.Name
		}
	}
	res := make([]scimUser, 0, len(rows))
	for _, row := range rows {
		res = append(res, s.toSCIMUser(r, row.User, groupRefs(r, row.GroupIDs, names)))
	}
	return writeSCIM(w, http.StatusOK, scimList{Schemas: []string{scimListSchema}, TotalResults: total,
		ItemsPerPage: len(res), StartIndex: start, Resources: res})
}

// handleSCIMReplaceUser is PUT /Users/{id}. Like Open WebUI it changes only
// the attributes present (a provider that omits photos does not mean to
// erase the picture); emails wins over userName for the address.
func (s *Server) handleSCIMReplaceUser(w http.ResponseWriter, r *http.Request) error {
	var b scimUserBody
	if err := decode(r, &b); err != nil {
		return err
	}
	u, err := s.scimLoadUser(r)
	if err != nil {
		return err
	}
	st := newSCIMUserState(u, s.cfg().SCIMAuthProvider)
	if b.UserName != nil {
		if err := st.setEmail("userName", *b.UserName); err != nil {
			return err
		}
	}
	if v := primaryValue(b.Emails); v != "" {
		if err := st.setEmail("emails.value", v); err != nil {
			return err
		}
	}
	if n := nameFrom(b.DisplayName, b.Name); n != "" {
		st.name = n
	}
	if b.Active != nil {
		st.active = bool(*b.Active)
	}
	if v := primaryValue(b.Photos); v != "" {
		if err := checkSCIMPhoto(v); err != nil {
			return err
		}
		st.photo = v
	}
	if b.ExternalID != nil {
		st.externalID = *b.ExternalID
	}
	return s.saveSCIMUser(w, r, u, st)
}

// handleSCIMPatchUser is PATCH /Users/{id} (RFC 7644 §3.5.2).
func (s *Server) handleSCIMPatchUser(w http.ResponseWriter, r *http.Request) error {
	var b scimPatchBody
	if err := decode(r, &b); err != nil {
		return err
	}
	u, err := s.scimLoadUser(r)
	if err != nil {
		return err
	}
	st := newSCIMUserState(u, s.cfg().SCIMAuthProvider)
	for _, op := range b.Operations {
		if err := st.apply(op); err != nil {
			return err
		}
	}
	return s.saveSCIMUser(w, r, u, st)
}

// saveSCIMUser writes what changed between u and st and answers the user.
func (s *Server) saveSCIMUser(w http.ResponseWriter, r *http.Request, u store.User, st *scimUserState) error {
	var p store.SCIMUserPatch
	if st.email != u.Email {
		p.Email = &st.email
	}
	if st.name != u.Name {
		p.Name = &st.name
	}
	if st.photo != u.ProfileImageURL {
		p.ProfileImageURL = &st.photo
	}
	if st.active != (u.Active && u.Role != "pending") {
		p.Active = &st.active
	}
	provider := s.cfg().SCIMAuthProvider
	cur := externalIDOf(u.SCIM, provider)
	if (cur == nil && st.externalID != "") || (cur != nil && *cur != st.externalID) {
		pr, err := s.needProvider()
		if err != nil {
			return err
		}
		p.Provider, p.ExternalID = pr, &st.externalID
	}
	u, err := s.store.UpdateSCIMUser(r.Context(), scimActor(), u.ID, p)
	if errors.Is(err, store.ErrForbidden) {
		return scimErrorf(http.StatusForbidden, "", "The primary admin cannot be deactivated")
	}
	if err != nil {
		return userConflict(err, st.email, st.externalID)
	}
	out, err := s.scimUserOut(r, u)
	if err != nil {
		return err
	}
	return writeSCIM(w, http.StatusOK, out)
}

// handleSCIMDeleteUser is DELETE /Users/{id}: 204, and the account is
// deactivated, not removed (decision 4): its chats, files and memberships
// stay, sign-in is refused and its sessions and API keys stop working. A
// later active=true restores it as it was.
func (s *Server) handleSCIMDeleteUser(w http.ResponseWriter, r *http.Request) error {
	u, err := s.scimLoadUser(r)
	if err != nil {
		return err
	}
	off := false
	_, err = s.store.UpdateSCIMUser(r.Context(), scimActor(), u.ID, store.SCIMUserPatch{Active: &off})
	if errors.Is(err, store.ErrForbidden) {
		return scimErrorf(http.StatusForbidden, "", "The primary admin cannot be deactivated")
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ---- groups ----

type scimMemberRef struct {
	Value string `json:"value"`
}

type scimGroupBody struct {
	Schemas     []string         `json:"schemas"`
	DisplayName *string          `json:"displayName"`
	ExternalID  *string          `json:"externalId"`
	Members     *[]scimMemberRef `json:"members"`
}

func memberIDs(ms []scimMemberRef) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if m.Value != "" {
			out = append(out, m.Value)
		}
	}
	return out
}

func scimGroupConflict(err error, name, externalID string) error {
	switch {
	case errors.Is(err, store.ErrExternalIDTaken):
		return scimErrorf(http.StatusConflict, "uniqueness", "Group with externalId %s already exists", externalID)
	case errors.Is(err, store.ErrConflict):
		return scimErrorf(http.StatusConflict, "uniqueness", "Group with displayName %s already exists", name)
	}
	return err
}

// handleSCIMCreateGroup is POST /Groups: 201 with the group. Its creator is
// the first admin (Open WebUI's rule) and its share setting
// DEFAULT_GROUP_SHARE_PERMISSION, like a group made in the admin panel.
func (s *Server) handleSCIMCreateGroup(w http.ResponseWriter, r *http.Request) error {
	var b scimGroupBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.DisplayName == nil || strings.TrimSpace(*b.DisplayName) == "" {
		return scimErrorf(http.StatusBadRequest, "invalidValue", "displayName is required")
	}
	name := strings.TrimSpace(*b.DisplayName)
	var provider, ext string
	if b.ExternalID != nil && *b.ExternalID != "" {
		p, err := s.needProvider()
		if err != nil {
			return err
		}
		provider, ext = p, *b.ExternalID
	}
	owner, err := s.store.FirstAdminID(r.Context())
	if errors.Is(err, store.ErrNotFound) {
		return scimErrorf(http.StatusInternalServerError, "", "No admin user found")
	}
	if err != nil {
		return err
	}
	data, err := s.groupData(nil, true)
	if err != nil {
		return err
	}
	var members []string
	if b.Members != nil {
		members = memberIDs(*b.Members)
	}
	actor := scimActor()
	actor.UserID = owner
	g, err := s.store.CreateSCIMGroup(r.Context(), actor, store.Group{Name: name, Data: data}, provider, ext, members)
	if err != nil {
		return scimGroupConflict(err, name, ext)
	}
	out, err := s.scimGroupOut(r, g)
	if err != nil {
		return err
	}
	w.Header().Set("Location", out.Meta.Location)
	return writeSCIM(w, http.StatusCreated, out)
}

func (s *Server) scimLoadGroup(r *http.Request) (store.Group, error) {
	id := r.PathValue("id")
	g, err := s.store.GetGroup(r.Context(), scimActor(), id)
	if errors.Is(err, store.ErrNotFound) {
		return g, scimErrorf(http.StatusNotFound, "invalidValue", "Group %s not found", id)
	}
	return g, err
}

// handleSCIMGetGroup is GET /Groups/{id}.
func (s *Server) handleSCIMGetGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.scimLoadGroup(r)
	if err != nil {
		return err
	}
	out, err := s.scimGroupOut(r, g)
	if err != nil {
		return err
	}
	return writeSCIM(w, http.StatusOK, out)
}

// handleSCIMListGroups is GET /Groups?filter=&startIndex=&count=.
func (s *Server) handleSCIMListGroups(w http.ResponseWriter, r *http.Request) error {
	q, start, err := s.scimQuery(r)
	if err != nil {
		return err
	}
	gs, total, err := s.store.SCIMGroups(r.Context(), scimActor(), q)
	if err != nil {
		return err
	}
	var ids []string
	for _, g := range gs {
		ids = append(ids, g.MemberIDs...)
	}
	names, err := s.store.UserNames(r.Context(), scimActor(), ids)
	if err != nil {
		return err
	}
	res := make([]scimGroup, 0, len(gs))
	for _, g := range gs {
		res = append(res, s.toSCIMGroup(r, g, names))
	}
	return writeSCIM(w, http.StatusOK, scimList{Schemas: []string{scimListSchema}, TotalResults: total,
		ItemsPerPage: len(res), StartIndex: start, Resources: res})
}

// handleSCIMReplaceGroup is PUT /Groups/{id}: the name if given; members,
// when present, replace the membership.
func (s *Server) handleSCIMReplaceGroup(w http.ResponseWriter, r *http.Request) error {
	var b scimGroupBody
	if err := decode(r, &b); err != nil {
		return err
	}
	g, err := s.scimLoadGroup(r)
	if err != nil {
		return err
	}
	var p store.SCIMGroupPatch
	if b.DisplayName != nil && strings.TrimSpace(*b.DisplayName) != "" {
		n := strings.TrimSpace(*b.DisplayName)
		p.Name = &n
	}
	if b.Members != nil {
		ids := memberIDs(*b.Members)
		p.Members = &ids
	}
	if b.ExternalID != nil {
		p.ExternalID = b.ExternalID
	}
	return s.saveSCIMGroup(w, r, g, p)
}

// handleSCIMPatchGroup is PATCH /Groups/{id} (RFC 7644 §3.5.2).
func (s *Server) handleSCIMPatchGroup(w http.ResponseWriter, r *http.Request) error {
	var b scimPatchBody
	if err := decode(r, &b); err != nil {
		return err
	}
	g, err := s.scimLoadGroup(r)
	if err != nil {
		return err
	}
	st := newSCIMGroupState(g)
	for _, op := range b.Operations {
		if err := st.apply(op); err != nil {
			return err
		}
	}
	var p store.SCIMGroupPatch
	if st.name != g.Name {
		p.Name = &st.name
	}
	members := st.memberList()
	p.Members = &members
	if st.externalIDSet {
		p.ExternalID = &st.externalID
	}
	return s.saveSCIMGroup(w, r, g, p)
}

func (s *Server) saveSCIMGroup(w http.ResponseWriter, r *http.Request, g store.Group, p store.SCIMGroupPatch) error {
	if p.ExternalID != nil {
		cur := externalIDOf(g.SCIM, s.cfg().SCIMAuthProvider)
		if (cur == nil && *p.ExternalID == "") || (cur != nil && *cur == *p.ExternalID) {
			p.ExternalID = nil // unchanged: needs no provider
		} else {
			pr, err := s.needProvider()
			if err != nil {
				return err
			}
			p.Provider = pr
		}
	}
	name := g.Name
	if p.Name != nil {
		name = *p.Name
	}
	ext := ""
	if p.ExternalID != nil {
		ext = *p.ExternalID
	}
	g, err := s.store.UpdateSCIMGroup(r.Context(), scimActor(), g.ID, p)
	if err != nil {
		return scimGroupConflict(err, name, ext)
	}
	out, err := s.scimGroupOut(r, g)
	if err != nil {
		return err
	}
	return writeSCIM(w, http.StatusOK, out)
}

// handleSCIMDeleteGroup is DELETE /Groups/{id}: 204; the group and its
// memberships are removed (its members' accounts stay).
func (s *Server) handleSCIMDeleteGroup(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	err := s.store.DeleteGroup(r.Context(), scimActor(), id)
	if errors.Is(err, store.ErrNotFound) {
		return scimErrorf(http.StatusNotFound, "invalidValue", "Group %s not found", id)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ---- discovery (COMPAT.md §11.6) ----

// handleSCIMServiceProviderConfig is GET /ServiceProviderConfig.
func (s *Server) handleSCIMServiceProviderConfig(w http.ResponseWriter, r *http.Request) error {
	return writeSCIM(w, http.StatusOK, map[string]any{
		"schemas":        []string{"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"},
		"patch":          map[string]any{"supported": true},
		"bulk":           map[string]any{"supported": false, "maxOperations": 1000, "maxPayloadSize": defaultBodyLimit},
		"filter":         map[string]any{"supported": true, "maxResults": 200},
		"changePassword": map[string]any{"supported": false},
		"sort":           map[string]any{"supported": false},
		"etag":           map[string]any{"supported": false},
		"authenticationSchemes": []any{map[string]any{"type": "oauthbearertoken", "name": "OAuth Bearer Token",
			"description": "Authentication using OAuth 2.0 Bearer Token"}},
	})
}

// handleSCIMResourceTypes is GET /ResourceTypes: a plain array, as Open
// WebUI answers (not a ListResponse).
func (s *Server) handleSCIMResourceTypes(w http.ResponseWriter, r *http.Request) error {
	base := scimBaseURL(r) + "api/v1/scim/v2/ResourceTypes/"
	rt := func(id, endpoint, desc, schema string) map[string]any {
		return map[string]any{
			"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:ResourceType"},
			"id":      id, "name": id, "endpoint": endpoint, "description": desc, "schema": schema,
			"meta": map[string]any{"location": base + id, "resourceType": "ResourceType"},
		}
	}
	return writeSCIM(w, http.StatusOK, []any{
		rt("User", "/Users", "User Account", scimUserSchema),
		rt("Group", "/Groups", "Group", scimGroupSchema),
	})
}

// handleSCIMSchemas is GET /Schemas: the two minimal schema documents.
func (s *Server) handleSCIMSchemas(w http.ResponseWriter, r *http.Request) error {
	attr := func(name, typ string, required, multi bool) map[string]any {
		return map[string]any{"name": name, "type": typ, "required": required, "multiValued": multi}
	}
	schema := func(id, name, desc string, attrs ...map[string]any) map[string]any {
		return map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Schema"},
			"id": id, "name": name, "description": desc, "attributes": attrs}
	}
	return writeSCIM(w, http.StatusOK, []any{
		schema(scimUserSchema, "User", "User Account",
			attr("userName", "string", true, false), attr("displayName", "string", false, false),
			attr("emails", "complex", false, true), attr("active", "boolean", false, false)),
		schema(scimGroupSchema, "Group", "Group",
			attr("displayName", "string", true, false), attr("members", "complex", false, true)),
	})
}
