package review

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/ops"
)

// fusable reports whether an op is a memory-bound elementwise op or row
// normalisation that a neighbouring kernel could do on the way.
func fusable(k ops.Kind) bool {
	switch k {
	case ops.GELU, ops.ReLU, ops.SiLU, ops.Add, ops.Mul, ops.Copy, ops.Unary, ops.LayerNorm, ops.RMSNorm, ops.Softmax:
		return true
	}
	return false
}

// inputBytes is the size of one input tensor of a fusable op: what it
// reads from its producer.
func inputBytes(o ops.Op) float64 {
	n := o.Elems
	if n == 0 {
		n = o.Rows * o.Cols
	}
	return float64(n) * o.DType.Size()
}

// fusion finds fusable ops standing alone after a producer. Fusing the op
// into its producer's kernel (a GEMM epilogue, or one kernel for a chain of
// elementwise ops) saves reading the producer's output back, writing it too
// when nothing else reads it, and one launch.
func (c *checker) fusion() {
	readers := map[string]int{}
	for _, e := range c.w.Entries {
		for _, in := range e.Inputs {
			readers[in]++
		}
	}
	index := map[string]int{}
	for i, e := range c.w.Entries {
		index[e.Name] = i
	}
	for i, e := range c.w.Entries {
		o := c.r.Ops[i]
		if !fusable(e.Op.Kind) || len(e.Inputs) == 0 || o.Point.Bound != "memory" {
			continue
		}
		prod := c.w.Entries[index[e.Inputs[0]]]
		in := inputBytes(e.Op)
		saved := in // the re-read
		written := readers[prod.Name] == 1
		if written {
			saved += in // the producer's write, when nothing else reads it
		}
		n := float64(e.Count)
		run, measured := runTime(e, o)
		per := math.Min(run, c.m.FixedCost()+saved/c.m.Stream())
		saves := n * per
		how := fmt.Sprintf("%s writes it for this op alone", short(prod))
		if !written {
			how = fmt.Sprintf("%s still writes it, for %d readers", short(prod), readers[prod.Name])
		}
		c.add(Finding{
			Check: "fusion", Op: e.Name, Saves: saves,
			Message: fmt.Sprintf("%s stands alone after %s: it reads %s's output (%s) back from DRAM, and %s. Fused, it saves %s of traffic and a launch: %s of its %s%s per run (%s of the workload).",
				called(e), prod.Name, short(prod), traffic(in), how, traffic(saved), dur(per), measured, dur(run), c.share(saves)),
			Fix: fuseFix(e, prod),
			Numbers: map[string]float64{
				"intermediate_bytes": in, "saved_bytes": saved, "saved_seconds": saves,
				"op_expected_seconds": o.Expected, "launch_seconds": c.m.FixedCost(),
			},
		})
	}
}

// called is how a finding's prose names entry e: its label, the user's own
// name for the op (a trace's aten op, its shapes under the finding's Op),
// else its name and what the op is: "mlp_act (silu)".
func called(e ops.Entry) string {
	if e.Label != "" {
		return e.Label
	}
	return e.Name + " (" + string(e.Op.Kind) + ")"
}

// short names entry e once its shapes or kind have been given: its label,
// else its name.
func short(e ops.Entry) string {
	if e.Label != "" {
		return e.Label
	}
	return e.Name
}

// runTime is the time one run of entry e takes, as findings quote it: the
// measured time where e has one (a trace), else the expected; the second
// result is the word that says which ("measured " or "").
func runTime(e ops.Entry, o Op) (float64, string) {
	if e.Measured > 0 {
		return e.Measured, "measured "
	}
	return o.Point.Expected, ""
}

// fuseFix is how to fuse entry e into its producer prod, in the user's
// names for both.
func fuseFix(e ops.Entry, prod ops.Entry) string {
	k := e.Op.Kind
	matrix := prod.Op.IsMatrix()
	this := "the " + string(k) // a workload's entry, by what it does
	if e.Label != "" {
		this = e.Label
	}
	switch {
	case k == ops.Softmax && matrix:
		return "use fused attention (FlashAttention, PyTorch scaled_dot_product_attention): it never writes the scores"
	case (k == ops.LayerNorm || k == ops.RMSNorm) && matrix:
		return fmt.Sprintf("fuse %s into %s's epilogue when one tile spans a row, else into the next op's prologue (torch.compile, a Triton kernel)", this, short(prod))
	case k == ops.LayerNorm || k == ops.RMSNorm:
		return fmt.Sprintf("fuse %s and %s into one kernel (a fused add+norm kernel such as vLLM's fused_add_rms_norm, or torch.compile)", short(prod), this)
	case matrix:
		return fmt.Sprintf("do %s in %s's epilogue (cuBLASLt epilogues, CUTLASS epilogue visitor tree, torch.compile)", this, short(prod))
	}
	return fmt.Sprintf("fuse %s and %s into one kernel (torch.compile, a Triton or CUDA kernel)", short(prod), this)
}

// unaligned lists the contiguous dimensions of a tensor-core op that are
// not multiples of 16 bytes, as the fast (TMA, wgmma) kernels need, with
// their names.
func unaligned(o ops.Op) []string {
	size := o.DType.Size()
	var out []string
	dim := func(name string, n int64) {
		if math.Mod(float64(n)*size, 16) != 0 {
			out = append(out, fmt.Sprintf("%s=%d (%g bytes)", name, n, float64(n)*size))
		}
	}
	switch o.Kind {
	case ops.Matmul, ops.Linear:
		dim("k", o.K)
		dim("n", o.N)
	case ops.Conv2D:
		dim("c/groups", o.C/max(o.Groups, 1))
		dim("k/groups", o.K/max(o.Groups, 1))
	case ops.Attention:
		dim("d", o.HeadDim)
	}
	return out
}

// padded returns the op with its dimensions rounded up to multiples of 16
// bytes.
func padded(o ops.Op) ops.Op {
	elems := int64(math.Ceil(16 / o.DType.Size()))
	up := func(n int64) int64 { return (n + elems - 1) / elems * elems }
	switch o.Kind {
	case ops.Matmul, ops.Linear:
		o.M, o.N, o.K = up(o.M), up(o.N), up(o.K)
	case ops.Conv2D:
		g := max(o.Groups, 1)
		o.C, o.K = up(o.C/g)*g, up(o.K/g)*g
	case ops.Attention:
		o.HeadDim = up(o.HeadDim)
	}
	return o
}

// Unaligned is the measurement the alignment finding cites: bf16 matmuls on
// an H100 SXM from roof_bench.csv (testdata/roof_bench_align.csv), seconds.
var Unaligned = struct {
	Shape, AlignedShape string
	Seconds, Aligned    float64
}{"4095x4095x4095", "4096x4096x4096", 0.900944e-3, 0.193600e-3}

// gemm checks entry i's matrix product: alignment of its contiguous
// dimensions, then tile and wave quantization.
func (c *checker) gemm(i int) {
	e, o := c.w.Entries[i], c.r.Ops[i]
	if !e.Op.IsMatrix() || e.Op.Path() != devices.Tensor {
		return
	}
	n := float64(e.Count)
	if bad := unaligned(e.Op); len(bad) > 0 {
		p := padded(e.Op)
		pp, err := c.m.Analyze(p)
		if err == nil {
			saves := n * math.Max(0, o.Point.Expected-pp.Expected)
			took := ""
			if e.Measured > 0 {
				took = fmt.Sprintf(" (measured %s)", dur(e.Measured))
			}
			f := Finding{
				Check: "gemm_alignment", Op: e.Name, Saves: saves,
				Message: fmt.Sprintf("%s has %s: not multiples of 16 bytes, so tensor-core GEMMs fall back from their fast (TMA, wgmma) kernels. Expected %s per run%s; padded to %s, %s (%.1f× faster). Measured on an H100: bf16 %s took %s, %s %s (%.1f×).",
					short(e), strings.Join(bad, ", "), dur(o.Point.Expected), took, p, dur(pp.Expected), o.Point.Expected/pp.Expected,
					Unaligned.Shape, dur(Unaligned.Seconds), Unaligned.AlignedShape, dur(Unaligned.Aligned), Unaligned.Seconds/Unaligned.Aligned),
				Fix: fmt.Sprintf("pad the dimensions to multiples of %g elements (16 bytes of %s) and ignore the padding: %s", 16/e.Op.DType.Size(), e.Op.DType, p),
				Numbers: map[string]float64{
					"expected_seconds": o.Point.Expected, "padded_expected_seconds": pp.Expected, "saved_seconds": saves,
					"measured_unaligned_seconds": Unaligned.Seconds, "measured_aligned_seconds": Unaligned.Aligned,
				},
			}
			if saves >= Material*c.r.Expected {
				f.Severity = Error
			}
			c.add(f)
		}
	}
	c.quantization(i)
}

// quantization reports a compute-bound GEMM whose CTA tiles fill the SMs
// badly: partial tiles at the matrix edges and a partly idle last wave. The
// tile is the one of the efficiency catalog that finishes the product
// soonest (waves × tile work / tile efficiency), as a library's heuristic
// picks it, without split-K.
func (c *checker) quantization(i int) {
	e, o := c.w.Entries[i], c.r.Ops[i]
	if o.Point.Bound != "compute" {
		return
	}
	b, mm, nn, _, _ := e.Op.GEMM()
	sms := c.d.SMs
	type choice struct {
		tile  devices.Tile
		tiles int
		waves occupancy.Waves
		cost  float64
	}
	var best *choice
	for _, t := range c.m.Efficiency().Tiles {
		tiles := int(b * ceil(mm, t.M) * ceil(nn, t.N))
		wv, err := occupancy.GridWaves(tiles, 1, sms)
		if err != nil {
			continue
		}
		cost := float64(wv.Waves*t.M*t.N) / t.Efficiency
		if best == nil || cost < best.cost {
			best = &choice{t, tiles, wv, cost}
		}
	}
	if best == nil {
		return
	}
	slots := float64(best.waves.Waves * sms * best.tile.M * best.tile.N)
	useful := float64(b * mm * nn)
	idle := 1 - useful/slots
	edge := 1 - useful/float64(best.tiles*best.tile.M*best.tile.N)
	lastIdle := 1 - best.waves.LastWaveFill
	if idle < WaveIdle {
		return
	}
	// The idle slots cost time only in the compute that runs on them.
	run, measured := runTime(e, o)
	saves := float64(e.Count) * run * idle
	c.add(Finding{
		Check: "wave_quantization", Op: e.Name, Saves: saves,
		Message: fmt.Sprintf("%s is compute-bound on %d×%d tiles: %d tiles on %d SMs make %s, the last %d/%d full; %s of the tile slots compute nothing (%s in partial edge tiles, %s of the last wave idle), about %s of its %s%s per run.",
			short(e), best.tile.M, best.tile.N, best.tiles, sms, plural(best.waves.Waves, "wave"), best.waves.LastWaveBlocks, sms,
			pct(idle), pct(edge), pct(lastIdle), dur(run*idle), measured, dur(run)),
		Fix: fmt.Sprintf("use a stream-K or split-K kernel (cuBLAS picks one for some shapes; CUTLASS has both), or change the shape (batch, tokens) so the tiles fill whole waves of %d", sms),
		Numbers: map[string]float64{
			"tiles": float64(best.tiles), "sms": float64(sms), "waves": float64(best.waves.Waves),
			"last_wave_tiles": float64(best.waves.LastWaveBlocks), "idle_share": idle, "edge_share": edge,
			"last_wave_idle_share": lastIdle, "tile_m": float64(best.tile.M), "tile_n": float64(best.tile.N),
		},
	})
}

func ceil(a int64, b int) int64 { return (a + int64(b) - 1) / int64(b) }

// launch reports the ops whose expected time the launch overhead
// dominates, as one finding for the workload.
func (c *checker) launch() {
	var names []string
	var launches, their float64
	for _, o := range c.r.Ops {
		if o.Point.ExpectedBound == "launch" {
			names = append(names, o.Name)
			launches += float64(o.Count) * c.m.FixedCost()
			their += o.Expected
		}
	}
	if len(names) == 0 {
		return
	}
	total := 0.0
	for _, o := range c.r.Ops {
		total += float64(o.Count) * c.m.FixedCost()
	}
	c.add(Finding{
		Check: "launch_overhead", Saves: launches,
		Message: fmt.Sprintf("%d of %d ops are so small that the launch overhead (%s each) exceeds their work: %s. Their launches take %s, %s of the workload's %s; all launches together %s.",
			len(names), len(c.r.Ops), dur(c.m.FixedCost()), strings.Join(names, ", "), dur(launches), c.share(launches), dur(c.r.Expected), c.share(total)),
		Fix: "capture the sequence in a CUDA graph (removes most of the per-launch CPU cost), fuse the small ops into their neighbours, or batch more work into each launch",
		Numbers: map[string]float64{
			"ops": float64(len(names)), "launch_seconds": c.m.FixedCost(), "their_launch_seconds": launches,
			"their_expected_seconds": their, "all_launch_seconds": total, "expected_seconds": c.r.Expected,
		},
	})
}

// utilization reports the share of the workload's time spent below
// LowUtilization of the compute peak.
func (c *checker) utilization() {
	var low, mem, bytes float64
	var names []string
	for _, o := range c.r.Ops {
		if o.PeakFraction >= LowUtilization {
			continue
		}
		low += o.Expected
		names = append(names, o.Name)
		if o.Point.Bound == "memory" {
			mem += o.Expected
			bytes += float64(o.Count) * o.Point.Bytes
		}
	}
	share := low / c.r.Expected
	if share < LowUtilization {
		return
	}
	f := Finding{
		Check: "low_utilization", Severity: Info,
		Numbers: map[string]float64{"low_seconds": low, "share": share, "memory_bound_seconds": mem, "expected_seconds": c.r.Expected},
	}
	if share >= 0.5 {
		f.Severity = Warning
	}
	which := fmt.Sprintf("in %s (%s)", plural(len(names), "op"), strings.Join(names, ", "))
	if len(names) == len(c.r.Ops) {
		which = "in every op"
	}
	f.Message = fmt.Sprintf("%s of the expected time (%s of %s) runs below %s of the compute peak, %s",
		pct(share), dur(low), dur(c.r.Expected), pct(LowUtilization), which)
	if mem > 0 {
		eff := bytes / mem
		f.Numbers["memory_bound_bytes_per_second"] = eff
		f.Message += fmt.Sprintf("; %s of it is memory-bound, moving data at %s (%s of the %s datasheet bandwidth)",
			dur(mem), bw(eff), pct(eff/c.d.Memory.BytesPerSecond), bw(c.d.Memory.BytesPerSecond))
	}
	f.Message += "."
	f.Fix = "raise the arithmetic intensity rather than tune kernels: batch more tokens or requests per weight read, fuse memory-bound ops, keep weights and caches in fewer bytes (fp8, int4)"
	c.add(f)
}

// capacity reports working sets that exceed device memory: the memory the
// workload says it holds, and any op whose own inputs and outputs do not
// fit.
func (c *checker) capacity() {
	have := float64(c.d.Memory.Bytes)
	if need := float64(c.w.Memory); need > have {
		c.add(Finding{
			Check: "memory_capacity", Severity: Error,
			Message: fmt.Sprintf("the workload holds %s; %s has %s of device memory (%.2f×).", size(need), c.d.Name, size(have), need/have),
			Fix:     fmt.Sprintf("shard over at least %d devices (tensor or pipeline parallelism), or hold weights and caches in fewer bytes (fp8 halves bf16)", int(math.Ceil(need/have))),
			Numbers: map[string]float64{"needed_bytes": need, "device_bytes": have},
		})
	}
	for _, o := range c.r.Ops {
		if o.Point.Bytes > have {
			c.add(Finding{
				Check: "memory_capacity", Severity: Error, Op: o.Name,
				Message: fmt.Sprintf("%s's inputs and outputs alone are %s; %s has %s.", o.Name, size(o.Point.Bytes), c.d.Name, size(have)),
				Fix:     "split the op into chunks that fit (tile the batch or sequence), or shard it over devices",
				Numbers: map[string]float64{"needed_bytes": o.Point.Bytes, "device_bytes": have},
			})
		}
	}
}

// transfers reports the time of data that crosses the host link, at the
// link's datasheet rate (a lower bound: PCIe achieves 80–90% of it).
func (c *checker) transfers() {
	link := c.d.HostLink.BytesPerSecond
	for _, t := range c.w.Transfers {
		bytes := float64(t.Bytes) * float64(t.Count)
		if link <= 0 {
			c.add(Finding{
				Check: "host_transfer", Op: t.Name,
				Message: fmt.Sprintf("%s moves %s over the host link, but the catalog has no host-link bandwidth for %s.", t.Name, traffic(bytes), c.d.Name),
				Fix:     "give host_link in a device file to have the time estimated",
				Numbers: map[string]float64{"bytes": bytes},
			})
			continue
		}
		s := bytes / link
		c.r.Transfer += s
		f := Finding{
			Check: "host_transfer", Op: t.Name, Severity: Info,
			Message: fmt.Sprintf("%s moves %s over %s at %s: at least %s, %s of the workload's expected %s on the device.",
				t.Name, traffic(bytes), c.d.HostLink.Type, bw(link), dur(s), pct(s/c.r.Expected), dur(c.r.Expected)),
			Fix:     "overlap the copy with compute (pinned host memory, cudaMemcpyAsync on its own stream) so only what exceeds the compute time shows; keep the data resident; send fewer bytes",
			Numbers: map[string]float64{"bytes": bytes, "link_bytes_per_second": link, "seconds": s, "expected_seconds": c.r.Expected},
		}
		if s >= LowUtilization*c.r.Expected {
			f.Severity = Warning
		}
		c.add(f)
	}
}

// peaks checks the device's dense peaks against SMs × clock × per-SM rate:
// the rate the entry states, or, where it states none, the rates of
// catalog devices of the same architecture. A peak about twice the
// identity's looks like a 2:4-sparse figure entered as dense.
func (c *checker) peaks(reference []devices.Device) {
	d := c.d
	clock := func(name string) float64 {
		if name == "tensor" {
			return d.TensorClockHz
		}
		return d.BoostClockHz
	}
	type identity struct {
		peak, clock float64
		how         string
	}
	for _, k := range d.PeakKeys() {
		p := d.Dense[k]
		var ids []identity
		add := func(rate float64, clk, how string) {
			id := identity{float64(d.SMs) * clock(clk) * rate, clock(clk), how}
			if !slices.ContainsFunc(ids, func(x identity) bool { return x.peak == id.peak }) {
				ids = append(ids, id)
			}
		}
		if p.PerSMPerClock > 0 {
			add(p.PerSMPerClock, p.Clock, fmt.Sprintf("its own %g per SM per clock", p.PerSMPerClock))
		} else {
			for _, ref := range reference {
				if rp, ok := ref.Dense[k]; ok && ref.Architecture == d.Architecture && rp.PerSMPerClock > 0 {
					add(rp.PerSMPerClock, rp.Clock, fmt.Sprintf("%s's %g per SM per clock", ref.Name, rp.PerSMPerClock))
				}
			}
		}
		if len(ids) == 0 {
			continue
		}
		// The identity closest to the stated peak, by ratio.
		best := slices.MinFunc(ids, func(a, b identity) int {
			return cmp.Compare(math.Abs(math.Log(p.PerSecond/a.peak)), math.Abs(math.Log(p.PerSecond/b.peak)))
		})
		r := p.PerSecond / best.peak
		// 3%: datasheets round, as the catalog's own check allows.
		if math.Abs(r-1) <= 0.03 {
			continue
		}
		ident := fmt.Sprintf("%d SMs × %.0f MHz × %s = %s", d.SMs, best.clock/1e6, best.how, devices.FormatPeak(k, best.peak))
		f := Finding{
			Check: "device_peaks", Op: "dense." + k, Severity: Warning,
			Numbers: map[string]float64{"peak_ops_per_second": p.PerSecond, "derived_ops_per_second": best.peak, "ratio": r},
		}
		if math.Abs(r/2-1) <= 0.03 {
			f.Severity = Error
			f.Message = fmt.Sprintf("%s's dense %s peak is %s, %.2f× what %s gives: it looks like a 2:4-sparse rate entered as dense, which doubles the compute ceiling and halves compute-bound times.",
				d.Name, k, devices.FormatPeak(k, p.PerSecond), r, ident)
			f.Fix = fmt.Sprintf("enter %s under dense and %s under sparse (datasheets mark sparse rates with an asterisk)", devices.FormatPeak(k, p.PerSecond/2), devices.FormatPeak(k, p.PerSecond))
		} else {
			f.Message = fmt.Sprintf("%s's dense %s peak is %s, %.2f× what %s gives: peak = SMs × clock × rate per SM does not hold.",
				d.Name, k, devices.FormatPeak(k, p.PerSecond), r, ident)
			f.Fix = "check the SM count, the clock the peak assumes (tensor_clock for tensor peaks) and per_sm_per_clock against the datasheet"
		}
		c.add(f)
	}
}
