package ops

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
)

// BatchRow is one row of a batch CSV: the row as read and the op it names.
type BatchRow struct {
	Line   int      // line number in the input
	Fields []string // the input cells, in input order
	Op     Op
	// Measured is the measured time in seconds from an ms or measured_us
	// column; zero when the input has none.
	Measured float64
	// Err says what is wrong with the row; Op and Measured are then unset.
	Err error
}

// Batch is a parsed batch CSV.
type Batch struct {
	Header []string
	Rows   []BatchRow
}

// Failed is the number of rows with an error.
func (b Batch) Failed() int {
	n := 0
	for _, r := range b.Rows {
		if r.Err != nil {
			n++
		}
	}
	return n
}

// BatchColumns are the required input columns in roof_bench's form; a
// SpecColumn holding any op spec may stand in for all four. ms or
// measured_us may be added to carry a measured time.
var BatchColumns = []string{"op", "dtype", "shape", "note"}

// SpecColumn is the column that holds a whole op spec (see SpecHelp):
// "attention b=8 h=32 kv=8 sq=1 sk=4096 d=128 kv_dtype=fp8".
const SpecColumn = "spec"

// MaxBatchRows is the most rows ReadBatch reads, and MaxBatchBytes the
// most bytes: it keeps them all, and their analyses, in memory (roof_bench
// has a few hundred rows; a calibration table a few hundred thousand).
const (
	MaxBatchRows  = 500000
	MaxBatchBytes = 64 << 20
)

// ReadBatch reads CSV with header op,dtype,shape,note in roof_bench's
// conventions (see SpecHelp's shape=), in any order: note carries the
// variant (erf or tanh, causal or full, "stride1 same", "e4m3 in, bf16
// out"); or with a spec column holding any op spec instead of those four.
// An optional ms or measured_us column gives a measured time. Any
// other column, a column twice, or one of reserved (the columns the caller
// will add) is an error, and a row with more or fewer cells than the
// header is a bad row: a row is read as the flags are.
//
// Every data row read gives one BatchRow, in order; a bad row carries its
// error in Err. An error is returned for a bad header, or with the rows read
// so far when the rest of the input cannot be read (rows.Error).
func ReadBatch(r io.Reader, reserved []string) (Batch, error) {
	cr := rows.NewCSV(rows.Limit(r, MaxBatchBytes))
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Batch{}, fmt.Errorf("batch input is empty; expected a CSV header %s", strings.Join(BatchColumns, ","))
		}
		return Batch{}, fmt.Errorf("batch input: %w", err)
	}
	for i, h := range header {
		if h = strings.ToLower(strings.TrimSpace(h)); slices.Contains(reserved, h) {
			return Batch{}, fmt.Errorf("batch input: line 1, column %d: %q is a column gpucalc writes; drop it from the input", i+1, h)
		}
	}
	required := BatchColumns
	if slices.ContainsFunc(header, func(h string) bool { return strings.EqualFold(strings.TrimSpace(h), SpecColumn) }) {
		required = []string{SpecColumn}
	}
	cols, err := rows.ReadColumns(header, required, []string{"ms", "measured_us"})
	if err != nil && required[0] != SpecColumn {
		return Batch{}, fmt.Errorf("batch input: %w; or a spec column (any op spec) instead of the four", err)
	}
	if err != nil {
		return Batch{}, fmt.Errorf("batch input: %w", err)
	}
	header = cols.Header
	_, hasMS := cols.Index("ms")
	if _, hasUS := cols.Index("measured_us"); hasMS && hasUS {
		return Batch{}, fmt.Errorf("batch input: give ms or measured_us, not both")
	}
	b := Batch{Header: header}
	// Rows gather in blocks, joined once: a slice of ops grown a row at a
	// time copied most of a 100,000-row batch's time.
	var kept rows.Blocks[BatchRow]
	done := func(err error) (Batch, error) {
		b.Rows = kept.All()
		return b, err
	}
	cr.Fields = len(header)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if kept.Len() == MaxBatchRows && err == nil {
			return done(fmt.Errorf("batch input: more than %d rows; split the file", MaxBatchRows))
		}
		var re *rows.RowError
		if errors.As(err, &re) {
			kept.Add(BatchRow{Line: re.Line, Fields: slices.Clone(rec), Err: re})
			continue
		}
		var se *rows.SizeError
		if errors.As(err, &se) {
			return done(fmt.Errorf("batch input: %w; split the file", err))
		}
		if err != nil {
			return done(fmt.Errorf("batch input: %w", err))
		}
		row := BatchRow{Line: cr.Line(), Fields: slices.Clone(rec)}
		row.Op, row.Measured, err = batchRow(rec, cols)
		if err != nil {
			row.Err = fmt.Errorf("line %d: %w", row.Line, err)
			cr.Bad()
		}
		kept.Add(row)
	}
	if kept.Len() == 0 {
		return Batch{}, fmt.Errorf("batch input has a header but no rows")
	}
	return done(nil)
}

// batchRow reads one row's op (from its spec, or roof_bench's four
// columns) and measured time.
func batchRow(rec []string, cols rows.Columns) (Op, float64, error) {
	cell := func(name string) string { i, _ := cols.Index(name); return rec[i] }
	var o Op
	var err error
	if _, ok := cols.Index(SpecColumn); ok {
		o, err = Parse(cell(SpecColumn))
	} else {
		o, err = ParseBench(cell("op"), cell("dtype"), cell("shape"), cell("note"))
	}
	if err != nil {
		return Op{}, 0, err
	}
	measured := 0.0
	for _, c := range []struct {
		name  string
		scale float64
	}{{"ms", 1e-3}, {"measured_us", 1e-6}} {
		s := cols.Cell(rec, c.name)
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0 && v <= 1e12) {
			return Op{}, 0, cols.Bad(rec, c.name, "not a time; expected a positive number up to 1e12")
		}
		measured = v * c.scale
	}
	return o, measured, nil
}

// ParseBench builds an op from roof_bench's four columns. The note's words
// that name a variant are applied (erf, tanh, causal, full, flash, naive,
// same, valid, strideN, "<dtype> out"); other words are free text.
//
// Each of op, dtype and shape holds one thing: "64x64x64 m=4096" in the
// shape cell or "bf16 batch=1000" in the dtype cell is an error.
func ParseBench(op, dtype, shape, note string) (Op, error) {
	for _, c := range []struct{ name, v, want string }{
		{"op", op, "an op name such as matmul"},
		{"dtype", dtype, "a data type such as bf16"},
		{"shape", shape, "a shape such as 4096x4096x4096"},
	} {
		if strings.ContainsAny(strings.TrimSpace(c.v), " \t=") {
			return Op{}, fmt.Errorf("%s cell %s holds more than %s", c.name, rows.Quote(c.v), c.want)
		}
	}
	spec := strings.TrimSpace(op) + " shape=" + strings.TrimSpace(shape)
	if strings.TrimSpace(dtype) != "" {
		spec += " dtype=" + strings.TrimSpace(dtype)
	}
	words := strings.FieldsFunc(strings.ToLower(note), func(r rune) bool { return r == ' ' || r == ',' || r == ';' })
	kind := kindAliases[strings.ToLower(strings.TrimSpace(op))]
	for i, w := range words {
		switch {
		case kind == GELU && (w == "erf" || w == "tanh"),
			kind == Attention && (w == "causal" || w == "full" || w == "flash" || w == "naive"):
			spec += " " + w
		case kind == Conv2D && (w == "same" || w == "valid"):
			spec += " pad=" + w
		case kind == Conv2D && strings.HasPrefix(w, "stride") && len(w) > len("stride"):
			spec += " stride=" + strings.TrimPrefix(w, "stride")
		case w == "out" && i > 0 && (kind == Matmul || kind == Linear || kind == Conv2D):
			if _, err := devices.ParseDType(words[i-1]); err == nil {
				spec += " out_dtype=" + words[i-1]
			}
		}
	}
	return Parse(spec)
}
