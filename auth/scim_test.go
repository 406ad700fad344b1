package auth

import "testing"

func TestSCIMTokenOK(t *testing.T) {
	for _, c := range []struct {
		presented, configured string
		want                  bool
	}{
		{"secret", "secret", true},
		{"secret", "", false}, // SCIM_TOKEN unset matches nothing
		{"", "", false},
		{"", "secret", false},
		{"secre", "secret", false},
		{"secretx", "secret", false},
		{"Secret", "secret", false},
	} {
		if got := SCIMTokenOK(c.presented, c.configured); got != c.want {
			t.Errorf("SCIMTokenOK(%q, %q) = %v", c.presented, c.configured, got)
		}
	}
}
