package server

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"
)

// ndjsonLine is a typical streamed Ollama line (fixture 06's shape).
const ndjsonLine = `{"model":"tiny","created_at":"2026-11-22T02:53:06.313611574Z","response":"t","done":false}` + "\n"

// streamUpstream serves /api/tags from the fixture and streams n NDJSON
// lines for /api/generate, flushing each one as a runtime does.
func streamUpstream(tb testing.TB, n int) *httptest.Server {
	tags := loadReplay(tb, "02-tags.http")
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/tags" {
			tags.write(w)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		fl := w.(http.Flusher)
		for i := 0; i < n; i++ {
			io.WriteString(w, ndjsonLine)
			fl.Flush()
		}
	}))
}

func readStream(tb testing.TB, url, token string) int {
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"model":"tiny:latest","prompt":"hi"}`))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		n++
	}
	return n
}

// BenchmarkRuntimeStreamOverhead is issue 5's figure "proxy overhead per
// NDJSON line": the same 1,000-line stream read directly from the runtime
// and through /ollama/api/generate; the difference per line is reported as
// overhead-ns/line (it bounds the proxy's CPU per line from above: the
// client, the proxy and the fake runtime share the machine).
func BenchmarkRuntimeStreamOverhead(b *testing.B) {
	const lines = 1000
	up := streamUpstream(b, lines)
	defer up.Close()
	f := newFixture(b, rtEnv(up.URL, ""))
	hs := httptest.NewServer(f.srv)
	defer hs.Close()
	var direct, proxied time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if n := readStream(b, up.URL+"/api/generate", ""); n != lines {
			b.Fatalf("direct: %d lines", n)
		}
		t1 := time.Now()
		if n := readStream(b, hs.URL+"/ollama/api/generate", f.adminTok); n != lines {
			b.Fatalf("proxied: %d lines", n)
		}
		direct += t1.Sub(t0)
		proxied += time.Since(t1)
	}
	b.ReportMetric(float64(direct.Nanoseconds())/float64(b.N*lines), "direct-ns/line")
	b.ReportMetric(float64((proxied-direct).Nanoseconds())/float64(b.N*lines), "overhead-ns/line")
}

// BenchmarkRuntimeFirstByte is issue 5's figure "first byte forwarded within
// 1 ms of its arrival": the runtime writes one line and waits; the time from
// that write to the client reading the line through the proxy, as median
// and p99 over b.N streams.
func BenchmarkRuntimeFirstByte(b *testing.B) {
	written := make(chan time.Time, 1)
	release := make(chan struct{})
	tags := loadReplay(b, "02-tags.http")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/tags" {
			tags.write(w)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		io.WriteString(w, ndjsonLine)
		w.(http.Flusher).Flush()
		written <- time.Now()
		<-release
	}))
	defer up.Close()
	f := newFixture(b, rtEnv(up.URL, ""))
	hs := httptest.NewServer(f.srv)
	defer hs.Close()
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("POST", hs.URL+"/ollama/api/generate", strings.NewReader(`{"model":"tiny:latest","prompt":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+f.adminTok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		if _, err := br.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		got := time.Now()
		lat = append(lat, got.Sub(<-written))
		release <- struct{}{}
		io.Copy(io.Discard, br)
		resp.Body.Close()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
