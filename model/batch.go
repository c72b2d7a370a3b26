package model

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/rows"
)

// BatchColumns is the header of a model batch file.
var BatchColumns = []string{"model", "device", "phase", "batch", "seq", "ctx", "tp"}

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

// ReadBatch reads CSV with BatchColumns as its header (in that order; extra
// columns are kept in Cells) through rows (bounded lines, binary data and
// broken quotes stop it with their line). A bad header is an error; a bad
// row is a row with Err set, so that one bad row never stops the batch; an
// input that breaks off returns the rows before the break and the error.
func ReadBatch(r io.Reader) ([]BatchRow, error) {
	cr := rows.NewCSV(rows.Limit(r, MaxBatchBytes))
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("empty input; expected the header %s", strings.Join(BatchColumns, ","))
	}
	if err != nil {
		return nil, err
	}
	if len(head) < len(BatchColumns) {
		return nil, fmt.Errorf("line 1: header %s; expected %s", rows.Quote(strings.Join(head, ",")), strings.Join(BatchColumns, ","))
	}
	for i, h := range BatchColumns {
		if strings.ToLower(strings.TrimSpace(head[i])) != h {
			return nil, fmt.Errorf("line 1: column %d is %s; expected the header %s", i+1, rows.Quote(head[i]), strings.Join(BatchColumns, ","))
		}
	}
	out, err := rows.Records(cr, MaxBatchRows, func(line int, cells []string, err error) (BatchRow, error) {
		r := BatchRow{Line: line, Cells: cells, Err: err}
		if err == nil {
			r.Err = r.parse()
		}
		return r, r.Err
	})
	var se *rows.SizeError
	if errors.As(err, &se) {
		err = fmt.Errorf("%w; split the file", err)
	}
	return out, err
}

func (r *BatchRow) parse() error {
	if len(r.Cells) < len(BatchColumns) {
		return fmt.Errorf("%d cells; expected %d (%s)", len(r.Cells), len(BatchColumns), strings.Join(BatchColumns, ","))
	}
	cell := func(i int) string { return strings.TrimSpace(r.Cells[i]) }
	r.Model, r.Device = cell(0), cell(1)
	if r.Model == "" {
		return fmt.Errorf("model: empty; give a built-in name or a path to a config.json")
	}
	r.Shape.Phase = Phase(strings.ToLower(cell(2)))
	if r.Shape.Phase != Prefill && r.Shape.Phase != Decode {
		return fmt.Errorf("phase: %q; expected prefill or decode", cell(2))
	}
	for i, dst := range []*int64{&r.Shape.Batch, &r.Shape.Seq, &r.Shape.Ctx, &r.Shape.TP} {
		s := cell(3 + i)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("%s: %s is not a whole number", BatchColumns[3+i], rows.Quote(s))
		}
		*dst = v
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
