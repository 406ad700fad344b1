package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"hearth/store"
)

// Literal messages of Open WebUI (COMPAT.md §1.3); clients match on some.
const (
	msgNotFound          = "We could not find what you're looking for :/"
	msgAccessProhibited  = "You do not have permission to access this resource. Please contact your administrator for assistance."
	msgActionProhibited  = "The requested action has been restricted as a security measure."
	msgUnauthorized      = "401 Unauthorized"
	msgInvalidToken      = "Your session has expired or the token is invalid. Please sign in again."
	msgNotAuthenticated  = "Not authenticated"
	msgInvalidCred       = "The email or password provided is incorrect. Please check for typos and try logging in again."
	msgInvalidEmail      = "The email format you entered is invalid. Please double-check and make sure you're using a valid email address (e.g., yourname@example.com)."
	msgEmailTaken        = "Uh-oh! This email is already registered. Sign in with your existing account or choose another email to start anew."
	msgIncorrectPassword = "The password provided is incorrect. Please check for typos and try again."
	msgPasswordTooLong   = "Uh-oh! The password you entered is too long. Please make sure your password is less than 72 bytes long."
	msgAPIKeyNotAllowed  = "Use of API key is not enabled in the environment."
	msgAPIKeyCreation    = "API key creation is not allowed in the environment."
	msgAPIKeyNotFound    = "Oops! It looks like there's a hiccup. The API key is missing. Please make sure to provide a valid API key to access this feature."
	msgRateLimited       = "API rate limit exceeded"
	msgUserMismatch      = "User mismatch. Please sign in again."
	msgTrustedHeader     = "Your provider has not provided a trusted header. Please contact your administrator for assistance."
	msgDefault           = "Something went wrong :/"
	msgInternal          = "internal error"
)

// apiError is an error with the status and detail the client must see.
type apiError struct {
	status int
	detail string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.status, e.detail) }

// errorf builds an apiError; the detail is shown to the client verbatim.
func errorf(status int, format string, args ...any) error {
	if len(args) == 0 {
		return &apiError{status: status, detail: format}
	}
	return &apiError{status: status, detail: fmt.Sprintf(format, args...)}
}

// writeError is the single error exit: it maps err to a status and
// {"detail": ...}, logs unexpected errors once, and never leaks internal
// text (a 500 says only "internal error"). Under the SCIM base the body is
// the SCIM Error envelope instead (writeSCIMError), which keeps "detail".
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if isSCIMPath(r.URL.Path) {
		s.writeSCIMError(w, r, err)
		return
	}
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, store.ErrNotFound):
		ae = &apiError{http.StatusNotFound, msgNotFound}
	case errors.Is(err, store.ErrForbidden):
		ae = &apiError{http.StatusForbidden, msgActionProhibited}
	case errors.Is(err, store.ErrConflict):
		ae = &apiError{http.StatusConflict, "Already exists"}
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return // the client went away; nobody to answer
	default:
		s.log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.String("request_id", requestID(r)), slog.Any("err", err))
		ae = &apiError{http.StatusInternalServerError, msgInternal}
	}
	writeJSON(w, ae.status, map[string]string{"detail": ae.detail})
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"detail":"internal error"}`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// ok writes a 200 JSON answer and returns nil, so handlers can `return ok(w, v)`.
func ok(w http.ResponseWriter, v any) error {
	writeJSON(w, http.StatusOK, v)
	return nil
}
