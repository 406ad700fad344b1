package ingest

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxDOCXXML bounds the decompressed document.xml (a zip bomb stops here).
const maxDOCXXML = 256 << 20

var errMalformedDOCX = errors.New("the DOCX file could not be read (damaged or not a Word document)")

// extractDOCX returns the text of word/document.xml: runs' text, tabs,
// line breaks, and one line per paragraph (as docx2txt gives it).
func extractDOCX(ctx context.Context, src Source) (string, error) {
	zr, err := zip.NewReader(src, src.Size())
	if err != nil {
		return "", fmt.Errorf("%w: %v", errMalformedDOCX, err)
	}
	var doc *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			doc = f
			break
		}
	}
	if doc == nil {
		return "", fmt.Errorf("%w: no word/document.xml", errMalformedDOCX)
	}
	rc, err := doc.Open()
	if err != nil {
		return "", fmt.Errorf("%w: %v", errMalformedDOCX, err)
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: maxDOCXXML + 1}
	dec := xml.NewDecoder(lr)
	dec.Strict = false
	var out strings.Builder
	inText := false
	n := 0
	for {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return "", fmt.Errorf("%w: document.xml is larger than %d MiB", errMalformedDOCX, maxDOCXXML>>20)
			}
			return "", fmt.Errorf("%w: %v", errMalformedDOCX, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				out.WriteByte('\t')
			case "br", "cr":
				out.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				out.WriteByte('\n')
			}
		case xml.CharData:
			if inText {
				out.Write(t)
			}
		}
	}
	if lr.N <= 0 {
		return "", fmt.Errorf("%w: document.xml is larger than %d MiB", errMalformedDOCX, maxDOCXXML>>20)
	}
	return strings.TrimSpace(out.String()), nil
}
