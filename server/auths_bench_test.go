package server

import (
	"net/http/httptest"
	"testing"
)

// BenchmarkSessionAPIKey is the hot path of the figure: GET
// /api/v1/auths/ authenticated with an sk- key, through the real router.
// The end-to-end figure (wrk against the binary) is bench/apikey_rps.sh.
func BenchmarkSessionAPIKey(b *testing.B) {
	f := newFixture(b, nil)
	req := httptest.NewRequest("GET", "/api/v1/auths/", nil)
	req.Header.Set("Authorization", "Bearer "+f.userKey)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
