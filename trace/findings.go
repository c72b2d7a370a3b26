package trace

import (
	"cmp"
	"fmt"
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
