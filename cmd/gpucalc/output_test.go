package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"
)

// outputInputs are what a command needs to run: arguments, and standard
// input as "txtar-file:member" from testdata/script (the inputs the CLI
// scripts use). A command not listed runs with no arguments; a command that
// then fails needs an entry here.
var outputInputs = map[string]struct {
	args  []string
	stdin string
}{
	"gpucalc devices show":         {args: []string{"h100"}},
	"gpucalc occupancy":            {args: []string{"--grid", "1000", "--cluster", "2", "--regs", "40", "--smem", "20K"}},
	"gpucalc occupancy batch":      {args: []string{"--input", "-"}, stdin: "occupancy.txtar:in.csv"},
	"gpucalc occupancy from-build": {args: []string{"-"}, stdin: "occupancy_frombuild.txtar:ptxas.txt"},
	"gpucalc occupancy sweep":      {args: []string{"--vary", "smem", "--smem", "20K"}},
	"gpucalc roofline":             {args: []string{"--workload", "-", "--devices", "h100,a100"}, stdin: "roofline.txtar:w.yaml"},
	"gpucalc roofline batch":       {args: []string{"--input", "-"}, stdin: "roofline.txtar:bench.csv"},
	"gpucalc simulate":             {args: []string{"--kernel", "mixed", "--warps-per-sm", "4,32"}},
	"gpucalc ncu":                  {args: []string{"-"}, stdin: "ncu.txtar:profile.csv"},
	"gpucalc trace":                {args: []string{"-", "--on", "h200"}, stdin: "trace.txtar:step.json"},
	"gpucalc check":                {args: []string{"-", "--devices", "h100,a100"}, stdin: "check.txtar:block.yaml"},
	"gpucalc model":                {args: []string{"llama-3.1-70b", "--tp", "4", "--batch", "32", "--ctx", "8192", "--devices", "h100,h200"}},
	"gpucalc model batch":          {args: []string{"--input", "-"}, stdin: "model.txtar:phi.csv"},
	"gpucalc train":                {args: []string{"llama-3.1-8b", "--batch", "8", "--seq", "1024", "--devices", "h100,h200"}},
	"gpucalc train batch":          {args: []string{"--input", "-"}, stdin: "train.txtar:setups.csv"},
	"gpucalc deploy":               {args: []string{"llama-3.1-8b", "--device", "h100", "--isl", "512", "--osl", "64"}},
	"gpucalc deploy batch":         {args: []string{"--input", "-"}, stdin: "deploy.txtar:in.csv"},
}

// modeInputs are the arguments of another mode of a command, which
// writes CSV sections that its outputInputs run does not (only): several
// ranks' traces for 'trace'. Its JSON and these sections are checked.
var modeInputs = map[string]struct {
	args           []string
	only, sections []string
}{
	"gpucalc trace": {args: []string{filepath.Join(repoRoot, "trace", "testdata", "ranks")},
		only: []string{"ranks", "collectives", "slowest"}, sections: []string{"ranks", "collectives", "slowest", "findings"}},
}

// dataKeyMaps are JSON objects whose keys are data, not field names: the
// figure a source is for ("dense.bf16_tensor").
var dataKeyMaps = map[string]bool{"sources": true}

// mixedColumns are CSV columns that hold numbers on some rows and text on
// others: devices show's figure values.
var mixedColumns = map[string]bool{"value": true}

// batches are the commands that echo their input's columns (whatever the
// user wrote, bad rows included) and print some columns to fixed decimals,
// as the files they extend do (roof_bench.csv's ai to three): a zero there
// prints as 0.000. Their CSV gets the header, width and glyph checks.
var batches = map[string]bool{"gpucalc occupancy batch": true, "gpucalc roofline batch": true, "gpucalc model batch": true, "gpucalc train batch": true, "gpucalc deploy batch": true}

var (
	keyRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	// roundedZero is a positive value printed with too few digits.
	roundedZero = regexp.MustCompile(`^-?0(\.0+)?(e[-+]?[0-9]+)?$`)
	// withUnit is a number followed by a unit, which belongs in the key.
	withUnit = regexp.MustCompile(`^[-+]?[0-9.]+(e[-+]?[0-9]+)? ?(%|[kMGTP]?i?B|[kMGTP]?B/s|[kMGTP]?FLOP/s|[munµ]?s|[kMG]?Hz|W)$`)
)

// readInput returns a member of a txtar archive in testdata/script.
func readInput(t *testing.T, spec string) []byte {
	t.Helper()
	file, member, _ := strings.Cut(spec, ":")
	a, err := txtar.ParseFile(filepath.Join("testdata", "script", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if f.Name == member {
			return f.Data
		}
	}
	t.Fatalf("%s: no member %s", file, member)
	return nil
}

// runInput runs gpucalc in-process with stdin.
func runInput(stdin []byte, args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	getenv := func(string) string { return "" }
	code := run(args, bytes.NewReader(stdin), &out, &errOut, getenv)
	return out.String(), errOut.String(), code
}

// sections returns the --section names a command completes, none when it
// has no --section.
func sections(path []string) []string {
	_, out, _ := runCLI(append(append([]string{"__complete"}, path...), "--section", "")...)
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
			names = append(names, l)
		}
	}
	return names
}

// TestMachineOutput runs every command of the tree with --format csv (each
// --section) and --format json, and checks the conventions of
// docs/output.md: snake_case keys, one plain value per cell, no glyphs, no
// units in numeric cells, no positive value printed as 0.
func TestMachineOutput(t *testing.T) {
	root := newCmdRoot(&factory{Getenv: func(string) string { return "" }})
	paths := leafCommands()
	if len(paths) < 12 {
		t.Fatalf("found %d commands; the walk is broken", len(paths))
	}
	for _, p := range paths {
		c, _, err := root.Find(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.Annotations[annotationNoResults]; ok {
			continue
		}
		path := strings.Fields(c.CommandPath())
		in := outputInputs[c.CommandPath()]
		var stdin []byte
		if in.stdin != "" {
			stdin = readInput(t, in.stdin)
		}
		args := append(append([]string{}, path[1:]...), in.args...)
		secs := []string{""}
		if c.Flags().Lookup("section") != nil {
			secs = sections(path[1:])
		}
		mode, hasMode := modeInputs[c.CommandPath()]
		secs = slices.DeleteFunc(secs, func(s string) bool { return slices.Contains(mode.only, s) })
		name := strings.Join(path[1:], "_")
		checkOutput(t, name, batches[c.CommandPath()], args, stdin, secs)
		if hasMode {
			checkOutput(t, name+"_mode", false, append(append([]string{}, path[1:]...), mode.args...), nil, mode.sections)
		}
	}
}

// checkOutput checks a run's JSON and its CSV sections. A batch may exit 1
// (its input has bad rows, to check the error column); it still writes
// them all.
func checkOutput(t *testing.T, name string, batch bool, args []string, stdin []byte, secs []string) {
	t.Run(name+"/json", func(t *testing.T) {
		out, errOut, code := runInput(stdin, append(args, "--format", "json")...)
		if code != 0 && !(batch && code == 1) {
			t.Fatalf("exit %d: %s(add the command's input to outputInputs)", code, errOut)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		for _, p := range jsonProblems("", v) {
			t.Error(p)
		}
		if !batch {
			for _, p := range nullProblems("", v) {
				t.Error(p)
			}
		}
	})
	for _, s := range secs {
		a := append(append([]string{}, args...), "--format", "csv")
		if s != "" {
			a = append(a, "--section", s)
		}
		t.Run(name+"/csv"+s, func(t *testing.T) {
			out, errOut, code := runInput(stdin, a...)
			if code != 0 && !(batch && code == 1) {
				t.Fatalf("exit %d: %s(add the command's input to outputInputs)", code, errOut)
			}
			for _, p := range csvProblems(out, batch) {
				t.Error(p)
			}
		})
	}
}

// jsonProblems checks every key at any depth, and that no string is a
// number with a unit.
func jsonProblems(at string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !keyRE.MatchString(k) && !dataKeyMaps[lastKey(at)] {
				out = append(out, fmt.Sprintf("key %s.%s is not snake_case", at, k))
			}
			out = append(out, jsonProblems(at+"."+k, x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, jsonProblems(at+"[]", x)...)
		}
	case string:
		if withUnit.MatchString(v) {
			out = append(out, fmt.Sprintf("%s: %q is a number with a unit; put the unit in the key", at, v))
		}
	}
	return out
}

// nullable are the keys whose value may be null: a per-limit block count
// of a limit that does not bind. A list is [] when empty, never null.
var nullable = regexp.MustCompile(`^blocks_by_[a-z]+$`)

// nullProblems finds null values outside nullable keys (a batch's rows,
// which echo empty input cells as null, are not checked).
func nullProblems(at string, v any) []string {
	var out []string
	switch v := v.(type) {
	case nil:
		if !nullable.MatchString(lastKey(at)) {
			out = append(out, fmt.Sprintf("%s is null; an empty list is [], a missing value is left out", at))
		}
	case map[string]any:
		for k, x := range v {
			out = append(out, nullProblems(at+"."+k, x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, nullProblems(at+"[]", x)...)
		}
	}
	return out
}

func lastKey(at string) string {
	at = strings.TrimRight(at, "[]")
	return at[strings.LastIndex(at, ".")+1:]
}

// csvProblems checks one CSV document: snake_case header, rows as wide as
// the header, no glyphs, no numbers with units, numeric columns all
// numbers, no positive value rounded to zero. A batch gets the header,
// width, glyph and unit checks.
func csvProblems(out string, batch bool) []string {
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = 0 // every row as wide as the header
	recs, err := r.ReadAll()
	if err != nil {
		return []string{fmt.Sprintf("not one CSV table: %v", err)}
	}
	if len(recs) < 2 {
		return []string{"no rows"}
	}
	var bad []string
	header := recs[0]
	for _, h := range header {
		if !keyRE.MatchString(h) {
			bad = append(bad, fmt.Sprintf("header %q is not snake_case", h))
		}
	}
	for c, h := range header {
		numeric := false
		for _, row := range recs[1:] {
			if _, err := strconv.ParseFloat(row[c], 64); err == nil {
				numeric = true
			}
		}
		for i, row := range recs[1:] {
			cell := row[c]
			for _, r := range cell {
				if r >= utf8.RuneSelf {
					bad = append(bad, fmt.Sprintf("row %d, %s: %q has the glyph %q", i+1, h, cell, r))
					break
				}
			}
			if withUnit.MatchString(cell) {
				bad = append(bad, fmt.Sprintf("row %d, %s: %q is a number with a unit", i+1, h, cell))
			}
			if cell == "" || batch {
				continue
			}
			if _, err := strconv.ParseFloat(cell, 64); err != nil && numeric && !mixedColumns[h] {
				bad = append(bad, fmt.Sprintf("row %d, %s: %q in a numeric column", i+1, h, cell))
			}
			if roundedZero.MatchString(cell) && cell != "0" {
				bad = append(bad, fmt.Sprintf("row %d, %s: %q: a value rounded to zero", i+1, h, cell))
			}
		}
	}
	return bad
}

// TestOutputChecks: the checks catch what issue 13 found in the output.
func TestOutputChecks(t *testing.T) {
	for _, tc := range []struct{ name, csv string }{
		{"range", "from,blocks_per_sm\n0 – 24,8\n"},
		{"glyph", "threads_per_block,current\n256,◀ 256\n"},
		{"unit in a cell", "name,bandwidth\nV100,900 GB/s\n"},
		{"title case", "Device,SMs\nV100,80\n"},
		{"ragged", "a,b\n1,2,3\n"},
		{"rounded to zero", "warps_per_sm,achieved_gflops\n4,0.00\n"},
		{"text in a numeric column", "sms,x\n132,1\n-,2\n"},
		{"two tables", "a,b\n1,2\n\nc\n3\n"},
	} {
		if len(csvProblems(tc.csv, false)) == 0 {
			t.Errorf("%s: %q passes", tc.name, tc.csv)
		}
	}
	if p := csvProblems("device,sms\nH100 SXM,132\n", false); len(p) > 0 {
		t.Errorf("a good table fails: %v", p)
	}
	var v any
	_ = json.Unmarshal([]byte(`{"device": {"Name": "x"}, "rows": [{"bw": "900 GB/s"}], "sources": {"dense.bf16": "y"}}`), &v)
	if p := jsonProblems("", v); len(p) != 2 {
		t.Errorf("JSON checks found %v, want the key Name and the unit", p)
	}
}

// TestNotesAreShort checks that no table of any command carries more than
// two lines of notes in Markdown: provenance belongs to --verbose and JSON.
func TestNotesAreShort(t *testing.T) {
	root := newCmdRoot(&factory{Getenv: func(string) string { return "" }})
	for _, path := range leafCommands() {
		name := "gpucalc " + strings.Join(path, " ")
		if c, _, err := root.Find(path); err == nil {
			if _, ok := c.Annotations[annotationNoResults]; ok {
				continue
			}
		}
		if batches[name] {
			continue // their table and Markdown views list rows, with no notes
		}
		in := outputInputs[name]
		var stdin []byte
		if in.stdin != "" {
			stdin = readInput(t, in.stdin)
		}
		t.Run(strings.Join(path, "_"), func(t *testing.T) {
			out, errOut, code := runInput(stdin, append(append(append([]string{}, path...), in.args...), "--format", "markdown")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			run := 0
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "- ") {
					run++
					if run == 3 {
						t.Errorf("more than two lines of notes, the third: %q", l)
					}
					continue
				}
				run = 0
			}
		})
	}
}

// TestJSONEmptyLists: runs that have nothing to list write [] (no notes
// when every input is given, no findings for one large GEMM, no kernel
// time left unattributed), and no null where a list belongs.
func TestJSONEmptyLists(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"occupancy", "--device", "a100", "--regs", "64", "--threads", "512", "--smem", "48K"}, "", `"notes": []`},
		{[]string{"check", "-"}, "name: one GEMM\nops:\n  - {name: mm, op: matmul m=8192 n=8192 k=8192 dtype=bf16}\n", `"findings": []`},
		{[]string{"trace", filepath.Join(repoRoot, "trace", "testdata", "trace_llama1b_infer.json.gz")}, "", `"unattributed": []`},
	} {
		out, errOut, code := runInput([]byte(tc.stdin), append(tc.args, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v: no %s in the JSON", tc.args, tc.want)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		for _, p := range nullProblems("", v) {
			t.Errorf("%v: %s", tc.args, p)
		}
	}
}
