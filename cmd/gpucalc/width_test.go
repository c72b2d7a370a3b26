package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// widthCase is one command line whose table output must fit a terminal.
type widthCase struct {
	name  string
	args  []string
	stdin []byte
}

// tableFormat reports whether args ask for the table format (the default),
// the only one a terminal's width changes; a batch, whose default is CSV,
// is asked for it.
func tableFormat(args []string) ([]string, bool) {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--format=")
		if (a == "--format" || a == "-f") && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			return args, v == "table"
		}
	}
	if batches["gpucalc "+strings.Join(args[:min(2, len(args))], " ")] {
		return append(args, "--format", "table"), true
	}
	return args, true
}

// widthCases are every documented example (the README's and docs/', as
// TestDocExamples runs them) and every command of the tree with its input
// from outputInputs, in table format, also with --verbose.
func widthCases(t *testing.T) []widthCase {
	var cases []widthCase
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		exs, err := parseDocExamples(file, strings.Split(string(data), "\n"))
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range exs {
			if args, ok := tableFormat(ex.args); ok && !ex.fails {
				cases = append(cases, widthCase{name: fmt.Sprintf("%s:%d", filepath.Base(file), ex.line), args: args})
			}
		}
	}
	for _, path := range leafCommands() {
		cmd := "gpucalc " + strings.Join(path, " ")
		in, ok := outputInputs[cmd]
		if !ok && (path[0] == "serve" || path[0] == "version") {
			continue
		}
		args, _ := tableFormat(append(append([]string{}, path...), in.args...))
		c := widthCase{name: strings.Join(path, "_"), args: args}
		if in.stdin != "" {
			c.stdin = readInput(t, in.stdin)
		}
		// --verbose adds provenance: sources, how figures were measured.
		v := c
		v.name, v.args = c.name+"_verbose", append(append([]string{}, c.args...), "--verbose")
		cases = append(cases, c, v)
	}
	return cases
}

// inScratchRepo runs fn in a directory that sees the repository's inputs
// (examples/, testdata/, the packages' testdata) by their repository paths,
// with an empty docs/ for the charts that examples write.
func inScratchRepo(t *testing.T, fn func()) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, d := range []string{"examples", "testdata", "ncu", "occupancy", "trace", "model", "sim", "project"} {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			if err := os.Symlink(filepath.Join(root, d), filepath.Join(tmp, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(tmp, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(tmp); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	fn()
}

// widest returns the widest line of out and its width in columns.
func widest(out string) (string, int) {
	line, n := "", 0
	for _, l := range strings.Split(out, "\n") {
		if w := utf8.RuneCountInString(strings.TrimRight(l, "\r")); w > n {
			line, n = l, w
		}
	}
	return line, n
}

// TestTerminalWidth runs every command and documented example on a
// terminal 100 and 80 columns wide (the width the factory is given at the
// edge) and checks that no line of standard output is wider.
func TestTerminalWidth(t *testing.T) {
	cases := widthCases(t)
	if len(cases) < 30 {
		t.Fatalf("found %d command lines; the walk is broken", len(cases))
	}
	inScratchRepo(t, func() {
		for _, width := range []int{100, 80} {
			for _, c := range cases {
				var out, errOut bytes.Buffer
				f := newFactory(bytes.NewReader(c.stdin), &out, &errOut, func(string) string { return "" })
				f.width = width
				if code := runFactory(f, c.args); code != 0 && !(code == 1 && batches["gpucalc "+strings.Join(c.args[:2], " ")]) {
					t.Errorf("%d columns: %s: gpucalc %s: exit %d: %s", width, c.name, strings.Join(c.args, " "), code, errOut.String())
					continue
				}
				if line, n := widest(out.String()); n > width {
					t.Errorf("%d columns: %s: gpucalc %s: a line of %d columns:\n%s", width, c.name, strings.Join(c.args, " "), n, line)
				}
			}
		}
	})
}
