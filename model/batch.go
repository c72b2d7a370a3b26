package model

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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
