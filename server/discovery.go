package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"hearth/config"
)

// Health and discovery (SPEC.md §4 "Health and discovery", COMPAT.md §13.2,
// §13.4). Every route here is public.

// pingTimeout bounds the database check of the health routes: a load
// balancer must get an answer even when the database hangs.
const pingTimeout = 2 * time.Second

// msgDBNotReady is upstream's /ready detail for a database that does not
// answer.
const msgDBNotReady = "Database not ready"

// checkDB pings the store within pingTimeout; failure is a 503 with
// msgDBNotReady (the cause is logged, never shown).
func (s *Server) checkDB(r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), pingTimeout)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return err // the client went away
		}
		s.log.WarnContext(r.Context(), "health check: database did not answer", slog.Any("err", err))
		return errorf(http.StatusServiceUnavailable, msgDBNotReady)
	}
	return nil
}

// handleHealth is GET /health. SPEC.md §4 says it covers "basic database
// connectivity", so unlike upstream (which never touches the database here)
// it answers 200 only when the database answers.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkDB(r); err != nil {
		return err
	}
	return ok(w, map[string]bool{"status": true})
}

// handleHealthDB is GET /health/db: {"status": true} after a ping. Upstream
// lets a failure escape as a bare 500; Hearth answers 503 with a detail.
func (s *Server) handleHealthDB(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkDB(r); err != nil {
		return err
	}
	return ok(w, map[string]bool{"status": true})
}

// handleReady is GET /ready: 200 once the server is built (New returns only
// after migrations and configuration loading) and the database answers,
// else 503 "Database not ready" as upstream.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkDB(r); err != nil {
		return err
	}
	return ok(w, map[string]bool{"status": true})
}

// handleVersion is GET /api/version (COMPAT.md §13.4).
func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) error {
	return ok(w, map[string]string{"version": s.version, "deployment_id": s.cfg().DeploymentID})
}

// handleAppConfig is GET /api/config (COMPAT.md §13.2). What the caller sees
// depends on who it is: anonymous callers and pending users get only what
// the sign-in page needs (pending users also the overlay text); users and
// admins get the feature flags, defaults and their own permission tree.
// An invalid credential is simply anonymous (the route is public).
func (s *Server) handleAppConfig(w http.ResponseWriter, r *http.Request) error {
	c := s.cfg()
	id := ident(r)

	providers := map[string]string{}
	if c.OAuthClientID != "" && c.OpenIDProviderURL != "" {
		providers["oidc"] = c.OAuthProviderName
	}
	features := map[string]any{
		// WEBUI_AUTH=false (single-user mode without sign-in) is not
		// implemented: sign-in is always required.
		"auth":                                true,
		"auth_trusted_header":                 c.TrustedEmailHeader != "",
		"enable_signup_password_confirmation": c.EnableSignupPasswordConfirmation,
		"enable_ldap":                         c.EnableLDAP,
		"enable_signup":                       c.EnableSignup,
		"enable_login_form":                   c.EnableLoginForm,
		"enable_websocket":                    true,
		"enable_password_auth":                c.EnablePasswordAuth,
	}
	resp := map[string]any{
		"status":         true,
		"name":           c.WebUIName,
		"version":        s.version,
		"default_locale": c.DefaultLocale,
		"oauth":          map[string]any{"providers": providers, "auto_redirect": false},
		"features":       features,
	}

	switch {
	case id == nil:
		// Onboarding: the first visitor of an empty instance creates the
		// admin account.
		n, err := s.store.CountUsers(r.Context())
		if err != nil {
			return err
		}
		if n == 0 {
			resp["onboarding"] = true
		}
	case id.actor.Role == "pending":
		resp["ui"] = map[string]string{
			"pending_user_overlay_title":   c.PendingUserOverlayTitle,
			"pending_user_overlay_content": c.PendingUserOverlayContent,
		}
	case id.actor.Role == "user" || id.actor.Role == "admin":
		addSignedInFeatures(features, c)
		resp["default_models"] = c.DefaultModels
		resp["default_pinned_models"] = c.DefaultPinnedModels
		resp["default_prompt_suggestions"] = []any{}
		resp["code"] = map[string]string{"engine": "pyodide", "interpreter_engine": "pyodide"}
		// Text to speech through the browser (engine ""), speech to text
		// through the browser too ("web"): Hearth has no audio backend.
		resp["audio"] = map[string]any{
			"tts": map[string]string{"engine": "", "voice": "", "split_on": "punctuation"},
			"stt": map[string]string{"engine": "web"},
		}
		resp["file"] = map[string]any{
			"max_size":          nil,
			"max_count":         nil,
			"image_compression": map[string]any{"width": nil, "height": nil},
		}
		resp["permissions"] = s.permissions(id)
		resp["google_drive"] = map[string]string{"client_id": "", "api_key": ""}
		resp["onedrive"] = map[string]string{
			"client_id_personal": "", "client_id_business": "",
			"sharepoint_url": "", "sharepoint_tenant_id": "",
		}
		resp["ui"] = map[string]string{
			"pending_user_overlay_title":   c.PendingUserOverlayTitle,
			"pending_user_overlay_content": c.PendingUserOverlayContent,
			"response_watermark":           c.ResponseWatermark,
			"iframe_csp":                   c.IframeCSP,
		}
		resp["license_metadata"] = nil
	}
	return ok(w, resp)
}

// addSignedInFeatures adds the feature flags upstream shows only to a
// signed-in user. Features Hearth does not have (yet) are reported off so the
// client hides their controls.
func addSignedInFeatures(f map[string]any, c *config.Config) {
	for k, v := range map[string]any{
		"enable_api_keys":                  c.EnableAPIKeys,
		"enable_password_change_form":      c.EnablePasswordChangeForm,
		"enable_version_update_check":      false, // no outbound update check
		"enable_public_active_users_count": c.EnablePublicActiveUsersCount,
		"enable_easter_eggs":               c.EnableEasterEggs,
		"enable_direct_connections":        false,
		"enable_folders":                   c.EnableFolders,
		"folder_max_file_count":            c.FolderMaxFileCount, // "" when unlimited, as upstream
		"enable_channels":                  c.EnableChannels,
		"enable_calendar":                  c.EnableCalendar,
		"enable_automations":               c.EnableAutomations,
		"enable_notes":                     c.EnableNotes,
		"enable_web_search":                false,
		"enable_web_search_confirmation":   false,
		"web_search_confirmation_content":  "",
		"enable_code_execution":            false,
		"enable_code_interpreter":          false,
		"enable_image_generation":          false,
		"enable_autocomplete_generation":   false,
		"enable_community_sharing":         c.EnableCommunitySharing,
		"enable_message_rating":            c.EnableMessageRating,
		"enable_user_webhooks":             c.EnableUserWebhooks,
		"enable_user_status":               c.EnableUserStatus,
		"enable_admin_export":              c.EnableAdminExport,
		"enable_admin_chat_access":         c.EnableAdminChatAccess,
		"enable_admin_analytics":           c.EnableAdminAnalytics,
		"enable_google_drive_integration":  false,
		"enable_onedrive_integration":      false,
		"enable_memories":                  c.EnableMemories,
	} {
		f[k] = v
	}
}

// manifestFetchTimeout bounds the fetch of EXTERNAL_PWA_MANIFEST_URL;
// manifestMaxBytes bounds its size.
const (
	manifestFetchTimeout = 5 * time.Second
	manifestMaxBytes     = 1 << 20
)

// handleManifest is GET /manifest.json (COMPAT.md §13.4). With
// EXTERNAL_PWA_MANIFEST_URL set, that document is fetched (per request: the
// browser asks rarely, and a cache would need state the Server does not
// carry) and passed through; when the fetch fails the built-in manifest is
// served instead, so a broken external host never breaks installation.
func (s *Server) handleManifest(w http.ResponseWriter, r *http.Request) error {
	c := s.cfg()
	if u := c.ExternalPWAManifestURL; u != "" {
		body, err := fetchManifest(r.Context(), u)
		if err == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(body)
			return nil
		}
		if r.Context().Err() != nil {
			return r.Context().Err()
		}
		s.log.WarnContext(r.Context(), "external PWA manifest unavailable; serving the built-in one",
			slog.String("url", u), slog.Any("err", err))
	}
	return ok(w, builtinManifest(c.WebUIName))
}

// fetchManifest GETs an admin-configured manifest URL and returns its body
// when it is a JSON document.
func fetchManifest(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, manifestFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/manifest+json, application/json")
	resp, err := (&http.Client{Timeout: manifestFetchTimeout}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, manifestMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > manifestMaxBytes {
		return nil, fmt.Errorf("larger than %d bytes", manifestMaxBytes)
	}
	if !json.Valid(body) {
		return nil, errors.New("not a JSON document")
	}
	return body, nil
}

// builtinManifest is upstream's manifest with the instance name.
func builtinManifest(name string) map[string]any {
	icon := func(purpose string) map[string]string {
		return map[string]string{"src": "/static/logo.png", "type": "image/png", "sizes": "500x500", "purpose": purpose}
	}
	return map[string]any{
		"name":             name,
		"short_name":       name,
		"description":      name + " is an open, extensible, user-friendly interface for AI that adapts to your workflow.",
		"start_url":        "/",
		"display":          "standalone",
		"background_color": "#343541",
		"icons":            []any{icon("any"), icon("maskable")},
		"share_target": map[string]any{
			"action": "/",
			"method": "GET",
			"params": map[string]string{"text": "shared"},
		},
	}
}

// errDocsOff is the answer of /docs and /openapi.json outside ENV=dev, the
// same body as any unknown path.
func errDocsOff() error { return errorf(http.StatusNotFound, "Not Found") }

// handleOpenAPI is GET /openapi.json, only with ENV=dev (COMPAT.md §13.4).
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	if s.cfg().Env != "dev" {
		return errDocsOff()
	}
	return ok(w, s.openAPI())
}

// handleDocs is GET /docs, only with ENV=dev: a self-contained page (no CDN;
// the machine may be offline) listing the operations of /openapi.json.
func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) error {
	if s.cfg().Env != "dev" {
		return errDocsOff()
	}
	return s.writeDocsPage(w)
}
