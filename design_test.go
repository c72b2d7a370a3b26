// Package gpucalc_test holds DESIGN.md to the code: the layers of its
// diagram and the import rules of its package lines are checked against
// each package's imports.
package gpucalc_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gpucalc/gpucalc"

// pkg is one package of the module: its path relative to the module root
// and the module packages and other modules its non-test files import.
type pkg struct {
	imports  []string // module packages, relative
	external []string
}

// modulePackages reads every package of the module with go/build (as go
// list does), leaving out test-only directories, testdata and tools.
func modulePackages(t *testing.T) map[string]pkg {
	t.Helper()
	out := map[string]pkg{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "tools" || name == "docs") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		if len(p.GoFiles) == 0 {
			return nil
		}
		var q pkg
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, module+"/"):
				q.imports = append(q.imports, strings.TrimPrefix(imp, module+"/"))
			case strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
				q.external = append(q.external, imp)
			}
		}
		out[filepath.ToSlash(path)] = q
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// design is what DESIGN.md states: each package's layer (the diagram) and
// its line's text.
type design struct {
	layer map[string]int
	line  map[string]string
	// lineLayer is the layer a package's line states, "(N)".
	lineLayer map[string]int
}

var (
	// A diagram row: an optional layer number, the packages separated by
	// " · ", then two spaces and what they own.
	diagramRow = regexp.MustCompile(`^ *(\d+)? +([a-z][a-z0-9/*]*(?: · [a-z][a-z0-9/*]*)*)(?: {2,}.*)?$`)
	// A package's line: "- `name` (N): ...".
	packageLine = regexp.MustCompile("^- `([a-z][a-z0-9/]*)` \\((\\d+)\\): ")
	backticked  = regexp.MustCompile("`([^`]+)`")
)

func readDesign(t *testing.T) design {
	t.Helper()
	data, err := os.ReadFile("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	d := design{layer: map[string]int{}, line: map[string]string{}, lineLayer: map[string]int{}}
	lines := strings.Split(string(data), "\n")
	// The diagram: the first fenced block after "## Layers".
	start := slices.Index(lines, "## Layers")
	if start < 0 {
		t.Fatal(`DESIGN.md has no "## Layers" section`)
	}
	in, layer := false, -1
	for _, l := range lines[start:] {
		if strings.HasPrefix(l, "```") {
			if in {
				break
			}
			in = true
			continue
		}
		if !in || strings.TrimSpace(l) == "" {
			continue
		}
		m := diagramRow.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("DESIGN.md: diagram row %q: want a layer number (or none, to continue the row above), packages separated by ' · ', two spaces and what they own", l)
		}
		if m[1] != "" {
			layer, _ = strconv.Atoi(m[1])
		} else if layer < 0 {
			t.Fatalf("DESIGN.md: diagram row %q continues no layer", l)
		}
		for _, p := range strings.Split(m[2], " · ") {
			if prev, ok := d.layer[p]; ok {
				t.Errorf("DESIGN.md: %s is on layer %d and again on layer %d", p, prev, layer)
			}
			d.layer[p] = layer
		}
	}
	// The package lines: a line "- `name` (N): ..." and its indented
	// continuation.
	cur := ""
	for _, l := range lines {
		if m := packageLine.FindStringSubmatch(l); m != nil {
			cur = m[1]
			d.lineLayer[cur], _ = strconv.Atoi(m[2])
			d.line[cur] = l
			continue
		}
		if cur != "" && strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "" {
			d.line[cur] += " " + strings.TrimSpace(l)
			continue
		}
		cur = ""
	}
	return d
}

// layerOf is the layer of package p: its own row, or a row "dir/*" that
// holds every package under dir.
func (d design) layerOf(p string) (int, bool) {
	if l, ok := d.layer[p]; ok {
		return l, true
	}
	for name, l := range d.layer {
		if dir, ok := strings.CutSuffix(name, "/*"); ok && strings.HasPrefix(p, dir+"/") {
			return l, true
		}
	}
	return 0, false
}

// TestDesignLayers: every package of the module is on the diagram (adding
// a package is adding it to a row), every package on the diagram exists,
// and every import points down.
func TestDesignLayers(t *testing.T) {
	pkgs := modulePackages(t)
	d := readDesign(t)
	for p := range d.layer {
		if strings.HasSuffix(p, "/*") {
			continue
		}
		if _, ok := pkgs[p]; !ok {
			t.Errorf("DESIGN.md's diagram has %s, which is no package of the module", p)
		}
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		l, ok := d.layerOf(p)
		if !ok {
			t.Errorf("%s is on no layer of DESIGN.md's diagram: add it to the row of the lowest layer above everything it imports", p)
			continue
		}
		for _, imp := range pkgs[p].imports {
			il, ok := d.layerOf(imp)
			if ok && il >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only packages on layers below its own", p, l, imp, il)
			}
		}
	}
}

// renderers are "anything that renders", in the words of the package
// lines.
var renderers = []string{"chart", "reports", "web", "cmd/gpucalc"}

// TestDesignImportRules: each package line's rules hold. "(N)" is the
// package's layer on the diagram; "Imports only `a`, `b`", "Imports `a`,
// `b` only" and "Imports `a`, `b`;" list every module package it may
// import, "Imports no gpucalc package" none; "must not import `x`" forbids
// x, "`x` or anything above" x's layer and above, "anything that renders"
// chart, reports, web and cmd; "The only package that imports y" means no
// other package does; "imported by tests only" or "benchmarks only" means
// no package's non-test files import it.
func TestDesignImportRules(t *testing.T) {
	pkgs := modulePackages(t)
	d := readDesign(t)
	allowList := []*regexp.Regexp{
		regexp.MustCompile("Imports only ((?:`[^`]+`(?:,? and |, | or )?)+)"),
		regexp.MustCompile("Imports ((?:`[^`]+`(?:,? and |, )?)+)(?: only|;|\\.)"),
	}
	mustNot := regexp.MustCompile("(?i)must not import ([^.;]*)")
	onlyImporter := regexp.MustCompile("The only package that imports ([a-z/]+)")
	for name, text := range d.line {
		p, ok := pkgs[name]
		if !ok {
			t.Errorf("DESIGN.md has a line for %s, which is no package of the module", name)
			continue
		}
		if l, ok := d.layerOf(name); ok && l != d.lineLayer[name] {
			t.Errorf("DESIGN.md: %s's line says layer %d, the diagram %d", name, d.lineLayer[name], l)
		}
		var allowed []string
		restricted := false
		if strings.Contains(text, "Imports no gpucalc package") {
			restricted = true
		}
		for _, re := range allowList {
			if m := re.FindStringSubmatch(text); m != nil && !restricted {
				restricted = true
				for _, b := range backticked.FindAllStringSubmatch(m[1], -1) {
					allowed = append(allowed, b[1])
				}
			}
		}
		if restricted {
			for _, imp := range p.imports {
				if !slices.Contains(allowed, imp) {
					t.Errorf("%s imports %s; its line in DESIGN.md allows only %v", name, imp, allowed)
				}
			}
		}
		if m := mustNot.FindStringSubmatch(text); m != nil {
			var forbidden []string
			above := -1
			for _, b := range backticked.FindAllStringSubmatch(m[1], -1) {
				if l, ok := d.layerOf(b[1]); ok {
					forbidden = append(forbidden, b[1])
					if above < 0 || l < above {
						above = l
					}
				}
			}
			if strings.Contains(m[1], "anything that renders") {
				forbidden = append(forbidden, renderers...)
			}
			for _, imp := range p.imports {
				l, _ := d.layerOf(imp)
				if slices.Contains(forbidden, imp) || strings.Contains(m[1], "anything above") && above >= 0 && l >= above {
					t.Errorf("%s imports %s, which DESIGN.md says it must not (%q)", name, imp, m[0])
				}
			}
		}
		if m := onlyImporter.FindStringSubmatch(text); m != nil {
			for other, q := range pkgs {
				if other == name {
					continue
				}
				for _, ext := range q.external {
					if matchesModule(ext, m[1]) {
						t.Errorf("%s imports %s; DESIGN.md says %s is the only package that imports %s", other, ext, name, m[1])
					}
				}
			}
		}
		if strings.Contains(text, "tests only") || strings.Contains(text, "benchmarks only") {
			for other, q := range pkgs {
				if slices.Contains(q.imports, name) {
					t.Errorf("%s's non-test files import %s, which DESIGN.md says only tests import", other, name)
				}
			}
		}
	}
}

// matchesModule says whether import path imp is of the module a package
// line names by its short name ("cobra", "gonum/plot", "tablewriter"):
// each of the name's parts is one of the path's.
func matchesModule(imp, name string) bool {
	parts := strings.Split(imp, "/")
	for _, w := range strings.Split(name, "/") {
		if !slices.ContainsFunc(parts, func(p string) bool { return p == w || strings.HasPrefix(p, w+".") }) {
			return false
		}
	}
	return true
}

// TestDesignCatchesDrift: the rules above fail on a package that breaks
// them, so that the two tests cannot pass by reading nothing.
func TestDesignCatchesDrift(t *testing.T) {
	d := readDesign(t)
	for _, p := range []string{"units", "devices", "occupancy", "roofline", "model", "reports", "web", "cmd/gpucalc", "internal/testfile"} {
		if _, ok := d.layerOf(p); !ok {
			t.Errorf("the diagram read from DESIGN.md has no %s", p)
		}
	}
	if len(d.line) < 20 {
		t.Errorf("read %d package lines from DESIGN.md, want one per package", len(d.line))
	}
	if lu, _ := d.layerOf("units"); lu != 0 {
		t.Errorf("units on layer %d, want 0", lu)
	}
	if lc, _ := d.layerOf("cmd/gpucalc"); lc <= 9 {
		t.Errorf("cmd/gpucalc on layer %d, want the top", lc)
	}
	if !matchesModule("gonum.org/v1/plot/vg", "gonum/plot") || !matchesModule("github.com/spf13/cobra", "cobra") || matchesModule("github.com/spf13/pflag", "cobra") {
		t.Error("matchesModule does not tell the modules the package lines name")
	}
}

// TestDesignOneFilePerCommand: "A command is one file named after it; a
// command with subcommands has one file per subcommand".
func TestDesignOneFilePerCommand(t *testing.T) {
	files, err := filepath.Glob("cmd/gpucalc/*.go")
	if err != nil {
		t.Fatal(err)
	}
	newCmd := regexp.MustCompile(`(?m)^func (newCmd\w+)\(`)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if cmds := newCmd.FindAllStringSubmatch(string(data), -1); len(cmds) > 1 {
			var names []string
			for _, c := range cmds {
				names = append(names, c[1])
			}
			t.Errorf("%s defines %d commands (%s); DESIGN.md: one file per subcommand", file, len(cmds), strings.Join(names, ", "))
		}
	}
}
