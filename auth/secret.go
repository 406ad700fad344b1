package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadOrCreateSecret returns the JWT secret: the configured one when given,
// else the one kept in dir/secret_key, created (0600) on first start.
func LoadOrCreateSecret(configured, dir string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	path := filepath.Join(dir, "secret_key")
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("%s is empty; delete it or set WEBUI_SECRET_KEY", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var r [32]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, err
	}
	s := hex.EncodeToString(r[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(s + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return []byte(s), f.Close()
}
