package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Page is a fetched web page: its bytes, their declared type and the text
// extracted from them.
type Page struct {
	ContentType string
	Body        []byte
	Text        string
}

// HTTPStatusError is a page that answered with a status other than 2xx.
type HTTPStatusError struct{ Code int }

func (e *HTTPStatusError) Error() string { return fmt.Sprintf("the page answered %d", e.Code) }

// FetchPage gets url with hc (the caller's guarded client: ingest only owns
// what happens to the bytes) and extracts its text (COMPAT.md §8.7): the
// response's content type decides, as Open WebUI's probe does — HTML, and
// unknown or missing types that look like text, go through the HTML
// extractor; PDF and DOCX through theirs; other text types are read as
// text; binary content of any other type is an *UnsupportedError. read
// reads the body (the caller's size cap); a non-2xx answer is an
// *HTTPStatusError.
func FetchPage(ctx context.Context, hc *http.Client, url string, read func(io.Reader) ([]byte, error)) (Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Page{}, err
	}
	req.Header.Set("User-Agent", "Hearth (web page loader)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.8")
	resp, err := hc.Do(req)
	if err != nil {
		return Page{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Page{}, &HTTPStatusError{resp.StatusCode}
	}
	body, err := read(resp.Body)
	if err != nil {
		return Page{}, err
	}
	p := Page{ContentType: resp.Header.Get("Content-Type"), Body: body}
	p.Text, err = Extract(ctx, pageFilename(p.ContentType), p.ContentType, bytesSource{bytes.NewReader(body)})
	return p, err
}

// pageFilename is the name Extract classifies a page by: the content type
// decides, never the URL's path (a ".pdf" URL may serve HTML).
func pageFilename(contentType string) string {
	ct, _, _ := mime.ParseMediaType(contentType)
	switch k := classify("", ct); {
	case k == kindPDF:
		return "page.pdf"
	case k == kindDOCX:
		return "page.docx"
	case k == kindText && ct != "" && !strings.Contains(ct, "html"):
		return "page.txt"
	case k == kindImage, k == kindMedia:
		return "page"
	}
	return "page.html" // text/html, unknown or missing
}

// bytesSource is a Source over bytes in memory.
type bytesSource struct{ *bytes.Reader }

func (b bytesSource) Size() int64 { return b.Reader.Size() }
