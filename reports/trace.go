package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/project"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/trace"
	"github.com/gpucalc/gpucalc/units"
)

// Trace renders a torch.profiler trace set against its device: the ops by
// measured time, the ops losing most time, the kernels with their
// occupancy, the GPU's use of its time, and the findings. top limits the
// op, kernel and finding rows (0: all); origin says where the device came
// from.
func Trace(a trace.Analysis, origin string, top int) []Table {
	return []Table{traceOps(a, origin, top), traceLost(a), traceKernels(a, top), traceSummary(a), traceFindings(a, top)}
}

// limit is n cut to top (0: no limit).
func limit(n, top int) int {
	if top > 0 && n > top {
		return top
	}
	return n
}

func traceOps(a trace.Analysis, origin string, top int) Table {
	t := Table{
		Title:    fmt.Sprintf("Ops on %s (%s), by measured GPU time", a.Device, origin),
		Header:   []string{"#", "Op", "Input shapes", "DType", "Calls", "Measured", "Lower bound", "Expected", "Efficiency", "Saved", "FLOP/s", "Bandwidth", "Bound"},
		Optional: []string{"FLOP/s", "Bandwidth", "Lower bound", "DType", "Calls", "Efficiency"},
	}
	n := limit(len(a.Ops), top)
	for i, r := range a.Ops[:n] {
		t.Rows = append(t.Rows, opRow(i+1, r))
	}
	s := a.Summary
	t.Notes = append(t.Notes, fmt.Sprintf("Nothing lost: ops %s + unattributed %s = kernel time %s (%d kernels).",
		units.FormatDuration(s.OpTime), units.FormatDuration(s.UnattributedTime), units.FormatDuration(s.KernelTime), s.Kernels))
	more := "Efficiency = expected / measured (roofline model, less its launch overhead: a trace times kernels alone); Saved = measured − expected."
	if n < len(a.Ops) {
		more += fmt.Sprintf(" %d more ops (--top 0 lists all).", len(a.Ops)-n)
	}
	t.Notes = append(t.Notes, more)
	return t
}

func opRow(i int, r trace.OpRow) []string {
	dt := string(r.DType)
	if dt == "" {
		dt = "-"
	}
	row := []string{strconv.Itoa(i), strings.TrimPrefix(r.Name, "aten::"), r.Shapes, dt, strconv.Itoa(r.Calls), duration(r.Measured)}
	if !r.Modelled() {
		return append(row, "-", "-", "-", "-", "-", "-", "unmodelled: "+r.Unmodelled)
	}
	flops := "-"
	if r.FLOPs > 0 {
		flops = units.FormatFLOPS(r.AchievedFLOPs)
	}
	return append(row, duration(r.LowerBound), duration(r.Expected), reviewPct(r.Efficiency), duration(r.Saved), flops,
		units.FormatBandwidth(r.AchievedBandwidth), r.Bound)
}

func traceLost(a trace.Analysis) Table {
	t := Table{
		Title:    "Most time lost against the expected speed",
		Header:   []string{"#", "Op", "Input shapes", "Calls", "Measured", "Expected", "Efficiency", "Saved"},
		Optional: []string{"Calls", "Efficiency"},
	}
	for i, k := range a.Summary.TopByLost {
		r := a.Ops[k]
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), strings.TrimPrefix(r.Name, "aten::"), r.Shapes, strconv.Itoa(r.Calls),
			duration(r.Measured), duration(r.Expected), reviewPct(r.Efficiency), duration(r.Saved)})
	}
	if len(t.Rows) == 0 {
		t.Notes = []string{"every modelled op runs at or above its expected speed"}
	}
	return t
}

func traceKernels(a trace.Analysis, top int) Table {
	t := Table{
		Title:    "Kernels by GPU time, with gpucalc's theoretical occupancy",
		Header:   []string{"#", "Kernel", "Launches", "Time", "Grid", "Block", "Registers", "Shared memory", "Occupancy", "Blocks/SM", "Limited by", "Trace's estimate"},
		Optional: []string{"Trace's estimate", "Blocks/SM", "Grid", "Block", "Registers", "Shared memory", "Launches"},
	}
	n := limit(len(a.Kernels), top)
	disagree := 0
	for _, k := range a.Kernels {
		if k.Disagrees {
			disagree++
		}
	}
	for i, k := range a.Kernels[:n] {
		occ, blocks, lim := occPct(k.Occupancy), strconv.Itoa(k.BlocksPerSM), k.Limiters.String()
		if k.Error != "" {
			occ, blocks, lim = "-", "-", k.Error
		}
		est := ""
		if k.Disagrees {
			est = occPct(*k.TraceEstimate)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), ncu.ShortName(k.Name), strconv.Itoa(k.Launches), duration(k.Time),
			dim3(k.Grid), dim3(k.Block), strconv.Itoa(k.Registers), units.FormatSize(int64(k.SharedMemory)), occ, blocks, lim, est})
	}
	note := fmt.Sprintf("Trace's estimate: its \"est. achieved occupancy %%\", shown where it differs from gpucalc's (%d of %d launch configurations).", disagree, len(a.Kernels))
	if n < len(a.Kernels) {
		note += fmt.Sprintf(" %d more (--top 0 lists all).", len(a.Kernels)-n)
	}
	t.Notes = []string{note}
	return t
}

func dim3(d [3]int) string {
	switch {
	case d[1] == 1 && d[2] == 1:
		return strconv.Itoa(d[0])
	case d[2] == 1:
		return fmt.Sprintf("%d×%d", d[0], d[1])
	}
	return fmt.Sprintf("%d×%d×%d", d[0], d[1], d[2])
}

func traceSummary(a trace.Analysis) Table {
	s := a.Summary
	t := Table{Title: "The step's GPU time", Header: []string{"What", "Time", "Share", "Detail"}}
	share := func(x, of float64) string {
		if of <= 0 {
			return "-"
		}
		return reviewPct(x / of)
	}
	add := func(what string, v, of float64, detail string) {
		t.Rows = append(t.Rows, []string{what, duration(v), share(v, of), detail})
	}
	add("GPU window", s.Window, s.Window, "first GPU activity to last, any stream")
	for _, st := range a.Streams {
		add(fmt.Sprintf("stream %d busy", st.Stream), st.Busy, s.Window, fmt.Sprintf("%d kernels, copies and sets", st.Activities))
		add(fmt.Sprintf("stream %d idle", st.Stream), st.Idle, s.Window, "waiting for work")
	}
	add("kernels", s.KernelTime, s.KernelTime, fmt.Sprintf("%d kernels", s.Kernels))
	add("in ops with a model", s.ModelledTime, s.KernelTime, fmt.Sprintf("expected %s: %s efficiency", units.FormatDuration(s.Expected), share(s.Expected, s.ModelledTime)))
	add("in ops without one", s.UnmodelledTime, s.KernelTime, "measured time kept, not priced")
	for _, u := range a.Unattributed {
		add("unattributed", u.Time, s.KernelTime, fmt.Sprintf("%s: %s", plural(u.Kernels, "kernel"), u.Reason))
	}
	add("kernels shorter than the launch", s.ShortTime, s.KernelTime, fmt.Sprintf("%d of %d kernels under %s", s.ShortKernels, s.Kernels, units.FormatDuration(s.LaunchOverhead)))
	for _, x := range a.Transfers {
		add(x.Kind, x.Time, s.KernelTime, fmt.Sprintf("%d × %s, %s", x.Count, x.Name, units.FormatDecimal(float64(x.Bytes), "B")))
	}
	var names []string
	for _, i := range s.TopByTime[:limit(len(s.TopByTime), 3)] {
		names = append(names, strings.TrimPrefix(a.Ops[i].Name, "aten::")+" "+a.Ops[i].Shapes)
	}
	t.Notes = []string{"Costliest: " + strings.Join(names, "; ") + ". Shares of the GPU window for streams, of kernel time otherwise."}
	return t
}

// traceFindings renders the findings as the design review does, shares
// taken of the modelled ops' expected time as the review counts it.
func traceFindings(a trace.Analysis, top int) Table {
	fs := a.Findings[:limit(len(a.Findings), top)]
	t := reviewFindings(review.Report{Device: a.Device, Findings: fs, Expected: a.Summary.ReviewedExpected})
	if len(fs) < len(a.Findings) {
		t.Notes = append(t.Notes, fmt.Sprintf("%d more findings (--top 0 lists all).", len(a.Findings)-len(fs)))
	}
	return t
}

// chartOps is how many of the costliest ops a trace chart labels.
const chartOps = 8

// TraceChart puts the modelled ops that do arithmetic on device d's
// roofline at their achieved position: the intensity of their ideal bytes,
// FLOPs over measured time, each with its roof (compute ceiling or DRAM
// slope) at that intensity and coloured by its family. The costliest are
// labelled.
func TraceChart(a trace.Analysis, d devices.Device) chart.Roofline {
	cd := chart.Device{Name: d.Name, DRAM: d.Memory.BytesPerSecond}
	cd.L2, cd.L2Measured = l2Ceiling(d)
	c := chart.Roofline{Title: "torch.profiler ops on " + d.Name}
	seen := map[string]bool{}
	labelled := 0
	for _, r := range a.Ops {
		if !r.Modelled() || r.Bytes <= 0 {
			continue
		}
		if r.FLOPs <= 0 {
			// Copies and casts have no place on a log axis: the chart
			// counts them in its title, the command lists them.
			c.Points = append(c.Points, chart.Point{Group: opGroup(r.Model[0].Kind), Bytes: r.Bytes, Measured: true})
			continue
		}
		name := ceilingName(r.Ceiling)
		if !seen[r.Ceiling] && r.CeilingFLOPs > 0 {
			seen[r.Ceiling] = true
			cd.Ceilings = append(cd.Ceilings, chart.Ceiling{Name: name, FLOPS: r.CeilingFLOPs})
		}
		p := chart.Point{Group: opGroup(r.Model[0].Kind), FLOPs: r.FLOPs, Bytes: r.Bytes, Rate: r.AchievedFLOPs, Measured: true}
		if r.CeilingFLOPs > 0 {
			p.Roof = min(r.CeilingFLOPs, cd.DRAM*r.FLOPs/r.Bytes)
		}
		if labelled < chartOps {
			labelled++
			p.Label = cutRunes(strings.TrimPrefix(r.Name, "aten::")+" "+r.Shapes, chartNameRunes)
		}
		c.Points = append(c.Points, p)
	}
	c.Devices = []chart.Device{cd}
	return c
}

// TraceRecords is 'gpucalc trace' as CSV sections: ops, kernels, streams,
// transfers, unattributed, findings and the summary, every row.
func TraceRecords(a trace.Analysis) []Table {
	ops := Table{Key: "ops", Header: []string{"rank", "name", "input_shapes", "dtype", "calls", "kernels", "measured_seconds", "flops", "bytes",
		"achieved_flops_per_second", "achieved_bytes_per_second", "lower_bound_seconds", "expected_seconds", "efficiency", "saved_seconds",
		"bound", "compute_ceiling", "unmodelled"}}
	for i, r := range a.Ops {
		row := []string{integer(i + 1), r.Name, r.Shapes, string(r.DType), integer(r.Calls), integer(r.Kernels), num(r.Measured)}
		if r.Modelled() {
			row = append(row, num(r.FLOPs), num(r.Bytes), num(r.AchievedFLOPs), num(r.AchievedBandwidth), num(r.LowerBound), num(r.Expected),
				num(r.Efficiency), num(r.Saved), r.Bound, r.Ceiling, "")
		} else {
			row = append(row, "", "", "", "", "", "", "", "", "", "", r.Unmodelled)
		}
		ops.Rows = append(ops.Rows, row)
	}
	ks := Table{Key: "kernels", Header: []string{"rank", "name", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
		"registers_per_thread", "shared_memory_bytes", "launches", "time_seconds", "theoretical_occupancy_pct", "blocks_per_sm", "limiters",
		"trace_estimate_pct", "trace_disagrees", "occupancy_error"}}
	for i, k := range a.Kernels {
		occ, blocks, lim, est := "", "", "", ""
		if k.Error == "" {
			occ, blocks, lim = num(k.Occupancy), integer(k.BlocksPerSM), k.Limiters.String()
		}
		if k.TraceEstimate != nil {
			est = num(*k.TraceEstimate)
		}
		ks.Rows = append(ks.Rows, []string{integer(i + 1), k.Name, integer(k.Grid[0]), integer(k.Grid[1]), integer(k.Grid[2]),
			integer(k.Block[0]), integer(k.Block[1]), integer(k.Block[2]), integer(k.Registers), integer(k.SharedMemory),
			integer(k.Launches), num(k.Time), occ, blocks, lim, est, boolean(k.Disagrees), k.Error})
	}
	st := Table{Key: "streams", Header: []string{"stream", "busy_seconds", "idle_seconds", "activities"}}
	for _, s := range a.Streams {
		st.Rows = append(st.Rows, []string{integer(s.Stream), num(s.Busy), num(s.Idle), integer(s.Activities)})
	}
	tr := Table{Key: "transfers", Header: []string{"kind", "name", "count", "bytes", "time_seconds"}}
	for _, x := range a.Transfers {
		tr.Rows = append(tr.Rows, []string{x.Kind, x.Name, integer(x.Count), num(float64(x.Bytes)), num(x.Time)})
	}
	un := Table{Key: "unattributed", Header: []string{"reason", "kernels", "time_seconds"}}
	for _, u := range a.Unattributed {
		un.Rows = append(un.Rows, []string{u.Reason, integer(u.Kernels), num(u.Time)})
	}
	fs := Table{Key: "findings", Header: []string{"number", "severity", "check", "op", "saves_seconds", "share_of_expected", "message", "fix"}}
	for i, f := range a.Findings {
		saves, share := "", ""
		if f.Saves > 0 {
			saves, share = num(f.Saves), num(f.Saves/a.Summary.ReviewedExpected)
		}
		fs.Rows = append(fs.Rows, []string{integer(i + 1), string(f.Severity), f.Check, f.Op, saves, share, f.Message, f.Fix})
	}
	s := a.Summary
	sum := Table{Key: "summary", Header: []string{"device", "kernels", "kernel_seconds", "op_seconds", "unattributed_seconds", "modelled_seconds",
		"expected_seconds", "unmodelled_seconds", "gpu_window_seconds", "launch_overhead_seconds", "short_kernels", "short_kernel_seconds",
		"transfer_seconds", "transfer_bytes"},
		Rows: [][]string{{a.Device, integer(s.Kernels), num(s.KernelTime), num(s.OpTime), num(s.UnattributedTime), num(s.ModelledTime),
			num(s.Expected), num(s.UnmodelledTime), num(s.Window), num(s.LaunchOverhead), integer(s.ShortKernels), num(s.ShortTime),
			num(s.TransferTime), num(float64(s.TransferBytes))}}}
	return []Table{ops, ks, st, tr, un, fs, sum}
}

// TraceView is 'gpucalc trace': the device and the trace's analysis, and
// with --on its projection to other devices.
type TraceView struct {
	DeviceOrigin string `json:"device_origin"`
	trace.Analysis
	Projection *project.Result `json:"projection,omitempty"`
}
