package review

import (
	"fmt"

	"github.com/gpucalc/gpucalc/access"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/ops"
)

// RoundTrip is the effective time a warp's DRAM load takes at low
// occupancy, seconds: the H100 SXM streaming 16-byte loads with 4 warps per
// SM reached 659.7 GB/s (lat_hide.csv), so 4 × 32 × 16 B in flight on each
// of 132 SMs took 410 ns per round trip. DRAM latency in nanoseconds varies
// little across generations (315–390 ns unloaded from V100 to H100,
// RRZE and markdewing pointer-chase benchmarks at 1380 and 1410 MHz), so the figure serves every device.
const RoundTrip = 410e-9

// defaultLoadBytes is the per-thread load width assumed where a kernel
// gives no global access pattern: a 16-byte vector load, as library
// elementwise kernels issue.
const defaultLoadBytes = 16

// Sustained is the DRAM bandwidth a memory-bound kernel sustains with warps
// resident warps on each of sms SMs, each thread keeping ilp loads of bytes
// in flight (Little's law with RoundTrip), capped at stream, the device's
// streaming bandwidth.
func Sustained(warps, sms, bytes, ilp int, stream float64) float64 {
	inflight := float64(warps*access.WarpSize*bytes*ilp) * float64(sms)
	return min(stream, inflight/RoundTrip)
}

// kernel is what the review knows of an op's own kernel.
type kernel struct {
	res       occupancy.Result
	runs      bool    // the occupancy is valid and the block launches
	bytes     int     // per thread per load
	ilp       int     // loads in flight per thread
	assumed   bool    // bytes and ilp were assumed (no global pattern)
	sustained float64 // bandwidth the bytes in flight sustain, capped at streaming
	coal      *access.Coalescing
	// penalty is the time the kernel takes over a library kernel's, per
	// run, for a memory-bound op: DRAM traffic at the sustained bandwidth,
	// inflated by sectors it fetches and does not use.
	penalty float64
}

// kernelModels models the kernels the workload describes (nil where it
// describes none) and adds their penalties to the ops' expected times.
func (c *checker) kernelModels() ([]*kernel, error) {
	arch, archErr := c.d.Limits()
	out := make([]*kernel, len(c.w.Entries))
	stream := c.m.Stream()
	for i, e := range c.w.Entries {
		k := e.Kernel
		if k == nil || archErr != nil {
			continue
		}
		km := &kernel{res: occupancy.Calculate(arch, kernelOf(k), launchOf(k)), bytes: defaultLoadBytes, ilp: 1, assumed: true, sustained: stream}
		km.runs = km.res.Err == nil && km.res.Blocks > 0
		if g := k.Global; g != nil {
			km.bytes, km.ilp, km.assumed = g.Bytes, g.ILP, false
			co, err := access.Coalesce(access.Pattern{ElemBytes: g.Bytes, Stride: g.Stride, Offset: g.Offset})
			if err != nil {
				return nil, fmt.Errorf("op %s: kernel.global: %w", e.Name, err)
			}
			km.coal = &co
		}
		p := c.r.Ops[i].Point
		if km.runs && p.Bound == "memory" {
			km.sustained = Sustained(km.res.Warps, c.d.SMs, km.bytes, km.ilp, stream)
			eff := 1.0
			if km.coal != nil {
				eff = km.coal.Efficiency
			}
			km.penalty = p.Bytes/(km.sustained*eff) - p.Bytes/stream
		}
		out[i] = km
	}
	return out, nil
}

// kernels checks the kernels the workload describes: occupancy with its
// limiter, spills, occupancy too low for a memory-bound op, coalescing of
// the global access and bank conflicts of the shared-memory access.
func (c *checker) kernels(models []*kernel) error {
	arch, archErr := c.d.Limits()
	for i, e := range c.w.Entries {
		if e.Kernel == nil {
			continue
		}
		if archErr != nil {
			c.add(Finding{Check: "occupancy", Op: e.Name,
				Message: fmt.Sprintf("%s's kernel is not checked: %v.", e.Name, archErr),
				Fix:     "review it on an NVIDIA device of the same class", Numbers: map[string]float64{}})
			continue
		}
		km := models[i]
		c.occupancy(e, c.r.Ops[i], arch, km)
		if km.coal != nil {
			c.coalescing(e, c.r.Ops[i], km)
		}
		if e.Kernel.Shared != nil {
			if err := c.banks(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func kernelOf(k *ops.Kernel) occupancy.Kernel {
	return occupancy.Kernel{Regs: k.Regs, StaticSmem: k.StaticSmem}
}

func launchOf(k *ops.Kernel) occupancy.Launch {
	return occupancy.Launch{Threads: k.Threads, DynamicSmem: k.DynamicSmem}
}

func (c *checker) occupancy(e ops.Entry, o Op, arch devices.Arch, km *kernel) {
	k, res := e.Kernel, km.res
	desc := fmt.Sprintf("%d threads, %d registers, %s static + %s dynamic shared memory", k.Threads, k.Regs, size(float64(k.StaticSmem)), size(float64(k.DynamicSmem)))
	switch {
	case res.Err != nil:
		c.add(Finding{Check: "occupancy", Op: e.Name, Severity: Error,
			Message: fmt.Sprintf("%s's kernel (%s) is invalid on %s: %v.", e.Name, desc, c.d.Name, res.Err),
			Fix:     "fix the kernel's launch configuration", Numbers: map[string]float64{}})
		return
	case res.Blocks == 0:
		c.add(Finding{Check: "occupancy", Op: e.Name, Severity: Error,
			Message: fmt.Sprintf("%s's kernel (%s) cannot launch on %s: %v.", e.Name, desc, c.d.Name, res.Reason),
			Fix:     "use fewer threads, registers or shared memory per block (gpucalc occupancy suggests a block size)", Numbers: map[string]float64{}})
		return
	}
	c.add(Finding{Check: "occupancy", Op: e.Name, Severity: Info,
		Message: fmt.Sprintf("%s's kernel (%s): %s per SM, %d of %d warps (%s occupancy), limited by %s.",
			e.Name, desc, plural(res.Blocks, "block"), res.Warps, res.MaxWarps, pct(res.Occupancy()), res.Limiters),
		Fix: "none needed unless another finding asks for more warps",
		Numbers: map[string]float64{"blocks_per_sm": float64(res.Blocks), "warps_per_sm": float64(res.Warps),
			"max_warps_per_sm": float64(res.MaxWarps), "occupancy": res.Occupancy()},
	})
	if k.SpillBytes > 0 {
		more := min(255, k.Regs+(k.SpillBytes+3)/4)
		alt := *k
		alt.Regs = more
		r2 := occupancy.Calculate(arch, kernelOf(&alt), launchOf(&alt))
		fix := fmt.Sprintf("let the compiler keep the values in registers (raise -maxrregcount or relax __launch_bounds__): at %d registers, %s per SM and %s occupancy (limited by %s)", more, plural(r2.Blocks, "block"), pct(r2.Occupancy()), r2.Limiters)
		if r2.Blocks == 0 {
			fix = fmt.Sprintf("shrink the per-thread state (smaller tiles per thread, recompute instead of keeping): at %d registers the block cannot launch", more)
		}
		c.add(Finding{Check: "spills", Op: e.Name, Severity: Warning,
			Message: fmt.Sprintf("%s's kernel spills %d bytes per thread to local memory at %d registers: %s per block of extra L1/L2 (and possibly DRAM) traffic on every store and reload.",
				e.Name, k.SpillBytes, k.Regs, size(float64(k.SpillBytes*k.Threads))),
			Fix:     fix,
			Numbers: map[string]float64{"spill_bytes_per_thread": float64(k.SpillBytes), "regs": float64(k.Regs), "alternative_regs": float64(more), "alternative_occupancy": r2.Occupancy()},
		})
	}
	stream := c.m.Stream()
	if o.Point.Bound != "memory" || km.sustained >= stream {
		return
	}
	assumed := ""
	if km.assumed {
		assumed = " (16-byte loads assumed; give kernel.global)"
	}
	need := stream * RoundTrip / float64(c.d.SMs)
	have := float64(res.Warps * access.WarpSize * km.bytes * km.ilp)
	per := o.Point.Bytes/km.sustained - o.Point.Bytes/stream
	saves := float64(e.Count) * per
	c.add(Finding{Check: "low_occupancy", Op: e.Name, Saves: saves,
		Message: fmt.Sprintf("%s is memory-bound, but its kernel keeps only %s in flight per SM (%d warps × 32 threads × %d B × %s%s); hiding a %s DRAM round trip at %s needs %s. It sustains about %s, costing %s per run.",
			e.Name, size(have), res.Warps, km.bytes, plural(km.ilp, "load"), assumed, dur(RoundTrip), bw(stream), size(need), bw(km.sustained), dur(per)),
		Fix: fmt.Sprintf("keep more bytes in flight: more resident warps (occupancy is limited by %s), wider loads (16-byte vectors) or more independent loads per thread (unroll)", res.Limiters),
		Numbers: map[string]float64{"warps_per_sm": float64(res.Warps), "inflight_bytes_per_sm": have, "needed_bytes_per_sm": need,
			"sustained_bytes_per_second": km.sustained, "stream_bytes_per_second": stream, "saved_seconds": saves},
	})
}

func (c *checker) coalescing(e ops.Entry, o Op, km *kernel) {
	g, co := e.Kernel.Global, km.coal
	if co.Sectors <= co.IdealSectors {
		return
	}
	eff := co.Efficiency * c.d.Memory.BytesPerSecond
	var saves float64
	if o.Point.Bound == "memory" {
		saves = float64(e.Count) * (o.Point.Bytes/(km.sustained*co.Efficiency) - o.Point.Bytes/km.sustained)
	}
	f := Finding{Check: "coalescing", Op: e.Name, Saves: saves,
		Message: fmt.Sprintf("%s's global access (%d-byte elements, stride %d, offset %d B) touches %d sectors (%d lines) per warp request where %d would do: %s of each sector is used, so DRAM delivers at most %s of useful data (of %s) unless other warps use the rest of each sector.",
			e.Name, g.Bytes, g.Stride, g.Offset, co.Sectors, co.Lines, co.IdealSectors, pct(co.Efficiency), bw(eff), bw(c.d.Memory.BytesPerSecond)),
		Fix: "make consecutive lanes touch consecutive addresses: stage the tile through shared memory (transpose), store structures of arrays, align the base to 32 bytes",
		Numbers: map[string]float64{"sectors_per_request": float64(co.Sectors), "lines_per_request": float64(co.Lines),
			"ideal_sectors_per_request": float64(co.IdealSectors), "efficiency": co.Efficiency, "effective_bytes_per_second": eff, "saved_seconds": saves},
	}
	if o.Point.Bound != "memory" {
		f.Severity = Warning
	}
	c.add(f)
}

func (c *checker) banks(e ops.Entry) error {
	s := e.Kernel.Shared
	p := access.Pattern{ElemBytes: s.Bytes, Stride: s.Stride, Offset: s.Offset}
	bc, err := access.BankConflicts(p)
	if err != nil {
		return fmt.Errorf("op %s: kernel.shared: %w", e.Name, err)
	}
	if bc.Way <= 1 {
		return nil
	}
	p.Stride++
	padded, err := access.BankConflicts(p)
	if err != nil {
		return fmt.Errorf("op %s: kernel.shared: %w", e.Name, err)
	}
	fix := fmt.Sprintf("pad each row by one element (stride %d): %d-way, %.3g× the conflict-free time", p.Stride, padded.Way, padded.Slowdown)
	if padded.Way > 1 {
		fix = "swizzle the layout (XOR the column with the row, as CUTLASS and TMA do): padding by one element still conflicts " + fmt.Sprintf("(%d-way)", padded.Way)
	}
	c.add(Finding{Check: "bank_conflicts", Op: e.Name, Severity: Warning,
		Message: fmt.Sprintf("%s's shared-memory access (%d-byte elements, stride %d) is a %d-way bank conflict: %d wavefronts over %s per warp request, %.3g× the conflict-free time.",
			e.Name, s.Bytes, s.Stride, bc.Way, bc.Wavefronts, plural(bc.Phases, "phase"), bc.Slowdown),
		Fix: fix,
		Numbers: map[string]float64{"way": float64(bc.Way), "wavefronts": float64(bc.Wavefronts), "phases": float64(bc.Phases),
			"slowdown": bc.Slowdown, "padded_way": float64(padded.Way)},
	})
	return nil
}
