package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/project"
	"github.com/gpucalc/gpucalc/trace"
	"github.com/gpucalc/gpucalc/units"
)

// TraceProjection renders a trace projected to other devices: its ops
// (top rows; 0: all) with their time on each target and what it scaled
// by, the projected kernel time per target with its share in each bound,
// and what of the source step cannot be projected. verbose adds the
// ceilings' sources and the projection's notes.
func TraceProjection(r project.Result, origin string, top int, verbose bool) []Table {
	return []Table{projectedOps(r, origin, top), projectedSummary(r, verbose), projectedStep(r)}
}

func boundName(o project.Op) string {
	if !o.Modelled {
		return string(o.Bound) + " (unmodelled)"
	}
	return string(o.Bound)
}

// ceilingNames are how the table names an op's ceiling.
var ceilingNames = map[string]string{"dram": "DRAM", "dram_read": "DRAM reads", "l2": "L2", "link": "NCCL bus bandwidth"}

// why says what an op's time scaled by: the launch floor, the ceiling it
// ran at and that ceiling on both devices, or SM clock and waves.
func why(o project.Op, floor, floorRatio float64) string {
	switch {
	case o.Bound == project.Launch:
		return fmt.Sprintf("launch floor %s → %s", units.FormatDuration(floor), units.FormatDuration(floor*floorRatio))
	case o.Generic >= 0.5 && o.TargetCeiling == o.Ceiling && ceilingNames[o.Ceiling] != "":
		return "PyTorch's generic elementwise kernel (strided, broadcast or casting operands): instruction issue, SM clock and waves"
	case o.Ceiling == "":
		s := "SM clock and waves"
		if o.Unmodelled != "" {
			s = o.Unmodelled + ": " + s
		}
		return s
	}
	name, rates := ceilingNames[o.Ceiling], units.FormatBandwidth(o.SourceRate)+" → "+units.FormatBandwidth(o.TargetRate)
	if name == "" {
		name, rates = ceilingName(o.Ceiling), units.FormatFLOPS(o.SourceRate)+" → "+units.FormatFLOPS(o.TargetRate)
		if o.TargetCeiling != o.Ceiling {
			rates += " (" + ceilingName(o.TargetCeiling) + ")"
		}
	}
	s := fmt.Sprintf("%s %.0f%% of its time: %s", name, 100*o.AtCeiling, rates)
	if o.Unmodelled != "" {
		s = o.Unmodelled + "; " + s
	}
	return s
}

func projectedOps(r project.Result, origin string, top int) Table {
	var names []string
	for _, p := range r.Projections {
		names = append(names, p.Device)
	}
	t := Table{
		Title:  fmt.Sprintf("Ops projected from %s (%s) to %s, by source time", r.Source.Device, origin, strings.Join(names, ", ")),
		Header: []string{"#", "Op", "Input shapes", "Source"},
		// Every target's Bound column goes at once: they share a header.
		Optional: []string{"Why", "Bound", "Input shapes", "Ratio"},
	}
	one := len(r.Projections) == 1
	for _, p := range r.Projections {
		if one {
			t.Header = append(t.Header, "Projected", "Ratio", "Bound", "Why")
		} else {
			t.Header = append(t.Header, p.Device, "Ratio", "Bound")
		}
	}
	if len(r.Projections) == 0 {
		return t
	}
	ops := r.Projections[0].Ops
	n := limit(len(ops), top)
	row := func(rank, name, shapes string, source float64, at func(p project.Projection) project.Op) {
		cells := []string{rank, name, shapes, duration(source)}
		for _, p := range r.Projections {
			o := at(p)
			cells = append(cells, duration(o.Projected), ratio(o.Ratio), boundName(o))
			if one {
				cells = append(cells, why(o, r.Floor, p.Ceilings.Launch/r.Source.Launch))
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	for i := range ops[:n] {
		row(strconv.Itoa(i+1), strings.TrimPrefix(ops[i].Name, "aten::"), ops[i].Shapes, ops[i].Source,
			func(p project.Projection) project.Op { return p.Ops[i] })
	}
	if u := r.Projections[0].Unattributed; u.Source > 0 {
		row("-", "unattributed", "", u.Source, func(p project.Projection) project.Op { return p.Unattributed })
	}
	note := "Ratio = projected / source time; Bound = what most of the op's time scaled by (launch floor, DRAM, L2, compute, latency: SM clock and waves, or link: NCCL)."
	if n < len(ops) {
		note += fmt.Sprintf(" %d more ops (--top 0 lists all).", len(ops)-n)
	}
	t.Notes = []string{note}
	return t
}

// shareOf is the projection's share of projected kernel time in bound b
// among modelled kernels; Launch counts every kernel at the floor, and ""
// the other unmodelled ones.
func shareOf(p project.Projection, b project.Bound) float64 {
	var s float64
	for _, x := range p.Bounds {
		in := x.Bound == b && x.Modelled
		switch {
		case x.Bound == project.Launch, x.Bound == project.Link:
			in = b == x.Bound
		case !x.Modelled:
			in = b == ""
		}
		if in {
			s += x.Share
		}
	}
	return s
}

var shareBounds = []project.Bound{project.Launch, project.DRAM, project.L2, project.Compute, project.Latency, project.Link}

func projectedSummary(r project.Result, verbose bool) Table {
	t := Table{
		Title:  "Kernel time projected from " + r.Source.Device + ", and its share in each bound",
		Header: []string{"Device", "Kernel time", "Speed-up", "Launch", "DRAM", "L2", "Compute", "Latency", "Link", "Unmodelled", "Ceilings"},
	}
	if len(r.Projections) > 0 {
		s := r.Projections[0].Summary
		t.Rows = append(t.Rows, []string{r.Source.Device + " (measured)", duration(s.SourceKernel), "1.00×", "", "", "", "", "", "", "", basis(r.Source.Measured)})
	}
	var validated, not []string
	for _, p := range r.Projections {
		row := []string{p.Device, duration(p.Summary.ProjectedKernel), speedup(p.Summary.Speedup)}
		for _, b := range shareBounds {
			row = append(row, reviewPct(shareOf(p, b)))
		}
		row = append(row, reviewPct(shareOf(p, "")), basis(p.Ceilings.Measured))
		t.Rows = append(t.Rows, row)
		if p.Validated {
			validated = append(validated, p.Device)
		} else {
			not = append(not, p.Device)
		}
	}
	note := "Speed-up = source / projected kernel time; shares of the projected kernel time."
	if len(validated) > 0 {
		note += fmt.Sprintf(" Validated: %s ↔ %s, measured ceilings on both, checked against traces recorded on both.", r.Source.Device, strings.Join(validated, ", "))
	}
	t.Notes = []string{note}
	if len(not) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("Not validated: %s (datasheet figures × the catalog's efficiencies, or a device file's: not checked against traces). -v for the ceilings' sources.", strings.Join(not, ", ")))
	} else {
		t.Notes = append(t.Notes, "-v for the ceilings' sources.")
	}
	if verbose {
		t.Notes = append(t.Notes, r.Source.Device+": "+strings.Join(r.Source.Sources, "; "))
		for _, p := range r.Projections {
			t.Notes = append(t.Notes, p.Device+": "+strings.Join(p.Ceilings.Sources, "; "))
			t.Notes = append(t.Notes, p.Notes...)
		}
	}
	return t
}

func basis(measured bool) string {
	if measured {
		return "measured"
	}
	return "datasheet"
}

func projectedStep(r project.Result) Table {
	s := r.Step
	t := Table{Title: "The source step on " + r.Source.Device + ": what is not projected", Header: []string{"What", "Time", "Share", "Detail"}}
	share := func(x float64) string {
		if s.Window <= 0 {
			return "-"
		}
		return reviewPct(x / s.Window)
	}
	add := func(what string, v float64, detail string) {
		t.Rows = append(t.Rows, []string{what, duration(v), share(v), detail})
	}
	add("GPU window", s.Window, "first GPU activity to last, any stream")
	add("GPU busy", s.Busy, "kernels (projected), copies and sets (not)")
	add("GPU waiting for the host", s.HostBound, "launch-bound: the CPU's time, not projected")
	add("kernels at the launch floor", s.FloorTime, fmt.Sprintf("%s no longer than twice the floor (%s)", plural(s.FloorKernels, "kernel"), units.FormatDuration(r.Floor)))
	add("memcpy and memset", s.Transfers, "not projected")
	t.Notes = []string{"On another GPU the step takes at least its projected kernel time; where the source GPU waited for the host, the host sets the pace."}
	return t
}

// ProjectionRecords is a projection as CSV sections: projected_ops (a row
// per target and op), projected_bounds and projected_summary.
func ProjectionRecords(r project.Result) []Table {
	ops := Table{Key: "projected_ops", Header: []string{"device", "rank", "name", "input_shapes", "source_seconds", "projected_seconds", "ratio", "bound",
		"modelled", "ceiling", "target_ceiling", "at_ceiling", "source_ceiling_per_second", "target_ceiling_per_second", "unmodelled"}}
	bs := Table{Key: "projected_bounds", Header: []string{"device", "bound", "modelled", "kernels", "source_seconds", "projected_seconds", "share"}}
	sum := Table{Key: "projected_summary", Header: []string{"device", "validated", "kernels", "source_kernel_seconds", "projected_kernel_seconds", "speedup",
		"source_device", "launch_floor_seconds", "gpu_window_seconds", "gpu_busy_seconds", "host_bound_seconds"}}
	for _, p := range r.Projections {
		rec := func(rank string, o project.Op) {
			ops.Rows = append(ops.Rows, []string{p.Device, rank, o.Name, o.Shapes, num(o.Source), num(o.Projected), num(o.Ratio), string(o.Bound),
				boolean(o.Modelled), o.Ceiling, o.TargetCeiling, num(o.AtCeiling), num(o.SourceRate), num(o.TargetRate), o.Unmodelled})
		}
		for i, o := range p.Ops {
			rec(integer(i+1), o)
		}
		if p.Unattributed.Source > 0 {
			rec("", p.Unattributed)
		}
		for _, b := range p.Bounds {
			bs.Rows = append(bs.Rows, []string{p.Device, string(b.Bound), boolean(b.Modelled), integer(b.Kernels), num(b.Source), num(b.Projected), num(b.Share)})
		}
		s := p.Summary
		sum.Rows = append(sum.Rows, []string{p.Device, boolean(p.Validated), integer(s.Kernels), num(s.SourceKernel), num(s.ProjectedKernel), num(s.Speedup),
			r.Source.Device, num(r.Floor), num(r.Step.Window), num(r.Step.Busy), num(r.Step.HostBound)})
	}
	return []Table{ops, bs, sum}
}

// TraceProjectionChart puts the trace's modelled ops that do arithmetic on
// the rooflines of the source and of each target (datasheet roofs): each
// op at its measured rate on the source (hollow) and at its projected rate
// on every target (filled, the target's shape), each with its roof at its
// intensity. The costliest share a label (a number in the key) across the
// devices.
func TraceProjectionChart(a trace.Analysis, r project.Result) chart.Roofline {
	var names []string
	for _, p := range r.Projections {
		names = append(names, p.Device)
	}
	c := chart.Roofline{Title: fmt.Sprintf("torch.profiler ops on %s, projected to %s", r.Source.Device, strings.Join(names, ", ")), Filled: "projected"}
	specs := []devices.Device{r.Source.Spec()}
	for _, p := range r.Projections {
		specs = append(specs, p.Ceilings.Spec())
	}
	devs := make([]chart.Device, len(specs))
	seen := make([]map[string]bool, len(specs))
	for i, d := range specs {
		devs[i] = chart.Device{Name: d.Name, DRAM: d.Memory.BytesPerSecond}
		devs[i].L2, devs[i].L2Measured = l2Ceiling(d)
		seen[i] = map[string]bool{}
	}
	// point adds op row i on device dev at rate, with the roof of the
	// device's peak key there.
	point := func(dev int, r trace.OpRow, key, label string, rate float64, measured bool) {
		p := chart.Point{Group: opGroup(r.Model[0].Kind), Device: dev, FLOPs: r.FLOPs, Bytes: r.Bytes, Rate: rate, Measured: measured, Label: label}
		if pk, ok := specs[dev].Dense[key]; ok && pk.PerSecond > 0 {
			if !seen[dev][key] {
				seen[dev][key] = true
				devs[dev].Ceilings = append(devs[dev].Ceilings, chart.Ceiling{Name: ceilingName(key), FLOPS: pk.PerSecond})
			}
			p.Roof = min(pk.PerSecond, devs[dev].DRAM*r.FLOPs/r.Bytes)
		}
		c.Points = append(c.Points, p)
	}
	labelled := 0
	for i, row := range a.Ops {
		if !row.Modelled() || row.Bytes <= 0 || row.Measured <= 0 {
			continue
		}
		if row.FLOPs <= 0 {
			// Counted in the chart's title (no place on a log axis), once.
			c.Points = append(c.Points, chart.Point{Group: opGroup(row.Model[0].Kind), Bytes: row.Bytes, Measured: true})
			continue
		}
		label := ""
		if labelled < chartOps {
			labelled++
			label = cutRunes(strings.TrimPrefix(row.Name, "aten::")+" "+row.Shapes, chartNameRunes)
		}
		point(0, row, row.Ceiling, label, row.AchievedFLOPs, true)
		for j, p := range r.Projections {
			o := p.Ops[i]
			key := row.Ceiling
			if _, ok := specs[j+1].Dense[o.TargetCeiling]; ok {
				key = o.TargetCeiling
			}
			if o.Projected > 0 {
				point(j+1, row, key, label, row.FLOPs/o.Projected, false)
			}
		}
	}
	c.Devices = devs
	return c
}
