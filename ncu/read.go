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

// export is the state of reading an `ncu --csv --page raw` export: its
// header, units and column lookups, and the names seen.
type export struct {
	// Columns are the header names in file order; Units the units row (empty
	// strings when the export has none).
	Columns []string
	Units   []string

	// index maps a column name to its position; sectioned does the same
	// for metrics that appear under a section prefix only
	// ("SM_B.TriageCompute.l1tex__t_sectors.sum"). columns holds what
	// column found for each name asked for (-1: absent), so that each row
	// looks a metric up once.
	index, sectioned, columns map[string]int
	// asked is the metrics a row asked column for, in order, with what
	// it found; next is how many of them this row has asked. Every row
	// asks for its metrics in much the same order, so column answers
	// most from asked, where the same constant name compares at once,
	// and hashes a name only where the order differs.
	asked []columnOf
	next  int
	// tensor lists the tensor-core operation counters.
	tensor []tensorColumn
	// scale is each column's unitScale, set with the units.
	scale []float64
	// missing is a buffer for a row's missing metrics, lastMissing the
	// list the previous row kept.
	missing, lastMissing []string
}

// Row is one profiled kernel launch as read: valid until the next row.
type Row struct {
	// Line is the row's line in the input, for messages.
	Line   int
	Values []string
}

// Limits on an export. Each row becomes a Kernel as it is read (about 600
// bytes; the row's text is not kept), so memory follows the kernels, not
// the file.
const (
	// MaxBytes is the largest export read, decompressed; the header must
	// come within maxPreamble bytes (ncu's messages and the program's
	// output before it).
	MaxBytes    = 8 << 30
	maxPreamble = 64 << 20
	// MaxKernels is the most rows (profiled launches) read.
	MaxKernels = 1_000_000
)

// fewerLaunches says how to make a smaller export.
const fewerLaunches = "profile fewer launches (ncu --launch-count N, --kernel-name NAME)"

// Read parses what `ncu --csv --page raw` prints, as a redirect captures it
// (gzipped or not), into one Kernel per profiled launch, in file order:
// lines before the header (==PROF== messages, the program's own output)
// are skipped, and so are ==PROF==/==WARNING== lines after it; the units
// row is kept. Anything else (the details page, a binary .ncu-rep, text
// output) is rejected with a message that says which export to make. Lines
// are read through rows: at most 1 MiB each, text only; the export at most
// MaxBytes and MaxKernels rows, a name at most rows.MaxName.
func Read(r io.Reader) ([]Kernel, error) { return ReadAtMost(r, MaxKernels) }

// TooManyError is an export with more than Max kernels, stopped at Line.
type TooManyError struct{ Line, Max int }

func (e *TooManyError) Error() string {
	return fmt.Sprintf("line %d: more than %d kernels (the most gpucalc reads); %s", e.Line, e.Max, fewerLaunches)
}

// ReadAtMost is Read with a smaller limit on the kernels: past maxKernels it
// stops, as the rows stream, with a *TooManyError.
func ReadAtMost(r io.Reader, maxKernels int) ([]Kernel, error) {
	l, err := ReadLaunches(r, maxKernels)
	if err != nil {
		return nil, err
	}
	return l.Kernels(), nil
}

// ReadLaunches is ReadAtMost, the kernels kept as Launches.
func ReadLaunches(r io.Reader, maxKernels int) (*Launches, error) {
	in, _, err := rows.Decompress(r)
	if err != nil {
		return nil, err
	}
	lines := rows.NewLines(rows.Limit(in, MaxBytes))
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
	cr := rows.NewAhead(rows.FromLines(lines, func(l []byte) []byte {
		if bytes.HasPrefix(l, []byte("==")) {
			return nil // ncu's own messages, interleaved
		}
		return l
	}))
	defer cr.Stop()
	l := newLaunches()
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
		if e.Units == nil && l.Len() == 0 && rec[0] == "" {
			e.setUnits(slices.Clone(rec))
			continue
		}
		if e.Units == nil {
			e.setUnits(make([]string, len(header)))
		}
		if l.Len() == maxKernels {
			return nil, &TooManyError{Line: cr.Line(), Max: maxKernels}
		}
		k, err := e.kernel(Row{Line: cr.Line(), Values: rec})
		if err != nil {
			return nil, err
		}
		k.Name = l.shortName(k.FullName)
		l.add(&k)
	}
	if l.Len() == 0 {
		return nil, errors.New("the export has a header but no kernels: did ncu profile any launch? (check its --kernel-name / --launch-count filters)")
	}
	return l, nil
}

// setUnits keeps the units row and each column's scale.
func (e *export) setUnits(units []string) {
	e.Units = units
	e.scale = make([]float64, len(units))
	for i, u := range units {
		e.scale[i] = unitScale(u)
	}
}

// readError words an input that cannot be read as an export.
func readError(err error) error {
	var se *rows.SizeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("the export is %w decompressed (the most gpucalc reads); %s", se, fewerLaunches)
	case errors.Is(err, rows.ErrBomb):
		return err
	}
	if errors.Is(err, rows.ErrBinary) {
		return fmt.Errorf("binary input (an .ncu-rep report?): gpucalc reads CSV; %s", exportHint)
	}
	return fmt.Errorf("%w: %s", err, exportHint)
}

func newExport(header []string) *export {
	e := &export{Columns: header, index: make(map[string]int, len(header)), sectioned: map[string]int{}, columns: map[string]int{}}
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
func (e *export) checkPage() error {
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

func (e *export) has(col string) bool { _, ok := e.index[col]; return ok }

// column returns the index of a metric. A metric may also appear under a
// section prefix only; the plain name wins.
func (e *export) column(metric string) (int, bool) {
	if e.next < len(e.asked) && e.asked[e.next].metric == metric {
		e.next++
		i := e.asked[e.next-1].index
		return i, i >= 0
	}
	i, ok := e.lookup(metric)
	switch {
	case e.next < len(e.asked):
		e.asked[e.next] = columnOf{metric, i}
		e.next++
	case e.next < maxAsked:
		e.asked = append(e.asked, columnOf{metric, i})
		e.next++
	}
	return i, ok
}

// columnOf is a metric column asked for and its index (-1: absent).
type columnOf struct {
	metric string
	index  int
}

// maxAsked bounds the metrics a row's order is kept of.
const maxAsked = 256

// lookup is column's answer from the header.
func (e *export) lookup(metric string) (int, bool) {
	if i, ok := e.columns[metric]; ok {
		return i, i >= 0
	}
	i, ok := e.index[metric]
	if !ok {
		i, ok = e.sectioned[metric]
	}
	if !ok {
		i = -1
	}
	e.columns[metric] = i
	return i, ok
}

// Text returns a column's raw text in row r ("" when absent).
func (e *export) Text(r Row, col string) string {
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
func (e *export) Value(r Row, metric string) (v float64, ok bool, err error) {
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
	return v * e.scale[i], true, nil
}

// parseNumber reads ncu's number format: "1,234,567.89", "0", "nan". A
// comma that is not a thousands separator ("1,5", "0,25", "1.234,5") is
// refused: it is a decimal comma, which read as a separator would make
// 1.5 into 15.
func parseNumber(s string) (float64, bool, error) {
	if v, ok := wholeNumber(s); ok {
		return v, true, nil
	}
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "", "n/a", "nan", "-nan", "inf", "-inf", "-":
		return 0, false, nil
	}
	commas := false
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == ',':
			commas = true
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		default: // hex, underscores, words: not ncu's numbers
			return 0, false, fmt.Errorf("value %s is not a number", rows.Quote(s))
		}
	}
	if commas {
		if !thousands(t) {
			return 0, false, fmt.Errorf("value %s has a decimal comma (or commas that are not thousands separators): export in a locale that writes 1.5 (run ncu with LC_ALL=C)", rows.Quote(s))
		}
		t = strings.ReplaceAll(t, ",", "")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, fmt.Errorf("value %s is not a number", rows.Quote(s))
	}
	return v, true, nil
}

// wholeNumber reads the most common of ncu's numbers quickly: a whole
// number of at most 15 digits, its thousands separated by commas
// ("233,472"), which a float64 holds exactly. ok is false for anything
// else, which parseNumber reads in full.
func wholeNumber(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 19 || s[0] == ',' {
		return 0, false
	}
	var n int64
	group, digits := 0, 0 // digits since the last comma (or the start), and in all
	comma := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9' && digits < 15:
			n = n*10 + int64(c-'0')
			group++
			digits++
		case c == ',' && group <= 3 && (!comma || group == 3):
			if !comma && group == 0 {
				return 0, false
			}
			comma, group = true, 0
		default:
			return 0, false
		}
	}
	if comma && group != 3 {
		return 0, false
	}
	return float64(n), true
}

// thousands reports whether the commas of t separate groups of three
// digits before any decimal point: "-1,234,567.5".
func thousands(t string) bool {
	group := 0    // digits since the last comma
	first := true // no comma yet
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			group++
		case c == ',':
			if group == 0 || group > 3 || !first && group != 3 {
				return false
			}
			group, first = 0, false
		case c == '.' || c == 'e' || c == 'E':
			return !first && group == 3 && !strings.Contains(t[i:], ",")
		case i > 0: // a sign inside the number
			return false
		}
	}
	return !first && group == 3
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
