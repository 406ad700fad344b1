package cli

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"hearth/auth"
	"hearth/config"
	"hearth/store"
)

// Secret settings are stored encrypted and read back in clear.
func TestSealedConfig(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, err := newSealedConfig(st, []byte("instance-secret"))
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"OPENAI_API_KEYS": "sk-live-abc", "OPENAI_API_BASE_URLS": "https://api.example/v1"}[k]
		return v, ok
	}
	settings, _, err := config.Load(ctx, env, sc)
	if err != nil {
		t.Fatal(err)
	}
	if got := settings.Get().OpenAIAPIKeys; len(got) != 1 || got[0] != "sk-live-abc" {
		t.Fatalf("keys %v", got)
	}
	raw, _ := st.LoadConfig(ctx)
	stored := string(raw["openai.api_keys"])
	if stored == "" || strings.Contains(stored, "sk-live") {
		t.Fatalf("stored value %q is not sealed", stored)
	}
	var url []string
	if json.Unmarshal(raw["openai.api_base_urls"], &url) != nil || url[0] != "https://api.example/v1" {
		t.Fatalf("non-secret value changed: %s", raw["openai.api_base_urls"])
	}
	// A later start with another environment reads the stored key back.
	again, _, err := config.Load(ctx, func(string) (string, bool) { return "", false }, sc)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Get().OpenAIAPIKeys; len(got) != 1 || got[0] != "sk-live-abc" {
		t.Fatalf("after restart keys %v", got)
	}
	// With another instance secret the value is unreadable: loading fails
	// with a clear error instead of replacing the stored key.
	other, _ := newSealedConfig(st, []byte("other-secret"))
	if _, _, err := config.Load(ctx, func(string) (string, bool) { return "", false }, other); !errors.Is(err, auth.ErrSealed) {
		t.Fatalf("load with the wrong secret: %v", err)
	}
	raw2, _ := st.LoadConfig(ctx)
	if string(raw2["openai.api_keys"]) != stored {
		t.Fatal("the stored key was replaced")
	}
}
