package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitSmallTextIsOneChunk(t *testing.T) {
	got := Split("  hello world \n", 1000, 100, true)
	if len(got) != 1 || got[0].Text != "hello world" || got[0].Start != 0 {
		t.Fatalf("%+v", got)
	}
	if got := Split(" \n\n ", 1000, 100, true); len(got) != 0 {
		t.Fatalf("blank text gave %+v", got)
	}
}

func TestSplitMarkdownHeaders(t *testing.T) {
	text := "intro\n# One\nalpha\n```\n# not a header\n```\n## Two\nbeta\n#hashtag stays\n"
	got := Split(text, 1000, 100, true)
	want := []string{"intro", "# One\nalpha\n```\n# not a header\n```", "## Two\nbeta\n#hashtag stays"}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i].Text != want[i] {
			t.Errorf("chunk %d %q, want %q", i, got[i].Text, want[i])
		}
	}
	if got := Split(text, 1000, 100, false); len(got) != 1 {
		t.Errorf("without header splitting: %+v", got)
	}
}

// The recursive splitter: paragraphs first, then lines, then words; every
// chunk within the size; consecutive chunks overlap; start_index points at
// the chunk in the text.
func TestSplitRecursive(t *testing.T) {
	var b strings.Builder
	for p := 0; p < 6; p++ {
		for w := 0; w < 40; w++ {
			b.WriteString("wörd")
			b.WriteByte(byte('a' + w%26))
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
	}
	text := b.String()
	got := Split(text, 100, 20, false)
	if len(got) < 10 {
		t.Fatalf("%d chunks", len(got))
	}
	rs := []rune(text)
	for i, c := range got {
		if n := utf8.RuneCountInString(c.Text); n > 100 {
			t.Errorf("chunk %d has %d characters", i, n)
		}
		if c.Start < 0 || string(rs[c.Start:c.Start+utf8.RuneCountInString(c.Text)]) != c.Text {
			t.Errorf("chunk %d start %d does not point at it", i, c.Start)
		}
	}
	// Overlap: the second chunk starts inside the first (same paragraph).
	if got[1].Start >= got[0].Start+utf8.RuneCountInString(got[0].Text) {
		t.Errorf("chunks 0 and 1 do not overlap: %+v %+v", got[0], got[1])
	}
	// A word longer than the size is cut into characters.
	long := Split(strings.Repeat("x", 250), 100, 10, false)
	if len(long) != 3 || utf8.RuneCountInString(long[0].Text) != 100 {
		t.Errorf("long word: %d chunks", len(long))
	}
}
