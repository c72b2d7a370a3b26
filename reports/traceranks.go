package reports

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/trace"
	"github.com/gpucalc/gpucalc/units"
)

// TraceRanksView is 'gpucalc trace' of several ranks' traces.
type TraceRanksView struct {
	DeviceOrigin string `json:"device_origin"`
	trace.Ranks
}

// TraceRanks renders a multi-GPU step: each rank's GPU time, the
// collectives against the link, the slowest rank and the findings. top
// limits the collective and finding rows (0: all).
func TraceRanks(rs trace.Ranks, origin string, top int) []Table {
	return []Table{rankTimes(rs, origin), rankCollectives(rs, top), rankSlowest(rs), rankFindings(rs, top)}
}

func rankTimes(rs trace.Ranks, origin string) Table {
	t := Table{
		Title:  fmt.Sprintf("GPU time per rank on %s (%s)", rs.Device, origin),
		Header: []string{"Rank", "GPU window", "Compute", "Communication", "Overlap", "Exposed comm", "Exposed share", "Idle", "NCCL kernels", "NCCL kernel time", "Steps", "File"},
	}
	for _, r := range rs.Ranks {
		share := "-"
		if r.Window > 0 {
			share = reviewPct(r.Exposed / r.Window)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(r.Rank), duration(r.Window), duration(r.Compute), duration(r.Communication), duration(r.Overlap),
			duration(r.Exposed), share, duration(r.Idle), strconv.Itoa(r.CommKernels), duration(r.CommKernelTime), strconv.Itoa(r.Steps), filepath.Base(r.File)})
	}
	t.Notes = append(t.Notes, "Window = compute + exposed comm + idle. Compute: kernels other than NCCL's; communication: NCCL kernels; each a union over all streams, overlap their intersection.")
	if len(rs.Notes) > 0 {
		t.Notes = append(t.Notes, strings.Join(rs.Notes, "; ")+".")
	}
	return t
}

func rankCollectives(rs trace.Ranks, top int) Table {
	t := Table{
		Title: "Collectives (NCCL kernels) against the " + linkName(rs.Link),
		Header: []string{"#", "Collective", "Recorded as", "Message", "DType", "Ranks", "Calls/rank", "Mean", "Transfer", "Alg BW", "Bus BW",
			"Curve bus BW", "Efficiency"},
	}
	n := limit(len(rs.Collectives), top)
	for i, c := range rs.Collectives[:n] {
		name, dt := c.Name, c.DType
		if name == "" {
			name = "-"
		}
		if dt == "" {
			dt = "-"
		}
		row := []string{strconv.Itoa(i + 1), c.Kind, name}
		if c.Bytes <= 0 {
			row = append(row, "-", dt, strconv.Itoa(c.GroupSize), strconv.Itoa(c.Calls), duration(c.Mean), duration(c.Transfer), "-", "-", "-", "-")
		} else {
			eff := reviewPct(c.Efficiency)
			if c.LatencyBound {
				eff = "latency-bound"
			}
			row = append(row, units.FormatSize(int64(c.Bytes)), dt, strconv.Itoa(c.GroupSize), strconv.Itoa(c.Calls), duration(c.Mean), duration(c.Transfer),
				units.FormatBandwidth(c.AlgBandwidth), units.FormatBandwidth(c.BusBandwidth), units.FormatBandwidth(c.CurveBus), eff)
		}
		t.Rows = append(t.Rows, row)
	}
	note := fmt.Sprintf("Transfer: per call, the shortest kernel of any rank (the last to arrive waits least). Bus BW = message / transfer × nccl-tests' factor (2(n−1)/n all-reduce, (n−1)/n all-gather, reduce-scatter); curve: %s + bus bytes / %s; a message whose curve time is mostly that latency is latency-bound, with no efficiency.",
		units.FormatDuration(rs.Link.Latency), units.FormatBandwidth(rs.Link.BusBandwidth))
	if n < len(rs.Collectives) {
		note += fmt.Sprintf(" %d more (--top 0 lists all).", len(rs.Collectives)-n)
	}
	t.Notes = []string{note}
	if rs.Link.Note != "" {
		t.Notes = append(t.Notes, rs.Link.Note)
	}
	if len(rs.Collectives) == 0 {
		t.Notes = []string{"no NCCL kernels in the traces"}
	}
	return t
}

// linkName words the link: "NVLink 4 (18 links) curve: 450 GB/s per
// direction, measured".
func linkName(l trace.LinkCurve) string {
	how := "NCCL defaults"
	if l.Measured {
		how = "measured"
	}
	return fmt.Sprintf("%s curve: %s per direction, %s", l.Type, units.FormatBandwidth(l.Bandwidth), how)
}

func rankSlowest(rs trace.Ranks) Table {
	s := rs.Slowest
	var hi, lo trace.Rank
	for _, r := range rs.Ranks {
		if r.Rank == s.Rank {
			hi = r
		}
		if r.Rank == s.Reference {
			lo = r
		}
	}
	title := "Slowest rank"
	if s.Own < 0 {
		title = "Odd rank out (faster)"
	}
	t := Table{Title: fmt.Sprintf("%s: %d, against rank %d", title, s.Rank, s.Reference),
		Header: []string{"What", fmt.Sprintf("Rank %d", s.Rank), fmt.Sprintf("Rank %d", s.Reference), "Difference"}}
	add := func(what string, a, b, d float64) {
		t.Rows = append(t.Rows, []string{what, duration(a), duration(b), signedDuration(d)})
	}
	add("GPU window", hi.Window, lo.Window, s.Window)
	add("compute", hi.Compute, lo.Compute, s.Compute)
	add("exposed communication", hi.Exposed, lo.Exposed, s.Exposed)
	add("idle", hi.Idle, lo.Idle, s.Idle)
	add("outside communication", hi.Own(), lo.Own(), s.Own)
	why := map[string]string{"compute": "more compute", "idle": "more idle time, its host launched the work late", "": "no rank does more"}[s.Because]
	note := "Slowest: the rank whose time outside communication lies farthest from the median, above it; the other ranks wait for it inside their NCCL kernels. Why: %s."
	if s.Own < 0 {
		why = map[string]string{"compute": "less compute, the others carry more work", "idle": "less idle time, the others' hosts launch their work late", "": "no rank does less"}[s.Because]
		note = "Odd rank out: the rank whose time outside communication lies farthest from the median, below it; it waits for the others inside its NCCL kernels. Why: %s."
	}
	t.Notes = []string{fmt.Sprintf(note, why)}
	return t
}

// rankFindings renders the findings as the review does, with savings as
// shares of the median rank's window.
func rankFindings(rs trace.Ranks, top int) Table {
	fs := rs.Findings[:limit(len(rs.Findings), top)]
	t := reviewFindings(review.Report{Device: rs.Device, Findings: fs, Expected: rs.MedianWindow})
	t.Header[5] = "Of GPU window"
	if len(fs) < len(rs.Findings) {
		t.Notes = append(t.Notes, fmt.Sprintf("%d more findings (--top 0 lists all).", len(rs.Findings)-len(fs)))
	}
	return t
}

// TraceRanksRecords is a multi-rank 'gpucalc trace' as CSV sections:
// ranks, collectives, slowest and findings.
func TraceRanksRecords(rs trace.Ranks) []Table {
	ranks := Table{Key: "ranks", Header: []string{"rank", "file", "steps", "gpu_window_seconds", "compute_seconds", "communication_seconds", "overlap_seconds",
		"exposed_communication_seconds", "idle_seconds", "communication_kernels", "communication_kernel_seconds", "compute_kernels",
		"exposed_all_gather_seconds", "exposed_reduce_scatter_seconds", "exposed_all_reduce_seconds"}}
	for _, r := range rs.Ranks {
		ranks.Rows = append(ranks.Rows, []string{integer(r.Rank), r.File, integer(r.Steps), num(r.Window), num(r.Compute), num(r.Communication), num(r.Overlap),
			num(r.Exposed), num(r.Idle), integer(r.CommKernels), num(r.CommKernelTime), integer(r.ComputeKernels),
			num(r.ExposedBy[trace.AllGather]), num(r.ExposedBy[trace.ReduceScatter]), num(r.ExposedBy[trace.AllReduce])})
	}
	cs := Table{Key: "collectives", Header: []string{"kind", "name", "kernel", "dtype", "message_bytes", "group_size", "calls", "kernels", "time_seconds",
		"mean_seconds", "transfer_seconds", "algorithm_bytes_per_second", "bus_bytes_per_second", "expected_seconds", "curve_bus_bytes_per_second",
		"efficiency", "latency_bound", "missing"}}
	for _, c := range rs.Collectives {
		cs.Rows = append(cs.Rows, []string{c.Kind, c.Name, c.Kernel, c.DType, optNum(c.Bytes), integer(c.GroupSize), integer(c.Calls), integer(c.Kernels),
			num(c.Time), num(c.Mean), num(c.Transfer), optNum(c.AlgBandwidth), optNum(c.BusBandwidth), optNum(c.Expected), optNum(c.CurveBus), optNum(c.Efficiency), boolean(c.LatencyBound), c.Missing})
	}
	s := rs.Slowest
	sl := Table{Key: "slowest", Header: []string{"rank", "reference_rank", "because", "window_delta_seconds", "compute_delta_seconds",
		"exposed_communication_delta_seconds", "idle_delta_seconds", "own_delta_seconds"},
		Rows: [][]string{{integer(s.Rank), integer(s.Reference), s.Because, num(s.Window), num(s.Compute), num(s.Exposed), num(s.Idle), num(s.Own)}}}
	med := rs.MedianWindow
	fs := Table{Key: "findings", Header: []string{"number", "severity", "check", "op", "saves_seconds", "share_of_gpu_window", "message", "fix"}}
	for i, f := range rs.Findings {
		saves, share := "", ""
		if f.Saves > 0 && med > 0 {
			saves, share = num(f.Saves), num(f.Saves/med)
		}
		fs.Rows = append(fs.Rows, []string{integer(i + 1), string(f.Severity), f.Check, f.Op, saves, share, f.Message, f.Fix})
	}
	return []Table{ranks, cs, sl, fs}
}
