package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func extractBytes(t testing.TB, name, ct string, b []byte) (string, error) {
	t.Helper()
	return Extract(context.Background(), name, ct, bytes.NewReader(b))
}

func TestExtractTextFormats(t *testing.T) {
	cases := []struct{ file, ct, want string }{
		{"plain.txt", "text/plain", "Plain text file.\nSecond line: café.\n"},
		{"notes.md", "", "# Heading\n\nSome *markdown* text.\n"},
		{"people.csv", "text/csv", "name,age\nAda,36\nAlan,41\n"},
		{"data.json", "application/json", "{\"greeting\": \"hello\", \"n\": [1, 2]}\n"},
		{"main.go", "application/octet-stream", "package main\n\nfunc main() { println(\"hi\") }\n"},
		{"page.html", "text/html", "The Title\nHeader & more\nFirst paragraph with bold and link.\none\ntwo\n5 < 6 — done"},
	}
	for _, c := range cases {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := extractBytes(t, c.file, c.ct, b)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.file, got, err, c.want)
		}
	}
}

func TestExtractTextEdgeCases(t *testing.T) {
	// BOM dropped, invalid bytes replaced, a rune split across read blocks kept.
	long := strings.Repeat("é", 70_000)
	got, err := extractBytes(t, "a.txt", "text/plain", []byte("\uFEFF"+long))
	if err != nil || got != long {
		t.Fatalf("long text: %d runes, %v", len([]rune(got)), err)
	}
	got, _ = extractBytes(t, "a.txt", "", []byte("ok \xff done"))
	if got != "ok \uFFFD done" {
		t.Fatalf("%q", got)
	}
	// Unknown extension that is text: read as text (Open WebUI's fallback).
	if got, err := extractBytes(t, "README", "", []byte("hello")); err != nil || got != "hello" {
		t.Fatalf("%q %v", got, err)
	}
}

func TestExtractUnsupported(t *testing.T) {
	var ue *UnsupportedError
	_, err := extractBytes(t, "x.png", "image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	if !errors.As(err, &ue) || err.Error() != "File type image/png is not supported for processing" {
		t.Fatalf("png: %v", err)
	}
	_, err = extractBytes(t, "blob.bin", "", []byte{0, 1, 2, 3, 0xff})
	if !errors.As(err, &ue) || err.Error() != "File type application/octet-stream is not supported for processing" {
		t.Fatalf("binary: %v", err)
	}
	// Video: completed without text.
	if got, err := extractBytes(t, "v.mp4", "video/mp4", []byte{0, 0, 0, 0x18}); err != nil || got != "" {
		t.Fatalf("video: %q %v", got, err)
	}
}

// minimalPDF builds a valid one-page-per-text PDF with a correct xref.
func minimalPDF(pages ...string) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(s string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), s)
	}
	b.WriteString("%PDF-1.4\n")
	n := len(pages)
	kids := make([]string, n)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, text := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		stream := fmt.Sprintf("BT /F1 24 Tf 72 720 Td (%s) Tj ET", text)
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

func TestExtractPDF(t *testing.T) {
	got, err := extractBytes(t, "doc.pdf", "application/pdf", minimalPDF("Hello PDF", "Second page"))
	if err != nil || got != "Hello PDF Second page" {
		t.Fatalf("%q %v", got, err)
	}
	for _, bad := range [][]byte{[]byte("%PDF-1.4\ngarbage"), minimalPDF("x")[:200], nil} {
		if _, err := extractBytes(t, "bad.pdf", "", bad); !errors.Is(err, errMalformedPDF) {
			t.Errorf("malformed PDF (%d bytes): %v", len(bad), err)
		}
	}
}

// docx builds a minimal Word document.
func docx(t testing.TB, documentXML string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(documentXML))
	zw.Close()
	return b.Bytes()
}

const docxXML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:r><w:t>Hello</w:t></w:r><w:r><w:t xml:space="preserve"> Word</w:t></w:r></w:p>
<w:p><w:r><w:t>Col1</w:t><w:tab/><w:t>Col2</w:t><w:br/><w:t>Next &amp; last</w:t></w:r></w:p>
</w:body></w:document>`

func TestExtractDOCX(t *testing.T) {
	got, err := extractBytes(t, "a.docx", "", docx(t, docxXML))
	if err != nil || got != "Hello Word\nCol1\tCol2\nNext & last" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := extractBytes(t, "a.docx", "", []byte("PK\x03\x04 not a zip")); !errors.Is(err, errMalformedDOCX) {
		t.Fatalf("not a zip: %v", err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	zw.Create("other.xml")
	zw.Close()
	if _, err := extractBytes(t, "a.docx", "", b.Bytes()); !errors.Is(err, errMalformedDOCX) {
		t.Fatalf("no document.xml: %v", err)
	}
}

func TestExtractStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Extract(ctx, "a.txt", "", bytes.NewReader([]byte("x"))); !errors.Is(err, context.Canceled) {
		t.Fatalf("text: %v", err)
	}
	if _, err := Extract(ctx, "a.pdf", "", bytes.NewReader(minimalPDF("x"))); !errors.Is(err, context.Canceled) {
		t.Fatalf("pdf: %v", err)
	}
}

func FuzzExtractPDF(f *testing.F) {
	f.Add(minimalPDF("Hello", "World"))
	f.Add([]byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj trailer << /Root 1 0 R >>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5e9)
		defer cancel()
		extractPDF(ctx, bytes.NewReader(b)) // must not panic or hang
	})
}

func FuzzExtractHTML(f *testing.F) {
	page, _ := os.ReadFile("testdata/page.html")
	f.Add(page)
	f.Add([]byte("<script>x</scr<script>ipt><p>a</p>"))
	f.Add([]byte("<!--<p>--><a b='>'>t</a><"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Extract(context.Background(), "p.html", "text/html", bytes.NewReader(b))
		if err != nil {
			return
		}
		if strings.Contains(got, "  ") {
			t.Fatalf("runs of spaces left: %q", got)
		}
	})
}

func FuzzExtractDOCX(f *testing.F) {
	f.Add(docx(f, docxXML))
	f.Fuzz(func(t *testing.T, b []byte) {
		extractDOCX(context.Background(), bytes.NewReader(b)) // must not panic
	})
}
