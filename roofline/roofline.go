// Package roofline places ops on a device's roofline: the compute ceiling of
// the path the op runs on, the memory ceiling, the ridge point, attainable
// throughput and bound, a lower-bound time from datasheet peaks and an
// expected time from achievable fractions of those peaks.
//
// The lower bound is max(FLOPs/peak, bytes/bandwidth) with the datasheet's
// dense peak and DRAM bandwidth (L2's where the working set fits in L2 and
// the catalog has an L2 bandwidth). Nothing real runs faster.
//
// The expected time models what a library kernel achieves, as a benchmark
// that flushes L2 measures it (inputs come from DRAM): a fixed launch cost,
// plus the slower of the op's compute and memory times at achievable rates
// (devices.Efficiency, or the device's measured figures where it has them).
// GEMMs (matmul, linear, conv2d as implicit GEMM) are split into CTA tiles
// and quantized into waves over the SMs; flash attention is modelled per
// 128×128 block, with the softmax's exponentials on the SFU and causal
// masking's diagonal blocks; row reductions reach a lower fraction of
// bandwidth than streaming kernels.
package roofline

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/units"
)

// Bound says which ceiling limits an op.
type Bound string

// Bounds.
const (
	MemoryBound  Bound = "memory"
	ComputeBound Bound = "compute"
)

// Point is an op placed on a device's roofline. Rates are per second (FLOP/s,
// B/s), times in seconds.
type Point struct {
	Name   string `json:"name"`
	Op     ops.Op `json:"op"`
	Device string `json:"device"`
	Count  int    `json:"count"`

	FLOPs           float64 `json:"flops"`
	MatrixFLOPs     float64 `json:"matrix_flops"`
	Transcendentals float64 `json:"transcendentals"`
	Bytes           float64 `json:"bytes"`
	AI              float64 `json:"ai_flops_per_byte"`

	// PeakKey names the compute ceiling (bf16_tensor, fp32, ...).
	PeakKey        string        `json:"peak"`
	ComputeCeiling float64       `json:"compute_ceiling_flops_per_second"`
	MemoryLevel    devices.Level `json:"memory_level"`
	MemoryCeiling  float64       `json:"memory_ceiling_bytes_per_second"`
	Ridge          float64       `json:"ridge_flops_per_byte"`
	Attainable     float64       `json:"attainable_flops_per_second"`
	Bound          Bound         `json:"bound"`

	LowerBound float64 `json:"lower_bound_seconds"`
	Expected   float64 `json:"expected_seconds"`
	// Kernels is the number of kernels the op launches.
	Kernels int `json:"kernels"`
	// work is the op's time besides fixed costs: its kernels' compute or
	// memory time, whichever is longer, summed (see Work).
	work float64
	// ExpectedBound is what limits the expected time (memory, compute or
	// launch overhead).
	ExpectedBound string `json:"expected_bound"`
	// Measured is a measured time for the op, when the input had one.
	Measured float64 `json:"measured_seconds,omitempty"`

	Notes []string `json:"notes,omitempty"`
}

// Model analyses ops on one device. Build it once with New; Analyze is then
// cheap and safe for concurrent use.
type Model struct {
	dev devices.Device
	eff devices.Efficiency

	dram, l2      float64 // datasheet ceilings, B/s (l2 0: unknown)
	stream        float64 // achievable streaming bandwidth, B/s
	read          float64 // achievable read-only bandwidth, B/s
	fixed         float64 // launch overhead + kernel ramp, s
	sfu           float64 // transcendentals per second
	measuredPeaks map[string]float64
	l2read        float64 // achievable read rate from a warm L2, B/s
	// gemmL2 is the rate GEMM kernels move operands from and to a warm
	// L2 (the family's GEMM figure where it has one, else l2read), and
	// gemmStream the streaming rate a GEMM's bytes see before the
	// memory-bound GEMM fraction: DRAM's, L2's or their blend (warmed).
	gemmL2, gemmStream float64
	// cond are the measurement conditions ops are priced under.
	cond Conditions
	// Notes apply to every op on the device (defaults, measured figures).
	Notes []string
}

// New prepares the model of device d.
func New(d devices.Device) (*Model, error) {
	e, err := d.Efficiency()
	if err != nil {
		return nil, err
	}
	m := &Model{dev: d, eff: e, dram: d.Memory.BytesPerSecond, l2: d.L2.BytesPerSecond}
	if m.dram <= 0 {
		return nil, fmt.Errorf("device %q has no memory bandwidth", d.Name)
	}
	m.Notes = append(m.Notes, e.Notes...)
	m.stream = m.dram * e.Stream
	launch := e.LaunchOverhead
	m.sfu = e.SFUPerSMPerClock * float64(d.SMs) * d.BoostClockHz
	if me := d.Measured; me != nil {
		var used []string
		if me.DRAMCopy > 0 {
			m.stream = me.DRAMCopy
			used = append(used, "DRAM copy "+units.FormatBandwidth(me.DRAMCopy))
		}
		if me.LaunchOverhead > 0 {
			launch = me.LaunchOverhead
			used = append(used, "launch overhead "+units.FormatDuration(me.LaunchOverhead))
		}
		// Tensor peaks are measured with GEMMs and replace the GEMM
		// rates; CUDA-core peaks are FMA-loop rates, not GEMM rates, so
		// SGEMM/DGEMM keep the catalog fraction.
		for _, k := range sortedKeys(me.Peaks) {
			if strings.HasSuffix(k, "_tensor") && me.Peaks[k] > 0 {
				if m.measuredPeaks == nil {
					m.measuredPeaks = map[string]float64{}
				}
				m.measuredPeaks[k] = me.Peaks[k]
				used = append(used, k+" GEMM "+devices.FormatPeak(k, me.Peaks[k]))
			}
		}
		if len(used) > 0 {
			m.Notes = append(m.Notes, fmt.Sprintf("expected times use the device's measured figures (%s; measured %s)", strings.Join(used, ", "), me.When))
		}
	}
	m.fixed = launch + e.Ramp
	m.read = m.stream
	// Kernels reading a warm L2 reach far less than an L2-only probe
	// (H100: 12.3 TB/s), so the rate is the family's, from timed kernels.
	m.l2read = e.L2PerSMPerClock * float64(d.SMs) * d.BoostClockHz
	m.gemmL2, m.gemmStream = m.l2read, m.stream
	if e.GEMML2PerSMPerClock > 0 {
		m.gemmL2 = e.GEMML2PerSMPerClock * float64(d.SMs) * d.BoostClockHz
	}
	if me := d.Measured; me != nil && me.DRAMRead > 0 {
		m.read = me.DRAMRead
	}
	if m.l2 == 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("the catalog has no datasheet L2 bandwidth for %s: the memory ceiling is DRAM even where the working set fits in L2", d.Name))
	}
	return m, nil
}

// Device is the model's device.
func (m *Model) Device() devices.Device { return m.dev }

// FixedCost is the time every op costs besides its work: launch overhead
// (measured where the device has it) plus kernel ramp, in seconds.
func (m *Model) FixedCost() float64 { return m.fixed }

// Stream is the achievable streaming DRAM bandwidth the model uses, B/s.
func (m *Model) Stream() float64 { return m.stream }

// Efficiency is the set of achievable fractions the model uses.
func (m *Model) Efficiency() devices.Efficiency { return m.eff }

// Analyze places op on the device named d (see Model.Analyze).
func Analyze(d devices.Device, op ops.Op) (Point, error) {
	m, err := New(d)
	if err != nil {
		return Point{}, err
	}
	return m.Analyze(op)
}

// ceiling returns the peak key and dense peak the op's main work runs at:
// the tensor path of its type when the device has one, else the CUDA-core
// rate of its type; vector work (norms, activations) computes in fp32 (fp64
// for fp64 data).
func (m *Model) ceiling(op ops.Op) (string, float64, []string, error) {
	var notes []string
	dt := op.DType
	if op.Quant != ops.QuantNone {
		// A quantized GEMM has one path: the scheme's tensor cores.
		dt = op.Quant.Scheme().Compute
		p, err := m.dev.Peak(dt, devices.Tensor)
		if err != nil {
			return "", 0, nil, unsupported(m.dev, string(op.Kind)+" quant="+string(op.Quant), dt, true)
		}
		return devices.PeakKey(dt, devices.Tensor), p, nil, nil
	}
	if !op.IsMatrix() {
		if dt != devices.FP64 {
			dt = devices.FP32
		}
		k := devices.PeakKey(dt, devices.CUDACores)
		p, err := m.dev.Peak(dt, devices.CUDACores)
		return k, p, nil, err
	}
	if op.Path() == devices.Tensor {
		if p, err := m.dev.Peak(dt, devices.Tensor); err == nil {
			return devices.PeakKey(dt, devices.Tensor), p, nil, nil
		}
		notes = append(notes, fmt.Sprintf("%s has no %s tensor-core rate; CUDA cores assumed", m.dev.Name, dt))
	}
	p, err := m.dev.Peak(dt, devices.CUDACores)
	if err != nil {
		return "", 0, nil, unsupported(m.dev, string(op.Kind), dt, op.Path() == devices.Tensor)
	}
	return devices.PeakKey(dt, devices.CUDACores), p, notes, nil
}

// Analyze places op on the device's roofline and estimates its time.
func (m *Model) Analyze(op ops.Op) (Point, error) {
	c := op.Cost()
	if op.IsCollective() {
		return m.allReduce(op, c), nil
	}
	key, peak, notes, err := m.ceiling(op)
	if err != nil {
		return Point{}, err
	}
	if op.Kind == ops.MoE && op.Impl == ops.ImplTRTLLM && m.dev.CC.Major != 10 {
		return Point{}, fmt.Errorf("impl=trtllm: FlashInfer's TensorRT-LLM MoE kernels run on datacenter Blackwell (compute capability 10.x) only, and %s is %d.%d; give impl=triton, cutlass or marlin, or leave impl= out", m.dev.Name, m.dev.CC.Major, m.dev.CC.Minor)
	}
	p := Point{
		Op: op, Device: m.dev.Name, Count: 1,
		FLOPs: c.FLOPs(), MatrixFLOPs: c.MatrixFLOPs, Transcendentals: c.Transcendentals, Bytes: c.Bytes, AI: c.AI(),
		PeakKey: key, ComputeCeiling: peak, MemoryLevel: devices.DRAM, MemoryCeiling: m.dram, Notes: notes,
	}
	// Under a warm L2 a layer's weight still comes from DRAM (see
	// weightBytes) unless its replayed copies stay in L2 (coldWeight);
	// the rest of the working set may be in L2.
	cold := 0.0
	if m.cond.warm() {
		cold = m.coldWeight(weightBytes(op))
	}
	warm := c.Bytes - cold
	inL2 := m.fitsL2(warm)
	if inL2 && m.l2 > 0 && cold == 0 {
		p.MemoryLevel, p.MemoryCeiling = devices.L2, m.l2
	}
	p.Ridge = peak / p.MemoryCeiling
	p.Attainable = math.Min(peak, p.AI*p.MemoryCeiling)
	p.Bound = ComputeBound
	if p.AI < p.Ridge {
		p.Bound = MemoryBound
	}
	p.LowerBound = math.Max(p.FLOPs/peak, c.Bytes/p.MemoryCeiling)
	if m.cond.warm() {
		// A warm L2 may hold up to its size of the working set, a
		// weight included (a replayed layer may find part of it there):
		// only the rest must come from DRAM. Where the datasheet gives L2
		// no rate, what L2 holds costs nothing.
		fromL2 := 0.0
		if m.fitsL2(c.Bytes) && m.l2 > 0 {
			fromL2 = c.Bytes / m.l2
		}
		p.LowerBound = math.Max(p.FLOPs/peak, fromL2+math.Max(0, c.Bytes-float64(m.dev.L2.Bytes))/m.dram)
	}
	if inL2 && m.l2 == 0 && m.cond.warm() && cold == 0 {
		p.MemoryLevel, p.MemoryCeiling, p.Ridge, p.Attainable, p.Bound = devices.L2, 0, 0, peak, ComputeBound
		p.Notes = append(p.Notes, "the working set is in a warm L2, for which the datasheet gives no bandwidth: the lower bound is the compute time alone")
	}
	pricing := m
	if op.Kind == ops.MoE {
		// A MoE op's cost counts only what surely happens; its
		// kernels touch the experts it is expected to hit.
		inL2 = m.fitsL2(m.moeWorkingSet(op))
		p.Notes = append(p.Notes, m.moeNote(op))
	}
	if inL2 && m.cond.warm() {
		pricing = m.warmed(cold, warm)
	}
	e := pricing.estimate(op, c, key, peak)
	if m.cond.graph() && op.Path() == devices.Tensor {
		// In a graph a tensor-core kernel still fills its pipeline
		// and drains its epilogue, once per op: a GEMM the family's
		// graph ramp (fitted on the fastest GEMMs of aiconfigurator's
		// tables), other kernels the ramp gpucalc measured.
		ramp := m.eff.Ramp
		if _, _, _, _, ok := op.GEMM(); ok && op.Kind != ops.Attention {
			ramp = m.eff.GraphRamp
		}
		e.work += ramp
	}
	p.Expected, p.ExpectedBound, p.Kernels, p.work = m.opTime(e), e.bound, e.kernels, e.work
	if p.Expected-e.work > e.work {
		p.ExpectedBound = "launch"
	}
	return p, nil
}

// fitsL2 reports whether a working set of bytes is bounded by L2 rather
// than DRAM: the same rule on every GPU. Under a cold L2 the inputs come
// from DRAM, whatever the catalog says of L2; under a warm L2 one that fits
// in L2 is read from it (at the datasheet's L2 bandwidth where the catalog
// has one, else bounded by compute alone).
func (m *Model) fitsL2(bytes float64) bool {
	return m.cond.warm() && bytes <= float64(m.dev.L2.Bytes)
}

// warmed is the model of an op that reads warm bytes from L2 at the
// achievable L2 rate and cold bytes (a layer's weight) from DRAM: its
// streaming and read rates are the blend that moves both in their time.
func (m *Model) warmed(cold, warm float64) *Model {
	w := *m
	w.stream, w.read, w.gemmStream = m.l2read, m.l2read, m.gemmL2
	if cold > 0 {
		w.stream = (cold + warm) / (cold/m.stream + warm/m.l2read)
		w.read = (cold + warm) / (cold/m.read + warm/m.l2read)
		w.gemmStream = (cold + warm) / (cold/m.stream + warm/m.gemmL2)
	}
	return &w
}

// weightCopies is how many copies of a weight aiconfigurator's GEMM
// collector replays in turn: enough to exceed L2, at most five.
const weightCopies = 5

// coldWeight is the part of a linear's weight of w bytes that comes from
// DRAM under a warm L2. The collector replays min(5, ⌈L2/w⌉) copies in
// turn, so together they exceed L2 by less than one copy, or fit in it
// where five do; the weight is read from L2 where they fit in the share of
// L2 the family keeps for such a cycle (Ada keeps it all: its rows read
// such weights at L2 speed; Hopper's and Ampere's rows read them at DRAM
// speed even where five copies fit).
func (m *Model) coldWeight(w float64) float64 {
	l2 := float64(m.dev.L2.Bytes)
	if w <= 0 || l2 <= 0 {
		return w
	}
	copies := math.Min(weightCopies, math.Ceil(l2/w))
	if copies*w <= m.eff.WeightCycleL2*l2 {
		return 0
	}
	return w
}

// weightBytes is the part of an op's bytes that is a layer's weight: a
// linear's, quantized or not, with its scales. A serving engine reads each
// layer's weight once per step, and a model's layers together exceed L2,
// so even under a warm L2 the weight comes from DRAM (aiconfigurator's GEMM
// tables cycle through copies of the weight for that reason; coldWeight
// says where they fit in L2 all the same); a matmul's operands are both
// activations.
func weightBytes(op ops.Op) float64 {
	if op.Kind != ops.Linear {
		return 0
	}
	b := float64(max(op.Batch, 1))
	if op.Quant != ops.QuantNone {
		return b * op.Quant.WeightBytes(op.K, op.N)
	}
	w := op.DType.Size()
	if op.Weight != "" {
		w = op.Weight.Size()
	}
	return b * float64(op.K) * float64(op.N) * w
}

// rate is the achievable rate of the peak key: measured where the device
// has it, else the family's fraction of the dense peak.
func (m *Model) rate(key string, peak float64) float64 {
	if r := m.measuredPeaks[key]; r > 0 {
		return r
	}
	if f := m.eff.GEMM[key]; f > 0 {
		return peak * f
	}
	return peak * m.eff.GEMM["fp32"]
}

// estimate is what an op's kernels cost besides their fixed costs: the
// slower of compute and memory time of each kernel at achievable rates,
// summed, the number of kernels, and what limits the longest.
type estimate struct {
	work    float64
	kernels int
	bound   string
}

// opTime is the time of an op's kernels timed alone: its first kernel's
// fixed cost plus the work of all its kernels, whose later launches are
// processed while the earlier kernels run (they are queued back to back on
// one stream); but never less than one launch period per kernel, the rate
// at which the GPU takes kernels.
//
// Replayed in a CUDA graph, each kernel costs the graph's kernel period
// (no host launch) plus its work.
func (m *Model) opTime(e estimate) float64 {
	if m.cond.graph() {
		return float64(e.kernels)*m.eff.GraphKernel + e.work
	}
	return math.Max(float64(e.kernels)*m.period(), m.fixed+e.work)
}

// Work is the op's time besides launches and ramps: each kernel's compute
// or memory time, whichever is longer, summed over its kernels.
func (p Point) Work() float64 { return p.work }

// Busy is the time the GPU spends in p's kernels, as a profiler sums
// kernel durations: each kernel's ramp (start-up, one DRAM round trip,
// drain) plus its work; launches and the gaps between kernels are not in
// it. All-reduces are their expected time.
func (m *Model) Busy(p Point) float64 {
	if p.Op.IsCollective() {
		return p.Expected
	}
	return p.work + float64(p.Kernels)*m.eff.Ramp
}

// period is the launch period: the time per back-to-back empty kernel.
func (m *Model) period() float64 { return m.fixed - m.eff.Ramp }

// BackToBack is the time p's op takes among other kernels back to back on
// one stream (a CUDA-graph decode step, or a prefill whose CPU runs ahead):
// the kernel period, no ramp (a kernel starts as its predecessor drains),
// plus the work of its kernels, at least one period per kernel.
// All-reduces are their expected time.
func (m *Model) BackToBack(p Point) float64 {
	if p.Op.IsCollective() {
		return p.Expected
	}
	return math.Max(float64(p.Kernels)*m.period(), m.period()+p.work)
}

func (m *Model) estimate(op ops.Op, c ops.Cost, key string, peak float64) estimate {
	var compute, memory float64
	switch op.Kind {
	case ops.Matmul, ops.Linear, ops.Conv2D:
		if op.Quant != ops.QuantNone {
			return m.quantGEMM(op, key, peak)
		}
		b, mm, n, k, _ := op.GEMM()
		r := m.rate(key, peak)
		if op.Path() == devices.Tensor && !aligned(op) {
			r *= m.eff.GEMMUnaligned
		}
		var reduce bool
		compute, memory, reduce = m.gemm(b, mm, n, k, c.Bytes, r, dataParallel{})
		compute += c.VectorFLOPs / m.rate("fp32", m.vectorPeak())
		if reduce {
			return m.splitK(m.kernel(compute, memory))
		}
	case ops.Attention:
		if op.Naive {
			return m.naiveAttention(op, key, peak)
		}
		rate := m.rate(key, peak)
		var e estimate
		switch {
		case op.Impl == ops.ImplTriton:
			e = m.tritonAttention(op, c, rate, m.tritonFraction(key))
		case op.Paged:
			e = m.flashAttention(op, c, m.attentionRate(key, rate))
		default:
			e = m.flashAttention(op, c, rate)
		}
		if op.Paged {
			fixed := m.eff.PagedAttention
			if op.KVSize() >= op.DType.Size() {
				// A cache of the compute type: the family's engine
				// may run a lighter path (PagedDecode for its decode
				// steps, PagedNative for every layer).
				if m.eff.PagedDecode > 0 && decodeStep(op) {
					fixed = m.eff.PagedDecode
				} else if m.eff.PagedNative > 0 {
					fixed = m.eff.PagedNative
				}
			}
			e.work += fixed
			if !m.genericDecode(op) {
				// The cache append: this step's K and V read and
				// written, an elementwise kernel with a CTA per token
				// and KV head. The generic decode kernel writes them
				// itself.
				app := 2 * float64(op.B*op.KVHeads*op.SeqQ*op.HeadDim) * (op.DType.Size() + op.KVSize())
				e.work += app / (m.stream * m.active(float64(op.B*op.KVHeads*op.SeqQ)))
				e.kernels++
			}
			e = m.queryCast(op, e)
		}
		return e
	case ops.MoE:
		return m.moe(op, key, peak)
	case ops.MLA:
		return m.mla(op, c, m.rate(key, peak))
	case ops.LayerNorm, ops.RMSNorm, ops.Softmax, ops.BatchNorm, ops.Reduce:
		memory = c.Bytes / (m.stream * m.eff.Reduction)
		compute = m.vector(c, key, peak)
	default:
		memory = c.Bytes / m.stream
		compute = m.vector(c, key, peak)
		if op.Kind == ops.Copy && op.Repeat > 1 {
			compute = math.Max(compute, float64(op.Elems)/(m.eff.BroadcastCopy*float64(m.dev.SMs)*m.dev.BoostClockHz))
		}
	}
	return m.kernel(compute, memory)
}

// kernel is one kernel's estimate from its compute and memory times, which
// overlap.
func (m *Model) kernel(compute, memory float64) estimate {
	e := estimate{work: math.Max(compute, memory), kernels: 1, bound: string(MemoryBound)}
	if compute > memory {
		e.bound = string(ComputeBound)
	}
	return e
}

func (m *Model) vectorPeak() float64 {
	p, err := m.dev.Peak(devices.FP32, devices.CUDACores)
	if err != nil {
		return 1e12
	}
	return p
}

// vector is the compute time of non-matrix work: arithmetic at the
// achievable rate of its ceiling (fp32, or fp64 for fp64 data, which is
// far slower on most parts) and transcendentals on the SFU, which overlap.
func (m *Model) vector(c ops.Cost, key string, peak float64) float64 {
	t := c.VectorFLOPs / m.rate(key, peak)
	if m.sfu > 0 {
		t = math.Max(t, c.Transcendentals/m.sfu)
	}
	return t
}

// streamKChunk is the least K a stream-K GEMM gives one SM of a tile: 8
// k-blocks of 64, over which a split repays its fix-up (its fp32 partial
// tile written and read back) and its pipeline's fill. One constant, chosen
// on aiconfigurator's H100 GEMM table and gpucalc's own H100 runs
// (tools/conditions): 256 gives the table's bf16 p90 25.0%, 512 24.9%
// (1024 23.3%, but 41% over the 128x1024x1024 GEMM measured warm).
const streamKChunk = 512

// splitKWaves is the most waves of CTAs a split-K GEMM fills: a library
// splits K to fill the SMs and to shorten the tail of its last wave. One
// constant, chosen on aiconfigurator's A100 and L40S GEMM tables (the
// families without stream-K; with the split's reduction kernel priced): 2
// waves left the A100's tiles of just over one wave (512×3584×65536: 112
// tiles on 108 SMs, 927 µs measured, 259 TFLOP/s) at two waves' time; 3 and
// 4 give the A100's bf16 table 8.6% (23.6%), 8 gives 8.2% (23.2%) but the
// L40S's 15.0% median 16.2%.
const splitKWaves = 4

// gemm models batch × (M×N×K) on CTA tiles: for each tile shape (and split
// of K, up to splitKWaves waves of CTAs, at the cost of a reduction kernel
// that sums the fp32 partials) the compute time is the
// number of waves times one tile's time at the SM's share of the
// achievable rate, scaled by the tile's efficiency; memory time streams the
// ideal bytes (plus split-K partial sums) at the memory-bound GEMM fraction
// of streaming bandwidth, over the SMs the tiles occupy. The fastest choice
// wins, as a library's heuristic picks its kernel; reduce says it splits K
// (the caller adds the reduction kernel: splitK). A data-parallel kernel
// (dp) is priced as its own kind (see dataParallel).
func (m *Model) gemm(batch, M, N, K int64, bytes, rate float64, dp dataParallel) (compute, memory float64, reduce bool) {
	sms := float64(m.dev.SMs)
	perSM := rate / sms
	bw := m.gemmStream * m.eff.GEMMMemory
	best := math.Inf(1)
	for _, tl := range m.eff.Tiles {
		if dp.on() && tl.M < dp.minM {
			continue
		}
		// A skinny matrix (under 64 rows or columns, GEMV-like) computes
		// only the rows and columns that exist, rounded up to the MMA
		// granularity of 8; a data-parallel kernel's MMA computes its
		// whole tile.
		tm, tn := float64(tl.M), float64(tl.N)
		if M < 64 && !dp.on() {
			tm = min(tm, roundUp(M, 8))
		}
		if N < 64 && !dp.on() {
			tn = min(tn, roundUp(N, 8))
		}
		tiles := float64(batch) * ceilDiv(M, int64(tl.M)) * ceilDiv(N, int64(tl.N))
		for split := int64(1); split <= 16; split *= 2 {
			if split > 1 && (dp.on() || tiles*float64(split) > splitKWaves*sms || K/split < 256) {
				break
			}
			kk := ceilDiv(K, split)
			n := tiles * float64(split)
			waves := math.Ceil(n / sms)
			if m.eff.StreamK && !dp.on() {
				// Persistent stream-K kernels share the last wave's
				// work among all SMs: no tail; but a tile's K is
				// shared in chunks of at least streamKChunk, so a few
				// tiles spread over no more SMs than their chunks.
				waves = n / math.Min(sms, tiles*ceilDiv(K, streamKChunk))
			}
			tc := waves * 2 * tm * tn * kk / (perSM * tl.Efficiency)
			// A tile streams at most twice its SM's share of bandwidth.
			active := math.Min(1, 2*math.Min(n, sms)/sms)
			if dp.on() {
				// Full waves run at the GEMM's rate; the last,
				// partial wave's tiles run their K at one CTA's
				// pace, though its SMs together at no more than the
				// GEMM's rate.
				tile := 2 * tm * tn * kk / tl.Efficiency
				full := math.Floor(n / sms)
				tc = full * tile / perSM
				if tail := n - full*sms; tail > 0 {
					tc += math.Max(tile/dp.cta, tail/sms*tile/perSM)
				}
				active = 1
			}
			extra, fix := 0.0, 0.0
			if split > 1 {
				extra = float64(split) * float64(batch*M*N) * 4 * 2 // fp32 partials written and read
				fix = m.kernelPeriod()
			}
			tm := (bytes + extra) / (bw * active)
			if t := math.Max(tc, tm) + fix; t < best {
				best, compute, memory, reduce = t, tc, tm, split > 1
			}
		}
	}
	return compute, memory, reduce
}

// splitK adds to a GEMM split over K the kernel that sums its fp32 partials
// (cuBLASLt's splitKreduce_kernel, in gpucalc's own H100 traces:
// trace/testdata/): its bytes are in the GEMM's, its launch is its own.
func (m *Model) splitK(e estimate) estimate {
	e.kernels++
	return e
}

// kernelPeriod is what one more kernel adds to an op's time: under CUDA
// graph replay the graph's kernel period, launched eagerly one launch
// period (see opTime).
func (m *Model) kernelPeriod() float64 {
	if m.cond.graph() {
		return m.eff.GraphKernel
	}
	return m.period()
}

// dataParallel describes a data-parallel GEMM kernel: each CTA computes
// one tile of at least minM rows over all of K on one SM (no split-K, no
// stream-K), at most at cta FLOP/s. The zero value is the libraries'
// general GEMM (split-K, stream-K where the family has it, skinny tiles).
//
// With fewer tiles than SMs such a kernel's time is K at one CTA's pace,
// whatever the bytes: aiconfigurator's fp8_block GEMMs with one to four
// tiles take 53-76 µs over K = 51200-65536 on the H100, 160-210 µs on the
// L40S and 42-60 µs on the B200, and nvfp4's 100-130 µs on the B200, with
// m from 1 to 256 (roofline/testdata/peer/). A lone CTA's loads keep pace
// with its K loop (the L40S's 15×256×65536 fp8_block GEMM reads its 18.8
// MB at 91 GB/s from at most four CTAs, where twice an SM's share of DRAM
// each would give 40), so the bytes stream at the full rate and the K loop
// is the limit.
type dataParallel struct {
	cta  float64
	minM int
}

func (d dataParallel) on() bool { return d.cta > 0 }

// active is the share of the streaming bandwidth n CTAs reach: a CTA
// streams at most twice its SM's share, so a few CTAs cannot saturate DRAM.
func (m *Model) active(n float64) float64 {
	sms := float64(m.dev.SMs)
	return math.Min(1, 2*math.Min(n, sms)/sms)
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ceilDiv(a, b int64) float64 { return float64((a + b - 1) / b) }

func roundUp(a, b int64) float64 { return float64((a + b - 1) / b * b) }

// aligned reports whether the contiguous dimensions of a matrix op are
// multiples of 16 bytes, as tensor-core fast paths (TMA, wgmma) need: K and N
// of a row-major matmul, the channels of a channels-last convolution, the
// head dimension of attention.
func aligned(op ops.Op) bool {
	size := op.DType.Size()
	ok := func(n int64) bool { return math.Mod(float64(n)*size, 16) == 0 }
	switch op.Kind {
	case ops.Matmul, ops.Linear:
		return ok(op.K) && ok(op.N)
	case ops.Conv2D:
		g := max(op.Groups, 1)
		return ok(op.C/g) && ok(op.K/g)
	case ops.Attention:
		return ok(op.HeadDim)
	}
	return true
}
