package train

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/rows"
)

// BatchColumns is the required header of a train batch file;
// BatchOptional the columns that may follow, in any order.
var (
	BatchColumns  = []string{"model", "device", "method", "precision", "ckpt", "batch", "seq"}
	BatchOptional = []string{"gpus", "zero", "tp", "lora_rank", "bucket_view"}
)

// BatchRow is one line of a batch file: its cells, what they ask, and why
// the row cannot be answered (Err).
type BatchRow struct {
	Line    int
	Cells   []string
	Model   string
	Device  string
	Request Request
	Err     error
}

// ReadBatch reads CSV whose header holds BatchColumns and may add
// BatchOptional columns, in any order, through rows (bounded lines, binary
// data and broken quotes stop it at their line). A row is read as the
// flags are: a header with an unknown or repeated column is an error; a
// row with more or fewer cells than the header, or a cell out of its
// flag's range (batch 0, a tp of 0), is a row with Err set naming the line
// and column; an empty cell is the flag's default. An input that breaks
// off returns the rows before the break and the error. It returns the
// header as given.
func ReadBatch(r io.Reader) ([]string, []BatchRow, error) {
	cr := rows.NewCSV(rows.Limit(r, model.MaxBatchBytes))
	head, err := cr.Read()
	if err == io.EOF {
		return nil, nil, fmt.Errorf("empty input; expected the header %s", strings.Join(BatchColumns, ","))
	}
	if err != nil {
		return nil, nil, err
	}
	cols, err := rows.ReadColumns(head, BatchColumns, BatchOptional)
	if err != nil {
		return nil, nil, err
	}
	cr.Fields = len(cols.Header)
	// A training batch keeps its rows as the model batch does: the same bounds.
	out, err := rows.Records(cr, model.MaxBatchRows, func(line int, cells []string, err error) (BatchRow, error) {
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
	return cols.Header, out, err
}

func (r *BatchRow) parse(cols rows.Columns) error {
	cell := func(name string) string { return strings.ToLower(cols.Cell(r.Cells, name)) }
	r.Model, r.Device = cols.Cell(r.Cells, "model"), cols.Cell(r.Cells, "device")
	if r.Model == "" {
		return cols.Bad(r.Cells, "model", "empty; give a built-in name or a path to a config.json")
	}
	q := Request{Method: Method(cell("method")), Precision: Precision(cell("precision")), Ckpt: Ckpt(cell("ckpt"))}
	switch q.Ckpt {
	case "0", "false", "no":
		q.Ckpt = NoCkpt
	case "1", "true", "yes":
		q.Ckpt = FullCkpt
	}
	switch cell("bucket_view") {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		q.BucketView = true
	default:
		return cols.Bad(r.Cells, "bucket_view", "expected true or false (leave it empty for false)")
	}
	for _, x := range []struct {
		name   string
		lo, hi int64
		dst    *int64
	}{
		{"batch", 1, MaxSequences, &q.Batch}, {"seq", MinSeq, MaxSeq, &q.Seq}, {"gpus", 1, MaxGPUs, &q.GPUs},
		{"zero", 0, 3, &q.ZeRO}, {"tp", 1, MaxTP, &q.TP}, {"lora_rank", 1, MaxRank, &q.LoRARank},
	} {
		v, set, err := cols.Int(r.Cells, x.name, x.lo, x.hi)
		if err != nil {
			return err
		}
		if set {
			*x.dst = v
		}
	}
	if q.LoRARank != 0 && q.Method != LoRA {
		return cols.Bad(r.Cells, "lora_rank", "a LoRA rank needs method lora; leave it empty for full fine-tuning")
	}
	r.Request = q.Defaults()
	return nil
}

// BatchResult is one answered row (Err set when it failed).
type BatchResult struct {
	Cells  []string
	Result Result
	Err    error
}

// RunBatch answers every row, loading each model (load) and each device's
// roofline model (device) once, in row order; a row that fails gets its
// error and the batch goes on. The rows are then answered on every CPU
// (Analyze is pure; each worker prices with its own memo).
func RunBatch(in []BatchRow, load func(string) (model.Config, error), device func(string) (*roofline.Model, error)) []BatchResult {
	type cfg struct {
		c   model.Config
		err error
	}
	type dev struct {
		m   *roofline.Model
		err error
	}
	cfgs, devs := map[string]*cfg{}, map[string]*dev{}
	type job struct {
		c *model.Config
		m *roofline.Model
	}
	jobs := make([]job, len(in))
	out := make([]BatchResult, len(in))
	for i, r := range in {
		o := &out[i]
		o.Cells = r.Cells
		if o.Err = r.Err; o.Err == nil {
			c, ok := cfgs[r.Model]
			if !ok {
				c = &cfg{}
				c.c, c.err = load(r.Model)
				cfgs[r.Model] = c
			}
			d, ok := devs[r.Device]
			if !ok {
				d = &dev{}
				d.m, d.err = device(r.Device)
				devs[r.Device] = d
			}
			switch {
			case c.err != nil:
				o.Err = c.err
			case d.err != nil:
				o.Err = d.err
			default:
				jobs[i] = job{&c.c, d.m}
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, len(in)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pricers := map[*roofline.Model]pricer{}
			for i := w; i < len(in); i += workers {
				j := jobs[i]
				if j.c == nil {
					continue
				}
				p, ok := pricers[j.m]
				if !ok {
					p = newPricer(j.m)
					pricers[j.m] = p
				}
				out[i].Result, out[i].Err = analyze(*j.c, in[i].Request, p)
			}
		}()
	}
	wg.Wait()
	for i := range out {
		if out[i].Err != nil {
			out[i].Err = fmt.Errorf("line %d: %w", in[i].Line, out[i].Err)
		}
	}
	return out
}
