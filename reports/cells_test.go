package reports

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestNum: the number format of CSV keeps every positive value positive,
// to six significant digits, and integers exact.
func TestNum(t *testing.T) {
	for _, v := range []float64{1e-12, 3.3e-7, 0.000123456789, 0.5, 1, 138.8888, 3.35e12, 85899345920, 989.4e12, 1.5e19, 7.14667e13 + 0.5} {
		s := num(v)
		got, err := strconv.ParseFloat(s, 64)
		if err != nil || got <= 0 || math.Abs(got-v)/v > 5e-6 {
			t.Errorf("%g printed as %q", v, s)
		}
		if v == math.Trunc(v) && v < 1e18 && s != strconv.FormatInt(int64(v), 10) {
			t.Errorf("integer %g printed as %q", v, s)
		}
	}
}

// TestCSVASCII: prose in CSV cells loses its glyphs, nothing else changes.
func TestCSVASCII(t *testing.T) {
	var b strings.Builder
	tab := Table{Key: "findings", Header: []string{"message", "device"},
		Rows: [][]string{{"4.61 µs each, 2×; 0 – 24 ◀ §5.1", "H100 SXM"}}}
	if err := Render(&b, FormatCSV, 0, tab); err != nil {
		t.Fatal(err)
	}
	want := "message,device\n\"4.61 us each, 2x; 0 - 24 < section 5.1\",H100 SXM\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestSection picks a record set by key, the first for "".
func TestSection(t *testing.T) {
	sets := []Table{{Key: "summary"}, {Key: "limits"}}
	for name, want := range map[string]string{"": "summary", "limits": "limits", "waves": ""} {
		got, ok := Section(sets, name)
		if ok != (want != "") || got.Key != want {
			t.Errorf("Section(%q) = %q, %v; want %q", name, got.Key, ok, want)
		}
	}
}
