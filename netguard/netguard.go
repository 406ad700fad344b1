package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Errors a refused URL or connection wraps; callers map them all to one
// generic message (COMPAT.md §8.7 hides the reason from the client).
var (
	ErrInvalidURL = errors.New("netguard: invalid URL")
	ErrBlocked    = errors.New("netguard: address not allowed")
	ErrFiltered   = errors.New("netguard: host refused by WEB_FETCH_FILTER_LIST")
	ErrRedirect   = errors.New("netguard: redirect refused")
	ErrTooLarge   = errors.New("netguard: response too large")
)

// DefaultFilterList is always part of the filter list (Open WebUI's
// DEFAULT_WEB_FETCH_FILTER_LIST): the cloud metadata services.
func DefaultFilterList() []string {
	return []string{"!169.254.169.254", "!fd00:ec2::254", "!metadata.google.internal", "!metadata.azure.com", "!100.100.100.200"}
}

// Policy is what configuration decides. Zero values are safe defaults.
type Policy struct {
	// AllowLocal lifts the block on non-global addresses
	// (ENABLE_LOCAL_WEB_FETCH); metadata addresses stay blocked.
	AllowLocal bool
	// FilterList holds WEB_FETCH_FILTER_LIST entries: "host" allows (when
	// any allow entry exists, the host must match one), "!host" blocks.
	// An entry is a domain (matches itself and its subdomains), an IP or a
	// CIDR prefix. DefaultFilterList is always added.
	FilterList []string
	// FollowRedirects follows 3xx responses (AIOHTTP_CLIENT_ALLOW_REDIRECTS);
	// otherwise a redirect is an error.
	FollowRedirects bool
	// MaxRedirects bounds the redirects followed; <= 0 means 10.
	MaxRedirects int
	// Timeout bounds a whole request (headers and body); <= 0 means 60 s.
	Timeout time.Duration
}

// Resolver looks up the addresses of a host name.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Option adjusts a Guard beyond what configuration can say.
type Option func(*Guard)

// WithResolver replaces the system resolver (tests, or a resolver of the
// operator's choosing). Every address it returns is still checked.
func WithResolver(r Resolver) Option { return func(g *Guard) { g.resolver = r } }

// ExemptForTest lets the guard connect to exactly these addresses (an
// httptest server on 127.0.0.1), which are otherwise refused. It takes a
// testing.TB so that only a test can call it: configuration never can.
func ExemptForTest(tb testing.TB, addrs ...netip.AddrPort) Option {
	tb.Helper()
	return func(g *Guard) {
		if g.exempt == nil {
			g.exempt = map[netip.AddrPort]bool{}
		}
		for _, a := range addrs {
			g.exempt[netip.AddrPortFrom(a.Addr().Unmap(), a.Port())] = true
		}
	}
}

// Guard validates URLs and dials only allowed addresses.
type Guard struct {
	p        Policy
	allow    []matcher
	block    []matcher
	resolver Resolver
	exempt   map[netip.AddrPort]bool
}

// New builds a guard for the policy.
func New(p Policy, opts ...Option) *Guard {
	if p.MaxRedirects <= 0 {
		p.MaxRedirects = 10
	}
	if p.Timeout <= 0 {
		p.Timeout = 60 * time.Second
	}
	g := &Guard{p: p, resolver: net.DefaultResolver}
	for _, e := range append(DefaultFilterList(), p.FilterList...) {
		e = strings.TrimSpace(e)
		if blocked := strings.HasPrefix(e, "!"); blocked {
			if m, ok := parseMatcher(e[1:]); ok {
				g.block = append(g.block, m)
			}
		} else if m, ok := parseMatcher(e); ok {
			g.allow = append(g.allow, m)
		}
	}
	for _, o := range opts {
		o(g)
	}
	return g
}

// matcher is one filter-list entry.
type matcher struct {
	domain string       // lower case, no trailing dot; "" for IP entries
	prefix netip.Prefix // valid for IP and CIDR entries
}

func parseMatcher(e string) (matcher, bool) {
	e = strings.TrimSpace(e)
	if e == "" {
		return matcher{}, false
	}
	if p, err := netip.ParsePrefix(e); err == nil {
		return matcher{prefix: p.Masked()}, true
	}
	if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
		a = a.Unmap()
		return matcher{prefix: netip.PrefixFrom(a, a.BitLen())}, true
	}
	return matcher{domain: normHost(e)}, true
}

// matchHost: a domain entry matches the host and its subdomains (on a
// label boundary, unlike Open WebUI's plain endswith, so "example.com"
// does not match "badexample.com"); an IP entry matches an IP host.
func (m matcher) matchHost(host string) bool {
	if m.domain != "" {
		return host == m.domain || strings.HasSuffix(host, "."+m.domain)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return m.matchIP(a)
	}
	return false
}

func (m matcher) matchIP(a netip.Addr) bool {
	if m.domain != "" || !m.prefix.IsValid() {
		return false
	}
	for _, x := range forms(a) {
		if m.prefix.Contains(x) {
			return true
		}
	}
	return false
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// CheckURL validates a user-supplied URL (Open WebUI's validate_url): no
// `\`, tab, CR, LF (nor any other control character or space), a scheme of
// http or https, a host, a numeric port, the filter list, and — for an IP
// literal — the address rules. Names are resolved, and their addresses
// checked, when connecting.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	if raw == "" || strings.ContainsAny(raw, "\\ ") {
		return nil, fmt.Errorf("%w: forbidden character", ErrInvalidURL)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < 0x20 || raw[i] == 0x7f {
			return nil, fmt.Errorf("%w: control character", ErrInvalidURL)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	if err := g.checkParsed(u); err != nil {
		return nil, err
	}
	return u, nil
}

func (g *Guard) checkParsed(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q", ErrInvalidURL, u.Scheme)
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: opaque URL", ErrInvalidURL)
	}
	host := normHost(u.Hostname())
	if host == "" {
		return fmt.Errorf("%w: no host", ErrInvalidURL)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%w: port %q", ErrInvalidURL, p)
		}
	}
	if err := g.checkHostName(host); err != nil {
		return err
	}
	if a, err := netip.ParseAddr(host); err == nil {
		port := 80
		if u.Scheme == "https" {
			port = 443
		}
		if p := u.Port(); p != "" {
			port, _ = strconv.Atoi(p)
		}
		return g.CheckAddr(netip.AddrPortFrom(a, uint16(port)))
	}
	return nil
}

// checkHostName applies the filter list to a host name or IP literal.
func (g *Guard) checkHostName(host string) error {
	if len(g.allow) > 0 {
		ok := false
		for _, m := range g.allow {
			if m.matchHost(host) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%w: %s not in the allow list", ErrFiltered, host)
		}
	}
	for _, m := range g.block {
		if m.matchHost(host) {
			return fmt.Errorf("%w: %s", ErrFiltered, host)
		}
	}
	return nil
}

// CheckAddr decides whether the address may be connected to: block-list
// IP entries, metadata addresses, and unless AllowLocal every non-global
// address, in every IPv6 form that carries an IPv4 address.
func (g *Guard) CheckAddr(ap netip.AddrPort) error {
	a := ap.Addr().Unmap()
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrBlocked)
	}
	if a.Zone() != "" {
		a = a.WithZone("")
	}
	for _, m := range g.block {
		if m.matchIP(a) {
			return fmt.Errorf("%w: %s (filter list)", ErrFiltered, a)
		}
	}
	if g.exempt[netip.AddrPortFrom(a, ap.Port())] {
		return nil
	}
	for _, x := range forms(a) {
		if why := classify(x, g.p.AllowLocal); why != "" {
			return fmt.Errorf("%w: %s is %s", ErrBlocked, a, why)
		}
	}
	return nil
}

// forms is the address and the IPv4 address an IPv6 form carries
// (mapped, compatible, NAT64 well-known prefix, 6to4).
func forms(a netip.Addr) []netip.Addr {
	a = a.Unmap()
	out := []netip.Addr{a}
	if !a.Is6() {
		return out
	}
	b := a.As16()
	var v4 netip.Addr
	switch {
	case compat96.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		v4 = netip.AddrFrom4([4]byte(b[12:16]))
	case nat64.Contains(a):
		v4 = netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(a):
		v4 = netip.AddrFrom4([4]byte(b[2:6]))
	}
	if v4.IsValid() {
		out = append(out, v4)
	}
	return out
}

var (
	compat96  = netip.MustParsePrefix("::/96")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// The address tables below are read-only after initialisation.

// metadata addresses stay blocked even with AllowLocal.
var metadata = []netip.Prefix{
	netip.MustParsePrefix("169.254.169.254/32"),
	netip.MustParsePrefix("169.254.170.2/32"), // ECS task metadata
	netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
}

// never are addresses nobody fetches a page from, whatever the policy.
var never = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, includes broadcast
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("ff00::/8"),
}

// local are the non-global ranges ENABLE_LOCAL_WEB_FETCH opens (IANA
// special-purpose registries, as Python's ipaddress is_global).
var local = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // CGNAT
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("::/96"), // IPv4-compatible (its v4 is judged too)
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/23"), // IETF protocol assignments, Teredo
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fec0::/10"),
}

// classify returns why the address is refused, or "".
func classify(a netip.Addr, allowLocal bool) string {
	for _, p := range metadata {
		if p.Contains(a) {
			return "a metadata address"
		}
	}
	for _, p := range never {
		if p.Contains(a) {
			return "unspecified, multicast or reserved"
		}
	}
	if allowLocal {
		return ""
	}
	for _, p := range local {
		if p.Contains(a) {
			return "not globally routable"
		}
	}
	return ""
}

// DialContext resolves the host itself, refuses when no address is
// allowed, and dials the allowed ones in order; net.Dialer.Control checks
// the address once more at the socket, so nothing reaches connect
// unchecked.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("%w: port %q", ErrInvalidURL, portStr)
	}
	host = normHost(host)
	if err := g.checkHostName(host); err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{a}
	} else if ips, err = g.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	var firstErr error
	for _, ip := range ips {
		ap := netip.AddrPortFrom(ip.Unmap(), uint16(port))
		if err := g.CheckAddr(ap); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c, err := d.DialContext(ctx, network, ap.String())
		if err == nil {
			return c, nil
		}
		if firstErr == nil || errors.Is(firstErr, ErrBlocked) || errors.Is(firstErr, ErrFiltered) {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("%w: %s has no address", ErrBlocked, host)
	}
	return nil, firstErr
}

// control is net.Dialer.Control: the address about to be connected to.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrBlocked, address)
	}
	return g.CheckAddr(ap)
}

// Client is an http.Client for user-supplied URLs: every connection goes
// through DialContext, redirects through checkRedirect, no proxy.
func (g *Guard) Client() *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          10,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: tr, Timeout: g.p.Timeout, CheckRedirect: g.checkRedirect}
}

func (g *Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if !g.p.FollowRedirects {
		return fmt.Errorf("%w: redirects are not followed", ErrRedirect)
	}
	if len(via) > g.p.MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirect, g.p.MaxRedirects)
	}
	if err := g.checkParsed(req.URL); err != nil {
		return fmt.Errorf("%w: %w", ErrRedirect, err)
	}
	return nil
}

// ReadLimited reads r whole, failing with ErrTooLarge past max bytes.
func ReadLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, ErrTooLarge
	}
	return b, nil
}
