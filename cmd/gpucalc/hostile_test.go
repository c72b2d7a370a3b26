package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// unsafeText matches what a terminal acts on rather than prints: C0
// controls but the line feed, DEL, C1 controls, bidirectional overrides
// and isolates.
var unsafeText = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")

// hostileInputs are inputs whose names (ops, kernels, a model's label) carry
// an escape sequence for the terminal (OSC 52 sets the clipboard), a
// formula for a spreadsheet, a "|" and a tag for Markdown: each through a
// reader of its own (a workload, an Nsight Compute export, a
// torch.profiler trace, a flag).
func hostileInputs(t *testing.T) map[string]struct {
	args  []string
	stdin []byte
} {
	osc52 := "\x1b]52;c;cm0gLXJmIH4=\x07"
	workload := "name: \"=HYPERLINK(1)\\e]0;title\\a\"\nops:\n" +
		"  - {name: \"=1+1|x\\e]52;c;QQ==\\a<b>\", op: linear tokens=1 in=4096 out=4096}\n" +
		"  - {name: \"@SUM(1)\\u009b2J\\u202eexe\", op: silu n=4096}\n"
	ncu := strings.ReplaceAll(string(readInput(t, "ncu.txtar:profile.csv")), "vectorized_layer_norm_kernel", "evil"+osc52+"|<i>x</i>\r=cmd")
	name, _ := json.Marshal("=cmd|' /C calc'!A0" + osc52 + "\u202e<b>")
	kernel, _ := json.Marshal("+kernel\x1b[2J|x")
	step := strings.Replace(string(readInput(t, "trace.txtar:step.json")), `"aten::mm"`, string(name), 1)
	step = strings.Replace(step, `"my_custom_kernel"`, string(kernel), 1)
	return map[string]struct {
		args  []string
		stdin []byte
	}{
		"check html": {[]string{"check", "-", "--device", "h100", "--format", "html"}, []byte(workload)},
		"roofline":   {[]string{"roofline", "--workload", "-", "--devices", "h100,a100"}, []byte(workload)},
		"check":      {[]string{"check", "-", "--device", "h100"}, []byte(workload)},
		"ncu":        {[]string{"ncu", "-"}, []byte(ncu)},
		"trace":      {[]string{"trace", "-"}, []byte(step)},
		"model":      {[]string{"model", "llama-3.1-8b", "--name", "-2+3+cmd" + osc52 + "|<b>x"}, nil},
	}
}

// TestHostileNames runs commands on inputs whose names are hostile and
// checks each output format: nothing a terminal obeys in table, Markdown or
// CSV output, nor in messages; Markdown tables keep their columns and show
// no tag; no CSV cell starts a formula; JSON parses; charts are
// well-formed XML.
func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	for name, in := range hostileInputs(t) {
		if name == "check html" {
			// The page: no control character, which HTML forbids and a
			// terminal obeys (each is U+FFFD); the name's tag escaped.
			out, errOut, code := runInput(in.stdin, in.args...)
			if code != 0 || regexp.MustCompile("[\x00-\x08\x0b\x0c\x0e-\x1f]").MatchString(out) || !strings.Contains(out, "|x\uFFFD]52;c;QQ==\uFFFD&lt;b&gt;") {
				t.Errorf("check --format html: exit %d, %s; the page holds control characters or a tag", code, errOut)
			}
			continue
		}
		for _, form := range []string{"table", "markdown", "csv", "json"} {
			args := append(append([]string{}, in.args...), "--format", form)
			if form == "table" && name != "model" && name != "check" {
				args = append(args, "--plot", filepath.Join(dir, name+".svg"))
			}
			out, errOut, code := runInput(in.stdin, args...)
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", name, form, code, errOut)
			}
			if unsafeText.MatchString(errOut) {
				t.Errorf("%s %s: standard error holds control characters: %q", name, form, errOut)
			}
			switch form {
			case "table":
				if unsafeText.MatchString(out) {
					t.Errorf("%s: the table holds control characters:\n%q", name, out)
				}
			case "markdown":
				if unsafeText.MatchString(out) || strings.Contains(out, "<b>") || strings.Contains(out, "<i>") {
					t.Errorf("%s: the Markdown holds control characters or a tag:\n%s", name, out)
				}
				markdownColumns(t, name, out)
			case "csv":
				csvCells(t, name, out)
			case "json":
				var v any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("%s: not JSON: %v", name, err)
				}
			}
		}
		if name == "model" || name == "check" { // check draws in its HTML page, checked in reports
			continue
		}
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(bytes.NewReader(svg))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s: the chart is not well-formed XML: %v", name, err)
				break
			}
		}
	}
}

// Errors quote their input (an unknown op, a device, a line of a file):
// printed, not obeyed.
func TestHostileErrors(t *testing.T) {
	osc52 := "\x1b]52;c;cm0gLXJmIH4=\x07"
	for _, tc := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"roofline", "--op", "bogus" + osc52 + " n=1"}, ""},
		{[]string{"roofline", "--workload", "-"}, "name: w\nops:\n  - {name: x, op: \"bogus\\e]52;c;QQ==\\a n=1\"}\n"},
		{[]string{"roofline", "--device", "h100" + osc52, "--op", "add n=1"}, ""},
		{[]string{"model", "no-such-model" + osc52}, ""},
		{[]string{"ncu", "missing" + osc52 + ".csv"}, ""},
	} {
		_, errOut, code := runInput([]byte(tc.stdin), tc.args...)
		if code == 0 {
			t.Errorf("%q: exit 0", tc.args)
		}
		if unsafeText.MatchString(errOut) || !strings.Contains(errOut, `\x1b`) {
			t.Errorf("%q: the message does not show the escape as text: %q", tc.args, errOut)
		}
	}
}

// markdownColumns checks that every row of each Markdown table has as many
// cells as its header: an unescaped "|" or a line break in a cell adds one.
func markdownColumns(t *testing.T, name, out string) {
	t.Helper()
	cells := func(l string) int { return len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(l, -1)) }
	want := 0
	for _, l := range strings.Split(out, "\n") {
		switch {
		case !strings.HasPrefix(l, "|"):
			want = 0
		case want == 0:
			want = cells(l)
		case cells(l) != want:
			t.Errorf("%s: a Markdown row of %d cells under a header of %d:\n%s", name, cells(l)-1, want-1, l)
		}
	}
}

// csvCells checks that no cell of a CSV output starts a formula (OWASP's
// leading = + - @, a number apart) or holds control characters.
func csvCells(t *testing.T, name, out string) {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%s: not CSV: %v", name, err)
	}
	for _, r := range recs {
		for _, c := range r {
			if unsafeText.MatchString(c) {
				t.Errorf("%s: a CSV cell holds control characters: %q", name, c)
			}
			if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
				if _, err := strconv.ParseFloat(c, 64); err != nil {
					t.Errorf("%s: a CSV cell starts a formula: %q", name, c)
				}
			}
		}
	}
}
