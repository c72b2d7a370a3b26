package ops

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
)

// BatchRow is one row of a batch CSV: the row as read and the op it names.
type BatchRow struct {
	Line   int      // line number in the input
	Fields []string // the input cells, in input order
	Op     Op
	// Measured is the measured time in seconds from an ms or measured_us
	// column; zero when the input has none.
	Measured float64
}

// Batch is a parsed batch CSV.
type Batch struct {
	Header []string
	Rows   []BatchRow
}

// BatchColumns are the required input columns; ms or measured_us may be
// added to carry a measured time.
var BatchColumns = []string{"op", "dtype", "shape", "note"}

// ReadBatch reads CSV with header op,dtype,shape,note in roof_bench's
// conventions (see SpecHelp's shape=): note carries the variant (erf or
// tanh, causal or full, "stride1 same", "e4m3 in, bf16 out"). An optional ms
// or measured_us column gives a measured time; other columns are kept and
// echoed, except names in reserved (the columns the caller will add).
func ReadBatch(r io.Reader, reserved []string) (Batch, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Batch{}, fmt.Errorf("batch input is empty; expected a CSV header %s", strings.Join(BatchColumns, ","))
		}
		return Batch{}, fmt.Errorf("batch input: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := col[h]; dup {
			return Batch{}, fmt.Errorf("batch input: column %q given twice", h)
		}
		if slices.Contains(reserved, h) {
			return Batch{}, fmt.Errorf("batch input: column %q is one gpucalc writes; drop it from the input", h)
		}
		col[h] = i
	}
	for _, c := range BatchColumns {
		if _, ok := col[c]; !ok {
			return Batch{}, fmt.Errorf("batch input: missing column %q; the header must hold %s (and optionally ms or measured_us)", c, strings.Join(BatchColumns, ","))
		}
	}
	msCol, usCol := -1, -1
	if i, ok := col["ms"]; ok {
		msCol = i
	}
	if i, ok := col["measured_us"]; ok {
		usCol = i
	}
	if msCol >= 0 && usCol >= 0 {
		return Batch{}, fmt.Errorf("batch input: give ms or measured_us, not both")
	}
	b := Batch{Header: header}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Batch{}, fmt.Errorf("batch input: %w", err)
		}
		line, _ := cr.FieldPos(0)
		row := BatchRow{Line: line, Fields: rec}
		row.Op, err = ParseBench(rec[col["op"]], rec[col["dtype"]], rec[col["shape"]], rec[col["note"]])
		if err != nil {
			return Batch{}, fmt.Errorf("batch input line %d: %w", line, err)
		}
		for _, c := range []struct {
			i     int
			scale float64
			name  string
		}{{msCol, 1e-3, "ms"}, {usCol, 1e-6, "measured_us"}} {
			if c.i < 0 || strings.TrimSpace(rec[c.i]) == "" {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[c.i]), 64)
			if err != nil || v <= 0 || v > 1e12 {
				return Batch{}, fmt.Errorf("batch input line %d: %s=%q is not a positive time", line, c.name, rec[c.i])
			}
			row.Measured = v * c.scale
		}
		b.Rows = append(b.Rows, row)
	}
	if len(b.Rows) == 0 {
		return Batch{}, fmt.Errorf("batch input has a header but no rows")
	}
	return b, nil
}

// ParseBench builds an op from roof_bench's four columns. The note's words
// that name a variant are applied (erf, tanh, causal, full, flash, naive,
// same, valid, strideN, "<dtype> out"); other words are free text.
func ParseBench(op, dtype, shape, note string) (Op, error) {
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
