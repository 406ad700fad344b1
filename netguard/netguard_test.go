package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	cases := []struct {
		ip         string
		blocked    bool // with the default policy
		localOK    bool // allowed with AllowLocal
		whyContain string
	}{
		{"93.184.216.34", false, true, ""},
		{"8.8.8.8", false, true, ""},
		{"2606:4700::1111", false, true, ""},
		{"127.0.0.1", true, true, "not globally"},
		{"127.255.0.9", true, true, ""},
		{"10.1.2.3", true, true, ""},
		{"172.16.0.1", true, true, ""},
		{"172.31.255.255", true, true, ""},
		{"192.168.1.1", true, true, ""},
		{"169.254.1.1", true, true, ""},
		{"100.64.0.1", true, true, ""}, // CGNAT
		{"100.127.255.254", true, true, ""},
		{"198.18.0.1", true, true, ""},
		{"192.0.2.1", true, true, ""},
		{"0.0.0.0", true, false, "unspecified"},
		{"0.1.2.3", true, false, ""},
		{"224.0.0.1", true, false, ""},
		{"239.255.255.250", true, false, ""},
		{"255.255.255.255", true, false, ""},
		{"240.0.0.1", true, false, ""},
		{"169.254.169.254", true, false, "metadata"},
		{"100.100.100.200", true, false, "metadata"},
		{"fd00:ec2::254", true, false, "metadata"},
		{"::1", true, true, ""},
		{"::", true, false, ""},
		{"fe80::1", true, true, ""},
		{"fc00::1", true, true, ""},
		{"fd12:3456::1", true, true, ""},
		{"ff02::1", true, false, ""},
		{"2001:db8::1", true, true, ""},
		// IPv4-mapped forms.
		{"::ffff:127.0.0.1", true, true, ""},
		{"::ffff:10.0.0.1", true, true, ""},
		{"::ffff:169.254.169.254", true, false, "metadata"},
		{"::ffff:100.64.0.1", true, true, ""},
		{"::ffff:8.8.8.8", false, true, ""},
		// IPv4-compatible forms.
		{"::127.0.0.1", true, true, ""},
		{"::169.254.169.254", true, false, "metadata"},
		{"::8.8.8.8", true, true, ""}, // deprecated range: not global itself
		// NAT64 well-known prefix.
		{"64:ff9b::7f00:1", true, true, ""},
		{"64:ff9b::a9fe:a9fe", true, false, "metadata"},
		{"64:ff9b::808:808", false, true, ""},
		{"64:ff9b:1::1", true, true, ""},
		// 6to4 carrying a private or metadata address.
		{"2002:7f00:1::1", true, true, ""},
		{"2002:a9fe:a9fe::1", true, false, "metadata"},
		{"2002:808:808::1", false, true, ""},
	}
	strict, loose := New(Policy{}), New(Policy{AllowLocal: true})
	for _, c := range cases {
		ap := netip.AddrPortFrom(netip.MustParseAddr(c.ip), 80)
		err := strict.CheckAddr(ap)
		if (err != nil) != c.blocked {
			t.Errorf("%s: err = %v, want blocked=%v", c.ip, err, c.blocked)
		}
		if c.whyContain != "" {
			// The default filter list refuses the metadata addresses first;
			// the address rules refuse them on their own too.
			why := ""
			for _, local := range []bool{true, false} {
				for _, x := range forms(netip.MustParseAddr(c.ip)) {
					if w := classify(x, local); w != "" && why == "" {
						why = w
					}
				}
			}
			if !strings.Contains(why, c.whyContain) {
				t.Errorf("%s: classified %q, want it to say %q", c.ip, why, c.whyContain)
			}
		}
		if err := loose.CheckAddr(ap); (err == nil) != c.localOK {
			t.Errorf("%s with AllowLocal: err = %v, want allowed=%v", c.ip, err, c.localOK)
		}
	}
}

func TestCheckURL(t *testing.T) {
	g := New(Policy{FilterList: []string{"!evil.example", "!203.0.113.0/24"}})
	cases := []struct {
		url  string
		want error
	}{
		{"https://example.com/a?b=c", nil},
		{"http://example.com:8080/", nil},
		{"http://93.184.216.34/", nil},
		{"ftp://example.com/", ErrInvalidURL},
		{"file:///etc/passwd", ErrInvalidURL},
		{"gopher://example.com/", ErrInvalidURL},
		{"javascript:alert(1)", ErrInvalidURL},
		{"example.com", ErrInvalidURL},
		{"", ErrInvalidURL},
		{"http://exa\\mple.com/", ErrInvalidURL},
		{"http://example.com/\t", ErrInvalidURL},
		{"http://example.com/\r\nX: y", ErrInvalidURL},
		{"http://example.com/\n", ErrInvalidURL},
		{"http://example.com/ a", ErrInvalidURL},
		{"http:///path", ErrInvalidURL},
		{"http://example.com:99999/", ErrInvalidURL},
		{"http://127.0.0.1/", ErrBlocked},
		{"http://[::1]/", ErrBlocked},
		{"http://[::ffff:127.0.0.1]/", ErrBlocked},
		{"http://[::ffff:7f00:1]/", ErrBlocked},
		{"http://[64:ff9b::a9fe:a9fe]/", ErrFiltered},
		{"http://[64:ff9b::a00:1]/", ErrBlocked},
		{"http://10.0.0.1:8080/", ErrBlocked},
		{"http://169.254.169.254/latest/meta-data/", ErrFiltered},
		{"http://metadata.google.internal/computeMetadata/v1/", ErrFiltered},
		{"http://METADATA.google.internal./", ErrFiltered},
		{"http://x.metadata.azure.com/", ErrFiltered},
		{"http://100.100.100.200/", ErrFiltered},
		{"http://[fd00:ec2::254]/", ErrFiltered},
		{"http://evil.example/", ErrFiltered},
		{"http://sub.evil.example/", ErrFiltered},
		{"http://notevil.example/", nil}, // label boundary
		{"http://203.0.113.9/", ErrFiltered},
	}
	for _, c := range cases {
		_, err := g.CheckURL(c.url)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("CheckURL(%q) = %v, want %v", c.url, err, c.want)
		}
	}
}

func TestAllowList(t *testing.T) {
	g := New(Policy{FilterList: []string{"example.com", "93.184.216.0/24", "!bad.example.com"}})
	for raw, ok := range map[string]bool{
		"https://example.com/":         true,
		"https://docs.example.com/":    true,
		"https://bad.example.com/":     false,
		"https://example.org/":         false,
		"http://93.184.216.34/":        true,
		"http://metadata.azure.com/":   false,
		"https://badexample.com/page":  false,
		"https://example.com.evil.io/": false,
	} {
		if _, err := g.CheckURL(raw); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want allowed=%v", raw, err, ok)
		}
	}
}

// fakeResolver answers every name with the addresses given, counting calls.
type fakeResolver struct {
	answers map[string][]netip.Addr
	calls   atomic.Int32
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.calls.Add(1)
	if a, ok := f.answers[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no such host %q", host)
}

func serverAddr(t *testing.T, s *httptest.Server) netip.AddrPort {
	t.Helper()
	u, _ := url.Parse(s.URL)
	return netip.MustParseAddrPort(u.Host)
}

func get(t *testing.T, c *http.Client, raw string) (string, error) {
	t.Helper()
	resp, err := c.Get(raw)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// A real server on 127.0.0.1 is refused without the test exemption.
func TestLoopbackRefused(t *testing.T) {
	hit := atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer srv.Close()
	_, err := get(t, New(Policy{}).Client(), srv.URL)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	// By name too: localhost resolves to loopback and is refused at dial.
	port := serverAddr(t, srv).Port()
	_, err = get(t, New(Policy{}).Client(), fmt.Sprintf("http://localhost:%d/", port))
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("localhost: err = %v, want ErrBlocked", err)
	}
	if hit.Load() {
		t.Fatal("the loopback server was reached")
	}
	// AllowLocal opens it.
	if _, err := get(t, New(Policy{AllowLocal: true}).Client(), srv.URL); err != nil || !hit.Load() {
		t.Fatalf("AllowLocal: err = %v, hit = %v", err, hit.Load())
	}
}

// A name that resolves to an allowed address when validated and to
// loopback when connecting cannot pass: the dial checks what it connects to.
func TestRebindingRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer srv.Close()
	res := &fakeResolver{answers: map[string][]netip.Addr{"rebind.test": {netip.MustParseAddr("127.0.0.1")}}}
	g := New(Policy{}, WithResolver(res))
	raw := fmt.Sprintf("http://rebind.test:%d/", serverAddr(t, srv).Port())
	if _, err := g.CheckURL(raw); err != nil {
		t.Fatalf("CheckURL: %v (names are checked at connect time)", err)
	}
	if _, err := get(t, g.Client(), raw); !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	if res.calls.Load() == 0 {
		t.Fatal("the injected resolver was not used")
	}
}

func TestExemptAndRedirects(t *testing.T) {
	internalHit := atomic.Bool{}
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalHit.Store(true)
		io.WriteString(w, "internal secret")
	}))
	defer internal.Close()
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-internal":
			http.Redirect(w, r, internal.URL+"/", http.StatusFound)
		case "/to-internal-by-name":
			http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/", serverAddr(t, internal).Port()), http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-self":
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			io.WriteString(w, "public page")
		}
	}))
	defer public.Close()
	pub := serverAddr(t, public)
	res := &fakeResolver{answers: map[string][]netip.Addr{
		"public.test": {pub.Addr()},
		"localhost":   {netip.MustParseAddr("127.0.0.1")},
	}}
	follow := New(Policy{FollowRedirects: true, MaxRedirects: 3}, WithResolver(res), ExemptForTest(t, pub))
	base := fmt.Sprintf("http://public.test:%d", pub.Port())

	if body, err := get(t, follow.Client(), base+"/"); err != nil || body != "public page" {
		t.Fatalf("exempt server: %q, %v", body, err)
	}
	if body, err := get(t, follow.Client(), base+"/to-self"); err != nil || body != "public page" {
		t.Fatalf("redirect to an allowed URL: %q, %v", body, err)
	}
	for path, want := range map[string]error{
		"/to-internal":         ErrBlocked,
		"/to-internal-by-name": ErrBlocked,
		"/to-metadata":         ErrFiltered,
		"/to-file":             ErrRedirect,
		"/loop":                ErrRedirect,
	} {
		if _, err := get(t, follow.Client(), base+path); !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", path, err, want)
		}
	}
	if internalHit.Load() {
		t.Fatal("a redirect reached the internal server")
	}
	// Without FollowRedirects even an allowed redirect is refused.
	noFollow := New(Policy{}, WithResolver(res), ExemptForTest(t, pub))
	if _, err := get(t, noFollow.Client(), base+"/to-self"); !errors.Is(err, ErrRedirect) {
		t.Fatalf("no-follow: err = %v, want ErrRedirect", err)
	}
	// The exemption is for that address and port only.
	other := New(Policy{}, ExemptForTest(t, pub))
	if _, err := get(t, other.Client(), internal.URL); !errors.Is(err, ErrBlocked) {
		t.Fatalf("other port: err = %v, want ErrBlocked", err)
	}
}

func TestMetadataStaysBlockedWithAllowLocal(t *testing.T) {
	g := New(Policy{AllowLocal: true})
	for _, raw := range []string{"http://169.254.169.254/", "http://[::ffff:169.254.169.254]/", "http://100.100.100.200/", "http://metadata.google.internal/"} {
		if _, err := g.CheckURL(raw); err == nil {
			t.Errorf("%s allowed with AllowLocal", raw)
		}
	}
	if _, err := g.DialContext(context.Background(), "tcp", "169.254.169.254:80"); err == nil {
		t.Error("dial to the metadata address allowed")
	}
}

func TestReadLimited(t *testing.T) {
	if b, err := ReadLimited(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	if _, err := ReadLimited(strings.NewReader("123456"), 5); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
}

// FuzzCheckURL: an accepted URL is http(s), has a host, carries no
// character validate_url forbids, and an IP-literal host is allowed.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://example.com/", "http://127.0.0.1/", "http://[::ffff:10.0.0.1]:8080/x",
		"http://a\\b", "http://x/\t", "ftp://x", "http://169.254.169.254", "http://[64:ff9b::7f00:1]/", "//x", "http://%30/"} {
		f.Add(s)
	}
	g := New(Policy{FilterList: []string{"!blocked.test"}})
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := g.CheckURL(raw)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("%q accepted with scheme %q", raw, u.Scheme)
		}
		if strings.ContainsAny(raw, "\\\t\r\n ") {
			t.Fatalf("%q accepted with a forbidden character", raw)
		}
		host := normHost(u.Hostname())
		if host == "" {
			t.Fatalf("%q accepted without a host", raw)
		}
		if host == "blocked.test" || strings.HasSuffix(host, ".blocked.test") {
			t.Fatalf("%q accepted despite the block list", raw)
		}
		if a, err := netip.ParseAddr(host); err == nil {
			for _, x := range forms(a) {
				if classify(x, false) != "" {
					t.Fatalf("%q accepted with a blocked address %s", raw, x)
				}
			}
		}
	})
}
