package reports

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

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
	t.Optional = []string{"Ridge", "Attainable", "Ceiling", "AI (FLOP/B)", "Bytes", "FLOPs"}
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
var RooflineBatchColumns = []string{"flops", "bytes", "ai", "bound", "ceiling_tflops", "lower_bound_us", "expected_us", "l2", "launch", "error"}

// ceilingName names a peak key for a chart: bf16_tensor → "BF16 tensor".
func ceilingName(key string) string {
	k, tensor := strings.CutSuffix(key, "_tensor")
	n := strings.ToUpper(k)
	if tensor {
		n += " tensor"
	}
	return n
}

// RooflineRecords is 'gpucalc roofline': every op on every device
// (points), and each device's totals (summary).
func RooflineRecords(views []RooflineView) []Table {
	pts := Table{Key: "points", Header: []string{"device", "name", "op", "count", "flops", "matrix_flops", "transcendentals", "bytes",
		"ai_flops_per_byte", "peak", "compute_ceiling_flops_per_second", "memory_level", "memory_ceiling_bytes_per_second",
		"ridge_flops_per_byte", "attainable_flops_per_second", "bound", "lower_bound_seconds", "expected_seconds", "expected_bound", "l2", "launch", "not_available"}}
	sum := Table{Key: "summary", Header: []string{"device", "ops", "flops", "bytes", "lower_bound_seconds", "expected_seconds", "memory_bound_share", "l2", "launch", "not_available"}}
	// A device that cannot run the ops keeps a row per op, its figures
	// empty and the reason given, as the table's "n/a" cells do.
	var ops []roofline.Point
	for _, v := range views {
		if v.NotAvailable == "" {
			ops = v.Points
			break
		}
	}
	for _, v := range views {
		if v.NotAvailable != "" {
			for _, p := range ops {
				pts.Rows = append(pts.Rows, append([]string{v.Device, p.Name, p.Op.String(), integer(p.Count)},
					"", "", "", "", "", "", "", "", "", "", "", "", "", "", "", string(v.Conditions.L2), string(v.Conditions.Launch), v.NotAvailable))
			}
			sum.Rows = append(sum.Rows, []string{v.Device, integer(len(ops)), "", "", "", "", "", string(v.Conditions.L2), string(v.Conditions.Launch), v.NotAvailable})
			continue
		}
		for _, p := range v.Points {
			pts.Rows = append(pts.Rows, []string{v.Device, p.Name, p.Op.String(), integer(p.Count), num(p.FLOPs), num(p.MatrixFLOPs),
				num(p.Transcendentals), num(p.Bytes), num(p.AI), p.PeakKey, num(p.ComputeCeiling), string(p.MemoryLevel), num(p.MemoryCeiling),
				num(p.Ridge), num(p.Attainable), string(p.Bound), num(p.LowerBound), num(p.Expected), p.ExpectedBound, string(v.Conditions.L2), string(v.Conditions.Launch), ""})
		}
		s := v.totals
		sum.Rows = append(sum.Rows, []string{v.Device, integer(s.Ops), num(s.FLOPs), num(s.Bytes), num(s.LowerBound), num(s.Expected), num(s.MemoryBoundShare),
			string(v.Conditions.L2), string(v.Conditions.Launch), ""})
	}
	return []Table{pts, sum}
}

// NewRooflineViews are the views of a workload priced on several devices
// (roofline.Compare); origins[i] says where ps[i]'s device came from when
// it was not named. A workload of several ops gets its totals.
func NewRooflineViews(ps []roofline.Priced, origins []string) []RooflineView {
	views := make([]RooflineView, len(ps))
	for i, p := range ps {
		v := RooflineView{Device: p.Model.Device().Name, Origin: origins[i], Conditions: p.Model.Conditions(), Points: p.Points, totals: p.Summary}
		switch {
		case p.Unsupported != nil:
			v.NotAvailable, v.Error = p.Unsupported.Reason(), p.Err.Error()
		default:
			v.Efficiency, v.Notes = p.Model.Efficiency(), p.Model.Notes
			if len(p.Points) > 1 {
				s := p.Summary
				v.Summary = &s
			}
		}
		views[i] = v
	}
	return views
}

// RooflineModelNotes states the figures behind a device's expected times;
// verbose adds the model's notes on where each figure comes from.
func RooflineModelNotes(m *roofline.Model, verbose bool) []string {
	e := m.Efficiency()
	basis := "datasheet figures"
	if m.Device().Measured != nil {
		basis = "measured ceilings"
	}
	notes := []string{
		"Lower bound: datasheet peaks. Expected: " + basis + ", " + m.Conditions().String() + " (--l2, --launch), " + fixedCost(m) + ", " +
			e.Family + " GEMM efficiency, DRAM stream " + units.FormatBandwidth(m.Stream()) + ".",
		"FMA = 2 FLOPs, transcendentals apart ('gpucalc roofline --help'); -v for sources.",
	}
	if verbose {
		notes = append(notes, m.Notes...)
	}
	return notes
}

// fixedCost states what an op costs besides its work under the model's
// launch condition.
func fixedCost(m *roofline.Model) string {
	if m.Conditions().Launch == roofline.LaunchGraph {
		return units.FormatDuration(m.Efficiency().GraphKernel) + " per kernel in a CUDA graph"
	}
	return units.FormatDuration(m.FixedCost()) + " fixed cost per op"
}

// RooflineTables renders the views of one workload as 'gpucalc roofline'
// prints them: a comparison when there are several devices, then each
// device's ops (with notes[i] under views[i]) and totals.
func RooflineTables(workload string, views []RooflineView, notes [][]string) []Table {
	var tables []Table
	if len(views) > 1 {
		var devs, na []string
		var pts [][]roofline.Point
		for _, v := range views {
			devs, pts, na = append(devs, v.Device), append(pts, v.Points), append(na, v.NotAvailable)
		}
		t := RooflineCompare(devs, pts, na)
		for _, v := range views {
			if v.Error != "" {
				t.Notes = append(t.Notes, v.Error+".")
			}
		}
		tables = append(tables, t)
	}
	for i, v := range views {
		if v.NotAvailable != "" {
			continue
		}
		title := "Roofline on " + v.Device
		if v.Origin != "" {
			title += " (" + v.Origin + ")"
		}
		if workload != "ops" {
			title += ": " + workload
		}
		tables = append(tables, RooflinePoints(title, v.Points, notes[i]))
		if v.Summary != nil {
			tables = append(tables, RooflineSummary("Totals on "+v.Device, *v.Summary, v.Points))
		}
	}
	return tables
}

// RooflineView is one device's result of 'gpucalc roofline'.
type RooflineView struct {
	Device     string             `json:"device"`
	Origin     string             `json:"device_origin,omitempty"`
	Efficiency devices.Efficiency `json:"efficiency"`
	// Conditions are the measurement conditions the times assume.
	Conditions roofline.Conditions `json:"conditions"`
	Notes      []string            `json:"notes,omitempty"`
	Points     []roofline.Point    `json:"points"`
	Summary    *roofline.Summary   `json:"summary,omitempty"`
	// NotAvailable is why the device cannot run the workload ("no fp8
	// tensor cores"), in a side-by-side answer whose other devices can;
	// Error the whole message. Such a view has no points.
	NotAvailable string `json:"not_available,omitempty"`
	Error        string `json:"error,omitempty"`
	// totals are the points' totals, which JSON shows (as Summary) only
	// for a workload of several ops and CSV always.
	totals roofline.Summary
}

// RooflineComparison is 'gpucalc roofline --devices': one view per device.
type RooflineComparison struct {
	Devices []RooflineView `json:"devices"`
}
