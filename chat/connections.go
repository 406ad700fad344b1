package chat

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// DefaultOpenAIBaseURL replaces an empty entry of OPENAI_API_BASE_URLS.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// ConnectionSettings are the connection variables of COMPAT.md §6.1, as the
// configuration holds them (chat does not import config; the server copies
// them in).
type ConnectionSettings struct {
	EnableOllama  bool
	OllamaURLs    []string
	OllamaConfigs map[string]any // OLLAMA_API_CONFIGS, keyed "0", "1", ... (legacy: by URL)
	EnableOpenAI  bool
	OpenAIURLs    []string
	OpenAIKeys    []string // positional with OpenAIURLs
	OpenAIConfigs map[string]any
}

// BuildConnections turns the settings into connections: Ollama ones first,
// then OpenAI-compatible ones, each with Index = its position in its URL
// list (the urlIdx clients see). Trailing slashes are stripped; OpenAI keys
// are padded or cut to the URL count; an empty OpenAI URL means
// DefaultOpenAIBaseURL. A connection is Enabled when its API is enabled and
// its config does not say "enable": false; disabled connections are kept
// (indexes stay positional) but never called.
func BuildConnections(cs ConnectionSettings) []Connection {
	var out []Connection
	for i, u := range cs.OllamaURLs {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		c := connFromConfig(KindOllama, i, u, connConfigAt(cs.OllamaConfigs, i, u))
		c.Enabled = c.Enabled && cs.EnableOllama && u != ""
		out = append(out, c)
	}
	for i, u := range cs.OpenAIURLs {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if u == "" {
			u = DefaultOpenAIBaseURL
		}
		c := connFromConfig(KindOpenAI, i, u, connConfigAt(cs.OpenAIConfigs, i, u))
		c.Key = "" // OpenAI keys live in OPENAI_API_KEYS, not in the config
		if i < len(cs.OpenAIKeys) {
			c.Key = strings.TrimSpace(cs.OpenAIKeys[i])
		}
		c.Enabled = c.Enabled && cs.EnableOpenAI
		out = append(out, c)
	}
	return out
}

// PadKeys pads or cuts keys to n entries (Open WebUI's rule for
// OPENAI_API_KEYS against OPENAI_API_BASE_URLS).
func PadKeys(keys []string, n int) []string {
	out := make([]string, n)
	copy(out, keys)
	return out
}

// connConfigAt finds a connection's config by its string index, or (legacy
// layout) by its URL.
func connConfigAt(configs map[string]any, i int, url string) map[string]any {
	if m, ok := configs[strconv.Itoa(i)].(map[string]any); ok {
		return m
	}
	if m, ok := configs[url].(map[string]any); ok {
		return m
	}
	return nil
}

func connFromConfig(kind string, i int, url string, cfg map[string]any) Connection {
	c := Connection{Kind: kind, Index: i, BaseURL: url, Enabled: true, Config: cfg}
	if v, ok := cfg["enable"].(bool); ok {
		c.Enabled = v
	}
	c.Key, _ = cfg["key"].(string)
	c.PrefixID = strings.TrimSpace(cfgString(cfg["prefix_id"]))
	c.Tags = cfgTagNames(cfg["tags"])
	if ids, ok := cfg["model_ids"].([]any); ok {
		for _, id := range ids {
			if s := cfgString(id); s != "" {
				c.ModelIDs = append(c.ModelIDs, s)
			}
		}
	}
	c.ConnectionType = cfgString(cfg["connection_type"])
	if c.ConnectionType == "" {
		c.ConnectionType = "external"
		if kind == KindOllama {
			c.ConnectionType = "local"
		}
	}
	c.Provider = cfgString(cfg["provider"])
	c.AuthType = cfgString(cfg["auth_type"])
	c.APIType = cfgString(cfg["api_type"])
	if h, ok := cfg["headers"].(map[string]any); ok && len(h) > 0 {
		c.Headers = make(map[string]string, len(h))
		for k, v := range h {
			c.Headers[k] = cfgString(v)
		}
	}
	return c
}

// cfgTagNames reads tags given as ["a", ...] or [{"name": "a"}, ...].
func cfgTagNames(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, t := range list {
		switch t := t.(type) {
		case string:
			if t != "" {
				out = append(out, t)
			}
		case map[string]any:
			if n := cfgString(t["name"]); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

func cfgString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	case float64, bool, json.Number:
		return fmt.Sprint(v)
	}
	return ""
}

// connectionsKey is a fingerprint of everything that decides what the model
// lists contain, so the registry refetches exactly when it changes.
func connectionsKey(conns []Connection) string {
	b, _ := json.Marshal(conns)
	return string(b)
}
