package reports

import (
	"bytes"
	"encoding/csv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in   string
		w    int
		want []string
	}{
		{"aaa bbb ccc", 7, []string{"aaa bbb", "ccc"}},
		{"aaa bbb ccc", 100, []string{"aaa bbb ccc"}},
		// A word longer than the line breaks after punctuation in the
		// line's second half, else at the width.
		{"nvjet_sm90_tst_256x128_64x4", 12, []string{"nvjet_sm90_", "tst_256x128_", "64x4"}},
		{"abcdefghijklmnop", 6, []string{"abcdef", "ghijkl", "mnop"}},
		{"µs ≤ 3 µs", 4, []string{"µs ≤", "3 µs"}},
	} {
		if got := wrap(tc.in, tc.w); !slices.Equal(got, tc.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
	}
}

// fitTables are tables too wide for 80 columns, each meant for one way of
// fitting.
var fitTables = map[string]Table{
	"wrapped": {Title: "Kernels of a rather long title that must wrap somewhere before the edge of the screen",
		Header: []string{"#", "Kernel", "Time", "Rate"},
		Rows: [][]string{
			{"1", "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4>(Params)", "1.2 ms", "989.4 TFLOP/s"},
			{"2", "vectorized_elementwise_kernel", "3 µs", "1.5 TFLOP/s"},
		},
		Notes: []string{"A note long enough to need wrapping at eighty columns: it goes on and on about how the figures were measured."}},
	"optional": {Header: []string{"#", "Op", "Measured", "Lower bound", "Expected", "Efficiency", "Saved", "FLOP/s", "Bandwidth", "Bound"},
		Optional: []string{"FLOP/s", "Bandwidth", "Lower bound"},
		Rows:     repeatRows(6, []string{"1", "batch_norm", "996.5 µs", "245.4 µs", "394.3 µs", "40%", "602.2 µs", "1.444 TFLOP/s", "825 GB/s", "memory"})},
	"turned": {Header: []string{"Op", "FLOPs", "Bytes", "AI (FLOP/B)", "Ceiling", "Ridge", "Bound", "Attainable", "Lower bound", "Expected"},
		Rows: [][]string{
			{"matmul m=4096 n=4096 k=4096 dtype=bf16", "137.4 G", "100.7 MB", "1365.3", "bf16_tensor 989.4T, DRAM 3.35 TB/s", "295", "compute", "989.4 TFLOP/s", "138.9 µs", "199.1 µs"},
			{"rmsnorm rows=4096 cols=4096 dtype=bf16", "67.12 M", "67.12 MB", "1.000", "fp32 66.9T, DRAM 3.35 TB/s", "20", "memory", "3.35 TFLOP/s", "20.03 µs", "36.26 µs"},
		}},
	"footnoted": {Header: []string{"name", "params", "source"}, Footnoted: []string{"source"},
		Rows: [][]string{
			{"llama-3.1-8b", "8030261248", "huggingface.co/meta-llama/Llama-3.1-8B config.json, as vendored in github.com/ai-dynamo/aiconfigurator"},
			{"qwen3-8b", "8190735360", "huggingface.co/Qwen/Qwen3-8B config.json, as vendored in github.com/ai-dynamo/aiconfigurator"},
			{"tiny", "1", "local"},
		}},
}

func repeatRows(n int, row []string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = row
	}
	return out
}

func render(t *testing.T, width int, tab Table) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, FormatTable, width, tab); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Each table fits 80 and 100 columns the way it is meant to, every line
// within the width, with what it left out said and nothing else lost; with
// no width it is the full table.
func TestFit(t *testing.T) {
	for name, tab := range fitTables {
		full := render(t, 0, tab)
		if widest(full) <= 100 {
			t.Fatalf("%s: %d columns unfitted; the test needs a wider table", name, widest(full))
		}
		for _, w := range []int{100, 80} {
			got := render(t, w, tab)
			if n := widest(got); n > w {
				t.Errorf("%s at %d: a line of %d columns:\n%s", name, w, n, got)
			}
			flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "\n", " ").Replace(got)), " ")
			switch name {
			case "wrapped":
				for _, f := range []string{"989.4 TFLOP/s", "1.5 TFLOP/s", "1.2 ms"} {
					if !strings.Contains(got, f) {
						t.Errorf("%s at %d: the figure %q is broken:\n%s", name, w, f, got)
					}
				}
				if !strings.Contains(flat, "goes on and on about how") || strings.Contains(got, "Turned") || strings.Contains(got, "Left out") {
					t.Errorf("%s at %d: not simply wrapped:\n%s", name, w, got)
				}
			case "optional":
				if !strings.Contains(flat, "Left out to fit the terminal: FLOP/s") || strings.Contains(got, "825 GB/s") && w == 80 {
					t.Errorf("%s at %d: no column left out:\n%s", name, w, got)
				}
				if !strings.Contains(got, "602.2 µs") || !strings.Contains(got, "batch_norm") {
					t.Errorf("%s at %d: a column that is not optional went:\n%s", name, w, got)
				}
			case "turned":
				if !strings.Contains(flat, "Turned to fit the terminal") {
					t.Errorf("%s at %d: not turned:\n%s", name, w, got)
				}
				for _, h := range tab.Header {
					if !strings.Contains(got, "│ "+h+" ") {
						t.Errorf("%s at %d: no row for %q:\n%s", name, w, h, got)
					}
				}
			case "footnoted":
				if !strings.Contains(got, "│ [1]") || !strings.Contains(got, "[2] huggingface.co/Qwen/Qwen3-8B") || !strings.Contains(got, "│ local") {
					t.Errorf("%s at %d: the sources are not footnotes:\n%s", name, w, got)
				}
			}
		}
	}
}

// The table format escapes what a terminal would obey, whatever the
// width; the other formats escape for themselves.
func TestRenderEscapes(t *testing.T) {
	tab := Table{Title: "t\x1b]0;x\a", Header: []string{"name", "value"}, Rows: [][]string{{"=k\x1b[2J|<b>", "-1.5"}}, Notes: []string{"n\u009b"}}
	for _, tc := range []struct {
		f     Format
		width int
		want  []string
	}{
		{FormatTable, 0, []string{`t\x1b]0;x\a`, `=k\x1b[2J|<b>`, `n\u009b`}},
		{FormatTable, 40, []string{`t\x1b]0;x\a`, `n\u009b`}},
		{FormatMarkdown, 0, []string{`=k\x1b[2J\|&lt;b&gt;`, `- n\u009b`}},
		{FormatCSV, 0, []string{`'=k\x1b[2J|<b>,-1.5`}},
	} {
		var b bytes.Buffer
		if err := Render(&b, tc.f, tc.width, tab); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s (width %d): no %q in\n%s", tc.f, tc.width, w, b.String())
			}
		}
		if strings.ContainsAny(b.String(), "\x1b\a\u009b") {
			t.Errorf("%s: a control character is written raw:\n%q", tc.f, b.String())
		}
	}
}

func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// Any cell text: the table fits the width and writes nothing a terminal
// obeys; Markdown rows keep their cells; no CSV cell starts a formula.
func FuzzRender(f *testing.F) {
	f.Add("gemm\x1b]52;c;QQ==\x07", "=1+1|<b>", "989.4 TFLOP/s")
	f.Add("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4>(Params)", "-x", "1")
	f.Add("a\nb\r\nc", "\u202e\u009b", "\xff\xfe")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		tab := Table{Title: a, Header: []string{"name", "value", "figure"}, Rows: [][]string{{a, b, c}, {c, a, b}}, Notes: []string{b}}
		var out bytes.Buffer
		if err := Render(&out, FormatTable, 60, tab); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if n := twwidthOf(l); n > 60 {
				t.Fatalf("a line of %d columns:\n%s", n, out.String())
			}
		}
		for _, r := range out.String() {
			if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("%U written raw:\n%q", r, out.String())
			}
		}
		out.Reset()
		if err := Render(&out, FormatMarkdown, 0, tab); err != nil {
			t.Fatal(err)
		}
		pipes := regexp.MustCompile(`(^|[^\\])(\\\\)*\|`)
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "|") && len(pipes.FindAllString(l, -1)) != 4 {
				t.Fatalf("a Markdown row without 3 cells: %q", l)
			}
		}
		out.Reset()
		if err := Render(&out, FormatCSV, 0, tab); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			for _, cell := range rec {
				if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					if _, err := strconv.ParseFloat(cell, 64); err != nil {
						t.Fatalf("a CSV cell starts a formula: %q", cell)
					}
				}
			}
		}
	})
}

func twwidthOf(s string) int { return twwidth.Width(s) }
