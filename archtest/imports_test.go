package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "hearth"

// allowedImports is ARCHITECTURE.md's table: the internal packages each package may
// import (directly; the table is closed under its own edges, so direct
// checks are enough). "*" means any internal package. Packages under
// examples/ and bench/ are standalone programs and may import anything but
// server; bench/ programs are composition roots like cli (they build a
// server in-process to measure it), so they may import server too.
func allowedImports() map[string][]string {
	return map[string][]string{
		"hearth":          {"cli"}, // main.go: builds the app and runs it
		"hearth/cli":      {"*"},   // the composition root
		"hearth/server":   {"*"},   // everything below it (cli is checked separately)
		"hearth/chat":     {"store", "llm", "ingest", "plugin", "realtime", "vector"},
		"hearth/plugin":   {"llm"},
		"hearth/realtime": {"store"},
		"hearth/ingest":   {"store", "vector", "llm"},
		"hearth/auth":     {"store"},
		"hearth/config":   {},
		"hearth/store":    {},
		"hearth/vector":   {},
		"hearth/llm":      {},
		"hearth/netguard": {},
		"hearth/ui":       {},
		"hearth/archtest": {},
	}
}

// pkg is the part of `go list -json` output the rules need.
type pkg struct {
	ImportPath string
	Dir        string
	Name       string
	GoFiles    []string
	Imports    []string
	Error      *struct{ Err string }
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = ".." // the module root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// internal strips the module prefix: "hearth/store" → "store", "hearth" → "".
func internal(path string) (string, bool) {
	if path == module {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}

// violations applies the rules to a package list and returns one message
// per forbidden edge or missing doc.go.
func violations(pkgs []pkg) []string {
	allowed := allowedImports()
	var bad []string
	for _, p := range pkgs {
		name, ok := internal(p.ImportPath)
		if !ok {
			continue
		}
		standalone := strings.HasPrefix(name, "examples/") || strings.HasPrefix(name, "bench/")
		rules, known := allowed[p.ImportPath]
		if !known && !standalone {
			bad = append(bad, fmt.Sprintf("%s: package not in ARCHITECTURE.md's table (add it there and to archtest's allowedImports)", p.ImportPath))
		}
		if p.Name != "main" && !slices.Contains(p.GoFiles, "doc.go") {
			bad = append(bad, fmt.Sprintf("%s: no doc.go (say what the package owns and the invariants it keeps)", p.ImportPath))
		}
		for _, imp := range p.Imports {
			dep, ok := internal(imp)
			if !ok {
				continue
			}
			switch {
			case dep == "":
				bad = append(bad, fmt.Sprintf("%s imports the main package", p.ImportPath))
			case dep == "server" && name != "cli" && !strings.HasPrefix(name, "bench/"):
				bad = append(bad, fmt.Sprintf("%s imports server: nothing but cli (and bench programs) may", p.ImportPath))
			case standalone || !known:
			case slices.Contains(rules, "*"):
				if p.ImportPath == "hearth/server" && dep == "cli" {
					bad = append(bad, "hearth/server imports cli: only main may")
				}
			case !slices.Contains(rules, dep):
				bad = append(bad, fmt.Sprintf("%s imports %s: allowed are %v", p.ImportPath, imp, rules))
			}
		}
	}
	return bad
}

func TestImportDirections(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 3 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		if p.Error != nil {
			t.Logf("note: %s does not build right now: %s", p.ImportPath, p.Error.Err)
		}
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestRulesCatchForbiddenEdges proves the checker itself fails on each kind
// of violation, so a silent pass of TestImportDirections means something.
func TestRulesCatchForbiddenEdges(t *testing.T) {
	doc := []string{"doc.go", "x.go"}
	cases := []struct {
		name string
		p    pkg
		want string
	}{
		{"leaf imports internal", pkg{ImportPath: "hearth/store", Name: "store", GoFiles: doc, Imports: []string{"hearth/auth"}}, "hearth/store imports hearth/auth"},
		{"config imports store", pkg{ImportPath: "hearth/config", Name: "config", GoFiles: doc, Imports: []string{"hearth/store"}}, "hearth/config imports hearth/store"},
		{"auth imports config", pkg{ImportPath: "hearth/auth", Name: "auth", GoFiles: doc, Imports: []string{"hearth/store", "hearth/config"}}, "hearth/auth imports hearth/config"},
		{"chat imports server", pkg{ImportPath: "hearth/chat", Name: "chat", GoFiles: doc, Imports: []string{"hearth/server"}}, "imports server"},
		{"example imports server", pkg{ImportPath: "hearth/examples/x", Name: "main", Imports: []string{"hearth/server"}}, "imports server"},
		{"server imports cli", pkg{ImportPath: "hearth/server", Name: "server", GoFiles: doc, Imports: []string{"hearth/cli"}}, "server imports cli"},
		{"imports main", pkg{ImportPath: "hearth/llm", Name: "llm", GoFiles: doc, Imports: []string{"hearth"}}, "imports the main package"},
		{"no doc.go", pkg{ImportPath: "hearth/vector", Name: "vector", GoFiles: []string{"x.go"}}, "no doc.go"},
		{"unknown package", pkg{ImportPath: "hearth/newthing", Name: "newthing", GoFiles: doc}, "not in ARCHITECTURE.md"},
	}
	for _, tc := range cases {
		got := violations([]pkg{tc.p})
		if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("%s: violations = %q, want one containing %q", tc.name, got, tc.want)
		}
	}
	ok := []pkg{
		{ImportPath: "hearth/cli", Name: "cli", GoFiles: doc, Imports: []string{"hearth/server", "hearth/store", "fmt"}},
		{ImportPath: "hearth/auth", Name: "auth", GoFiles: doc, Imports: []string{"hearth/store", "github.com/google/uuid"}},
		{ImportPath: "hearth", Name: "main", GoFiles: []string{"main.go"}, Imports: []string{"hearth/cli"}},
		{ImportPath: "hearth/bench/startup", Name: "main", GoFiles: []string{"main.go"}},
	}
	if got := violations(ok); len(got) != 0 {
		t.Errorf("allowed edges reported: %q", got)
	}
}
