package ingest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestFetchPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a.pdf": // the type decides, not the path
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<p>html <b>really</b></p>"))
		case "/doc":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write(minimalPDF("Web PDF"))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"a":"<b>"}`))
		case "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0, 1, 2, 3})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	read := func(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
	ctx := context.Background()
	for path, want := range map[string]string{"/a.pdf": "html really", "/doc": "Web PDF", "/json": `{"a":"<b>"}`} {
		p, err := FetchPage(ctx, srv.Client(), srv.URL+path, read)
		if err != nil || p.Text != want {
			t.Errorf("%s: %q %v, want %q", path, p.Text, err, want)
		}
	}
	if _, err := FetchPage(ctx, srv.Client(), srv.URL+"/bin", read); !errors.As(err, new(*UnsupportedError)) {
		t.Errorf("binary: %v", err)
	}
	var se *HTTPStatusError
	if _, err := FetchPage(ctx, srv.Client(), srv.URL+"/missing", read); !errors.As(err, &se) || se.Code != 404 {
		t.Errorf("404: %v", err)
	}
	tooBig := errors.New("too big")
	if _, err := FetchPage(ctx, srv.Client(), srv.URL+"/doc", func(io.Reader) ([]byte, error) { return nil, tooBig }); !errors.Is(err, tooBig) {
		t.Errorf("read error: %v", err)
	}
}
