package reports

import (
	"strconv"

	"github.com/gpucalc/gpucalc/model"
)

// ModelBatchRow is one evaluated batch row (Err set when it failed): its
// result, times only where it fits, and the smallest TP at which it fits.
type ModelBatchRow = model.BatchResult

// ModelBatch renders batch results: the input cells, then ModelBatchOut.
func ModelBatch(header []string, rows []ModelBatchRow) Table {
	t := Table{Header: append(append([]string(nil), header...), ModelBatchOut...), Rows: make([][]string, 0, len(rows))}
	for _, r := range rows {
		cells := inputCells(header, r.Cells, len(ModelBatchOut))
		if r.Err != nil {
			cells = append(cells, "", "", "", "", "", "", "", "", "", r.Err.Error())
		} else {
			x, m := r.Result, r.Result.Memory
			cells = append(cells, strconv.FormatInt(m.Params.Total, 10), num(m.Weights), num(m.KVPerToken), num(m.Total), strconv.FormatBool(m.Fits),
				strconv.FormatInt(r.SmallestTP, 10))
			if m.Fits {
				cells = append(cells, num(x.LowerBound*1e3), num(x.Expected*1e3), num(x.TokensPerSecond), "")
			} else { // no times for what does not fit
				cells = append(cells, "", "", "", "")
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// ModelBatchJSON is the batch as JSON objects: the input cells (numbers
// where they are numbers) and the results under ModelBatchOut's keys.
func ModelBatchJSON(header []string, rows []ModelBatchRow) []map[string]any {
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		o := inputJSON(header, r.Cells, r.Err)
		if r.Err == nil {
			x, m := r.Result, r.Result.Memory
			o["params"], o["weights_bytes"], o["kv_bytes_per_token"], o["memory_bytes"] = m.Params.Total, m.Weights, m.KVPerToken, m.Total
			o["fits"], o["smallest_tp"] = m.Fits, r.SmallestTP
			o["lower_bound_ms"], o["expected_ms"], o["tokens_per_s"] = nil, nil, nil
			if m.Fits {
				o["lower_bound_ms"], o["expected_ms"], o["tokens_per_s"] = x.LowerBound*1e3, x.Expected*1e3, x.TokensPerSecond
			}
		}
		out = append(out, o)
	}
	return out
}
