package occupancy

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
	"github.com/gpucalc/gpucalc/units"
)

// BatchColumns are the input columns of a batch, in order; the last two are
// optional.
var BatchColumns = []string{"device", "threads", "regs", "static_smem", "dynamic_smem", "carveout", "max_threads", "barriers"}

const batchRequired = 6

// MaxBatchValue is the largest number a batch cell takes: far above any
// GPU's limits (which the calculation reports), and small enough that
// sizes cannot overflow when added.
const MaxBatchValue = 1 << 40

// BatchReader reads batch rows: CSV with the header in BatchColumns (any
// order). device is a catalog name or an architecture (sm_90, 9.0); sizes are
// bytes; carveout is empty or -1 for the default, else a percentage 0..100.
type BatchReader struct {
	cr     *rows.CSV
	lookup func(string) (devices.Arch, error)
	archs  map[string]archEntry
	col    [8]int
	// Header is the input's header, in its order.
	Header []string
}

type archEntry struct {
	arch devices.Arch
	err  error
}

// BatchRow is one row: its fields as read and what they say. Fields is
// reused by the next call to Next.
type BatchRow struct {
	Fields []string
	// Line is the row's line in the input.
	Line   int
	Arch   devices.Arch
	Kernel Kernel
	Launch Launch
	// Err says what is wrong with the row; the batch goes on.
	Err error
}

// NewBatchReader reads the header. lookup resolves the device column
// (devices.Catalog.Limits); its answers are cached per name.
func NewBatchReader(r io.Reader, lookup func(string) (devices.Arch, error)) (*BatchReader, error) {
	b := &BatchReader{cr: rows.NewCSV(r), lookup: lookup, archs: map[string]archEntry{}}
	head, err := b.cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("batch input is empty; expected a CSV header %s", strings.Join(BatchColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("batch header: %w", err)
	}
	cols, err := rows.ReadColumns(head, BatchColumns[:batchRequired], BatchColumns[batchRequired:])
	if err != nil {
		return nil, fmt.Errorf("batch header: %w", err)
	}
	b.Header = cols.Header
	b.cr.Fields = len(head)
	for j, name := range BatchColumns {
		b.col[j] = -1
		if i, ok := cols.Index(name); ok {
			b.col[j] = i
		}
	}
	return b, nil
}

// Next reads the next row into row; it returns io.EOF at the end and other
// errors (a *rows.Error with its line) only when the input cannot be read
// further. A malformed row is returned with row.Err set.
func (b *BatchReader) Next(row *BatchRow) error {
	rec, err := b.cr.Read()
	*row = BatchRow{Fields: rec, Line: b.cr.Line()}
	var re *rows.RowError
	if errors.As(err, &re) {
		row.Line, row.Err = re.Line, re
		return nil
	}
	if err != nil {
		return err
	}
	if err := b.parse(rec, row); err != nil {
		row.Err = fmt.Errorf("line %d: %w", row.Line, err)
		b.cr.Bad()
	}
	return nil
}

func (b *BatchReader) parse(rec []string, row *BatchRow) error {
	field := func(j int) string {
		if b.col[j] < 0 {
			return ""
		}
		return strings.TrimSpace(rec[b.col[j]])
	}
	name := field(0)
	e, ok := b.archs[name]
	if !ok {
		e.arch, e.err = b.lookup(name)
		b.archs[name] = e
	}
	if e.err != nil {
		return e.err
	}
	row.Arch = e.arch
	var v [8]int
	for j := 1; j < len(BatchColumns); j++ {
		s := field(j)
		if s == "" && (j >= batchRequired || j == 5) {
			v[j] = -1
			continue
		}
		n, err := strconv.Atoi(s)
		if j == 3 || j == 4 {
			// Shared memory as the flags take it: 48K, 48KiB or 49152.
			size, perr := units.ParseSize(s)
			if perr != nil {
				return b.cellError(rec, j, "a size such as 48K, 48KiB or 49152 (binary: K = 1024 bytes)")
			}
			n, err = int(min(size, MaxBatchValue+1)), nil
		}
		if j == 5 && (err != nil || n < -1 || n > 100) {
			return b.cellError(rec, j, "expected -1 or empty for the default, or a percentage 0..100")
		}
		if err != nil || n < 0 && !(n == -1 && j >= 5) || n > MaxBatchValue {
			return b.cellError(rec, j, fmt.Sprintf("expected a whole number from 0 to %d", MaxBatchValue))
		}
		v[j] = n
	}
	row.Kernel = Kernel{Regs: v[2], StaticSmem: v[3], MaxThreads: max(v[6], 0), Barriers: max(v[7], 0)}
	row.Launch = Launch{Threads: v[1], DynamicSmem: v[4]}
	if c := v[5]; c >= 0 {
		row.Launch.Carveout = CarveoutPercent(c)
	}
	return nil
}

// cellError is the error of column j's cell (BatchColumns' index).
func (b *BatchReader) cellError(rec []string, j int, allowed string) error {
	return &rows.CellError{Column: b.col[j] + 1, Name: BatchColumns[j], Value: rec[b.col[j]], Allowed: allowed}
}

// inputColumn is the column whose cell a calculation's input error is
// about (an index into BatchColumns), -1 for one about several cells.
var inputColumn = map[error]int{
	ErrBlockSize: 1, ErrLaunchBounds: 1, ErrRegisters: 2, ErrStaticSmem: 3,
	ErrCarveout: 5, ErrMaxThreads: 6, ErrBarriers: 7,
}

// calcError names the line of a row the calculation refused, and the
// column when the error is about one cell.
func (b *BatchReader) calcError(row *BatchRow, err error) error {
	if j, ok := inputColumn[err]; ok && b.col[j] >= 0 {
		err = b.cellError(row.Fields, j, err.Error())
	}
	return fmt.Errorf("line %d: %w", row.Line, err)
}

// BatchWriter takes a batch's answers in order: a row's input fields (n
// columns), its result, or the error that stopped it.
type BatchWriter interface {
	Write(fields []string, n int, r Result, err error) error
	Flush() error
}

// BatchCount is what RunBatch did: the rows answered, how many of them
// failed, and the error that stopped the input before its end (nil when it
// was read to the end).
type BatchCount struct {
	Rows, Failed int
	ReadErr      error
}

// RunBatch calculates every row br reads and writes it to w, calling
// progress with the rows done. A bad row is written with its error and the
// batch goes on; input that cannot be read further ends the batch after
// the rows before it (BatchCount.ReadErr). The error is a failure to write.
func RunBatch(br *BatchReader, w BatchWriter, progress func(rows int)) (BatchCount, error) {
	var n BatchCount
	var row BatchRow
	for {
		err := br.Next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			n.ReadErr = fmt.Errorf("batch input: %w", err)
			break
		}
		var r Result
		if row.Err == nil {
			r = Calculate(row.Arch, row.Kernel, row.Launch)
			if r.Err != nil {
				row.Err = br.calcError(&row, r.Err)
			}
		}
		n.Rows++
		progress(n.Rows)
		if row.Err != nil {
			n.Failed++
		}
		if err := w.Write(row.Fields, len(br.Header), r, row.Err); err != nil {
			return n, err
		}
	}
	return n, w.Flush()
}
