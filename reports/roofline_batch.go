package reports

import (
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

// RooflineBatch is roofline batch's output: the input columns, then
// RooflineBatchColumns, one row per input row. flops counts matrix FLOPs
// only (the roof_bench and torch.utils.flop_counter convention: 0 for
// norms, softmax and elementwise ops), and ai is flops/bytes in that
// convention; bound and the times use every FLOP. A row with an error has
// empty figures and its message in error.
func RooflineBatch(b ops.Batch, pts []roofline.Point, c roofline.Conditions) Table {
	t := Table{Header: append(append([]string{}, b.Header...), RooflineBatchColumns...),
		Optional: []string{"flops", "bytes", "ai", "ceiling_tflops", "lower_bound_us", "l2", "launch"}}
	for i, r := range b.Rows {
		in := make([]string, len(b.Header))
		copy(in, r.Fields)
		if r.Err != nil {
			t.Rows = append(t.Rows, append(in, "", "", "", "", "", "", "", string(c.L2), string(c.Launch), r.Err.Error()))
			continue
		}
		p := pts[i]
		t.Rows = append(t.Rows, append(in, num(p.MatrixFLOPs), num(p.Bytes),
			plain(matrixAI(p)), string(p.Bound), tflops(p.ComputeCeiling), us(p.LowerBound), us(p.Expected), string(c.L2), string(c.Launch), ""))
	}
	return t
}

// matrixAI is matrix FLOPs per byte.
func matrixAI(p roofline.Point) float64 {
	if p.Bytes > 0 {
		return p.MatrixFLOPs / p.Bytes
	}
	return 0
}

// RooflineBatchJSON is roofline batch's JSON: one object per row with the
// input columns (as strings) and the RooflineBatchColumns as numbers (l2
// and launch, the conditions, as words); a row with an error has only its
// input, the conditions and its error.
func RooflineBatchJSON(b ops.Batch, pts []roofline.Point, c roofline.Conditions) []map[string]any {
	out := make([]map[string]any, len(b.Rows))
	for i, r := range b.Rows {
		p := pts[i]
		o := map[string]any{}
		for j, h := range b.Header {
			o[h] = ""
			if j < len(r.Fields) {
				o[h] = r.Fields[j]
			}
		}
		o["l2"], o["launch"] = c.L2, c.Launch
		if r.Err != nil {
			o["error"] = r.Err.Error()
			out[i] = o
			continue
		}
		o["flops"], o["bytes"], o["ai"], o["bound"] = p.MatrixFLOPs, p.Bytes, matrixAI(p), p.Bound
		o["ceiling_tflops"], o["lower_bound_us"], o["expected_us"] = p.ComputeCeiling/1e12, p.LowerBound*1e6, p.Expected*1e6
		o["error"] = ""
		out[i] = o
	}
	return out
}
