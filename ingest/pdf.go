package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxPDFPages bounds the page loop: a malformed file can claim any count.
const maxPDFPages = 20000

// errMalformedPDF is the status error of a PDF the reader cannot parse.
var errMalformedPDF = errors.New("the PDF file could not be read (damaged or unsupported)")

// extractPDF returns the text of every page, pages joined by a space as
// Open WebUI joins them (COMPAT.md §8.4). ledongthuc/pdf panics on some
// malformed input; a panic becomes errMalformedPDF, never a crash.
// Encrypted files are refused (no password to give).
func extractPDF(ctx context.Context, src Source) (text string, err error) {
	defer func() {
		if v := recover(); v != nil {
			text, err = "", errMalformedPDF
		}
	}()
	r, err := pdf.NewReader(src, src.Size())
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) {
			return "", errors.New("the PDF file is encrypted")
		}
		return "", fmt.Errorf("%w: %v", errMalformedPDF, err)
	}
	pages := r.NumPage()
	if pages > maxPDFPages {
		pages = maxPDFPages
	}
	parts := make([]string, 0, max(pages, 0))
	for i := 1; i <= pages; i++ {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		// nil: the page's own fonts (names like /F1 mean different fonts
		// on different pages).
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("%w: page %d: %v", errMalformedPDF, i, err)
		}
		if t = strings.TrimSpace(t); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.ToValidUTF8(strings.Join(parts, " "), "\uFFFD"), nil
}
