package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"hearth/auth"
	"hearth/config"
)

// sealedConfig encrypts the values of secret settings (provider API keys,
// the OAuth client secret) before they reach the database, and decrypts them
// when read, so a copied hearth.db does not hand out those credentials. The
// key is derived from the instance secret. A value that cannot be decrypted
// (the secret changed) stops the start with a clear error rather than being
// replaced, so nothing stored is lost by a mistyped WEBUI_SECRET_KEY.
type sealedConfig struct {
	st     config.Store
	cipher *auth.Cipher
	secret map[string]bool // persistent keys of secret variables
}

func newSealedConfig(st config.Store, secret []byte) (*sealedConfig, error) {
	c, err := auth.NewCipher(secret, "config")
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, v := range config.Vars() {
		if v.Secret && v.Persistent && v.Key != "" {
			keys[v.Key] = true
		}
	}
	return &sealedConfig{st: st, cipher: c, secret: keys}, nil
}

func (s *sealedConfig) LoadConfig(ctx context.Context) (map[string]json.RawMessage, error) {
	values, err := s.st.LoadConfig(ctx)
	if err != nil {
		return nil, err
	}
	for k, v := range values {
		var sealed string
		if !s.secret[k] || json.Unmarshal(v, &sealed) != nil || !auth.IsSealed(sealed) {
			continue
		}
		plain, err := s.cipher.Open(sealed)
		if err != nil {
			return nil, fmt.Errorf("setting %s: %w", k, err)
		}
		values[k] = plain
	}
	return values, nil
}

func (s *sealedConfig) SaveConfig(ctx context.Context, values map[string]json.RawMessage) error {
	out := make(map[string]json.RawMessage, len(values))
	for k, v := range values {
		if s.secret[k] {
			b, _ := json.Marshal(s.cipher.Seal(v))
			v = b
		}
		out[k] = v
	}
	return s.st.SaveConfig(ctx, out)
}
