// Package project projects the kernels of a torch.profiler trace, measured
// on one GPU, to other GPUs: "what would this step's GPU time be on an
// H200, an A100, a B200?"
//
// It scales what the source measured rather than predicting afresh, so an
// inefficient kernel stays inefficient. Each kernel's time T is a launch
// floor F (the source's shortest kernel, at most a kernel's ramp) plus its
// work T − F. The floor scales by the ratio of the devices' launch
// overheads. The work is split by what limits it on the source, from its
// op's FLOPs and ideal bytes (trace's op models) over the op's measured
// work time: the share f of it at the limiting ceiling (DRAM, or L2 where
// the data of one call fit in both devices' L2; or the compute ceiling of
// the op's data type and path) scales by the ratio of those ceilings, the
// rest (latency, synchronisation, partial waves) by SM clock and the waves
// gpucalc's occupancy gives on each device:
//
//	T' = F·L'/L + (T−F)·[f·C/C' + (1−f)·(w'/w)·(clock/clock')]
//
// where a compute share also carries the wave quantization on the target.
// Kernels without an op model are scaled as latency-bound (SM count and
// clock), except the optimizer's ops over tensor lists, whose sizes the
// trace does not record but which stream their tensors: DRAM-bound. Both
// are counted apart.
//
// NCCL kernels are the link's: a kernel's time less the source link's
// latency is bus bytes at the source's bus bandwidth, moved on the target
// at its own (T' = L'_link + (T − L_link)·B/B'), whatever its SMs.
//
// The step's CPU launch gaps are not projected: they belong to the host.
package project

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/trace"
)

// Bound is what limits a kernel's time on the source, and so what its time
// scales by.
type Bound string

// Bounds.
const (
	// Launch: the kernel ran at the launch floor; it scales by the launch
	// overhead.
	Launch Bound = "launch"
	// DRAM, L2, Compute: at least half of its work ran at that ceiling.
	DRAM    Bound = "dram"
	L2      Bound = "l2"
	Compute Bound = "compute"
	// Latency: less than half of its work ran at any ceiling; it scales by
	// SM clock and waves.
	Latency Bound = "latency"
	// Link: an NCCL kernel; it scales by the devices' GPU-to-GPU links
	// (their collective curves), never by a compute ceiling or clock.
	Link Bound = "link"
)

// Result is a trace projected to one or more devices.
type Result struct {
	Source Ceilings `json:"source"`
	// Floor is the launch floor on the source: its shortest kernel, at
	// most the catalog's kernel ramp.
	Floor       float64      `json:"launch_floor_seconds"`
	Step        Step         `json:"step"`
	Projections []Projection `json:"projections"`
}

// Step is what the source step says about the host: time the GPU waited
// for the CPU cannot be projected.
type Step struct {
	// Window is the GPU span (first activity to last, any stream), Busy
	// the union of its kernels, copies and sets, HostBound the rest: the
	// GPU waiting for the CPU to launch work.
	Window    float64 `json:"gpu_window_seconds"`
	Busy      float64 `json:"gpu_busy_seconds"`
	HostBound float64 `json:"host_bound_seconds"`
	// FloorKernels ran at the launch floor (their work no longer than the
	// floor), taking FloorTime.
	FloorKernels int     `json:"launch_floor_kernels"`
	FloorTime    float64 `json:"launch_floor_kernel_seconds"`
	// Transfers is the memcpy and memset time, not projected.
	Transfers float64 `json:"transfer_seconds"`
}

// Projection is the trace projected to one device.
type Projection struct {
	Device string `json:"device"`
	// Validated is set when both devices have the catalog's measured
	// ceilings, unchanged by a user's device file: the H100 SXM and H200
	// SXM, checked against traces recorded on both.
	Validated bool     `json:"validated"`
	Ceilings  Ceilings `json:"ceilings"`
	// Ops follow the analysis's op rows, in their order; Unattributed are
	// the kernels no op claims.
	Ops          []Op    `json:"ops"`
	Unattributed Op      `json:"unattributed"`
	Bounds       []Share `json:"bounds"`
	Summary      Summary `json:"summary"`
	// Notes say where the projection assumed something (a missing peak, a
	// kernel that cannot launch as recorded on the target).
	Notes []string `json:"notes,omitempty"`
}

// Op is one op row projected.
type Op struct {
	Name   string `json:"name"`
	Shapes string `json:"input_shapes"`
	// Source is its measured kernel time, Projected the projection.
	Source    float64 `json:"source_seconds"`
	Projected float64 `json:"projected_seconds"`
	// Ratio is Projected / Source.
	Ratio float64 `json:"ratio"`
	// Bound holds most of its projected time; Modelled is false where it
	// had no op model, Unmodelled saying why. Generic is the share of its
	// work in PyTorch's generic elementwise kernels (strided, broadcast or
	// casting operands), which scales by SM clock, not bandwidth.
	Bound      Bound   `json:"bound"`
	Modelled   bool    `json:"modelled"`
	Unmodelled string  `json:"unmodelled,omitempty"`
	Generic    float64 `json:"generic_kernel_share"`
	// Ceiling names what its work (beyond the launch floor) scaled by:
	// "dram", "dram_read", "l2" or a compute peak ("bf16_tensor"), empty
	// when none (latency only); TargetCeiling the target's, when it lacks
	// the source's peak. AtCeiling is the share of its work at that
	// ceiling on the source; the rest scaled by SM clock and waves.
	// SourceRate and TargetRate are the ceiling on each device, bytes or
	// FLOPs per second.
	Ceiling       string  `json:"ceiling"`
	TargetCeiling string  `json:"target_ceiling"`
	AtCeiling     float64 `json:"at_ceiling"`
	SourceRate    float64 `json:"source_ceiling_per_second"`
	TargetRate    float64 `json:"target_ceiling_per_second"`
}

// Share is the kernel time in one bound.
type Share struct {
	Bound     Bound   `json:"bound"`
	Modelled  bool    `json:"modelled"`
	Kernels   int     `json:"kernels"`
	Source    float64 `json:"source_seconds"`
	Projected float64 `json:"projected_seconds"`
	// Share is of the projected kernel time.
	Share float64 `json:"share"`
}

// Summary is the step's GPU time on the target.
type Summary struct {
	Kernels         int     `json:"kernels"`
	SourceKernel    float64 `json:"source_kernel_seconds"`
	ProjectedKernel float64 `json:"projected_kernel_seconds"`
	// Speedup is SourceKernel / ProjectedKernel: above 1 the target is
	// faster.
	Speedup float64 `json:"speedup"`
}

// opClass is what limits an op row's kernels on the source.
type opClass struct {
	name, shapes string
	modelled     bool
	// lists: an op over tensor lists whose sizes were not recorded.
	lists bool
	// fromL2: its data can be in L2, having just been written by the op
	// before (activations). A matrix op's weights, or a decode step's KV
	// cache, were last touched a step ago, through far more data than L2
	// holds: they stream from DRAM.
	fromL2 bool
	// why is the reason an op has no model.
	why string
	// work is its kernels' time beyond the launch floor, generic the part
	// of it in PyTorch's generic elementwise kernels; bytes and flops its
	// ideal bytes and FLOPs; perCall the bytes of one call.
	work, generic, bytes, flops, perCall float64
	key                                  string
	row                                  *trace.OpRow
}

// verdict is an op's bound on one target and the ratio of its ceilings.
type verdict struct {
	bound Bound
	// f is the share of the work at the ceiling, ratio target/source time
	// at it.
	f, ratio float64
	// compute: the ceiling is a compute one, which wave quantization on
	// the target also changes.
	compute bool
	// key and tkey name the ceilings, cs and ct their rates.
	key, tkey string
	cs, ct    float64
}

// Project scales the kernels of trace t, analysed as a (trace.Analyze on
// the source device), from source to each target. srcArch is the
// architecture the kernels ran on (trace.Arch).
func Project(t *trace.Trace, a *trace.Analysis, source devices.Device, srcArch devices.Arch, targets []devices.Device) (Result, error) {
	src, err := CeilingsOf(source, srcArch, true)
	if err != nil {
		return Result{}, err
	}
	res := Result{Source: src, Floor: floor(t, src.eff.Ramp)}
	classes := classify(t, a, res.Floor)
	res.Step = step(t, res.Floor)
	for _, d := range targets {
		arch, err := d.Limits()
		tgt, err2 := CeilingsOf(d, arch, err == nil)
		if err2 != nil {
			return Result{}, err2
		}
		res.Projections = append(res.Projections, project(t, a, classes, src, tgt, res.Floor))
	}
	return res, nil
}

// floor is the source's launch floor: its shortest kernel, at most the
// kernel ramp (a trace of long kernels only says nothing about the floor).
func floor(t *trace.Trace, ramp float64) float64 {
	f := ramp
	for k := range t.Kernels.Pointers {
		if d := k.Dur * usec; d > 0 && d < f {
			f = d
		}
	}
	return f
}

const usec = 1e-6

// classify sums each op row's work and costs; the last class is the
// kernels no op claims.
func classify(t *trace.Trace, a *trace.Analysis, fl float64) []opClass {
	cs := make([]opClass, len(a.Ops)+1)
	for i := range a.Ops {
		r := &a.Ops[i]
		c := &cs[i]
		c.name, c.shapes, c.row = r.Name, r.Shapes, r
		c.modelled = r.Modelled() && (r.Bytes > 0 || r.FLOPs > 0)
		c.fromL2 = c.modelled && !r.Model[0].IsMatrix()
		c.bytes, c.flops, c.key = r.Bytes, r.FLOPs, r.Ceiling
		if r.Calls > 0 {
			c.perCall = r.Bytes / float64(r.Calls)
		}
		c.why = r.Unmodelled
		c.lists = !c.modelled && (strings.HasPrefix(r.Name, "aten::_foreach_") || strings.HasPrefix(r.Name, "aten::_fused_"))
		if c.lists {
			c.why += "; over tensor lists, taken as streaming from DRAM"
		}
	}
	cs[len(a.Ops)].name, cs[len(a.Ops)].why = "unattributed", "no op claims these kernels"
	generic := map[string]bool{}
	for i := range t.Kernels.Len() {
		k := t.Kernels.At(i)
		c := &cs[classOf(a, i, len(a.Ops))]
		w := max(0, k.Dur*usec-fl)
		c.work += w
		g, seen := generic[k.Name]
		if !seen {
			g = genericPath(k.Name)
			generic[k.Name] = g
		}
		if g {
			c.generic += w
		}
	}
	return cs
}

// genericPath reports whether a kernel is one of PyTorch's generic
// elementwise kernels: the path TensorIterator takes for strided,
// broadcast or type-casting operands (contiguous ones run
// vectorized_elementwise_kernel). It computes every element's address
// with integer arithmetic and loads one element at a time, so below the
// memory ceiling it is bound by instruction issue, which scales with SM
// clock and count, not bandwidth: the shared Llama prefill's broadcast
// multiply moves its bytes at 97% of the H100's DRAM copy rate and runs
// 0.96× as long on the H200, whose bandwidth is 1.41× the H100's.
func genericPath(name string) bool {
	return strings.Contains(name, "at::native::elementwise_kernel<") || strings.Contains(name, "at::native::unrolled_elementwise_kernel<")
}

func classOf(a *trace.Analysis, k, none int) int {
	if r := a.KernelOp(k); r >= 0 {
		return r
	}
	return none
}

// judge decides an op's bound on the target: the larger of its memory
// and compute shares, as measured on the source.
func judge(c *opClass, src, tgt Ceilings) verdict {
	switch {
	case c.lists:
		return verdict{bound: DRAM, f: 1, ratio: src.DRAM / tgt.DRAM, key: "dram", tkey: "dram", cs: src.DRAM, ct: tgt.DRAM}
	case !c.modelled, c.work <= 0:
		return verdict{bound: Latency, ratio: 1}
	}
	// A matrix op's traffic is reads of its operands: the read rate is its
	// ceiling (the H200 reads at 4.62 TB/s but copies at 4.27).
	level, key, cs, ct := DRAM, "dram_read", src.DRAMRead, tgt.DRAMRead
	if c.fromL2 {
		key, cs, ct = "dram", src.DRAM, tgt.DRAM
		if src.L2 > 0 && tgt.L2 > 0 && c.perCall <= float64(min(src.L2Bytes, tgt.L2Bytes)) {
			level, key, cs, ct = L2, "l2", src.L2, tgt.L2
		}
	}
	u := c.bytes / (c.work * cs)
	ps, _ := src.Compute(c.key)
	tkey := c.key
	pt, ok := tgt.Compute(tkey)
	if !ok {
		tkey = "fp32"
		if p, err := tgt.model.Analyze(c.row.Model[0]); err == nil {
			tkey = p.PeakKey
		}
		if pt, ok = tgt.Compute(tkey); !ok {
			tkey, pt = c.key, ps
		}
	}
	v := 0.0
	if ps > 0 {
		v = c.flops / (c.work * ps)
	}
	if u >= v {
		// Work in generic kernels is issue-bound (genericPath).
		f := min(1, u) * (1 - c.generic/c.work)
		b := level
		if f < 0.5 {
			b = Latency
		}
		return verdict{bound: b, f: f, ratio: cs / ct, key: key, tkey: key, cs: cs, ct: ct}
	}
	f := min(1, v)
	b := Compute
	if f < 0.5 {
		b = Latency
	}
	return verdict{bound: b, f: f, ratio: ps / pt, compute: true, key: c.key, tkey: tkey, cs: ps, ct: pt}
}

// missingPeaks says which compute ceilings the target lacks, and what
// scaled the ops that ran at them.
func missingPeaks(vs []verdict, device string) []string {
	type sub struct{ key, tkey string }
	count := map[sub]int{}
	var order []sub
	for _, v := range vs {
		if s := (sub{v.key, v.tkey}); v.compute && s.key != s.tkey {
			if count[s] == 0 {
				order = append(order, s)
			}
			count[s]++
		}
	}
	var notes []string
	for _, s := range order {
		notes = append(notes, fmt.Sprintf("%s has no %s peak: %d ops scaled by its %s rate", device, s.key, count[s], s.tkey))
	}
	return notes
}

// launchShape is what waves depend on.
type launchShape struct {
	blocks, threads, regs, smem int
}

// waves holds, for one launch shape, the target/source ratios of its
// latency time (waves over clock) and of its compute time apart from the
// compute ceilings (waves × resident blocks × SMs).
type waves struct{ latency, compute float64 }

// waveRatios compares a launch's waves on the two devices. A grid that
// fills the source exactly once is taken as sized to the device
// (persistent kernels launch one block per slot), as are kernels whose
// occupancy is unknown on either side: those scale without quantization.
func waveRatios(s launchShape, src, tgt Ceilings) (waves, bool) {
	if s.blocks <= 0 {
		// A grid the trace does not give (or gives as 0): no waves to
		// compare, only the clocks.
		return waves{latency: src.Clock / tgt.Clock, compute: 1}, true
	}
	bs, okS := resident(s, src)
	bt, okT := resident(s, tgt)
	ok := okT || !tgt.hasArch
	g := float64(s.blocks)
	if !okS {
		bs = 1
	}
	if !okT {
		bt = bs
	}
	continuous := !okS || !okT || s.blocks == bs*src.SMs
	// A grid smaller than the SMs holds one block per SM.
	bs = min(bs, max(1, ceilInt(s.blocks, src.SMs)))
	bt = min(bt, max(1, ceilInt(s.blocks, tgt.SMs)))
	ws, wt := g/float64(bs*src.SMs), g/float64(bt*tgt.SMs)
	if !continuous {
		ws, wt = math.Ceil(ws), math.Ceil(wt)
	}
	return waves{
		latency: wt / ws * src.Clock / tgt.Clock,
		compute: wt * float64(bt*tgt.SMs) / (ws * float64(bs*src.SMs)),
	}, ok
}

// linkTime is an NCCL kernel of dur seconds on the source moved over the
// target's link: its time beyond the source link's latency is bus bytes
// at the source's bus bandwidth; a kernel within the latency scales by the
// latencies. A target without a link curve keeps the time.
func linkTime(dur float64, src, tgt Ceilings) float64 {
	switch {
	case src.LinkBus <= 0 || tgt.LinkBus <= 0 || src.LinkLatency <= 0:
		return dur
	case dur <= src.LinkLatency:
		return dur * tgt.LinkLatency / src.LinkLatency
	}
	return tgt.LinkLatency + (dur-src.LinkLatency)*src.LinkBus/tgt.LinkBus
}

func ceilInt(a, b int) int { return (a + b - 1) / b }

// resident is the blocks of the launch one SM holds (gpucalc's
// occupancy), false where it cannot be computed or the block cannot run.
func resident(s launchShape, c Ceilings) (int, bool) {
	if !c.hasArch || s.threads <= 0 {
		return 0, false
	}
	r := occupancy.Calculate(c.arch, occupancy.Kernel{Regs: s.regs}, occupancy.Launch{Threads: s.threads, DynamicSmem: s.smem})
	if r.Err != nil || r.Blocks <= 0 {
		return 0, false
	}
	return r.Blocks, true
}

// project scales every kernel to one target.
func project(t *trace.Trace, a *trace.Analysis, classes []opClass, src, tgt Ceilings, fl float64) Projection {
	p := Projection{Device: tgt.Device, Validated: src.checked() && tgt.checked(), Ceilings: tgt}
	verdicts := make([]verdict, len(classes))
	for i := range classes {
		verdicts[i] = judge(&classes[i], src, tgt)
	}
	p.Notes = missingPeaks(verdicts, tgt.Device)
	type tally struct {
		source, projected float64
		byBound           map[Bound]float64
	}
	rows := make([]tally, len(classes))
	type shareKey struct {
		b        Bound
		modelled bool
	}
	shares := map[shareKey]*Share{}
	cache := map[launchShape]waves{}
	unlaunchable := 0
	floorRatio := tgt.Launch / src.Launch
	for i := range t.Kernels.Len() {
		k := t.Kernels.At(i)
		ci := classOf(a, i, len(a.Ops))
		c, v := &classes[ci], verdicts[ci]
		s := launchShape{k.Grid[0] * k.Grid[1] * k.Grid[2], k.Block[0] * k.Block[1] * k.Block[2], k.Registers, k.SharedMemory}
		w, seen := cache[s]
		if !seen {
			var ok bool
			w, ok = waveRatios(s, src, tgt)
			cache[s] = w
			if !ok {
				unlaunchable++
			}
		}
		dur := k.Dur * usec
		base := min(dur, fl)
		work := dur - base
		at := v.ratio
		if v.compute {
			at *= w.compute
		}
		proj := base*floorRatio + work*(v.f*at+(1-v.f)*w.latency)
		b := v.bound
		if base >= work {
			b = Launch
		}
		if trace.IsComm(k.Name) {
			proj, b = linkTime(dur, src, tgt), Link
		}
		r := &rows[ci]
		r.source += dur
		r.projected += proj
		if r.byBound == nil {
			r.byBound = map[Bound]float64{}
		}
		r.byBound[b] += proj
		sk := shareKey{b, c.modelled}
		sh := shares[sk]
		if sh == nil {
			sh = &Share{Bound: b, Modelled: c.modelled}
			shares[sk] = sh
		}
		sh.Kernels++
		sh.Source += dur
		sh.Projected += proj
		p.Summary.Kernels++
		p.Summary.SourceKernel += dur
		p.Summary.ProjectedKernel += proj
	}
	if unlaunchable > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d launch shapes cannot run as recorded on %s (registers or shared memory): scaled without wave quantization", unlaunchable, tgt.Device))
	}
	for i := range classes {
		c, r := &classes[i], rows[i]
		v := verdicts[i]
		op := Op{Name: c.name, Shapes: c.shapes, Source: r.source, Projected: r.projected, Modelled: c.modelled, Bound: v.bound,
			Ceiling: v.key, TargetCeiling: v.tkey, AtCeiling: v.f, SourceRate: v.cs, TargetRate: v.ct}
		if !c.modelled {
			op.Unmodelled = c.why
		}
		if c.work > 0 {
			op.Generic = c.generic / c.work
		}
		best := -1.0
		for _, b := range []Bound{Launch, DRAM, L2, Compute, Latency, Link} {
			if r.byBound[b] > best && r.byBound[b] > 0 {
				best, op.Bound = r.byBound[b], b
			}
		}
		if op.Bound == Link {
			op.Ceiling, op.TargetCeiling, op.AtCeiling, op.SourceRate, op.TargetRate = "link", "link", 1, src.LinkBus, tgt.LinkBus
		}
		if r.source > 0 {
			op.Ratio = r.projected / r.source
		}
		if i < len(a.Ops) {
			p.Ops = append(p.Ops, op)
		} else {
			p.Unattributed = op
		}
	}
	for _, sh := range shares {
		if p.Summary.ProjectedKernel > 0 {
			sh.Share = sh.Projected / p.Summary.ProjectedKernel
		}
		p.Bounds = append(p.Bounds, *sh)
	}
	slices.SortFunc(p.Bounds, func(x, y Share) int { return cmp.Compare(y.Projected, x.Projected) })
	if p.Summary.ProjectedKernel > 0 {
		p.Summary.Speedup = p.Summary.SourceKernel / p.Summary.ProjectedKernel
	}
	return p
}

// step measures the source step's GPU window and busy time over all
// streams, and its kernels at the launch floor.
func step(t *trace.Trace, fl float64) Step {
	type span struct{ s, e float64 }
	sp := make([]span, 0, t.Kernels.Len()+t.Transfers.Len())
	var s Step
	for k := range t.Kernels.Pointers {
		sp = append(sp, span{k.Start, k.Start + k.Dur})
		if k.Dur*usec-fl <= fl {
			s.FloorKernels++
			s.FloorTime += k.Dur * usec
		}
	}
	for x := range t.Transfers.Pointers {
		sp = append(sp, span{x.Start, x.Start + x.Dur})
		s.Transfers += x.Dur * usec
	}
	if len(sp) == 0 {
		return s
	}
	slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.s, b.s) })
	busy, lo, hi, end := 0.0, sp[0].s, sp[0].e, math.Inf(-1)
	for _, x := range sp {
		hi = max(hi, x.e)
		switch {
		case x.s > end:
			busy += x.e - x.s
			end = x.e
		case x.e > end:
			busy += x.e - end
			end = x.e
		}
	}
	s.Window, s.Busy = (hi-lo)*usec, busy*usec
	s.HostBound = max(0, s.Window-s.Busy)
	return s
}
