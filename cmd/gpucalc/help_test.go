package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHelpWidth: every command's --help fits 100 columns (flag
// descriptions ran to 242), and the wrapping keeps every word.
func TestHelpWidth(t *testing.T) {
	paths := append([][]string{{}}, leafCommands()...)
	paths = append(paths, []string{"occupancy"}, []string{"devices"}, []string{"model"}, []string{"train"}, []string{"roofline"})
	for _, path := range paths {
		var out, errOut bytes.Buffer
		f := newFactory(strings.NewReader(""), &out, &errOut, func(string) string { return "" })
		if code := runFactory(f, append(append([]string{}, path...), "--help")); code != 0 {
			t.Fatalf("gpucalc %s --help: exit %d: %s", strings.Join(path, " "), code, errOut.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > helpWidth {
				t.Errorf("gpucalc %s --help: a line of %d columns:\n%s", strings.Join(path, " "), n, line)
			}
		}
	}
	in := "a bb,cc dd " + strings.Repeat("word ", 30) + "x,y,z\n  indented " + strings.Repeat("more ", 30)
	got := wrapHelp(in, 40)
	if strings.Join(strings.Fields(strings.ReplaceAll(got, ",", ", ")), " ") != strings.Join(strings.Fields(strings.ReplaceAll(in, ",", ", ")), " ") {
		t.Errorf("wrapping lost words:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if len(l) > 40 {
			t.Errorf("line of %d: %q", len(l), l)
		}
	}
}
