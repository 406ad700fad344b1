package server

import (
	"embed"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"hearth/store"
)

//go:embed static/user.png
var staticFS embed.FS

// maxProfileDataURI bounds a data: profile picture (Open WebUI caps it too).
const maxProfileDataURI = 2 << 20

var (
	profileDataRe = regexp.MustCompile(`^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$`)
	profileSelfRe = regexp.MustCompile(`^/api/v1/users/[A-Za-z0-9-]{1,64}/profile/image$`)
)

// validProfileImageURL accepts what Open WebUI stores (COMPAT.md §14.2): empty,
// the built-in picture, the image endpoint, an http(s) URL with a host, or a
// base64 data: URI of a raster type.
func validProfileImageURL(s string) bool {
	switch {
	case s == "", s == "/user.png", s == "/static/user.png", profileSelfRe.MatchString(s):
		return true
	case strings.HasPrefix(s, "data:"):
		return len(s) <= maxProfileDataURI && profileDataRe.MatchString(s)
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && len(s) <= 2048
}

// handleProfileImage is GET /api/v1/users/{id}/profile/image (signed-in,
// non-pending callers: COMPAT.md decision 23). http(s) pictures are a 302
// when ENABLE_PROFILE_IMAGE_URL_FORWARDING is on; data: pictures are served
// from here when their type is allowed; everything else gets the default
// picture. Served bytes never get sniffed into another type.
func (s *Server) handleProfileImage(w http.ResponseWriter, r *http.Request) error {
	u, err := s.store.UserByID(r.Context(), r.PathValue("user_id"))
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusBadRequest, msgNotFound)
	}
	if err != nil {
		return err
	}
	c := s.cfg()
	pic := u.ProfileImageURL
	switch {
	case strings.HasPrefix(pic, "http://") || strings.HasPrefix(pic, "https://"):
		if c.EnableProfileImageURLForwarding {
			http.Redirect(w, r, pic, http.StatusFound)
			return nil
		}
	case strings.HasPrefix(pic, "data:"):
		if typ, data, ok := decodeDataURI(pic); ok && allowedType(c.ProfileImageAllowedMimeTypes, typ) {
			serveImage(w, typ, data)
			return nil
		}
	}
	b, _ := staticFS.ReadFile("static/user.png")
	serveImage(w, "image/png", b)
	return nil
}

func serveImage(w http.ResponseWriter, typ string, b []byte) {
	h := w.Header()
	h.Set("Content-Type", typ)
	h.Set("Content-Disposition", "inline")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, max-age=300")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// decodeDataURI parses "data:<type>;base64,<data>".
func decodeDataURI(s string) (typ string, data []byte, ok bool) {
	meta, payload, found := strings.Cut(strings.TrimPrefix(s, "data:"), ",")
	if !found {
		return "", nil, false
	}
	typ, enc, _ := strings.Cut(meta, ";")
	if enc != "base64" {
		return "", nil, false
	}
	payload = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, payload)
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, false
	}
	return strings.ToLower(strings.TrimSpace(typ)), data, len(data) > 0
}

func allowedType(allowed []string, typ string) bool {
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(a), typ) {
			return true
		}
	}
	return false
}
