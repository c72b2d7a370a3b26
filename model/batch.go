package model

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// ReadBatch reads CSV with BatchColumns as its header (in that order; extra
// columns are kept in Cells). A bad header is an error; a bad row is a row
// with Err set, so that one bad row never stops the batch.
func ReadBatch(r io.Reader) ([]BatchRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("empty input; expected the header %s", strings.Join(BatchColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("line 1: %w", err)
	}
	if len(head) < len(BatchColumns) {
		return nil, fmt.Errorf("line 1: header %q; expected %s", strings.Join(head, ","), strings.Join(BatchColumns, ","))
	}
	for i, h := range BatchColumns {
		if strings.ToLower(strings.TrimSpace(head[i])) != h {
			return nil, fmt.Errorf("line 1: column %d is %q; expected the header %s", i+1, head[i], strings.Join(BatchColumns, ","))
		}
	}
	var rows []BatchRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		row := BatchRow{Line: line, Cells: rec}
		var pe *csv.ParseError
		if errors.As(err, &pe) && pe.Err == csv.ErrFieldCount {
			err = nil
		}
		if err != nil {
			return rows, fmt.Errorf("line %d: %w", line, err)
		}
		row.Err = row.parse()
		rows = append(rows, row)
	}
	return rows, nil
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
			return fmt.Errorf("%s: %q is not a whole number", BatchColumns[3+i], s)
		}
		*dst = v
	}
	return r.Shape.Defaults().validateShape()
}
