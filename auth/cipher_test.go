package auth

import (
	"strings"
	"testing"
)

func TestCipherRoundTrip(t *testing.T) {
	c, err := NewCipher([]byte("secret"), "config")
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := c.Seal([]byte(`["sk-live-123"]`)), c.Seal([]byte(`["sk-live-123"]`))
	if s1 == s2 || strings.Contains(s1, "sk-live") || !IsSealed(s1) {
		t.Fatalf("seal: %q %q", s1, s2)
	}
	got, err := c.Open(s1)
	if err != nil || string(got) != `["sk-live-123"]` {
		t.Fatalf("open: %q %v", got, err)
	}
	// Plain values from before encryption pass through.
	if got, err := c.Open(`"plain"`); err != nil || string(got) != `"plain"` {
		t.Fatalf("plain: %q %v", got, err)
	}
	// Another secret or another purpose cannot open it; tampering is caught.
	other, _ := NewCipher([]byte("other"), "config")
	purpose, _ := NewCipher([]byte("secret"), "oauth")
	tampered := s1[:len(s1)-2] + "AA"
	for _, tc := range []struct {
		c *Cipher
		s string
	}{{other, s1}, {purpose, s1}, {c, tampered}, {c, "enc:v1:!!"}} {
		if _, err := tc.c.Open(tc.s); err != ErrSealed {
			t.Fatalf("open %q: err %v, want ErrSealed", tc.s, err)
		}
	}
}
