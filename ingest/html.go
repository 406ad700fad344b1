package ingest

import (
	"bufio"
	"context"
	"errors"
	"html"
	"io"
	"strings"
)

// skipElements hold no readable text: their content is dropped whole.
var skipElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true,
	"math": true, "iframe": true, "object": true,
}

// blockElements end a line of text.
var blockElements = map[string]bool{
	"p": true, "div": true, "br": true, "li": true, "ul": true, "ol": true, "tr": true, "table": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "section": true,
	"article": true, "header": true, "footer": true, "nav": true, "aside": true, "main": true,
	"blockquote": true, "pre": true, "hr": true, "title": true, "dt": true, "dd": true, "dl": true,
	"figure": true, "figcaption": true, "form": true, "fieldset": true, "address": true, "body": true,
}

// extractHTML returns the visible text of an HTML document: tags removed,
// script/style and similar elements dropped with their content, entities
// decoded, runs of spaces collapsed and block elements on lines of their
// own. It is a small tokenizer, not a parser: it never fails on malformed
// markup, it only stops reading.
func extractHTML(ctx context.Context, r *bufio.Reader) (string, error) {
	var out textOut
	var text strings.Builder // raw text since the last tag
	flush := func() {
		out.text(html.UnescapeString(text.String()))
		text.Reset()
	}
	n := 0
	for {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		c, err := r.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if c != '<' {
			text.WriteByte(c)
			continue
		}
		next, err := r.Peek(1)
		if err != nil || !(isLetter(next[0]) || next[0] == '/' || next[0] == '!' || next[0] == '?') {
			text.WriteByte(c) // a lone "<" is text
			continue
		}
		flush()
		if next[0] == '!' || next[0] == '?' {
			if err := skipMarkup(r); err != nil {
				break
			}
			continue
		}
		name, closing, selfClosing, err := readTag(r)
		if err != nil {
			break
		}
		if blockElements[name] {
			out.block()
		}
		if skipElements[name] && !closing && !selfClosing {
			if err := skipUntilClose(r, name); err != nil {
				break
			}
		}
	}
	flush()
	return out.b.String(), nil
}

// textOut collects text with runs of white space made one space and block
// boundaries made one line break, without leading or trailing space.
type textOut struct {
	b         strings.Builder
	space, nl bool // pending separator
}

func (t *textOut) text(s string) {
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\u00a0' {
			t.space = t.b.Len() > 0
			continue
		}
		if t.nl {
			t.b.WriteByte('\n')
		} else if t.space {
			t.b.WriteByte(' ')
		}
		t.nl, t.space = false, false
		t.b.WriteRune(r)
	}
}

func (t *textOut) block() { t.nl = t.b.Len() > 0 }

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// skipMarkup skips a comment (<!-- ... -->), doctype or processing
// instruction after the "<".
func skipMarkup(r *bufio.Reader) error {
	if b, _ := r.Peek(3); string(b) == "!--" {
		r.Discard(3)
		var last [2]byte
		for {
			c, err := r.ReadByte()
			if err != nil {
				return err
			}
			if c == '>' && last == [2]byte{'-', '-'} {
				return nil
			}
			last[0], last[1] = last[1], c
		}
	}
	_, err := r.ReadString('>')
	return err
}

// readTag reads a tag after its "<" up to ">", honouring quoted attribute
// values, and returns its lower-case name.
func readTag(r *bufio.Reader) (name string, closing, selfClosing bool, err error) {
	var nb strings.Builder
	if c, _ := r.Peek(1); len(c) == 1 && c[0] == '/' {
		closing = true
		r.Discard(1)
	}
	inName := true
	var quote byte
	var prev byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return "", false, false, err
		}
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			if !inName {
				quote = c
			}
		case c == '>':
			return strings.ToLower(nb.String()), closing, prev == '/', nil
		}
		if inName {
			if isLetter(c) || (c >= '0' && c <= '9') || c == '-' || c == ':' {
				if nb.Len() < 64 {
					nb.WriteByte(c)
				}
			} else {
				inName = false
			}
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
	}
}

// skipUntilClose drops everything up to and including "</name ...>" (raw
// text elements such as script cannot contain their own end tag).
func skipUntilClose(r *bufio.Reader, name string) error {
	want := "</" + name
	matched := 0
	for {
		c, err := r.ReadByte()
		if err != nil {
			return err
		}
		lc := c
		if lc >= 'A' && lc <= 'Z' {
			lc += 'a' - 'A'
		}
		if lc == want[matched] {
			matched++
			if matched == len(want) {
				nx, err := r.Peek(1)
				if err != nil {
					return err
				}
				if b := nx[0]; b == '>' || b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '/' {
					_, err := r.ReadString('>')
					return err
				}
				matched = 0
			}
			continue
		}
		matched = 0
		if lc == want[0] {
			matched = 1
		}
	}
}
