package train

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
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

// ReadBatch reads CSV whose header starts with BatchColumns and may go on
// with BatchOptional columns (other columns are kept in Cells) through
// rows (bounded lines, binary data and broken quotes stop it at their
// line). A bad header is an error; a bad row is a row with Err set; an
// input that breaks off returns the rows before the break and the error.
// It returns the header as given.
func ReadBatch(r io.Reader) ([]string, []BatchRow, error) {
	cr := rows.NewCSV(rows.Limit(r, model.MaxBatchBytes))
	head, err := cr.Read()
	if err == io.EOF {
		return nil, nil, fmt.Errorf("empty input; expected the header %s", strings.Join(BatchColumns, ","))
	}
	if err != nil {
		return nil, nil, err
	}
	head = slices.Clone(head)
	if len(head) < len(BatchColumns) {
		return nil, nil, fmt.Errorf("line 1: header %s; expected %s (then optionally %s)", rows.Quote(strings.Join(head, ",")), strings.Join(BatchColumns, ","), strings.Join(BatchOptional, ","))
	}
	optional := map[string]int{}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(h))
		if i < len(BatchColumns) {
			if h != BatchColumns[i] {
				return nil, nil, fmt.Errorf("line 1: column %d is %s; expected the header %s", i+1, rows.Quote(head[i]), strings.Join(BatchColumns, ","))
			}
			continue
		}
		if slices.Contains(BatchOptional, h) {
			optional[h] = i
		}
	}
	// A training batch keeps its rows as the model batch does: the same bounds.
	out, err := rows.Records(cr, model.MaxBatchRows, func(line int, cells []string, err error) (BatchRow, error) {
		r := BatchRow{Line: line, Cells: cells, Err: err}
		if err == nil {
			r.Err = r.parse(optional)
		}
		return r, r.Err
	})
	var se *rows.SizeError
	if errors.As(err, &se) {
		err = fmt.Errorf("%w; split the file", err)
	}
	return head, out, err
}

func (r *BatchRow) parse(optional map[string]int) error {
	if len(r.Cells) < len(BatchColumns) {
		return fmt.Errorf("%d cells; expected at least %d (%s)", len(r.Cells), len(BatchColumns), strings.Join(BatchColumns, ","))
	}
	cell := func(i int) string { return strings.ToLower(strings.TrimSpace(r.Cells[i])) }
	r.Model, r.Device = strings.TrimSpace(r.Cells[0]), strings.TrimSpace(r.Cells[1])
	if r.Model == "" {
		return fmt.Errorf("model: empty; give a built-in name or a path to a config.json")
	}
	q := Request{Method: Method(cell(2)), Precision: Precision(cell(3)), Ckpt: Ckpt(cell(4))}
	switch q.Ckpt {
	case "0", "false", "no":
		q.Ckpt = NoCkpt
	case "1", "true", "yes":
		q.Ckpt = FullCkpt
	}
	ints := []struct {
		name string
		i    int
		dst  *int64
	}{{"batch", 5, &q.Batch}, {"seq", 6, &q.Seq}}
	if i, ok := optional["bucket_view"]; ok && i < len(r.Cells) {
		switch strings.ToLower(cell(i)) {
		case "", "0", "false", "no":
		case "1", "true", "yes":
			q.BucketView = true
		default:
			return fmt.Errorf("bucket_view: %s is not true or false", rows.Quote(r.Cells[i]))
		}
	}
	for _, k := range BatchOptional {
		if k == "bucket_view" {
			continue
		}
		if i, ok := optional[k]; ok {
			dst := map[string]*int64{"gpus": &q.GPUs, "zero": &q.ZeRO, "tp": &q.TP, "lora_rank": &q.LoRARank}[k]
			ints = append(ints, struct {
				name string
				i    int
				dst  *int64
			}{k, i, dst})
		}
	}
	for _, x := range ints {
		if x.i >= len(r.Cells) || cell(x.i) == "" {
			continue
		}
		v, err := strconv.ParseInt(cell(x.i), 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("%s: %s is not a whole number", x.name, rows.Quote(r.Cells[x.i]))
		}
		*x.dst = v
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
