package reports

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from what the renderers write")

// rendered is one result as every format writes it: its tables (table and
// Markdown), its CSV record sets and its JSON view; any may be empty.
type rendered struct {
	tables  []Table
	records []Table
	view    any
}

// golden renders r in every format, compares the text with
// testdata/golden/NAME.txt (rewritten with -update), and returns it for the
// test's own assertions of the numbers that matter. A golden file holds
// the layout; the assertions hold the figures, so that an -update cannot
// quietly accept a wrong number.
func golden(t *testing.T, name string, r rendered) string {
	t.Helper()
	var b strings.Builder
	write := func(header string, f func() error) {
		b.WriteString("== " + header + "\n")
		if err := f(); err != nil {
			t.Fatalf("%s: %s: %v", name, header, err)
		}
		b.WriteString("\n")
	}
	if len(r.tables) > 0 {
		write("table, 100 columns", func() error { return Render(&b, FormatTable, 100, r.tables...) })
		write("table, no limit", func() error { return Render(&b, FormatTable, 0, r.tables...) })
		write("markdown", func() error { return Render(&b, FormatMarkdown, 0, r.tables...) })
	}
	for _, rec := range r.records {
		write("csv "+rec.Key, func() error { return Render(&b, FormatCSV, 0, rec) })
	}
	if r.view != nil {
		write("json", func() error { return JSON(&b, r.view) })
	}
	got := b.String()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./reports -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test ./reports -run %s -update rewrites it after a deliberate change):\n%s", name, path, t.Name(), firstDiff(string(want), got))
	}
	return got
}

// firstDiff shows the first line where got and want differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + itoa(i+1) + ":\nwant: " + wl + "\ngot:  " + gl
		}
	}
	return ""
}

func itoa(n int) string { return integer(n) }

// contains fails the test for each of wants that out lacks.
func contains(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

// device looks a catalog device up.
func device(t *testing.T, name string) devices.Device {
	t.Helper()
	d, err := devices.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
