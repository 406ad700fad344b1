package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTokensIssueVerify(t *testing.T) {
	tk, err := NewTokens([]byte("short"))
	if err != nil {
		t.Fatal(err)
	}
	tok, c, err := tk.Issue("u1", time.Hour)
	if err != nil || c.Exp == 0 || c.JTI == "" {
		t.Fatalf("issue: %v %+v", err, c)
	}
	got, err := tk.Verify(tok)
	if err != nil || got.ID != "u1" || got.JTI != c.JTI {
		t.Fatalf("verify: %v %+v", err, got)
	}
	// No expiry when ttl <= 0.
	tok2, c2, _ := tk.Issue("u1", 0)
	if c2.Exp != 0 {
		t.Fatal("ttl 0 set exp")
	}
	if _, err := tk.Verify(tok2); err != nil {
		t.Fatal(err)
	}
	// Expired, wrong key, garbage, and the none algorithm are refused.
	tk.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := tk.Verify(tok); err != ErrBadToken {
		t.Fatalf("expired token: %v", err)
	}
	other, _ := NewTokens([]byte("other"))
	if _, err := other.Verify(tok2); err != ErrBadToken {
		t.Fatalf("foreign token: %v", err)
	}
	none := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJpZCI6InUxIn0."
	for _, bad := range []string{"", "x.y.z", none, strings.Repeat("a", 1000)} {
		if _, err := tk.Verify(bad); err != ErrBadToken {
			t.Fatalf("Verify(%q) = %v", bad, err)
		}
	}
}

func TestPasswords(t *testing.T) {
	p := NewPasswords(4)
	h, err := p.Hash("pw")
	if err != nil || !p.Check(h, "pw") || p.Check(h, "px") || p.Check("", "pw") {
		t.Fatalf("hash/check broken: %v", err)
	}
	if _, err := p.Hash(strings.Repeat("x", 73)); err != ErrPasswordTooLong {
		t.Fatalf("73 bytes: %v", err)
	}
}

func TestAPIKeyFormat(t *testing.T) {
	k, h, hint := NewAPIKey()
	if !IsAPIKey(k) || len(k) != 35 || len(h) != 32 || strings.Contains(hint, k[5:31]) {
		t.Fatalf("key %q hint %q", k, hint)
	}
	if string(HashAPIKey(k)) != string(h) {
		t.Fatal("hash not stable")
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(3, time.Minute)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if !l.Allow("a") {
			t.Fatalf("attempt %d refused", i)
		}
	}
	if l.Allow("a") || !l.Blocked("a") || l.Blocked("b") || !l.Allow("b") {
		t.Fatal("limit not applied per key")
	}
	now = now.Add(61 * time.Second)
	if !l.Allow("a") {
		t.Fatal("window did not slide")
	}
}

func TestSecretFile(t *testing.T) {
	dir := t.TempDir()
	s1, err := LoadOrCreateSecret("", dir)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, "secret_key"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	s2, _ := LoadOrCreateSecret("", dir)
	if string(s1) != string(s2) || len(s1) < 32 {
		t.Fatal("secret not kept")
	}
	if s, _ := LoadOrCreateSecret("configured", dir); string(s) != "configured" {
		t.Fatal("configured secret ignored")
	}
}
