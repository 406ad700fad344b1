package ingest

import (
	"strings"
	"unicode/utf8"
)

// Chunking (COMPAT.md §8.4): split on Markdown headers first (headers kept
// with their section; ENABLE_MARKDOWN_HEADER_TEXT_SPLITTER), then split each
// section with the recursive character splitter (LangChain's
// RecursiveCharacterTextSplitter: separators "\n\n", "\n", " ", "", each
// kept at the start of the piece after it; pieces merged up to CHUNK_SIZE
// characters with CHUNK_OVERLAP characters carried over; whitespace
// trimmed; add_start_index). Lengths are in characters (code points), as
// Python's len.

// Piece is one chunk of text and where it starts in its section, in
// characters (Open WebUI's start_index).
type Piece struct {
	Text  string
	Start int
}

// Split chunks text. size <= 0 means 1000, overlap < 0 means 0 (and it is
// kept below size).
func Split(text string, size, overlap int, markdownHeaders bool) []Piece {
	if size <= 0 {
		size = 1000
	}
	if overlap < 0 {
		overlap = 0
	}
	if overlap >= size {
		overlap = size - 1
	}
	sections := []string{text}
	if markdownHeaders {
		sections = splitMarkdownHeaders(text)
	}
	sp := splitter{size: size, overlap: overlap}
	var out []Piece
	for _, sec := range sections {
		chunks := sp.split(sec, []string{"\n\n", "\n", " ", ""})
		// start_index as LangChain computes it: search from the previous
		// start + its length - overlap.
		idx, prevLen := 0, 0
		pos := runePos{s: sec}
		for _, c := range chunks {
			from := max(0, idx+prevLen-overlap)
			b := strings.Index(sec[pos.byteAt(from):], c)
			if b < 0 {
				idx = -1
			} else {
				idx = pos.runeAt(pos.byteAt(from) + b)
			}
			prevLen = utf8.RuneCountInString(c)
			out = append(out, Piece{Text: c, Start: idx})
			if idx < 0 {
				idx = 0
			}
		}
	}
	return out
}

// splitMarkdownHeaders cuts text before every line that is a Markdown
// header (# to ######, then a space or the end of the line) outside fenced
// code blocks; each section keeps its header and is trimmed; empty
// sections are dropped.
func splitMarkdownHeaders(text string) []string {
	var out []string
	start, inFence := 0, false
	emit := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off + 1
		}
		line := strings.TrimSpace(text[off:end])
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			inFence = !inFence
		} else if !inFence && isHeader(line) && off > start {
			emit(off)
		}
		off = end
	}
	emit(len(text))
	return out
}

func isHeader(line string) bool {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(line) || line[n] == ' ')
}

type splitter struct{ size, overlap int }

func runes(s string) int { return utf8.RuneCountInString(s) }

// split is RecursiveCharacterTextSplitter._split_text.
func (sp splitter) split(text string, seps []string) []string {
	sep, rest := seps[len(seps)-1], []string(nil)
	for i, s := range seps {
		if s == "" {
			sep = s
			break
		}
		if strings.Contains(text, s) {
			sep, rest = s, seps[i+1:]
			break
		}
	}
	var final, good []string
	for _, s := range splitKeepStart(text, sep) {
		if runes(s) < sp.size {
			good = append(good, s)
			continue
		}
		if len(good) > 0 {
			final = append(final, sp.merge(good)...)
			good = nil
		}
		if len(rest) == 0 {
			final = append(final, s)
		} else {
			final = append(final, sp.split(s, rest)...)
		}
	}
	if len(good) > 0 {
		final = append(final, sp.merge(good)...)
	}
	return final
}

// splitKeepStart splits on sep keeping it at the start of the following
// piece ("" splits into characters); empty pieces are dropped.
func splitKeepStart(text, sep string) []string {
	var out []string
	if sep == "" {
		for _, r := range text {
			out = append(out, string(r))
		}
		return out
	}
	parts := strings.Split(text, sep)
	if parts[0] != "" {
		out = append(out, parts[0])
	}
	for _, p := range parts[1:] {
		out = append(out, sep+p)
	}
	return out
}

// merge is _merge_splits with an empty separator (the separators are kept
// in the pieces).
func (sp splitter) merge(splits []string) []string {
	var docs, cur []string
	total := 0
	join := func() {
		if s := strings.TrimSpace(strings.Join(cur, "")); s != "" {
			docs = append(docs, s)
		}
	}
	for _, d := range splits {
		n := runes(d)
		if total+n > sp.size && len(cur) > 0 {
			join()
			for total > sp.overlap || (total+n > sp.size && total > 0) {
				total -= runes(cur[0])
				cur = cur[1:]
			}
		}
		cur = append(cur, d)
		total += n
	}
	join()
	return docs
}

// runePos converts between byte and rune offsets of s, walking from the
// last position asked (the offsets asked for move forward, with small steps
// back for the overlap).
type runePos struct {
	s    string
	b, r int // a known pair: byte offset b is rune offset r
}

func (p *runePos) byteAt(r int) int {
	for p.r < r && p.b < len(p.s) {
		_, n := utf8.DecodeRuneInString(p.s[p.b:])
		p.b += n
		p.r++
	}
	for p.r > r && p.b > 0 {
		_, n := utf8.DecodeLastRuneInString(p.s[:p.b])
		p.b -= n
		p.r--
	}
	return p.b
}

func (p *runePos) runeAt(b int) int {
	for p.b < b && p.b < len(p.s) {
		_, n := utf8.DecodeRuneInString(p.s[p.b:])
		p.b += n
		p.r++
	}
	for p.b > b && p.b > 0 {
		_, n := utf8.DecodeLastRuneInString(p.s[:p.b])
		p.b -= n
		p.r--
	}
	return p.r
}
