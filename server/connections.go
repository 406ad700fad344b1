package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"hearth/chat"
)

// Connection settings (COMPAT.md §6.1): GET/POST /ollama/config (also under
// /runtime), /openai/config, and the verify calls an admin makes before
// saving a connection. Every write is one all-or-nothing Settings.Set; the
// registry sees the new connections on its next use (its configuration
// snapshot changes) and the model lists are renewed.

const msgInvalidURL = "The URL you provided is invalid. Please double-check and try again."

// ollamaConfig is the GET payload of /ollama/config.
func (s *Server) ollamaConfig() map[string]any {
	c := s.cfg()
	return map[string]any{
		"ENABLE_OLLAMA_API":  c.EnableOllamaAPI,
		"OLLAMA_BASE_URLS":   nonNilList(c.OllamaBaseURLs),
		"OLLAMA_API_CONFIGS": nonNilMap(c.OllamaAPIConfigs),
	}
}

// openAIConfig is the GET payload of /openai/config. Keys are included, as
// Open WebUI returns them: the route is admin-only and the admin UI shows
// and edits them (config explain and exports redact them).
func (s *Server) openAIConfig() map[string]any {
	c := s.cfg()
	return map[string]any{
		"ENABLE_OPENAI_API":    c.EnableOpenAIAPI,
		"OPENAI_API_BASE_URLS": nonNilList(c.OpenAIAPIBaseURLs),
		"OPENAI_API_KEYS":      chat.PadKeys(c.OpenAIAPIKeys, len(c.OpenAIAPIBaseURLs)),
		"OPENAI_API_CONFIGS":   nonNilMap(c.OpenAIAPIConfigs),
	}
}

func nonNilList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func (s *Server) handleGetOllamaConfig(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.ollamaConfig())
}

func (s *Server) handleGetOpenAIConfig(w http.ResponseWriter, r *http.Request) error {
	return ok(w, s.openAIConfig())
}

// cleanURLs trims URLs and strips trailing slashes.
func cleanURLs(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = strings.TrimRight(strings.TrimSpace(u), "/")
	}
	return out
}

// configsFor keeps the per-connection configs of indexes 0..n-1 (Open
// WebUI drops the others, legacy URL keys included).
func configsFor(configs map[string]any, n int) map[string]any {
	out := map[string]any{}
	for i := range n {
		k := strconv.Itoa(i)
		if v, ok := configs[k]; ok {
			out[k] = v
		}
	}
	return out
}

// handleSetOllamaConfig is POST /ollama/config/update {ENABLE_OLLAMA_API?,
// OLLAMA_BASE_URLS, OLLAMA_API_CONFIGS?}. Without OLLAMA_API_CONFIGS the
// current configs are kept (for the indexes that remain).
func (s *Server) handleSetOllamaConfig(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Enable  *bool          `json:"ENABLE_OLLAMA_API"`
		URLs    *[]string      `json:"OLLAMA_BASE_URLS"`
		Configs map[string]any `json:"OLLAMA_API_CONFIGS"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	if body.URLs == nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "OLLAMA_BASE_URLS")
	}
	urls := cleanURLs(*body.URLs)
	configs := body.Configs
	if configs == nil {
		configs = s.cfg().OllamaAPIConfigs
	}
	changes := map[string]any{"OLLAMA_BASE_URLS": urls, "OLLAMA_API_CONFIGS": configsFor(configs, len(urls))}
	if body.Enable != nil {
		changes["ENABLE_OLLAMA_API"] = *body.Enable
	}
	if err := s.applySettings(r, changes, http.StatusUnprocessableEntity); err != nil {
		return err
	}
	s.models.Invalidate()
	return ok(w, s.ollamaConfig())
}

// handleSetOpenAIConfig is POST /openai/config/update {ENABLE_OPENAI_API?,
// OPENAI_API_BASE_URLS, OPENAI_API_KEYS?, OPENAI_API_CONFIGS?}: keys are
// padded or cut to the URL count.
func (s *Server) handleSetOpenAIConfig(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Enable  *bool          `json:"ENABLE_OPENAI_API"`
		URLs    *[]string      `json:"OPENAI_API_BASE_URLS"`
		Keys    *[]string      `json:"OPENAI_API_KEYS"`
		Configs map[string]any `json:"OPENAI_API_CONFIGS"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	if body.URLs == nil {
		return errorf(http.StatusUnprocessableEntity, "Field %q is required", "OPENAI_API_BASE_URLS")
	}
	c := s.cfg()
	urls := cleanURLs(*body.URLs)
	keys := c.OpenAIAPIKeys
	if body.Keys != nil {
		keys = *body.Keys
	}
	configs := body.Configs
	if configs == nil {
		configs = c.OpenAIAPIConfigs
	}
	changes := map[string]any{
		"OPENAI_API_BASE_URLS": urls,
		"OPENAI_API_KEYS":      chat.PadKeys(keys, len(urls)),
		"OPENAI_API_CONFIGS":   configsFor(configs, len(urls)),
	}
	if body.Enable != nil {
		changes["ENABLE_OPENAI_API"] = *body.Enable
	}
	if err := s.applySettings(r, changes, http.StatusUnprocessableEntity); err != nil {
		return err
	}
	s.models.Invalidate()
	return ok(w, s.openAIConfig())
}

// verifyForm is ConnectionVerificationForm.
type verifyForm struct {
	URL    string         `json:"url"`
	Key    string         `json:"key"`
	Config map[string]any `json:"config"`
}

// handleVerifyOllama is POST /ollama/verify {url, key?}: GET
// <url>/api/version, answered with the runtime's JSON.
func (s *Server) handleVerifyOllama(w http.ResponseWriter, r *http.Request) error {
	var f verifyForm
	if err := decode(r, &f); err != nil {
		return err
	}
	return s.verifyUpstream(w, r, f, "/api/version")
}

// handleVerifyOpenAI is POST /openai/verify {url, key, config?}: GET
// <url>/models, answered with the provider's JSON.
func (s *Server) handleVerifyOpenAI(w http.ResponseWriter, r *http.Request) error {
	var f verifyForm
	if err := decode(r, &f); err != nil {
		return err
	}
	return s.verifyUpstream(w, r, f, "/models")
}

// verifyUpstream calls one upstream endpoint within verifyWait. Failures
// are 500 (Open WebUI's status) with a detail that says what happened:
// "HTTP Error: <status>", "External Error: <upstream message>", or
// "Server Connection Error: <reason>". An unusable URL is 400.
func (s *Server) verifyUpstream(w http.ResponseWriter, r *http.Request, f verifyForm, path string) error {
	base := strings.TrimRight(strings.TrimSpace(f.URL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errorf(http.StatusBadRequest, msgInvalidURL)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.verifyWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return errorf(http.StatusBadRequest, msgInvalidURL)
	}
	authType, _ := f.Config["auth_type"].(string)
	if f.Key != "" && authType != "none" {
		req.Header.Set("Authorization", "Bearer "+f.Key)
	}
	if h, ok := f.Config["headers"].(map[string]any); ok {
		for k, v := range h {
			if sv, ok := v.(string); ok && !strings.Contains(sv, "{{") {
				req.Header.Set(k, sv)
			}
		}
	}
	hc := s.upstream
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		reason := "could not connect"
		var ue *url.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			reason = "no answer within " + s.verifyWait.String()
		case errors.As(err, &ue):
			reason = ue.Err.Error()
		}
		return errorf(http.StatusInternalServerError, "Server Connection Error: %s", reason)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return errorf(http.StatusInternalServerError, "Server Connection Error: the answer was cut off")
	}
	if resp.StatusCode != http.StatusOK {
		if msg := upstreamErrorText(body); msg != "" {
			return errorf(http.StatusInternalServerError, "External Error: %s", msg)
		}
		return errorf(http.StatusInternalServerError, "HTTP Error: %d", resp.StatusCode)
	}
	if !json.Valid(body) {
		return errorf(http.StatusInternalServerError, "External Error: the answer is not JSON")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	return nil
}

// upstreamErrorText reads {"error": "..."} (Ollama) or {"error":
// {"message": "..."}} (OpenAI-compatible).
func upstreamErrorText(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Error, &o) == nil && o.Message != "" {
		return o.Message
	}
	return string(e.Error)
}
