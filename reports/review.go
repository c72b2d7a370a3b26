package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/units"
)

// Review is the answer of `gpucalc check`: one report per device.
type Review struct {
	// Origin says where the device came from when it was not named.
	Origin  string          `json:"device_origin,omitempty"`
	Reports []review.Report `json:"reports"`
}

func reviewPct(x float64) string {
	switch {
	case x >= 0.1:
		return strconv.FormatFloat(100*x, 'f', 0, 64) + "%"
	case x >= 0.001:
		return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
	case x == 0:
		return "0%"
	}
	return "<0.1%"
}

func reviewCount(v float64) string {
	for _, p := range []struct {
		s string
		m float64
	}{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if v >= p.m {
			return strconv.FormatFloat(v/p.m, 'g', 4, 64) + " " + p.s
		}
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// findingCounts writes "1 error, 2 warnings, 3 info".
func findingCounts(r review.Report) string {
	var parts []string
	for _, s := range []review.Severity{review.Error, review.Warning, review.Info} {
		n := r.Count(s)
		word := string(s)
		if n != 1 && s != review.Info {
			word += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, word))
	}
	return strings.Join(parts, ", ")
}

// reviewTimes are a report's lower bound and expected time, or "none"
// and why where it has none (a training step that does not fit).
func reviewTimes(r review.Report) (lower, expected string) {
	if r.NoTime != "" {
		return "none: " + r.NoTime, "none: " + r.NoTime
	}
	return units.FormatDuration(r.LowerBound), units.FormatDuration(r.Expected)
}

// ReviewTables renders a review as tables: a comparison when there are
// several devices, then for each device a summary, the ops and the
// findings, with each finding's text and fix listed under the findings
// table (ReviewRecords has them as columns).
func ReviewTables(rv Review) []Table {
	var out []Table
	if len(rv.Reports) > 1 {
		t := Table{Title: "Devices: " + rv.Reports[0].Workload, Header: []string{"Device", "Lower bound", "Expected", "vs first", "Errors", "Warnings", "Info"}}
		for _, r := range rv.Reports {
			lower, expected := reviewTimes(r)
			vs := ""
			if first := rv.Reports[0]; first.NoTime == "" && r.NoTime == "" && r.Expected > 0 {
				vs = strconv.FormatFloat(first.Expected/r.Expected, 'f', 2, 64) + "×"
			}
			t.Rows = append(t.Rows, []string{r.Device, lower, expected, vs,
				strconv.Itoa(r.Count(review.Error)), strconv.Itoa(r.Count(review.Warning)), strconv.Itoa(r.Count(review.Info))})
		}
		t.Notes = []string{"vs first: the first device's expected time over this one's (above 1: faster)"}
		out = append(out, t)
	}
	for _, r := range rv.Reports {
		out = append(out, reviewSummary(r, rv.Origin))
		if !noOps(r) {
			out = append(out, reviewOps(r))
		}
		out = append(out, reviewFindings(r))
	}
	return out
}

// noOps reports whether r has no ops because it has no time (a training
// step that does not fit): its op counts, bytes and tables are "none",
// not zero and empty.
func noOps(r review.Report) bool { return r.NoTime != "" && len(r.Ops) == 0 }

func reviewSummary(r review.Report, origin string) Table {
	dev := r.Device
	if origin != "" {
		dev += " (" + origin + ")"
	}
	t := Table{Title: "Check: " + r.Workload, Header: []string{"Item", "Value"}}
	add := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
	add("Device", dev)
	if noOps(r) {
		add("Ops", "none: "+r.NoTime)
	} else {
		add("Ops", strconv.Itoa(len(r.Ops)))
		add("FLOPs", reviewCount(r.FLOPs))
		add("Bytes (ideal)", units.FormatDecimal(r.Bytes, "B"))
	}
	lower, expected := reviewTimes(r)
	add("Lower bound (datasheet peaks)", lower)
	add("Expected", expected)
	if r.Transfer > 0 {
		add("Host transfers (not in expected)", units.FormatDuration(r.Transfer))
	}
	add("Findings", findingCounts(r))
	t.Notes = append(t.Notes, r.Notes...)
	return t
}

func reviewOps(r review.Report) Table {
	t := Table{Title: "Ops on " + r.Device, Header: []string{"Op", "Spec", "Count", "Bound", "Lower bound", "Expected", "Share", "Of peak", "Of DRAM BW"},
		Optional: []string{"Of DRAM BW", "Of peak", "Lower bound", "Count"}}
	for _, o := range r.Ops {
		bound := string(o.Point.Bound)
		if o.Point.ExpectedBound == "launch" {
			bound += " (launch)"
		}
		t.Rows = append(t.Rows, []string{o.Name, o.Spec, strconv.Itoa(o.Count), bound,
			units.FormatDuration(o.LowerBound), units.FormatDuration(o.Expected), reviewPct(o.Share),
			reviewPct(o.PeakFraction), reviewPct(o.BandwidthFraction)})
	}
	for _, o := range r.Ops {
		if o.KernelPenalty > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: the workload's own kernel takes %s more than a library kernel would (see the findings); included in expected", o.Name, units.FormatDuration(o.KernelPenalty)))
		}
	}
	t.Notes = append(t.Notes,
		"times are for all runs of an op (count); lower bound from dense datasheet peaks, expected from achievable rates with a launch each",
		"of peak: FLOP/s at the expected time over the compute ceiling the op runs on; of DRAM BW: ideal bytes over expected time over datasheet bandwidth",
	)
	return t
}

func reviewFindings(r review.Report) Table {
	t := Table{Title: "Findings on " + r.Device, Header: []string{"#", "Severity", "Check", "Op", "Saves per run", "Of expected"}}
	for i, fd := range r.Findings {
		saves, share := "-", "-"
		if fd.Saves > 0 {
			saves, share = units.FormatDuration(fd.Saves), reviewPct(fd.Saves/r.Expected)
		}
		op := fd.Op
		if op == "" {
			op = "-"
		}
		t.Details = append(t.Details, fmt.Sprintf("%s Fix: %s.", fd.Message, fd.Fix))
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), string(fd.Severity), fd.Check, op, saves, share})
	}
	if len(r.Findings) == 0 {
		t.Notes = append(t.Notes, "no findings")
	}
	return t
}

// ReviewRecords is 'gpucalc check': one summary row per device, the ops
// and the findings of every device.
func ReviewRecords(rv Review) []Table {
	sum := Table{Key: "summary", Header: []string{"device", "workload", "ops", "flops", "bytes", "lower_bound_seconds", "expected_seconds",
		"transfer_seconds", "speedup_vs_first", "errors", "warnings", "infos"}}
	ops := Table{Key: "ops", Header: []string{"device", "name", "op", "count", "bound", "expected_bound", "lower_bound_seconds", "expected_seconds",
		"share", "peak_fraction", "bandwidth_fraction", "kernel_penalty_seconds"}}
	fs := Table{Key: "findings", Header: []string{"device", "number", "severity", "check", "op", "saves_seconds", "share_of_expected", "message", "fix"}}
	for _, r := range rv.Reports {
		speedup := ""
		if r.Expected > 0 && rv.Reports[0].NoTime == "" {
			speedup = num(rv.Reports[0].Expected / r.Expected)
		}
		lower, expected := num(r.LowerBound), num(r.Expected)
		if r.NoTime != "" {
			lower, expected = "", ""
		}
		n, flops, bytes := integer(len(r.Ops)), num(r.FLOPs), num(r.Bytes)
		if noOps(r) {
			n, flops, bytes = "", "", ""
		}
		sum.Rows = append(sum.Rows, []string{r.Device, r.Workload, n, flops, bytes, lower, expected,
			num(r.Transfer), speedup, integer(r.Count(review.Error)), integer(r.Count(review.Warning)), integer(r.Count(review.Info))})
		for _, o := range r.Ops {
			ops.Rows = append(ops.Rows, []string{r.Device, o.Name, o.Spec, integer(o.Count), string(o.Point.Bound), o.Point.ExpectedBound,
				num(o.LowerBound), num(o.Expected), num(o.Share), num(o.PeakFraction), num(o.BandwidthFraction), num(o.KernelPenalty)})
		}
		for i, f := range r.Findings {
			saves, share := "", ""
			if f.Saves > 0 {
				saves, share = num(f.Saves), num(f.Saves/r.Expected)
			}
			fs.Rows = append(fs.Rows, []string{r.Device, integer(i + 1), string(f.Severity), f.Check, f.Op, saves, share, f.Message, f.Fix})
		}
	}
	return []Table{sum, ops, fs}
}
