package ui

import (
	"io/fs"
	"strings"
	"testing"
)

func TestFSHasIndex(t *testing.T) {
	b, err := fs.ReadFile(FS(), "index.html")
	if err != nil {
		t.Fatalf("index.html not embedded: %v (run npm run build in ui/web)", err)
	}
	if !strings.Contains(string(b), `<div id="app">`) {
		t.Fatalf("index.html does not look like the built client:\n%s", b)
	}
}

// Every asset index.html references must be embedded.
func TestFSHasReferencedAssets(t *testing.T) {
	b, err := fs.ReadFile(FS(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	n := 0
	for {
		i := strings.Index(s, `"/assets/`)
		if i < 0 {
			break
		}
		s = s[i+1:]
		name := s[1:strings.IndexByte(s, '"')]
		if _, err := fs.Stat(FS(), name); err != nil {
			t.Errorf("index.html references %s, not embedded: %v", name, err)
		}
		n++
	}
	if n == 0 {
		t.Error("index.html references no /assets/ files")
	}
}
