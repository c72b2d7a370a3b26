package model

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/rows"
)

// BatchColumns is the header of a model batch file; BatchLayout its
// optional expert-parallel columns (--ep, --moe-tp), after tp in that
// order.
var (
	BatchColumns = []string{"model", "device", "phase", "batch", "seq", "ctx", "tp"}
	BatchLayout  = []string{"ep", "moe_tp"}
)

// Batch is a batch file read: its header (BatchColumns and those of
// BatchLayout it has) and rows.
type Batch struct {
	Header []string
	Rows   []BatchRow
}

// BatchRow is one line of a batch file: the cells as given, the shape they
// describe, and why the row cannot be evaluated (Err) if it cannot.
type BatchRow struct {
	Line   int
	Cells  []string
	Model  string
	Device string
	Shape  Shape
	Err    error
}

// MaxBatchRows is the most rows ReadBatch reads, and MaxBatchBytes the
// most bytes: it keeps them all, and each row prices a model on a device.
const (
	MaxBatchRows  = 50000
	MaxBatchBytes = 64 << 20
)

// ReadBatch reads CSV with BatchColumns as its header, in that order, then
// any of BatchLayout, through rows (bounded lines, binary data and broken quotes stop it with
// their line). A row is read as the flags are: a header with another,
// missing or repeated column is an error; a row with more or fewer cells
// than the header, or a cell out of its flag's range (batch 0, tp 0), is a
// row with Err set naming the column; an empty cell is the default. One
// bad row never stops the batch; an input that breaks off returns the rows
// before the break and the error.
func ReadBatch(r io.Reader) (Batch, error) {
	cr := rows.NewCSV(rows.Limit(r, MaxBatchBytes))
	head, err := cr.Read()
	if err == io.EOF {
		return Batch{}, fmt.Errorf("empty input; expected the header %s", strings.Join(BatchColumns, ","))
	}
	if err != nil {
		return Batch{}, err
	}
	cols, err := rows.ReadColumns(head, BatchColumns, BatchLayout)
	if err != nil {
		return Batch{}, err
	}
	// The output echoes the cells under the header: they come in its order.
	header := slices.Clone(BatchColumns)
	for _, h := range BatchLayout {
		if _, ok := cols.Index(h); ok {
			header = append(header, h)
		}
	}
	for i, h := range header {
		if j, _ := cols.Index(h); j != i {
			return Batch{}, fmt.Errorf("line 1: column %d is %s; expected the header %s (then %s, if given), in that order", i+1, rows.Quote(head[i]), strings.Join(BatchColumns, ","), strings.Join(BatchLayout, ","))
		}
	}
	cr.Fields = len(head)
	out, err := rows.Records(cr, MaxBatchRows, func(line int, cells []string, err error) (BatchRow, error) {
		r := BatchRow{Line: line, Cells: cells, Err: err}
		if err == nil {
			r.Err = r.parse(cols)
		}
		return r, r.Err
	})
	var se *rows.SizeError
	if errors.As(err, &se) {
		err = fmt.Errorf("%w; split the file", err)
	}
	return Batch{Header: header, Rows: out}, err
}

// The ranges of a batch row's sizes (validateShape's).
const (
	maxBatch  = 1 << 20
	maxTokens = 1 << 24
	maxTP     = 64
	maxEP     = 1024
)

func (r *BatchRow) parse(cols rows.Columns) error {
	r.Model, r.Device = cols.Cell(r.Cells, "model"), cols.Cell(r.Cells, "device")
	if r.Model == "" {
		return cols.Bad(r.Cells, "model", "empty; give a built-in name or a path to a config.json")
	}
	r.Shape.Phase = Phase(strings.ToLower(cols.Cell(r.Cells, "phase")))
	if r.Shape.Phase != Prefill && r.Shape.Phase != Decode {
		return cols.Bad(r.Cells, "phase", "expected prefill or decode")
	}
	for _, x := range []struct {
		name   string
		lo, hi int64
		dst    *int64
	}{{"batch", 1, maxBatch, &r.Shape.Batch}, {"seq", 1, maxTokens, &r.Shape.Seq}, {"ctx", 0, maxTokens, &r.Shape.Ctx}, {"tp", 1, maxTP, &r.Shape.TP},
		{"ep", 1, maxEP, &r.Shape.EP}, {"moe_tp", 1, maxEP, &r.Shape.MoETP}} {
		v, _, err := cols.Int(r.Cells, x.name, x.lo, x.hi)
		if err != nil {
			return err
		}
		*x.dst = v
	}
	return r.Shape.Defaults().validateShape()
}

// BatchResult is one answered row of a batch: its input cells, the step's
// totals (no per-op detail), the smallest tensor-parallel degree that
// fits, or the row's error (prefixed with its line).
type BatchResult struct {
	Cells      []string
	Result     Result
	SmallestTP int64
	Err        error
}

// RunBatch answers every row in order, loading each model (load) and each
// device's roofline model (device) once; a row that fails gets its error
// and the batch goes on.
func RunBatch(in []BatchRow, load func(string) (Config, error), device func(string) (*roofline.Model, error)) []BatchResult {
	type loaded struct {
		c   Config
		err error
	}
	models := map[string]loaded{}
	type dev struct {
		m   *roofline.Model
		err error
	}
	devs := map[string]dev{}
	out := make([]BatchResult, len(in))
	for i, r := range in {
		o := &out[i]
		o.Cells = r.Cells
		if o.Err = r.Err; o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
			continue
		}
		l, ok := models[r.Model]
		if !ok {
			l.c, l.err = load(r.Model)
			models[r.Model] = l
		}
		d, ok := devs[r.Device]
		if !ok {
			d.m, d.err = device(r.Device)
			devs[r.Device] = d
		}
		switch {
		case l.err != nil:
			o.Err = l.err
		case d.err != nil:
			o.Err = d.err
		default:
			o.Result, o.Err = l.c.Analyze(r.Shape, d.m)
			// The batch reports totals; drop the per-op detail.
			o.Result.Ops, o.Result.Points = nil, nil
			if o.Err == nil {
				o.SmallestTP = l.c.SmallestTP(o.Result.Shape, d.m.Device())
			}
		}
		if o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
		}
	}
	return out
}
