package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func TestServeUI(t *testing.T) {
	js := strings.Repeat("console.log('hearth');\n", 200)
	s := &Server{ui: uiState{files: fstest.MapFS{
		"index.html":           {Data: []byte("<!doctype html><title>Hearth</title>")},
		"assets/index-1.js":    {Data: []byte(js)},
		"assets/logo.png":      {Data: []byte("\x89PNG\r\n\x1a\n")},
		"manifest.webmanifest": {Data: []byte(`{"name":"Hearth"}`)},
	}}}
	get := func(path, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		if accept != "" {
			r.Header.Set("Accept-Encoding", accept)
		}
		w := httptest.NewRecorder()
		s.serveUI(w, r)
		return w
	}
	gunzip := func(t *testing.T, b []byte) string {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}

	t.Run("gzip for text assets", func(t *testing.T) {
		for range 2 { // the second answer comes from the cache
			w := get("/assets/index-1.js", "br, gzip;q=0.8")
			if w.Code != 200 || w.Header().Get("Content-Encoding") != "gzip" || w.Header().Get("Vary") != "Accept-Encoding" {
				t.Fatalf("%d %v", w.Code, w.Header())
			}
			if ct := w.Header().Get("Content-Type"); !strings.Contains(ct, "javascript") {
				t.Fatalf("content type %q", ct)
			}
			if w.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" {
				t.Fatalf("cache %q", w.Header().Get("Cache-Control"))
			}
			if w.Body.Len() >= len(js)/4 {
				t.Fatalf("not compressed: %d of %d bytes", w.Body.Len(), len(js))
			}
			if got := gunzip(t, w.Body.Bytes()); got != js {
				t.Fatal("gzip body does not decode to the file")
			}
		}
	})
	t.Run("identity without gzip or with q=0", func(t *testing.T) {
		for _, acc := range []string{"", "identity", "gzip;q=0", "deflate"} {
			w := get("/assets/index-1.js", acc)
			if w.Header().Get("Content-Encoding") != "" || w.Body.String() != js {
				t.Fatalf("Accept-Encoding %q: encoding %q, %d bytes", acc, w.Header().Get("Content-Encoding"), w.Body.Len())
			}
		}
	})
	t.Run("client routes get index.html, compressed, never cached", func(t *testing.T) {
		w := get("/c/123", "gzip")
		if w.Header().Get("Cache-Control") != "no-cache" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%v", w.Header())
		}
		if got := gunzip(t, w.Body.Bytes()); !strings.Contains(got, "<title>Hearth</title>") {
			t.Fatalf("body %q", got)
		}
	})
	t.Run("images as they are; manifest type", func(t *testing.T) {
		if w := get("/assets/logo.png", "gzip"); w.Header().Get("Content-Encoding") != "" || w.Body.String() != "\x89PNG\r\n\x1a\n" {
			t.Fatalf("png: %v", w.Header())
		}
		if w := get("/manifest.webmanifest", "gzip"); w.Header().Get("Content-Type") != "application/manifest+json" {
			t.Fatalf("manifest: %v", w.Header())
		}
	})
	t.Run("missing files with an extension are a JSON 404", func(t *testing.T) {
		if w := get("/assets/nope.js", "gzip"); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `"detail"`) {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
}
