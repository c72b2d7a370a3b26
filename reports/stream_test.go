package reports

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
)

// streamed is t with its rows given by a Stream, the first split of them
// kept in Rows. Every row is made in one array, as ncu's streams make
// them: a reader that keeps a row without cloning it draws it wrong.
func streamed(t Table, split int) Table {
	rows := t.Rows
	t.Rows = rows[:split]
	t.Stream = func(yield func([]string) bool) {
		var row []string
		for _, r := range rows[split:] {
			row = append(row[:0], r...)
			if !yield(row) {
				return
			}
			clear(row)
		}
	}
	return t
}

// TestLongTable: a table too long to fit (longRows) is drawn as it
// streams, byte for byte as tablewriter draws it at full width, in box
// characters and in Markdown; at a terminal's width it says it was not
// fitted.
func TestLongTable(t *testing.T) {
	tables := []Table{
		{Title: "Kernels on H100 SXM (from the export)", Header: []string{"ID", "Kernel", "Block", "Grid", "Duration", "FLOP/s", "Bound"},
			Rows: [][]string{
				{"1", "vectorized_elementwise_kernel<4, CUDAFunctor_add<…>, array<…>>(int, T2, T3) 1", "128", "2", "3.001 µs", "1.334 TFLOP/s", "dram 19.9%"},
				{"22", "gemm|pipe*bold* <b>x</b> \\ back", "128×2", "4×4×2", "-", "-", "bf16_tensor 80.1% (implausible)"},
				{"333", "  leading and trailing  ", "", "7", "≈1 ms", "<0.1%", "-"},
				{"4", "漢字 wide \x1b[31m red \u202e rtl", "1", "1", "12 s", "0", ""},
				{"5", "gemm|pipe*bold* <b>x</b> \\ back, a long name escaped once", "1", "1", "1 s", "0", ""},
				{"6", "gemm|pipe*bold* <b>x</b> \\ back, a long name escaped once", "2", "2", "2 s", "0", ""},
				{"7", "漢字 wide \x1b[31m red \u202e rtl: a long name measured once", "1", "1", "12 s", "0", ""},
				{"8", "漢字 wide \x1b[31m red \u202e rtl: a long name measured once", "1", "1", "12 s", "0", ""},
			},
			Notes: []string{"a note"}},
		{Title: "", Header: []string{" spaced ", "Empty", "Dash"}, Rows: [][]string{{"a", "", "-"}, {"b", "", "-"}}},
	}
	defer func(n int) { longRows = n }(longRows)
	for _, tb := range tables {
		for _, f := range []Format{FormatTable, FormatMarkdown} {
			var want bytes.Buffer
			if err := Render(&want, f, 0, tb); err != nil {
				t.Fatal(err)
			}
			for split := range len(tb.Rows) + 1 {
				longRows = 0
				var got bytes.Buffer
				if err := Render(&got, f, 0, streamed(tb, split)); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("%s, %d rows held: streamed\n%s\nwant\n%s", f, split, got.String(), want.String())
				}
				var held bytes.Buffer // long Rows are drawn as a long Stream is
				if err := Render(&held, f, 0, tb); err != nil || held.String() != want.String() {
					t.Errorf("%s, long rows: %v\n%s", f, err, held.String())
				}
				if c := streamed(tb, split).Collected(); !slices.EqualFunc(c.Rows, tb.Rows, slices.Equal) {
					t.Errorf("%d rows held: Collected %q, want %q", split, c.Rows, tb.Rows)
				}
				var csvWant, csvGot bytes.Buffer
				if err := Render(&csvWant, FormatCSV, 0, tb); err != nil {
					t.Fatal(err)
				}
				if err := Render(&csvGot, FormatCSV, 0, streamed(tb, split)); err != nil || csvGot.String() != csvWant.String() {
					t.Errorf("CSV, %d rows held: %v\n%s", split, err, csvGot.String())
				}
				longRows = 1000
				var short bytes.Buffer // a short Stream is drawn as Rows are
				if err := Render(&short, f, 0, streamed(tb, split)); err != nil || short.String() != want.String() {
					t.Errorf("%s, a short stream: %v\n%s", f, err, short.String())
				}
			}
		}
	}
	longRows = 0
	var narrow bytes.Buffer
	if err := Render(&narrow, FormatTable, 80, streamed(tables[0], 0)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(narrow.String(), "Not fitted to the terminal: more than 0 rows.") || !strings.Contains(narrow.String(), "  a note\n") {
		t.Errorf("at 80 columns:\n%s", narrow.String())
	}
}

// TestJSONList: a view with a list per input row (an export's kernels) is
// written entry by entry, byte for byte as encoding it whole; with no
// entries, "[]".
func TestJSONList(t *testing.T) {
	theirs := 62.5
	gemm := ncu.Kernel{ID: 0, Name: "nvjet<a & b>", FullName: "void nvjet<a & b>(\"q\")", Duration: 179.456e-6,
		Launch: &ncu.Launch{RegistersPerThread: 168, DynamicSmem: 213188}, Occupancy: ncu.NCUOccupancy{Theoretical: &theirs}, Implausible: []string{"x"},
		Work:    []ncu.Work{{DType: devices.BF16, Path: devices.Tensor, FLOPs: 137438953472}},
		Traffic: []ncu.Traffic{{Level: ncu.DRAM, Bytes: 178553088}}}
	add := ncu.Kernel{ID: 10, Name: "add", Duration: 259.328e-6}
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	// More than a run of entries: encoded on several goroutines, written in order.
	var many []ncu.Kernel
	for i := range 3*listRunLen + 5 {
		k := add
		if i%3 == 0 {
			k = gemm
		}
		k.ID = i
		many = append(many, k)
	}
	for _, ks := range [][]ncu.Kernel{nil, {}, {gemm}, {gemm, add, gemm}, many} {
		var as *ncu.Analyses
		if ks != nil {
			as = ncu.AnalyzeAll(ks, d)
		}
		v := NCUView{Device: "H100 SXM", DeviceOrigin: "from the export", Kernels: as}
		var want, got bytes.Buffer
		want.Write(mustJSON(t, v))
		if ks == nil { // encoded whole, a nil list is null; streamed, []
			want.Reset()
			want.Write(mustJSON(t, NCUView{Device: v.Device, DeviceOrigin: v.DeviceOrigin, Kernels: ncu.AnalyzeAll(nil, d)}))
		}
		if err := JSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d kernels: streamed\n%s\nwant\n%s", len(ks), got.String(), want.String())
		}
	}
}

// mustJSON is v encoded whole, as JSON encodes a view without a list.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestIndent: indent writes compact JSON as encoding/json indents it, with
// brackets, quotes and backslashes inside strings and empty lists.
func TestIndent(t *testing.T) {
	v := map[string]any{
		"a": []any{}, "b": map[string]any{}, "c": `q"{[,:]}\"`, "d": []any{1.5, "x\\", nil, true, map[string]any{"e": []int{1, 2}}},
		"f": "漢字 <b>\u2028", "g": [][]int{{}, {3}},
	}
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, compact.Bytes()[:compact.Len()-1], "    ", "  "); err != nil {
		t.Fatal(err)
	}
	if got := indent([]byte("x"), compact.Bytes()[:compact.Len()-1], "    "); string(got) != "x"+want.String() {
		t.Errorf("indent:\n%s\nwant\nx%s", got, want.String())
	}
}
