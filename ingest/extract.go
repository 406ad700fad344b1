package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"unicode/utf8"
)

// Source is a stored file's bytes: read as a stream or at offsets.
type Source interface {
	io.Reader
	io.ReaderAt
	Size() int64
}

// UnsupportedError is a file type Hearth does not extract; the message is
// what the file's status error shows (Open WebUI's wording, COMPAT.md §8.2).
type UnsupportedError struct{ Type string }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("File type %s is not supported for processing", e.Type)
}

// kind is how a file is extracted.
type kind int

const (
	kindText kind = iota
	kindHTML
	kindPDF
	kindDOCX
	kindMedia // video: completed without text (COMPAT.md §8.2)
	kindImage // refused: no OCR engine
	kindUnknown
)

// textExts are extensions read as plain text (documents, data and source
// code), as Open WebUI's loader treats its known code extensions.
var textExts = map[string]bool{
	"txt": true, "text": true, "md": true, "markdown": true, "rst": true, "csv": true, "tsv": true,
	"json": true, "jsonl": true, "ndjson": true, "xml": true, "yaml": true, "yml": true, "toml": true,
	"ini": true, "cfg": true, "conf": true, "log": true, "tex": true, "srt": true, "vtt": true,
	"go": true, "py": true, "js": true, "mjs": true, "cjs": true, "ts": true, "tsx": true, "jsx": true,
	"java": true, "kt": true, "kts": true, "scala": true, "c": true, "h": true, "cc": true, "cpp": true,
	"cxx": true, "hpp": true, "hh": true, "cs": true, "rs": true, "rb": true, "php": true, "pl": true,
	"pm": true, "swift": true, "m": true, "mm": true, "sh": true, "bash": true, "zsh": true, "fish": true,
	"ps1": true, "bat": true, "cmd": true, "sql": true, "r": true, "lua": true, "dart": true, "ex": true,
	"exs": true, "erl": true, "hs": true, "clj": true, "elm": true, "vue": true, "svelte": true,
	"css": true, "scss": true, "sass": true, "less": true, "graphql": true, "proto": true, "dockerfile": true,
	"makefile": true, "mk": true, "cmake": true, "gradle": true, "tf": true, "hcl": true, "nix": true,
	"zig": true, "jl": true, "f90": true, "asm": true, "s": true, "vb": true, "groovy": true, "env": true,
}

func classify(filename, contentType string) kind {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(filename), "."))
	if ext == "" {
		ext = strings.ToLower(path.Base(filename)) // Makefile, Dockerfile
	}
	ct, _, _ := mime.ParseMediaType(contentType)
	switch {
	case ext == "pdf" || ct == "application/pdf":
		return kindPDF
	case ext == "docx" || ct == "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return kindDOCX
	case ext == "html" || ext == "htm" || ext == "xhtml" || ct == "text/html" || ct == "application/xhtml+xml":
		return kindHTML
	case textExts[ext]:
		return kindText
	case strings.HasPrefix(ct, "text/") || ct == "application/json" || ct == "application/xml" ||
		strings.HasSuffix(ct, "+json") || strings.HasSuffix(ct, "+xml") || ct == "application/x-yaml":
		return kindText
	case strings.HasPrefix(ct, "video/"):
		return kindMedia
	case strings.HasPrefix(ct, "image/"):
		return kindImage
	}
	return kindUnknown
}

// Extract returns the text of a file. Text formats, and unknown types whose
// bytes look like text, are read as UTF-8 (invalid sequences replaced);
// images and other binary content are an *UnsupportedError.
func Extract(ctx context.Context, filename, contentType string, src Source) (string, error) {
	k := classify(filename, contentType)
	switch k {
	case kindPDF:
		return extractPDF(ctx, src)
	case kindDOCX:
		return extractDOCX(ctx, src)
	case kindMedia:
		return "", nil
	}
	// Open WebUI treats declared images (and anything else) that look like
	// text as text; the first 8 KB decide.
	head := make([]byte, 8192)
	n, err := src.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if looksBinary(head[:n]) {
		t := contentType
		if t == "" {
			t = "application/octet-stream"
		}
		return "", &UnsupportedError{Type: t}
	}
	if k == kindImage && n == 0 {
		return "", &UnsupportedError{Type: contentType}
	}
	if k == kindHTML {
		return extractHTML(ctx, bufio.NewReader(src))
	}
	return readText(ctx, src)
}

// looksBinary: a NUL byte, or mostly invalid UTF-8, in the first bytes.
func looksBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	bad := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 && len(b) >= utf8.UTFMax {
			bad++
		}
		b = b[size:]
	}
	return bad > 8 && bad*10 > len(b)+bad // more than ~10% undecodable
}

// readText reads a text file as UTF-8 (BOM dropped, invalid bytes
// replaced), checking ctx between blocks.
func readText(ctx context.Context, r io.Reader) (string, error) {
	var sb strings.Builder
	buf := make([]byte, 64<<10)
	var carry []byte
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := r.Read(buf)
		chunk := append(carry, buf[:n]...)
		// Keep an incomplete rune at the end for the next block.
		cut := len(chunk)
		for i := 1; i < utf8.UTFMax && i <= len(chunk); i++ {
			c := chunk[len(chunk)-i]
			if utf8.RuneStart(c) {
				if !utf8.FullRune(chunk[len(chunk)-i:]) {
					cut = len(chunk) - i
				}
				break
			}
		}
		if errors.Is(err, io.EOF) {
			cut = len(chunk)
		}
		sb.WriteString(strings.ToValidUTF8(string(chunk[:cut]), "\uFFFD"))
		carry = append([]byte(nil), chunk[cut:]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimPrefix(sb.String(), "\uFEFF"), nil
}
