package deploy

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/rows"
)

// BatchColumns is the header of a deploy batch file: that of the silicon
// sample aiconfigurator publishes (silicon_sample.csv), each column
// optional but model_path, system, backend, mode, isl and osl. Columns
// the query does not use (an id, the measured latencies) are echoed.
var BatchColumns = []string{"id", "silicon_data_source", "backend", "backend_version", "model_path", "system", "precision", "mode",
	"isl", "osl", "gemm_quant_mode", "moe_quant_mode", "batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
	"prefill_batch_size", "prefill_num_workers", "prefill_tp_size", "prefill_pp_size", "prefill_attention_dp_size", "prefill_moe_tp_size", "prefill_moe_ep_size",
	"decode_batch_size", "decode_num_workers", "decode_tp_size", "decode_pp_size", "decode_attention_dp_size", "decode_moe_tp_size", "decode_moe_ep_size",
	"silicon_ttft_ms", "silicon_tpot_ms"}

// batchRequired are the columns a batch file must have.
var batchRequired = []string{"model_path", "system", "backend", "mode", "isl", "osl"}

// MaxBatchRows and MaxBatchBytes bound a batch input (its rows are kept).
const (
	MaxBatchRows  = 50000
	MaxBatchBytes = 64 << 20
)

// BatchRow is one line of a batch: its cells as given, the query they
// describe and why it cannot be answered (Err).
type BatchRow struct {
	Line  int
	Cells []string
	Query Query
	Err   error
}

// Batch is a batch file read: its header and rows.
type Batch struct {
	Header []string
	Rows   []BatchRow
}

// ReadBatch reads a batch CSV. An unknown or repeated column, or a
// missing required one, is an error of the header; a bad row is a row with
// Err set. An input that breaks off returns the rows before the break and
// the error.
func ReadBatch(r io.Reader) (Batch, error) {
	cr := rows.NewCSV(rows.Limit(r, MaxBatchBytes))
	head, err := cr.Read()
	if err == io.EOF {
		return Batch{}, fmt.Errorf("empty input; expected a header with %s", strings.Join(batchRequired, ","))
	}
	if err != nil {
		return Batch{}, err
	}
	col, err := columns(head)
	if err != nil {
		return Batch{}, fmt.Errorf("line 1: %w", err)
	}
	b := Batch{Header: append([]string(nil), head...)}
	b.Rows, err = rows.Records(cr, MaxBatchRows, func(line int, cells []string, err error) (BatchRow, error) {
		r := BatchRow{Line: line, Cells: cells, Err: err}
		if err == nil {
			r.Query, r.Err = parseRow(col, cells)
		}
		return r, r.Err
	})
	var se *rows.SizeError
	if errors.As(err, &se) {
		err = fmt.Errorf("%w; split the file", err)
	}
	return b, err
}

func columns(head []string) (map[string]int, error) {
	known := map[string]bool{}
	for _, c := range BatchColumns {
		known[c] = true
	}
	col := map[string]int{}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case !known[h]:
			return nil, fmt.Errorf("unknown column %s; expected columns of %s", rows.Quote(head[i]), strings.Join(BatchColumns, ","))
		case col[h] > 0:
			return nil, fmt.Errorf("column %s given twice", h)
		}
		col[h] = i + 1
	}
	for _, h := range batchRequired {
		if col[h] == 0 {
			return nil, fmt.Errorf("no column %s; a batch needs %s", h, strings.Join(batchRequired, ","))
		}
	}
	return col, nil
}

// parseRow reads a row into a query; what the query's Validate refuses is
// the row's error too.
func parseRow(col map[string]int, cells []string) (Query, error) {
	if len(cells) != len(col) {
		return Query{}, fmt.Errorf("%d cells; the header has %d", len(cells), len(col))
	}
	cell := func(k string) string {
		if i := col[k]; i > 0 {
			return strings.TrimSpace(cells[i-1])
		}
		return ""
	}
	var errs []error
	num := func(k string) int64 {
		s := cell(k)
		if s == "" {
			return 0
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 {
			errs = append(errs, fmt.Errorf("%s: %s is not a whole number of 1 or more", k, rows.Quote(s)))
		}
		return v
	}
	// experts reads an expert layout's columns: both at most 1 (a dense
	// model's 0 or 1 whatever its tp) are the default layout.
	experts := func(ep, tp string) (int64, int64) {
		var e, t int64
		if cell(ep) != "0" {
			e = num(ep)
		}
		if cell(tp) != "0" {
			t = num(tp)
		}
		if e <= 1 && t <= 1 {
			return 0, 0
		}
		return e, t
	}
	q := Query{Model: cell("model_path"), Device: cell("system"), Engine: cell("backend"), ISL: num("isl"), OSL: num("osl")}
	w, err := quantWeights(cell("gemm_quant_mode"), cell("moe_quant_mode"))
	if err != nil {
		errs = append(errs, err)
	}
	q.Weights = w
	switch mode := strings.ToLower(cell("mode")); mode {
	case "agg":
		q.TP, q.DP = num("tp_size"), num("attention_dp_size")
		q.EP, q.MoETP = experts("moe_ep_size", "moe_tp_size")
		// The sample's batch_size is the clients of each attention-DP
		// rank.
		q.Concurrency = num("batch_size") * max(q.DP, 1)
		if q.Concurrency == 0 && cell("batch_size") == "" {
			q.Concurrency = idConcurrency(cell("id"))
		}
		if q.Concurrency == 0 {
			errs = append(errs, fmt.Errorf("batch_size: empty; an aggregated row needs its concurrency (or an id with its _c<N>_ token)"))
		}
		if pp := num("pp_size"); pp > 1 {
			errs = append(errs, fmt.Errorf("pp_size %d: pipeline parallelism is not modelled; give 1", pp))
		}
	case "disagg":
		d := Disagg{PrefillTP: num("prefill_tp_size"), PrefillDP: num("prefill_attention_dp_size"), PrefillWorkers: num("prefill_num_workers"),
			DecodeTP: num("decode_tp_size"), DecodeDP: num("decode_attention_dp_size"), DecodeWorkers: num("decode_num_workers")}
		d.PrefillEP, d.PrefillMoETP = experts("prefill_moe_ep_size", "prefill_moe_tp_size")
		d.DecodeEP, d.DecodeMoETP = experts("decode_moe_ep_size", "decode_moe_tp_size")
		q.TP, q.Disagg = d.DecodeTP, &d
		q.Concurrency = num("decode_batch_size") * max(d.DecodeWorkers, 1) * max(d.DecodeDP, 1)
		switch {
		case q.Concurrency > 0:
		case cell("decode_batch_size") != "":
			// A bad number, already an error.
		case idConcurrency(cell("id")) == 0:
			errs = append(errs, fmt.Errorf("decode_batch_size: empty; a disaggregated row needs the clients of each decode rank (or an id with its _c<N>_ token), and prefill_num_workers, decode_num_workers: the pools' sizes"))
		case d.PrefillWorkers == 0 || d.DecodeWorkers == 0:
			// The clients are known, not how many workers share them:
			// the batch of each decode rank, and so its TPOT, is
			// undetermined (InferenceMAX sizes the pools of each
			// concurrency apart).
			q.Concurrency = idConcurrency(cell("id"))
			errs = append(errs, fmt.Errorf("prefill_num_workers, decode_num_workers: empty; the id gives %d clients, but not how many workers share them (the batch of each decode rank)", q.Concurrency))
		default:
			q.Concurrency = idConcurrency(cell("id"))
		}
		for _, p := range []string{"prefill_", "decode_"} {
			if pp := num(p + "pp_size"); pp > 1 {
				errs = append(errs, fmt.Errorf("%spp_size %d: pipeline parallelism is not modelled; give 1", p, pp))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("mode %s: expected agg or disagg", rows.Quote(cell("mode"))))
	}
	if len(errs) > 0 {
		return q, errors.Join(errs...)
	}
	return q, q.Validate().Err()
}

// idConcurrency is the concurrency a row's id labels (0: none or more than
// one). It is read only where the row's batch-size column is empty: the
// row's own label of its load, its one _c<N>_ token and nothing else of
// the id. InferenceMAX names its runs
// DATE_MODEL_GPU_ENGINE_PRECISION_MODE_ISLxOSL_cN_..., N being the
// benchmark's --max-concurrency.
func idConcurrency(id string) int64 {
	tokens := strings.Split(id, "_")
	var n int64
	for _, t := range tokens[1:max(len(tokens)-1, 1)] {
		d, ok := strings.CutPrefix(t, "c")
		v, err := strconv.ParseInt(d, 10, 64)
		if !ok || err != nil || v < 1 || d != strconv.FormatInt(v, 10) {
			continue
		}
		if n > 0 {
			return 0
		}
		n = v
	}
	return n
}

// quantWeights maps the sample's quant modes onto a weight type: fp8 and
// fp8_block (1×128 / 128×128 scales) run fp8 GEMMs, nvfp4 fp4 GEMMs,
// w4a16_mxfp4 and int4_wo (weight-only int4) 4-bit weights in bf16 GEMMs;
// empty is the config's own.
func quantWeights(gemm, moe string) (string, error) {
	m := strings.ToLower(gemm)
	if m == "" {
		m = strings.ToLower(moe)
	}
	switch m {
	case "", "bfloat16", "bf16", "float16", "fp16":
		return "", nil
	case "fp8", "fp8_block", "fp8_per_tensor":
		return "fp8", nil
	case "nvfp4", "fp4":
		return "fp4", nil
	case "w4a16_mxfp4", "int4", "w4a16", "int4_wo":
		return "int4", nil
	}
	return "", fmt.Errorf("gemm_quant_mode %s: expected fp8, fp8_block, nvfp4, w4a16_mxfp4, int4_wo or empty (bf16)", rows.Quote(m))
}

// BatchResult is a row answered: its result, or its error.
type BatchResult struct {
	Row    BatchRow
	Result Result
	Err    error
}

// RunBatch answers every row, loading each model once through load (a
// built-in name, a Hugging Face id or a config's path; the edge reads
// files) and keeping one planner, so that rows on one model and device
// share their step prices.
func RunBatch(rs []BatchRow, load func(string) (model.Config, error)) []BatchResult {
	p := NewPlanner()
	type loaded struct {
		c   model.Config
		err error
	}
	configs := map[string]loaded{}
	out := make([]BatchResult, len(rs))
	for i, r := range rs {
		o := &out[i]
		o.Row = r
		if o.Err = r.Err; o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
			continue
		}
		l, ok := configs[r.Query.Model]
		if !ok {
			l.c, l.err = load(r.Query.Model)
			configs[r.Query.Model] = l
		}
		if l.err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, l.err)
			continue
		}
		q := r.Query
		c := l.c
		q.Config = &c
		if o.Result, o.Err = p.Answer(q); o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
		}
	}
	return out
}
