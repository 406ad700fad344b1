package server

// authzDiscoveryRows: health and discovery are public. /docs and
// /openapi.json are public too under the fixture's default ENV (dev); with
// ENV=prod they are a 404 for everyone (discovery_test.go).
func authzDiscoveryRows() []authzRow {
	return []authzRow{
		{pattern: "GET /health", want: wantPublic},
		{pattern: "GET /health/db", want: wantPublic},
		{pattern: "GET /ready", want: wantPublic},
		{pattern: "GET /api/version", want: wantPublic},
		{pattern: "GET /api/config", want: wantPublic},
		{pattern: "GET /manifest.json", want: wantPublic},
		{pattern: "GET /docs", want: wantPublic},
		{pattern: "GET /openapi.json", want: wantPublic},
	}
}
