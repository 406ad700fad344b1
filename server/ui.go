package server

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// uiState caches gzip-compressed copies of the embedded web client's text
// files: a home server usually has no proxy in front to compress, and the
// client is three times smaller compressed. Each file is compressed once,
// on its first request.
type uiState struct {
	files fs.FS
	gzMu  sync.Mutex
	gz    map[string][]byte
}

// compressible reports the extensions worth compressing (images are not).
func compressible(ext string) bool {
	switch ext {
	case ".js", ".css", ".html", ".svg", ".json", ".webmanifest":
		return true
	}
	return false
}

// serveUI serves the embedded web client: files as they are, and index.html
// for extension-less paths (client-side routes). Hashed assets are cached for
// a year; index.html is never cached so a new build is picked up at once.
func (s *Server) serveUI(w http.ResponseWriter, r *http.Request) {
	if s.ui.files == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
		return
	}
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if name != "" {
		if st, err := fs.Stat(s.ui.files, name); err == nil && !st.IsDir() {
			if strings.HasPrefix(name, "assets/") {
				w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			}
			s.serveUIFile(w, r, name)
			return
		}
		if path.Ext(name) != "" {
			writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
			return
		}
	}
	w.Header().Set("Cache-Control", "no-cache")
	s.serveUIFile(w, r, "index.html")
}

// serveUIFile sends a file gzip-compressed when the client takes gzip and
// the file is text; otherwise as is (with ranges and conditional requests).
func (s *Server) serveUIFile(w http.ResponseWriter, r *http.Request, name string) {
	ext := path.Ext(name)
	if !compressible(ext) {
		http.ServeFileFS(w, r, s.ui.files, name)
		return
	}
	w.Header().Add("Vary", "Accept-Encoding")
	if !acceptsGzip(r) {
		http.ServeFileFS(w, r, s.ui.files, name)
		return
	}
	gz, err := s.ui.gzipped(name)
	if err != nil {
		http.ServeFileFS(w, r, s.ui.files, name)
		return
	}
	ct := mime.TypeByExtension(ext)
	if ext == ".webmanifest" {
		ct = "application/manifest+json"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Encoding", "gzip")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(gz))
}

func (u *uiState) gzipped(name string) ([]byte, error) {
	u.gzMu.Lock()
	defer u.gzMu.Unlock()
	if b, ok := u.gz[name]; ok {
		return b, nil
	}
	raw, err := fs.ReadFile(u.files, name)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if u.gz == nil {
		u.gz = map[string][]byte{}
	}
	u.gz[name] = buf.Bytes()
	return buf.Bytes(), nil
}

// acceptsGzip reports whether Accept-Encoding lists gzip without q=0.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(enc), "gzip") {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
