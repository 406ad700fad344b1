// Package netguard is the one outbound-connection guard for user-supplied
// URLs (a web page to ingest, later an image or a tool server a user
// names). It owns URL validation (Open WebUI's validate_url, COMPAT.md
// §8.7), the WEB_FETCH_FILTER_LIST allow/block semantics and an
// http.Client whose every connection is checked.
//
// Invariants:
//   - the address check runs on the IP actually dialled (net.Dialer.Control,
//     after this package's own resolution), so a name that resolves to a
//     public address when validated and to 127.0.0.1 when connecting (DNS
//     rebinding) is refused;
//   - IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64
//     (64:ff9b::/96) and 6to4 (2002::/16) IPv6 forms are judged by the IPv4
//     address they carry;
//   - every redirect is validated like the first URL (http/https only, the
//     filter list, a limit) and dialled through the same check; redirects
//     are followed only when the Policy says so (AIOHTTP_CLIENT_ALLOW_REDIRECTS);
//   - ENABLE_LOCAL_WEB_FETCH (Policy.AllowLocal) lifts the block on private,
//     loopback, link-local and unique-local ranges, never the cloud
//     metadata addresses;
//   - no proxy from the environment is used (a proxy would make the dialled
//     address the proxy's, not the target's);
//   - the only way to reach a loopback test server is ExemptForTest, which
//     needs a testing.TB: no configuration value can enable it.
//
// It is a leaf: it imports nothing internal.
package netguard
