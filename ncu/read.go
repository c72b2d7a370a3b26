// Package ncu reads Nsight Compute exports (`ncu --csv --page raw`) and turns
// each profiled kernel into the figures gpucalc reasons with: FLOPs by
// precision, bytes moved at each memory level, launch statistics and
// occupancy.
package ncu

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/rows"
)

// exportHint says which export gpucalc reads; every rejection ends with it.
const exportHint = "export the report with `ncu --csv --page raw ... > FILE.csv` (or `ncu --import REPORT.ncu-rep --csv --page raw > FILE.csv`)"

// Export is a parsed `ncu --csv --page raw` export: one row per profiled
// kernel launch, one column per metric.
type Export struct {
	// Columns are the header names in file order; Units the units row (empty
	// strings when the export has none).
	Columns []string
	Units   []string
	Rows    []Row

	// index maps a column name to its position; sectioned does the same
	// for metrics that appear under a section prefix only
	// ("SM_B.TriageCompute.l1tex__t_sectors.sum").
	index, sectioned map[string]int
	// tensor lists the tensor-core operation counters.
	tensor []tensorColumn
}

// Row is one profiled kernel launch.
type Row struct {
	// Line is the row's line in the input, for messages.
	Line   int
	Values []string
}

// maxRowBytes bounds the rows an export may hold in memory (all of them
// are kept): far above a real export of thousands of launches. The header
// must come within maxPreamble bytes (ncu's messages and the program's
// output before it).
const (
	maxRowBytes = 256 << 20
	maxPreamble = 64 << 20
)

// Read parses what `ncu --csv --page raw` prints, as a redirect captures it:
// lines before the header (==PROF== messages, the program's own output) are
// skipped, and so are ==PROF==/==WARNING== lines after it; the units row is
// kept. Anything else (the details page, a binary .ncu-rep, text output) is
// rejected with a message that says which export to make. Lines are read
// through rows: at most 1 MiB each, text only.
func Read(r io.Reader) (*Export, error) {
	lines := rows.NewLines(r)
	var header []string
	text, empty := false, true
	for header == nil {
		l, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, readError(err)
		}
		empty = empty && len(bytes.TrimSpace(l)) == 0
		if bytes.HasPrefix(l, []byte(`"ID",`)) {
			if header, err = csv.NewReader(bytes.NewReader(l)).Read(); err != nil {
				return nil, fmt.Errorf("line %d: the CSV header cannot be read: %s", lines.Line(), exportHint)
			}
			break
		}
		text = text || bytes.Contains(l, []byte("Section: "))
		if lines.Bytes() > maxPreamble {
			return nil, fmt.Errorf(`no Nsight Compute CSV header ("ID","Process ID",...) in the first %d MiB: %s`, maxPreamble>>20, exportHint)
		}
	}
	switch {
	case header == nil && empty:
		return nil, fmt.Errorf("empty input: %s", exportHint)
	case header == nil && text:
		return nil, fmt.Errorf("this is Nsight Compute's text report, not a CSV export: %s", exportHint)
	case header == nil:
		return nil, fmt.Errorf(`no Nsight Compute CSV header ("ID","Process ID",...) found: %s`, exportHint)
	}
	e := newExport(header)
	if err := e.checkPage(); err != nil {
		return nil, err
	}
	cr := rows.FromLines(lines, func(l []byte) []byte {
		if bytes.HasPrefix(l, []byte("==")) {
			return nil // ncu's own messages, interleaved
		}
		return l
	})
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var re *rows.RowError
			if errors.As(err, &re) || errors.Is(err, rows.ErrQuote) {
				return nil, fmt.Errorf("%w (is the file cut short or edited?)", err)
			}
			return nil, readError(err)
		}
		if len(rec) != len(header) {
			return nil, fmt.Errorf("line %d: %d fields, the header has %d (is the file cut short or edited?)", cr.Line(), len(rec), len(header))
		}
		if e.Units == nil && len(e.Rows) == 0 && rec[0] == "" {
			e.Units = slices.Clone(rec)
			continue
		}
		if lines.Bytes() > maxPreamble+maxRowBytes {
			return nil, fmt.Errorf("line %d: the export is larger than %d MiB; profile fewer launches (ncu --launch-count, --kernel-name)", cr.Line(), (maxPreamble+maxRowBytes)>>20)
		}
		e.Rows = append(e.Rows, Row{Line: cr.Line(), Values: slices.Clone(rec)})
	}
	if e.Units == nil {
		e.Units = make([]string, len(header))
	}
	if len(e.Rows) == 0 {
		return nil, errors.New("the export has a header but no kernels: did ncu profile any launch? (check its --kernel-name / --launch-count filters)")
	}
	return e, nil
}

// readError words an input that cannot be read as an export.
func readError(err error) error {
	if errors.Is(err, rows.ErrBinary) {
		return fmt.Errorf("binary input (an .ncu-rep report?): gpucalc reads CSV; %s", exportHint)
	}
	return fmt.Errorf("%w: %s", err, exportHint)
}

func newExport(header []string) *Export {
	e := &Export{Columns: header, index: make(map[string]int, len(header)), sectioned: map[string]int{}}
	for i, c := range header {
		if _, dup := e.index[c]; !dup {
			e.index[c] = i
		}
		if m := sectionMetric(c); m != "" {
			if _, dup := e.sectioned[m]; !dup {
				e.sectioned[m] = i
			}
		}
		if t, ok := tensorCounter(c); ok {
			t.index = i
			e.tensor = append(e.tensor, t)
		}
	}
	return e
}

// sectionMetric returns the metric of a section-prefixed column
// ("SM_B.TriageCompute.l1tex__t_sectors.sum" → "l1tex__t_sectors.sum"), or
// "".
func sectionMetric(c string) string {
	u := strings.Index(c, "__")
	if u < 0 {
		return ""
	}
	dot := strings.LastIndexByte(c[:u], '.')
	if dot < 0 {
		return ""
	}
	return c[dot+1:]
}

// checkPage tells the raw page from the other CSV pages ncu prints.
func (e *Export) checkPage() error {
	if e.has("Metric Name") && e.has("Metric Value") {
		return fmt.Errorf("this is the details page (one row per metric); gpucalc needs one row per kernel: %s", exportHint)
	}
	if !e.has("Kernel Name") {
		return fmt.Errorf("the CSV has no \"Kernel Name\" column: %s", exportHint)
	}
	for _, c := range e.Columns {
		if strings.Contains(c, "__") {
			return nil
		}
	}
	return fmt.Errorf("the CSV has no metric columns (names like dram__bytes_read.sum): %s", exportHint)
}

func (e *Export) has(col string) bool { _, ok := e.index[col]; return ok }

// column returns the index of a metric. A metric may also appear under a
// section prefix only; the plain name wins.
func (e *Export) column(metric string) (int, bool) {
	if i, ok := e.index[metric]; ok {
		return i, true
	}
	i, ok := e.sectioned[metric]
	return i, ok
}

// Text returns a column's raw text in row r ("" when absent).
func (e *Export) Text(r Row, col string) string {
	i, ok := e.column(col)
	if !ok || i >= len(r.Values) {
		return ""
	}
	return r.Values[i]
}

// Value returns a metric of row r in base units (bytes, seconds, cycles,
// percent as printed): thousands separators are dropped and prefixed units
// (Kbyte, usecond, Gbyte/second) scaled. ok is false when the export lacks
// the metric or has no value for it (empty, n/a, nan); an unreadable
// number is an error.
func (e *Export) Value(r Row, metric string) (v float64, ok bool, err error) {
	i, ok := e.column(metric)
	if !ok || i >= len(r.Values) {
		return 0, false, nil
	}
	v, ok, err = parseNumber(r.Values[i])
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("line %d: %s: %w", r.Line, metric, err)
		}
		return 0, false, err
	}
	return v * unitScale(e.Units[i]), true, nil
}

// parseNumber reads ncu's number format: "1,234,567.89", "0", "nan".
func parseNumber(s string) (float64, bool, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "", "n/a", "nan", "-nan", "inf", "-inf", "-":
		return 0, false, nil
	}
	t = strings.ReplaceAll(t, ",", "")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(t, "xX_pP") {
		return 0, false, fmt.Errorf("value %q is not a number", s)
	}
	return v, true, nil
}

// unitBases are the units ncu prints that may carry an SI prefix.
var unitBases = map[string]bool{
	"byte": true, "second": true, "cycle": true, "inst": true, "sector": true,
	"request": true, "warp": true, "thread": true, "block": true, "hz": true,
	"wavefront": true, "transaction": true,
}

var unitPrefixes = map[string]float64{
	"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
}

// unitScale is the factor that turns a value printed in unit u into base
// units: "Mbyte" 1e6, "usecond" 1e-6, "Gbyte/second" 1e9, "byte/usecond"
// 1e6, "%" 1.
func unitScale(u string) float64 {
	num, den, _ := strings.Cut(strings.TrimSpace(u), "/")
	s := prefixScale(num)
	if den != "" {
		s /= prefixScale(den)
	}
	return s
}

func prefixScale(u string) float64 {
	switch u { // short time units
	case "ns":
		return 1e-9
	case "us", "µs":
		return 1e-6
	case "ms":
		return 1e-3
	case "B", "s":
		return 1
	}
	switch strings.TrimSuffix(u, "iB") {
	case "K":
		return 1 << 10
	case "M":
		return 1 << 20
	case "G":
		return 1 << 30
	}
	for _, n := range []int{0, 1} {
		if len(u) > n && unitBases[strings.ToLower(u[n:])] {
			if m, ok := unitPrefixes[u[:n]]; ok {
				return m
			}
		}
	}
	if len(u) == 2 && u[1] == 'B' { // KB, MB, GB: decimal, as ncu prints them
		if m, ok := unitPrefixes[u[:1]]; ok {
			return m
		}
	}
	return 1
}
