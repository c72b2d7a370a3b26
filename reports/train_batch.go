package reports

import "github.com/gpucalc/gpucalc/train"

// TrainBatch renders batch results: the input cells, then TrainBatchOut.
func TrainBatch(header []string, rows []train.BatchResult) Table {
	t := Table{Header: append(append([]string(nil), header...), TrainBatchOut...), Rows: make([][]string, 0, len(rows))}
	for _, r := range rows {
		cells := inputCells(header, r.Cells, len(TrainBatchOut))
		if r.Err != nil {
			cells = append(cells, make([]string, len(TrainBatchOut)-1)...)
			cells = append(cells, r.Err.Error())
		} else {
			x, m := r.Result, r.Result.Memory
			cells = append(cells, i64(x.Params.Total), i64(x.Params.Trainable), num(m.Weights), num(m.GradsHeld), num(m.Optimizer),
				num(m.Saved), num(m.Peak), boolean(m.Fits), string(m.Verdict))
			if t := x.Time; t != nil {
				cells = append(cells, num(t.Step*1e3), num(t.TokensPerSecond), num(t.MFU), "")
			} else { // no times for what does not fit
				cells = append(cells, "", "", "", "")
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// TrainBatchJSON is the batch as JSON objects: the input cells (numbers
// where they are numbers) and the results under TrainBatchOut's keys.
func TrainBatchJSON(header []string, rows []train.BatchResult) []map[string]any {
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		o := inputJSON(header, r.Cells, r.Err)
		if r.Err == nil {
			x, m := r.Result, r.Result.Memory
			o["params"], o["trainable_params"], o["weights_bytes"], o["grads_held_bytes"] = x.Params.Total, x.Params.Trainable, m.Weights, m.GradsHeld
			o["optimizer_bytes"], o["activations_saved_bytes"], o["peak_bytes"], o["fits"] = m.Optimizer, m.Saved, m.Peak, m.Fits
			o["verdict"] = string(m.Verdict)
			o["step_ms"], o["tokens_per_s"], o["mfu"] = nil, nil, nil
			if t := x.Time; t != nil {
				o["step_ms"], o["tokens_per_s"], o["mfu"] = t.Step*1e3, t.TokensPerSecond, t.MFU
			}
		}
		out = append(out, o)
	}
	return out
}
