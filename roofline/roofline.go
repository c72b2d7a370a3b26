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
		return "", 0, nil, fmt.Errorf("%s cannot run %s: %w", m.dev.Name, op.Kind, err)
	}
	return devices.PeakKey(dt, devices.CUDACores), p, notes, nil
}

// Analyze places op on the device's roofline and estimates its time.
func (m *Model) Analyze(op ops.Op) (Point, error) {
	c := op.Cost()
	if op.Kind == ops.AllReduce {
		return m.allReduce(op, c), nil
	}
	key, peak, notes, err := m.ceiling(op)
	if err != nil {
		return Point{}, err
	}
	p := Point{
		Op: op, Device: m.dev.Name, Count: 1,
		FLOPs: c.FLOPs(), MatrixFLOPs: c.MatrixFLOPs, Transcendentals: c.Transcendentals, Bytes: c.Bytes, AI: c.AI(),
		PeakKey: key, ComputeCeiling: peak, MemoryLevel: devices.DRAM, MemoryCeiling: m.dram, Notes: notes,
	}
	if m.l2 > 0 && c.Bytes <= float64(m.dev.L2.Bytes) {
		p.MemoryLevel, p.MemoryCeiling = devices.L2, m.l2
	}
	p.Ridge = peak / p.MemoryCeiling
	p.Attainable = math.Min(peak, p.AI*p.MemoryCeiling)
	p.Bound = ComputeBound
	if p.AI < p.Ridge {
		p.Bound = MemoryBound
	}
	p.LowerBound = math.Max(p.FLOPs/peak, c.Bytes/p.MemoryCeiling)
	e := m.estimate(op, c, key, peak)
	p.Expected, p.ExpectedBound, p.Kernels, p.work = m.opTime(e), e.bound, e.kernels, e.work
	if p.Expected-e.work > e.work {
		p.ExpectedBound = "launch"
	}
	return p, nil
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
func (m *Model) opTime(e estimate) float64 {
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
	if p.Op.Kind == ops.AllReduce {
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
	if p.Op.Kind == ops.AllReduce {
		return p.Expected
	}
	return math.Max(float64(p.Kernels)*m.period(), m.period()+p.work)
}

func (m *Model) estimate(op ops.Op, c ops.Cost, key string, peak float64) estimate {
	var compute, memory float64
	switch op.Kind {
	case ops.Matmul, ops.Linear, ops.Conv2D:
		b, mm, n, k, _ := op.GEMM()
		r := m.rate(key, peak)
		if op.Path() == devices.Tensor && !aligned(op) {
			r *= m.eff.GEMMUnaligned
		}
		compute, memory = m.gemm(b, mm, n, k, c.Bytes, r)
		compute += c.VectorFLOPs / m.rate("fp32", m.vectorPeak())
	case ops.Attention:
		if op.Naive {
			return m.naiveAttention(op, key, peak)
		}
		return m.flashAttention(op, c, m.rate(key, peak))
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

// gemm models batch × (M×N×K) on CTA tiles: for each tile shape (and split
// of K when tiles are too few to fill the SMs) the compute time is the
// number of waves times one tile's time at the SM's share of the
// achievable rate, scaled by the tile's efficiency; memory time streams the
// ideal bytes (plus split-K partial sums) at the memory-bound GEMM fraction
// of streaming bandwidth, over the SMs the tiles occupy. The fastest choice
// wins, as a library's heuristic picks its kernel.
func (m *Model) gemm(batch, M, N, K int64, bytes, rate float64) (compute, memory float64) {
	sms := float64(m.dev.SMs)
	perSM := rate / sms
	bw := m.stream * m.eff.GEMMMemory
	best := math.Inf(1)
	for _, tl := range m.eff.Tiles {
		// A skinny matrix (under 64 rows or columns, GEMV-like) computes
		// only the rows and columns that exist, rounded up to the MMA
		// granularity of 8.
		tm, tn := float64(tl.M), float64(tl.N)
		if M < 64 {
			tm = min(tm, roundUp(M, 8))
		}
		if N < 64 {
			tn = min(tn, roundUp(N, 8))
		}
		tiles := float64(batch) * ceilDiv(M, int64(tl.M)) * ceilDiv(N, int64(tl.N))
		for split := int64(1); split <= 16; split *= 2 {
			if split > 1 && (tiles*float64(split) > 2*sms || K/split < 256) {
				break
			}
			kk := ceilDiv(K, split)
			n := tiles * float64(split)
			waves := math.Ceil(n / sms)
			tc := waves * 2 * tm * tn * kk / (perSM * tl.Efficiency)
			extra := 0.0
			if split > 1 {
				extra = float64(split) * float64(batch*M*N) * 4 * 2 // fp32 partials written and read
			}
			// A tile streams at most twice its SM's share of bandwidth.
			active := math.Min(1, 2*math.Min(n, sms)/sms)
			tm := (bytes + extra) / (bw * active)
			if t := math.Max(tc, tm); t < best {
				best, compute, memory = t, tc, tm
			}
		}
	}
	return compute, memory
}

// active is the share of the streaming bandwidth n CTAs reach: a CTA
// streams at most twice its SM's share, so a few CTAs cannot saturate DRAM.
func (m *Model) active(n float64) float64 {
	sms := float64(m.dev.SMs)
	return math.Min(1, 2*math.Min(n, sms)/sms)
}

// flashBlock is flash attention's query and key tile.
const flashBlock = 128

// Split-KV kernels (flash-decoding, FlashAttention's split path) pad query
// tiles to the MMA's row count (mmaRows: mma.sync m16n8k16), sweep keys in
// blocks of splitBlock (the Triton decode kernel's, and FlashAttention 2's
// for head dimension 256), and size their splits for at most splitFill
// CTAs per SM (FlashAttention 2's num_splits heuristic targets 2 × the
// SMs, as flash-decoding kernels do).
const (
	mmaRows    = 16
	splitBlock = 64
	splitFill  = 2
)

// flashAttention prices flash attention by its schedule. impl=rows folds a
// KV group's query heads into query rows and runs the forward kernel on
// them (one CTA per batch × KV head × 128-query block, at decode a few
// CTAs). impl=heads runs one CTA per batch × query head × 128-query block,
// its rows padded to the MMA's 16, each reading its head's K and V,
// unsplit: a masked SDPA kernel (cuDNN's, in transformers' eager decode).
// The default takes the fastest of the forward kernel and split-KV
// kernels, as FlashAttention's heuristics and decode kernels choose, which
// a library runs where the forward kernel's tiles cannot fill every SM
// twice, its 128-row tiles would be mostly padding, or a KV group's query
// rows fit one tile (decode).
func (m *Model) flashAttention(op ops.Op, c ops.Cost, rate float64) estimate {
	switch op.Impl {
	case ops.ImplRows:
		g := op.Heads / op.KVHeads
		op.Heads, op.SeqQ = op.KVHeads, op.SeqQ*g
		return m.flashForward(op, c, rate)
	case ops.ImplHeads:
		return m.splitKVAt(op, rate, splitTiling(op, false, flashBlock), 1)
	}
	best := m.flashForward(op, c, rate)
	rows := op.SeqQ * (op.Heads / op.KVHeads)
	tiles := float64(op.B*op.Heads) * ceilDiv(op.SeqQ, flashBlock)
	if op.SeqQ >= flashBlock && rows > flashBlock && tiles >= splitFill*float64(m.dev.SMs) {
		return best
	}
	for _, pack := range []bool{true, false} {
		for _, tm := range []int64{mmaRows, splitBlock, flashBlock} {
			if e := m.splitKV(op, rate, splitTiling(op, pack, tm)); m.opTime(e) < m.opTime(best) {
				best = e
			}
		}
	}
	return best
}

// flashForward is FlashAttention's forward kernel: one CTA per (batch,
// head, 128-query block), each sweeping the key blocks keyBlocks gives; a
// block costs its matrix FLOPs at the SM's achievable tensor rate plus its
// exponentials on the SFU. A CTA computes its whole 128-row query tile even
// when fewer queries exist. CTAs are spread over the SMs in waves; memory
// streams the ideal bytes at the memory-bound GEMM fraction, over the SMs
// the CTAs occupy.
func (m *Model) flashForward(op ops.Op, c ops.Cost, rate float64) estimate {
	sms := float64(m.dev.SMs)
	perBlock, cols := m.keyBlocks(op)
	ctas := float64(op.B*op.Heads) * ceilDiv(op.SeqQ, flashBlock)
	compute := math.Ceil(ctas/sms) * perBlock * m.flashBlockTime(flashBlock, cols, op.HeadDim, rate)
	memory := c.Bytes / (m.stream * m.eff.GEMMMemory * m.active(ctas))
	return m.kernel(compute, memory)
}

// keyBlocks is the key work of one 128-query block, in blocks of 128 keys
// (cols keys wide: 128, or all the keys when fewer), the last block
// computed in 64-key halves. Causal masking skips the blocks above the
// diagonal, and a diagonal block costs CausalDiagonal full blocks (at most
// the work of the full attention); the result is the mean over the query
// blocks.
func (m *Model) keyBlocks(op ops.Op) (perBlock, cols float64) {
	const blk = flashBlock
	qb := ceilDiv(op.SeqQ, blk)
	kb, cols := ceilDiv(op.SeqK, splitBlock)/2, float64(blk)
	if op.SeqK <= blk {
		kb, cols = 1, float64(op.SeqK)
	}
	if !op.Causal {
		return kb, cols
	}
	// Query block i (aligned to the end of the keys) sees the key blocks
	// up to its diagonal: kb−qb+i+1 of them, the last masked.
	full := 0.0
	for i := 0.0; i < qb; i++ {
		full += math.Max(kb-qb+i, 0)
	}
	// Masking never costs more than computing every block.
	return math.Min(kb, (full+qb*m.eff.CausalDiagonal)/qb), cols
}

// flashBlockTime is one rows × cols block of flash attention on one SM:
// QKᵀ and PV (4·rows·cols·d FLOPs) at the SM's share of the tensor rate,
// then rows × cols exponentials on its SFU.
func (m *Model) flashBlockTime(rows, cols float64, d int64, rate float64) float64 {
	sms := float64(m.dev.SMs)
	return 4*rows*cols*float64(d)/(rate/sms) + rows*cols/(m.sfu/sms)
}

// tiling is how a split-KV kernel lays out its query rows: tiles of rows
// rows (padded to the MMA's 16), and the K and V heads it reads per
// sequence.
type tiling struct {
	tiles, rows float64
	reads       int64
}

// splitTiling tiles the query rows tm at a time. Packed, the query rows of
// a KV group (sq × h/kv) share tiles, so all query heads of a group share
// one read of K and V; otherwise each query head has its own tiles and
// reads K and V itself.
func splitTiling(op ops.Op, pack bool, tm int64) tiling {
	units, rows, reads := op.B*op.KVHeads, op.SeqQ*(op.Heads/op.KVHeads), op.KVHeads
	if !pack {
		units, rows, reads = op.B*op.Heads, op.SeqQ, op.Heads
	}
	return tiling{float64(units) * ceilDiv(rows, tm), roundUp(min(rows, tm), mmaRows), reads}
}

// splitKV is a split-KV kernel and the pass that merges its splits, with
// the number of splits that gives the shortest time: at most enough for
// splitFill CTAs per SM and one split per splitBlock keys, fewer where the
// merge would cost more than the splits gain (see splitKVAt).
func (m *Model) splitKV(op ops.Op, rate float64, t tiling) estimate {
	most := math.Max(1, math.Min(math.Ceil(splitFill*float64(m.dev.SMs)/t.tiles), ceilDiv(op.SeqK, splitBlock)))
	best := m.splitKVAt(op, rate, t, most)
	for s := 1.0; s < most; s *= 2 {
		if e := m.splitKVAt(op, rate, t, s); m.opTime(e) < m.opTime(best) {
			best = e
		}
	}
	return best
}

// splitKVAt is a split-KV kernel with splits splits of the keys: tiles ×
// splits CTAs, each sweeping its share of the key blocks (keyBlocks, in
// 64-key halves, on its padded rows) and streaming its share of K and V
// (streamTime). With more than one split each CTA writes its partial
// output and log-sum-exp in fp32, and a second kernel, one CTA per query
// row, reads them back and writes the output.
func (m *Model) splitKVAt(op ops.Op, rate float64, t tiling, splits float64) estimate {
	sms := float64(m.dev.SMs)
	in, out := op.DType.Size(), op.Out.Size()
	if out == 0 {
		out = in
	}
	perBlock, cols := m.keyBlocks(op)
	ctas := t.tiles * splits
	compute := math.Ceil(ctas/sms) * math.Ceil(2*perBlock/splits) / 2 * m.flashBlockTime(t.rows, cols, op.HeadDim, rate)
	queries := float64(op.B*op.Heads*op.SeqQ) * float64(op.HeadDim)
	kv := 2 * float64(op.B*t.reads*op.SeqK*op.HeadDim) * in
	// A CTA keeps two stages of a K and a V block in flight.
	inflight := 2 * 2 * splitBlock * float64(op.HeadDim) * in
	if splits == 1 {
		return m.kernel(compute, m.streamTime(queries*in+kv+queries*out, ctas, inflight))
	}
	partials := splits * float64(op.B*op.Heads*op.SeqQ) * float64(op.HeadDim+1) * 4
	e := m.kernel(compute, m.streamTime(queries*in+kv+partials, ctas, inflight))
	combine := m.kernel(0, m.streamTime(partials+queries*out, float64(op.B*op.Heads*op.SeqQ), inflight))
	e.work += combine.work
	e.kernels++
	return e
}

// streamTime is the time n CTAs take to read (mostly) bytes, spread evenly
// over them: no less than the bytes at the read bandwidth, nor than each
// CTA's bytes beyond the inflight bytes its first round trip brings (within
// the kernel's ramp) at twice its SM's share of the bandwidth (active).
func (m *Model) streamTime(bytes, n, inflight float64) float64 {
	rest := math.Max(0, bytes/n-inflight) * n
	return math.Max(bytes/m.read, rest/(m.read*m.active(n)))
}

// naiveAttention is three kernels: S = QKᵀ, softmax over S, O = PV, each
// S and P going through DRAM. The products are computed in full; a causal
// mask only zeroes scores in the softmax.
func (m *Model) naiveAttention(op ops.Op, key string, peak float64) estimate {
	bh := op.B * op.Heads
	qk := ops.Op{Kind: ops.Matmul, DType: op.DType, Out: op.DType, Batch: bh, M: op.SeqQ, N: op.SeqK, K: op.HeadDim}
	pv := ops.Op{Kind: ops.Matmul, DType: op.DType, Out: op.DType, Batch: bh, M: op.SeqQ, N: op.HeadDim, K: op.SeqK}
	sm := ops.Op{Kind: ops.Softmax, DType: op.DType, Rows: bh * op.SeqQ, Cols: op.SeqK}
	var total estimate
	worst := 0.0
	for _, sub := range []ops.Op{qk, sm, pv} {
		k, p := key, peak
		if sub.Kind == ops.Softmax {
			k, p = "fp32", m.vectorPeak()
		}
		e := m.estimate(sub, sub.Cost(), k, p)
		total.work += e.work
		total.kernels += e.kernels
		if e.work >= worst {
			worst, total.bound = e.work, e.bound
		}
	}
	return total
}

// Link is the memory level of an op that moves data between GPUs.
const Link devices.Level = "link"

// Defaults for links without a measured all-reduce curve, from the two-H200
// NCCL 2.28.9 fit in the device catalog (devices/data/measured/h200-sxm.yaml:
// 9.62 us, 263.7 GB/s bus bandwidth over NVLink 4 at 450 GB/s per direction,
// calls back to back in a CUDA graph): NCCL's fixed cost per call, and the
// share of the link's per-direction rate its bus bandwidth reaches.
// TestAllReduceDefaults keeps them equal to the catalog's figures.
const (
	allReduceLatency  = 9.62e-6
	allReduceLinkFrac = 263.7 / 450.0
)

// allReduce prices an all-reduce over the device's peer link: the lower
// bound sends the bus bytes at the link's datasheet rate per direction; the
// expected time is the measured latency + bus bytes / measured bus
// bandwidth where the device has them (NVLink H100/H200), else the NCCL
// defaults above applied to the link the catalog gives (NVLink, or PCIe
// through the host link for parts without NVLink).
func (m *Model) allReduce(op ops.Op, c ops.Cost) Point {
	link := m.dev.Peer()
	p := Point{
		Op: op, Device: m.dev.Name, Count: 1, Kernels: 1,
		FLOPs: c.FLOPs(), Bytes: c.Bytes, AI: c.AI(),
		PeakKey: "link", MemoryLevel: Link, MemoryCeiling: link.BytesPerSecond,
		Bound: MemoryBound, ExpectedBound: "link",
	}
	if op.Ranks <= 1 {
		return p
	}
	lat, bus := allReduceLatency, link.BytesPerSecond*allReduceLinkFrac
	if me := m.dev.Measured; me != nil && me.AllReduceBusBandwidth > 0 {
		lat, bus = me.AllReduceLatency, me.AllReduceBusBandwidth
	} else {
		p.Notes = append(p.Notes, fmt.Sprintf("no measured all-reduce on %s: NCCL's 2-H200 latency and %.0f%% of the %s rate assumed", m.dev.Name, 100*allReduceLinkFrac, link.Type))
	}
	if link.BytesPerSecond > 0 {
		p.LowerBound = c.Bytes / link.BytesPerSecond
		p.Attainable = p.AI * link.BytesPerSecond
	}
	if bus > 0 {
		p.Expected = lat + c.Bytes/bus
	}
	if lat > p.Expected/2 {
		p.ExpectedBound = "latency"
	}
	return p
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
