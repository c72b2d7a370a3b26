package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra/doc"
)

// repoRoot is where the README, docs/ and examples/ live, relative to this
// package.
const repoRoot = "../.."

// docExample is one `$ gpucalc ...` line of a console block in the README or
// docs/, with the output printed under it.
type docExample struct {
	file     string
	line     int // of the $ line, 1-based
	args     []string
	out      []string // lines of output, as written
	outStart int      // index into the file's lines of the first output line
	fails    bool     // the output is an error (stderr, non-zero exit)
}

// docFiles lists the Markdown files whose examples are executed.
func docFiles(t *testing.T) []string {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, files...)
}

// parseDocExamples finds the examples of one Markdown file: in every fenced
// block that starts with "$ gpucalc", each "$ gpucalc ..." line and the
// lines up to the next "$ " line or the end of the block.
func parseDocExamples(file string, lines []string) ([]docExample, error) {
	var out []docExample
	inBlock, executable := false, false
	var cur *docExample
	flush := func() {
		if cur != nil {
			cur.fails = len(cur.out) > 0 && strings.HasPrefix(cur.out[0], "gpucalc: ")
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			if inBlock {
				flush()
				inBlock = false
				continue
			}
			inBlock = true
			executable = i+1 < len(lines) && strings.HasPrefix(lines[i+1], "$ gpucalc ")
			continue
		}
		if !inBlock || !executable {
			continue
		}
		if strings.HasPrefix(l, "$ ") {
			flush()
			if !strings.HasPrefix(l, "$ gpucalc ") {
				return nil, fmt.Errorf("%s:%d: a console block of gpucalc examples runs gpucalc only; show other commands in a sh block", file, i+1)
			}
			args, err := shellWords(strings.TrimPrefix(l, "$ gpucalc "))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, i+1, err)
			}
			cur = &docExample{file: file, line: i + 1, args: args, outStart: i + 1}
			continue
		}
		if cur != nil {
			cur.out = append(cur.out, l)
		}
	}
	if inBlock {
		return nil, fmt.Errorf("%s: unclosed code block", file)
	}
	return out, nil
}

// shellWords splits a command line as a POSIX shell does for the simple
// cases the docs use: words, single and double quotes, backslash escapes.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '\\' && i+1 < len(s):
			w.WriteByte(s[i+1])
			i, inWord = i+1, true
		case c == '|' || c == '<' || c == '>' || c == ';' || c == '&':
			return nil, fmt.Errorf("%q: examples run gpucalc alone, with no pipes or redirections", s)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// tsQuote quotes an argument for a testscript line.
func tsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"#$\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// TestDocExamples runs every `$ gpucalc ...` example in the README and
// docs/ as a testscript, from a copy of the repository's examples and test
// data, and compares its output with the text under it. With -update it
// rewrites the output in the Markdown instead.
func TestDocExamples(t *testing.T) {
	dir := t.TempDir()
	n := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		exs, err := parseDocExamples(file, lines)
		if err != nil {
			t.Fatal(err)
		}
		if len(exs) == 0 {
			continue
		}
		if *update {
			updateDocExamples(t, file, lines, exs)
			continue
		}
		var script strings.Builder
		var archive strings.Builder
		for i, ex := range exs {
			fmt.Fprintf(&script, "# %s:%d\n", filepath.Base(file), ex.line)
			quoted := make([]string, len(ex.args))
			for j, a := range ex.args {
				quoted[j] = tsQuote(a)
			}
			stream := "stdout"
			if ex.fails {
				stream = "stderr"
				script.WriteString("! ")
			}
			fmt.Fprintf(&script, "exec gpucalc %s\ncmp %s want%d.txt\n", strings.Join(quoted, " "), stream, i)
			fmt.Fprintf(&archive, "-- want%d.txt --\n%s\n", i, strings.Join(ex.out, "\n"))
		}
		name := strings.TrimSuffix(filepath.Base(file), ".md") + ".txtar"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script.String()+archive.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		n += len(exs)
	}
	if *update {
		return
	}
	if n == 0 {
		t.Fatal("no examples found in the README and docs/")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("GPUCALC_DEVICE", "")
			env.Setenv("GPUCALC_DEVICES", "")
			// Examples name files by their path in the repository.
			for _, d := range []string{"examples", "testdata", "docs", "ncu", "occupancy", "trace", "model", "sim", "project"} {
				if _, err := os.Stat(filepath.Join(root, d)); err == nil {
					if err := os.Symlink(filepath.Join(root, d), filepath.Join(env.WorkDir, d)); err != nil {
						return err
					}
				}
			}
			return nil
		},
	})
}

// updateDocExamples runs each example in the repository root and writes its
// output under it.
func updateDocExamples(t *testing.T, file string, lines []string, exs []docExample) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// Charts and other files the examples write go to a scratch copy.
	for _, d := range []string{"examples", "testdata", "docs", "ncu", "occupancy", "trace", "model", "sim", "project"} {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			if err := os.Symlink(filepath.Join(root, d), filepath.Join(tmp, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chdir(tmp); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	env := func(k string) string {
		if k == "GPUCALC_DEVICE" || k == "GPUCALC_DEVICES" {
			return ""
		}
		return os.Getenv(k)
	}
	// Replace from the last example up, so earlier indexes stay valid.
	for i := len(exs) - 1; i >= 0; i-- {
		ex := exs[i]
		var stdout, stderr bytes.Buffer
		code := run(ex.args, strings.NewReader(""), &stdout, &stderr, env)
		got := stdout.String()
		if code != 0 {
			got = stderr.String()
		}
		out := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		lines = append(lines[:ex.outStart], append(out, lines[ex.outStart+len(ex.out):]...)...)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCLIReference checks that docs/cli/ is what cobra/doc generates from
// the command tree; -update regenerates it.
func TestCLIReference(t *testing.T) {
	want := filepath.Join(repoRoot, "docs", "cli")
	got := t.TempDir()
	if err := genCLIReference(got); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.RemoveAll(want); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(want, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := genCLIReference(want); err != nil {
			t.Fatal(err)
		}
		return
	}
	gen, _ := filepath.Glob(filepath.Join(got, "*.md"))
	have, _ := filepath.Glob(filepath.Join(want, "*.md"))
	if len(gen) != len(have) {
		t.Errorf("docs/cli has %d pages, the command tree %d: run go test ./cmd/gpucalc -run TestCLIReference -update", len(have), len(gen))
	}
	for _, g := range gen {
		a, _ := os.ReadFile(g)
		b, err := os.ReadFile(filepath.Join(want, filepath.Base(g)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("docs/cli/%s is stale: run go test ./cmd/gpucalc -run TestCLIReference -update", filepath.Base(g))
		}
	}
}

// genCLIReference writes one Markdown page per command into dir.
func genCLIReference(dir string) error {
	f := &factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	root := newCmdRoot(f)
	root.DisableAutoGenTag = true
	return doc.GenMarkdownTree(root, dir)
}
