package trace

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/units"
)

// reviewChecks are the design-review checks that hold for a measured step:
// the others judge choices a trace does not show (memory capacity, host
// transfers, the device's peaks) or are replaced by measured findings
// (launch overhead, occupancy).
var reviewChecks = map[string]bool{"fusion": true, "gemm_alignment": true, "wave_quantization": true}

// reviewed runs the design review (returning its findings and the
// expected time their shares are of) on the modelled ops as a workload: one
// entry per row, its calls as the count, and as its input the op whose
// kernels most often ran just before it on the same stream, when that op's
// output has as many elements as this op reads (a trace records no tensor
// identities, so this is the evidence that one feeds the other).
func reviewed(rows []OpRow, d devices.Device) ([]review.Finding, float64, error) {
	w := ops.Workload{Name: "trace"}
	names := make([]string, len(rows))
	used := map[string]int{}
	for i, r := range rows {
		n := r.Name + " " + r.Shapes
		if used[n]++; used[n] > 1 {
			n += fmt.Sprintf(" #%d", used[n])
		}
		names[i] = n
	}
	for i, r := range rows {
		if !r.Modelled() {
			continue
		}
		e := ops.Entry{Name: names[i], Op: r.Model[0], Count: r.Calls * len(r.Model)}
		// Findings name the op as the trace does, its shapes once, and
		// quote what its kernels took.
		e.Label, e.Measured = r.Name, r.Measured/float64(e.Count)
		e.Inputs = []string{}
		best, most := -1, 0
		for p, n := range r.after {
			if rows[p].Modelled() && outElems(rows[p].Model[0]) == inElems(r.Model[0]) && (n > most || n == most && p < best) {
				best, most = p, n
			}
		}
		if best >= 0 {
			e.Inputs = []string{names[best]}
		}
		w.Entries = append(w.Entries, e)
	}
	if len(w.Entries) == 0 {
		return nil, 0, nil
	}
	rep, err := review.Check(w, d, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("reviewing the ops: %w", err)
	}
	var out []review.Finding
	for _, f := range rep.Findings {
		if reviewChecks[f.Check] {
			out = append(out, f)
		}
	}
	return out, rep.Expected, nil
}

// inElems is the size of the one input a fusable op reads from its
// producer, in elements.
func inElems(o ops.Op) int64 {
	if o.Elems > 0 {
		return o.Elems
	}
	return o.Rows * o.Cols
}

// outElems is the size of an op's output, in elements (0 when unknown).
func outElems(o ops.Op) int64 {
	switch o.Kind {
	case ops.Matmul, ops.Linear:
		return max(o.Batch, 1) * o.M * o.N
	case ops.Conv2D:
		return o.N * o.K * o.P() * o.Q()
	case ops.Attention:
		return o.B * o.Heads * o.SeqQ * o.HeadDim
	case ops.Reduce:
		return o.Rows
	}
	return inElems(o)
}

// Thresholds of the measured findings.
const (
	// launchBound is the share of kernels shorter than the launch
	// overhead, or of the GPU window a stream sits idle, from which the
	// step is reported as launch-bound.
	launchBound = 0.25
	// lowOccupancy is the theoretical occupancy (percent) at or below
	// which a kernel taking at least review.Material of the kernel time
	// is reported with its limiter.
	lowOccupancy = 25.0
)

// measuredFindings are the checks made on what the trace measured.
func measuredFindings(a Analysis) []review.Finding {
	var out []review.Finding
	s := a.Summary
	if s.Kernels > 0 && len(a.Streams) > 0 {
		busiest := a.Streams[0]
		for _, st := range a.Streams {
			if st.Busy > busiest.Busy {
				busiest = st
			}
		}
		short := float64(s.ShortKernels) / float64(s.Kernels)
		idle := busiest.Idle / s.Window
		if short >= launchBound || idle >= launchBound {
			out = append(out, review.Finding{
				Severity: review.Warning, Check: "launch_overhead",
				Message: fmt.Sprintf("%d of %d kernels (%s) ran shorter than the launch overhead (%s), %s of kernel time; stream %d was idle %s of the GPU window (%s of %s): the GPU waits for the CPU to launch work.",
					s.ShortKernels, s.Kernels, pct(short), units.FormatDuration(s.LaunchOverhead), units.FormatDuration(s.ShortTime),
					busiest.Stream, pct(idle), units.FormatDuration(busiest.Idle), units.FormatDuration(s.Window)),
				Fix: "capture the step in a CUDA graph (torch.cuda.CUDAGraph, or torch.compile(mode=\"reduce-overhead\")), fuse the small ops (torch.compile), or give each launch more work (larger batch)",
				Numbers: map[string]float64{"short_kernels": float64(s.ShortKernels), "kernels": float64(s.Kernels), "short_kernel_seconds": s.ShortTime,
					"launch_overhead_seconds": s.LaunchOverhead, "idle_seconds": busiest.Idle, "window_seconds": s.Window},
			})
		}
	}
	type group struct {
		k    KernelRow
		time float64
	}
	var low []*group
	byName := map[string]*group{}
	for _, k := range a.Kernels {
		if k.Error != "" || k.Occupancy > lowOccupancy {
			continue
		}
		key := fmt.Sprintf("%s|%d|%d|%d", k.Name, k.Block[0]*k.Block[1]*k.Block[2], k.Registers, k.BlocksPerSM)
		g := byName[key]
		if g == nil {
			g = &group{k: k}
			byName[key] = g
			low = append(low, g)
		}
		g.time += k.Time
	}
	for _, g := range low {
		if g.time < review.Material*s.KernelTime {
			continue
		}
		k := g.k
		threads := k.Block[0] * k.Block[1] * k.Block[2]
		out = append(out, review.Finding{
			Severity: review.Info, Check: "low_occupancy", Op: k.Name,
			Message: fmt.Sprintf("%s (%d threads, %d registers, %s shared memory) runs %d block(s) per SM, %.4g%% theoretical occupancy, limited by %s; %s of kernel time (%s).",
				k.Name, threads, k.Registers, units.FormatSize(int64(k.SharedMemory)), k.BlocksPerSM, k.Occupancy, limits(k.Limiters), pct(g.time/s.KernelTime), units.FormatDuration(g.time)),
			Fix: "none needed for warp-specialised tensor-core kernels (cuBLAS nvjet, cuDNN and FlashAttention kernels hide latency with asynchronous copies); otherwise free " +
				limits(k.Limiters) + " per block (__launch_bounds__, smaller tiles) for more resident warps",
			Numbers: map[string]float64{"occupancy_pct": k.Occupancy, "blocks_per_sm": float64(k.BlocksPerSM), "time_seconds": g.time},
		})
	}
	return out
}

// sortFindings orders findings by severity; within one, the measured
// findings (about the whole step) come first, then the review's by saving,
// as the review sorted them.
func sortFindings(measured, reviewed []review.Finding) []review.Finding {
	rank := func(s review.Severity) int {
		return slices.Index([]review.Severity{review.Error, review.Warning, review.Info}, s)
	}
	fs := append(measured, reviewed...)
	slices.SortStableFunc(fs, func(a, b review.Finding) int { return cmp.Compare(rank(a.Severity), rank(b.Severity)) })
	return fs
}

// limits words a limiter set: "registers and shared memory".
func limits(l occupancy.Limiter) string {
	return strings.NewReplacer("|", " and ", "_", " ").Replace(l.String())
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// exposedFix is what hides each collective kind behind compute.
var exposedFix = map[string]string{
	AllGather: "prefetch the next all-gather while this layer computes (FSDP2: set_modules_to_forward_prefetch and set_modules_to_backward_prefetch; FSDP1: forward_prefetch=True, backward_prefetch=BACKWARD_PRE), " +
		"and shard larger units so each all-gather is larger and fewer",
	ReduceScatter: "let the reduce-scatter overlap the rest of backward: shard larger units (fewer, larger reduce-scatters), keep backward_prefetch on, " +
		"and with gradient accumulation skip it on all but the last micro-batch (FSDP2 set_requires_gradient_sync(False), FSDP1 no_sync())",
	AllReduce: "DDP: larger buckets (bucket_cap_mb), gradient_as_bucket_view=True, no_sync() on all but the last micro-batch of gradient accumulation; " +
		"tensor parallel: overlap the all-reduce with the next matmul (async tensor parallelism)",
}

// rankFindings are the multi-rank checks: each collective kind's
// communication left exposed on the rank that waits least for the others
// (what prefetching or larger buckets can hide; the other ranks' excess is
// waiting for a straggler), and stragglers.
func rankFindings(rs Ranks) []review.Finding {
	out := []review.Finding{}
	if len(rs.Ranks) == 0 {
		return out
	}
	for _, kind := range []string{AllGather, ReduceScatter, AllReduce} {
		var least *Rank
		for i := range rs.Ranks {
			if r := &rs.Ranks[i]; least == nil || r.ExposedBy[kind] < least.ExposedBy[kind] {
				least = r
			}
		}
		exp := least.ExposedBy[kind]
		if least.Window <= 0 || exp < exposedShare*least.Window {
			continue
		}
		words := strings.ReplaceAll(kind, "_", "-")
		out = append(out, review.Finding{
			Severity: review.Warning, Check: "exposed_" + kind,
			Message: fmt.Sprintf("%s runs %s with no compute beside it on rank %d, %s of its GPU window (%s), the least of any rank: communication the step waits for.",
				words, units.FormatDuration(exp), least.Rank, pct(exp/least.Window), units.FormatDuration(least.Window)),
			Fix: exposedFix[kind], Saves: exp,
			Numbers: map[string]float64{"rank": float64(least.Rank), "exposed_seconds": exp, "window_seconds": least.Window},
		})
	}
	med := rs.MedianWindow
	s := rs.Slowest
	if len(rs.Ranks) > 1 && med > 0 && math.Abs(s.Own) >= stragglerSpread*med {
		var msg string
		if s.Own > 0 {
			what := map[string]string{"compute": "more compute", "idle": "more idle time: its host launched the work late"}[s.Because]
			msg = fmt.Sprintf("rank %d holds the step back: it spends %s more than rank %d outside communication (compute %s, idle %s), %s of the median GPU window; %s. Rank %d waits for it inside its NCCL kernels (exposed communication %s).",
				s.Rank, units.FormatDuration(s.Own), s.Reference, signed(s.Compute), signed(s.Idle), pct(s.Own/med), what, s.Reference, signed(-s.Exposed))
		} else {
			what := map[string]string{"compute": "less compute: the others carry more work", "idle": "less idle time: the others' hosts launch their work late"}[s.Because]
			msg = fmt.Sprintf("rank %d is the odd one: it spends %s less than rank %d outside communication (compute %s, idle %s), %s of the median GPU window, while the other ranks lie closer together; %s. It waits for them inside its NCCL kernels (exposed communication %s).",
				s.Rank, units.FormatDuration(-s.Own), s.Reference, signed(s.Compute), signed(s.Idle), pct(-s.Own/med), what, signed(s.Exposed))
		}
		out = append(out, review.Finding{
			Severity: review.Warning, Check: "straggler",
			Message: msg,
			Fix: "even out the ranks' work: the same batch shapes on every rank (pad or bucket sequence lengths), the data loader off the critical path (num_workers, pin_memory), " +
				"no rank-0-only work inside the step (logging, checkpointing, evaluation); check the slow GPU's clocks and power (nvidia-smi -q -d PERFORMANCE)",
			Saves:   math.Abs(s.Own),
			Numbers: map[string]float64{"rank": float64(s.Rank), "reference_rank": float64(s.Reference), "own_delta_seconds": s.Own, "median_window_seconds": med},
		})
	}
	return out
}

// signed writes a duration with its sign: +1.2 ms, -0.3 ms (ASCII: the
// findings go to CSV too).
func signed(x float64) string {
	if x == 0 {
		return "0"
	}
	if x < 0 {
		return "-" + units.FormatDuration(-x)
	}
	return "+" + units.FormatDuration(x)
}
