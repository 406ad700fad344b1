package llm

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the current output")

const fixtureDir = "testdata/fixtures/ollama-0.17.4"

// exchange is one recorded HTTP exchange of a .http fixture.
type exchange struct {
	Name       string
	Method     string
	Path       string
	ReqHeader  http.Header
	ReqBody    []byte
	Status     int
	RespHeader http.Header
	RespBody   []byte
}

// parseExchange parses the fixture format: "### request\n<request line>\n<headers>\n\n<body>"
// then "\n\n### response\n<status line>\n<headers>\n\n<body to EOF>". Bodies are exact.
func parseExchange(name string, data []byte) (exchange, error) {
	ex := exchange{Name: name}
	const reqMark, respMark = "### request\n", "\n\n### response\n"
	if !bytes.HasPrefix(data, []byte(reqMark)) {
		return ex, fmt.Errorf("%s: no request section", name)
	}
	i := bytes.Index(data, []byte(respMark))
	if i < 0 {
		return ex, fmt.Errorf("%s: no response section", name)
	}
	reqHead, reqBody := splitHead(data[len(reqMark):i])
	resHead, resBody := splitHead(data[i+len(respMark):])

	lines := strings.Split(string(reqHead), "\n")
	method, path, ok := strings.Cut(lines[0], " ")
	if !ok {
		return ex, fmt.Errorf("%s: bad request line %q", name, lines[0])
	}
	ex.Method, ex.Path = method, path
	ex.ReqHeader = parseHeaders(lines[1:])
	ex.ReqBody = reqBody

	lines = strings.Split(string(resHead), "\n")
	f := strings.Fields(lines[0])
	if len(f) < 2 {
		return ex, fmt.Errorf("%s: bad status line %q", name, lines[0])
	}
	st, err := strconv.Atoi(f[1])
	if err != nil {
		return ex, fmt.Errorf("%s: bad status %q", name, f[1])
	}
	ex.Status = st
	ex.RespHeader = parseHeaders(lines[1:])
	ex.RespBody = resBody
	if cl := ex.RespHeader.Get("Content-Length"); cl != "" {
		n, _ := strconv.Atoi(cl)
		if n != len(resBody) {
			return ex, fmt.Errorf("%s: Content-Length %d but body has %d bytes", name, n, len(resBody))
		}
	}
	return ex, nil
}

func splitHead(b []byte) (head, body []byte) {
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		return b[:i], b[i+2:]
	}
	return b, nil
}

func parseHeaders(lines []string) http.Header {
	h := http.Header{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}

func loadFixture(t testing.TB, name string) exchange {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := parseExchange(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// writeMode says how a fixture server writes a body.
type writeMode int

const (
	writeWhole writeMode = iota // one write
	writeLines                  // one write + flush per line (chunked encoding)
	writeSplit                  // 7-byte writes + flushes: lines split inside, across reads
)

func (m writeMode) String() string {
	return [...]string{"whole", "lines", "split"}[m]
}

var allModes = []writeMode{writeWhole, writeLines, writeSplit}

// fixtureServer serves recorded exchanges by method and path, byte for byte, and records
// the requests it received.
type fixtureServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recordedRequest
}

type recordedRequest struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

func newFixtureServer(t testing.TB, mode writeMode, exs ...exchange) *fixtureServer {
	t.Helper()
	fs := &fixtureServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.requests = append(fs.requests, recordedRequest{r.Method, r.URL.Path, r.Header.Clone(), body})
		fs.mu.Unlock()
		for _, ex := range exs {
			if ex.Method == r.Method && ex.Path == r.URL.Path {
				serveBody(w, ex.Status, ex.RespHeader.Get("Content-Type"), ex.RespBody, mode)
				return
			}
		}
		http.Error(w, `{"error":"no fixture for `+r.Method+" "+r.URL.Path+`"}`, http.StatusNotFound)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fixtureServer) lastRequest() recordedRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.requests) == 0 {
		return recordedRequest{}
	}
	return fs.requests[len(fs.requests)-1]
}

// serveBody writes body with the given mode, flushing between pieces.
func serveBody(w http.ResponseWriter, status int, contentType string, body []byte, mode writeMode) {
	if contentType != "" {
		w.Header().Set("Content-Type", contentType)
	}
	w.WriteHeader(status)
	f := w.(http.Flusher)
	switch mode {
	case writeWhole:
		w.Write(body)
	case writeLines:
		for len(body) > 0 {
			i := bytes.IndexByte(body, '\n') + 1
			if i == 0 {
				i = len(body)
			}
			w.Write(body[:i])
			f.Flush()
			body = body[i:]
		}
	case writeSplit:
		for len(body) > 0 {
			n := min(7, len(body))
			w.Write(body[:n])
			f.Flush()
			body = body[n:]
		}
	}
}

// streamServer serves one body at any path (a constructed upstream stream).
func streamServer(t testing.TB, contentType string, body []byte, mode writeMode) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		serveBody(w, http.StatusOK, contentType, body, mode)
	}))
	t.Cleanup(s.Close)
	return s
}

// golden compares got with testdata/golden/<name>.txt (rewritten under -update).
func golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestFixturesParse(t *testing.T) {
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 23 {
		t.Fatalf("want 23 fixtures, have %d", len(entries))
	}
	for _, e := range entries {
		ex := loadFixture(t, e.Name())
		if ex.Method == "" || ex.Path == "" || ex.Status == 0 {
			t.Errorf("%s: incomplete %+v", e.Name(), ex)
		}
		if ex.Method == "POST" && len(ex.ReqBody) == 0 {
			t.Errorf("%s: POST without body", e.Name())
		}
	}
	if ex := loadFixture(t, "21-error-bad-json.http"); string(ex.ReqBody) != `{"model":` {
		t.Errorf("bad-json request body = %q", ex.ReqBody)
	}
	if ex := loadFixture(t, "04-chat-stream.http"); !bytes.HasSuffix(ex.RespBody, []byte("\"eval_duration\":63526511}\n")) {
		t.Errorf("chat stream body tail = %q", ex.RespBody[len(ex.RespBody)-30:])
	}
}
