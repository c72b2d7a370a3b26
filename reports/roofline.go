package reports

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// siCount formats a count with a decimal prefix and about four significant
// digits: 137438953472 → "137.4 G".
func siCount(v float64) string {
	for _, p := range []struct {
		s string
		m float64
	}{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if math.Abs(v) >= p.m {
			return strconv.FormatFloat(v/p.m, 'f', digits(v/p.m), 64) + " " + p.s
		}
	}
	return strconv.FormatFloat(v, 'f', digits(v), 64) + " "
}

func digits(v float64) int {
	switch a := math.Abs(v); {
	case a >= 100:
		return 1
	case a >= 10:
		return 2
	case a == math.Trunc(a):
		return 0
	}
	return 3
}

// num formats a plain number for CSV: integers in full, others with up to
// six significant digits.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e18 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func us(s float64) string { return plain(s * 1e6) }

func tflops(v float64) string { return plain(v / 1e12) }

// plain is a number for a CSV cell: six significant digits and no exponent,
// so that a positive value never prints as 0.
func plain(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// label is a point's name: the workload entry's, else its op spec.
func label(p roofline.Point) string {
	if p.Name != "" {
		return p.Name
	}
	return p.Op.String()
}

// RooflinePoints lists ops placed on one device's roofline
// (RooflineRecords has the plain numbers).
func RooflinePoints(title string, pts []roofline.Point, notes []string) Table {
	t := Table{Title: title, Notes: notes}
	t.Header = []string{"Op", "FLOPs", "Bytes", "AI (FLOP/B)", "Ceiling", "Ridge", "Bound", "Attainable", "Lower bound", "Expected", "Limited by"}
	for _, p := range pts {
		name := label(p)
		if p.Count > 1 {
			name += " ×" + strconv.Itoa(p.Count)
		}
		t.Rows = append(t.Rows, []string{name, siCount(p.FLOPs), siCount(p.Bytes) + "B", strconv.FormatFloat(p.AI, 'f', digits(p.AI), 64),
			p.PeakKey + " " + tflops(p.ComputeCeiling) + "T, " + strings.ToUpper(string(p.MemoryLevel)) + " " + units.FormatBandwidth(p.MemoryCeiling),
			strconv.FormatFloat(p.Ridge, 'f', 0, 64), string(p.Bound), devices.FormatPeak(p.PeakKey, p.Attainable),
			units.FormatDuration(p.LowerBound), units.FormatDuration(p.Expected), p.ExpectedBound})
	}
	for _, p := range pts {
		for _, n := range p.Notes {
			t.Notes = append(t.Notes, label(p)+": "+n)
		}
	}
	return t
}

// RooflineSummary totals a workload on one device: times, the share that
// is memory-bound, and the ops that take longest.
func RooflineSummary(title string, s roofline.Summary, pts []roofline.Point) Table {
	t := Table{Title: title, Header: []string{"Total", "Value"}}
	t.Rows = [][]string{
		{"ops (with counts)", strconv.Itoa(s.Ops)},
		{"expected time", units.FormatDuration(s.Expected)},
		{"lower bound", units.FormatDuration(s.LowerBound)},
		{"FLOPs", siCount(s.FLOPs)},
		{"bytes", siCount(s.Bytes) + "B"},
		{"memory-bound share of expected time", strconv.FormatFloat(100*s.MemoryBoundShare, 'f', 0, 64) + "%"},
	}
	for i, k := range s.Top {
		p := pts[k]
		share := 0.0
		if s.Expected > 0 {
			share = float64(max(p.Count, 1)) * p.Expected / s.Expected
		}
		t.Rows = append(t.Rows, []string{"top " + strconv.Itoa(i+1), label(p) + " " + units.FormatDuration(float64(max(p.Count, 1))*p.Expected) +
			" (" + strconv.FormatFloat(100*share, 'f', 0, 64) + "%, " + string(p.Bound) + ")"})
	}
	return t
}

// RooflineCompare puts the same ops side by side on several devices: the
// expected time and bound on each, and a total row. pts[d][i] is op i on
// device d; a device with a reason in na cannot run the ops, and its cells
// say why ("n/a: no fp8 tensor cores").
func RooflineCompare(names []string, pts [][]roofline.Point, na []string) Table {
	t := Table{Title: "Expected time by device", Header: []string{"Op"}}
	for _, n := range names {
		t.Header = append(t.Header, n, n+" bound")
	}
	first := slices.IndexFunc(na, func(s string) bool { return s == "" })
	if first < 0 {
		return t
	}
	totals := make([]float64, len(names))
	for i := range pts[first] {
		row := []string{label(pts[first][i])}
		for d := range names {
			if na[d] != "" {
				row = append(row, "n/a: "+na[d], "")
				continue
			}
			p := pts[d][i]
			tm := float64(max(p.Count, 1)) * p.Expected
			totals[d] += tm
			row = append(row, units.FormatDuration(tm), string(p.Bound))
		}
		t.Rows = append(t.Rows, row)
	}
	row := []string{"total"}
	for d := range names {
		tot := units.FormatDuration(totals[d])
		if na[d] != "" {
			tot = "n/a"
		}
		row = append(row, tot, "")
	}
	t.Rows = append(t.Rows, row)
	return t
}

// RooflineBatchColumns are the columns roofline batch adds to its input.
var RooflineBatchColumns = []string{"flops", "bytes", "ai", "bound", "ceiling_tflops", "lower_bound_us", "expected_us", "error"}

// RooflineBatch is roofline batch's output: the input columns, then
// RooflineBatchColumns, one row per input row. flops counts matrix FLOPs
// only (the roof_bench and torch.utils.flop_counter convention: 0 for
// norms, softmax and elementwise ops), and ai is flops/bytes in that
// convention; bound and the times use every FLOP. A row with an error has
// empty figures and its message in error.
func RooflineBatch(b ops.Batch, pts []roofline.Point) Table {
	t := Table{Header: append(append([]string{}, b.Header...), RooflineBatchColumns...)}
	for i, r := range b.Rows {
		in := make([]string, len(b.Header))
		copy(in, r.Fields)
		if r.Err != nil {
			t.Rows = append(t.Rows, append(in, "", "", "", "", "", "", "", r.Err.Error()))
			continue
		}
		p := pts[i]
		t.Rows = append(t.Rows, append(in, num(p.MatrixFLOPs), num(p.Bytes),
			plain(matrixAI(p)), string(p.Bound), tflops(p.ComputeCeiling), us(p.LowerBound), us(p.Expected), ""))
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
// input columns (as strings) and the RooflineBatchColumns as numbers; a row
// with an error has only its input and error.
func RooflineBatchJSON(b ops.Batch, pts []roofline.Point) []map[string]any {
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

// ceilingName names a peak key for a chart: bf16_tensor → "BF16 tensor".
func ceilingName(key string) string {
	k, tensor := strings.CutSuffix(key, "_tensor")
	n := strings.ToUpper(k)
	if tensor {
		n += " tensor"
	}
	return n
}

// chartLabel is a short label for an op: its name, else kind, shape and
// the variant ("attention 8x16x4096x128 causal").
func chartLabel(p roofline.Point) string {
	if p.Name != "" {
		return p.Name
	}
	shape := p.Op.Shape()
	if p.Op.Elems > 0 {
		shape = siCount(float64(p.Op.Elems))
		shape = strings.ReplaceAll(strings.TrimSpace(shape), " ", "")
	}
	s := string(p.Op.Kind) + " " + shape + " " + string(p.Op.DType)
	if p.Op.Causal {
		s += " causal"
	}
	if p.Op.Kind == ops.GELU && p.Op.Tanh {
		s += " tanh"
	}
	return s
}

// RooflineChartOf draws analysed ops: one device per slice of points
// (pts[d][i] is op i on device d), the compute ceilings the ops use, the
// memory slopes the model uses (DRAM, and L2 where the catalog has it,
// measured or datasheet), and each op at its expected rate, or at its
// measured rate where it has one, with the roof at its intensity.
func RooflineChartOf(title string, devs []devices.Device, pts [][]roofline.Point) chart.Roofline {
	c := chart.Roofline{Title: title}
	for d, dev := range devs {
		// The L2 slope only where an op runs from L2.
		cd := chart.Device{Name: dev.Name, DRAM: dev.Memory.BytesPerSecond}
		seen := map[string]bool{}
		for _, p := range pts[d] {
			if p.MemoryLevel == roofline.Link {
				continue // a GPU-to-GPU transfer is not on the chip's roofline
			}
			if !seen[p.PeakKey] {
				seen[p.PeakKey] = true
				cd.Ceilings = append(cd.Ceilings, chart.Ceiling{Name: ceilingName(p.PeakKey), FLOPS: p.ComputeCeiling})
			}
			// The slopes are the model's (measured where it has them), so
			// each roof mark lies on its line.
			switch p.MemoryLevel {
			case devices.DRAM:
				cd.DRAM = p.MemoryCeiling
			case devices.L2:
				cd.L2 = p.MemoryCeiling
				_, cd.L2Measured = l2Ceiling(dev)
			}
			c.Points = append(c.Points, opChartPoint(chartLabel(p), d, p))
		}
		c.Devices = append(c.Devices, cd)
	}
	return c
}

// opChartPoint places a roofline point at its measured rate where it has
// one, else at its expected rate, with the roof (its attainable rate).
func opChartPoint(label string, dev int, p roofline.Point) chart.Point {
	cp := chart.Point{Label: label, Group: opGroup(p.Op.Kind), Device: dev, FLOPs: p.FLOPs, Bytes: p.Bytes, Roof: p.Attainable}
	switch {
	case p.Measured > 0:
		cp.Rate, cp.Measured = p.FLOPs/p.Measured, true
	case p.Expected > 0:
		cp.Rate = p.FLOPs / p.Expected
	}
	return cp
}

// opGroup is an op's family on a chart, one colour each.
func opGroup(k ops.Kind) string {
	switch k {
	case ops.Matmul, ops.Linear, ops.Conv2D:
		return "matmul, conv"
	case ops.Attention:
		return "attention"
	case ops.LayerNorm, ops.RMSNorm, ops.Softmax, ops.BatchNorm, ops.Reduce:
		return "norm, softmax"
	case "":
		return ""
	}
	return "elementwise"
}

// l2Ceiling is the L2 bandwidth a chart draws: the measured figure where
// the catalog has one (the achievable rate, so no L2 point lies above it),
// else the datasheet's, else zero.
func l2Ceiling(d devices.Device) (bw float64, measured bool) {
	if d.Measured != nil && d.Measured.L2 > 0 {
		return d.Measured.L2, true
	}
	return d.L2.BytesPerSecond, false
}
