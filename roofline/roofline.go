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
	p.Expected, p.ExpectedBound = m.expected(op, c, key, peak)
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

// expected returns the expected time and what limits it.
func (m *Model) expected(op ops.Op, c ops.Cost, key string, peak float64) (float64, string) {
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
		compute = m.flash(op, m.rate(key, peak))
		memory = c.Bytes / (m.stream * m.eff.GEMMMemory * m.active(flashCTAs(op)))
	case ops.LayerNorm, ops.RMSNorm, ops.Softmax, ops.BatchNorm, ops.Reduce:
		memory = c.Bytes / (m.stream * m.eff.Reduction)
		compute = m.vector(c, key, peak)
	default:
		memory = c.Bytes / m.stream
		compute = m.vector(c, key, peak)
	}
	t := math.Max(compute, memory)
	bound := string(MemoryBound)
	if compute > memory {
		bound = string(ComputeBound)
	}
	if m.fixed > t {
		bound = "launch"
	}
	return m.fixed + t, bound
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

// flashCTAs is one CTA per (batch, head, 128-query block).
func flashCTAs(op ops.Op) float64 {
	return float64(op.B*op.Heads) * ceilDiv(op.SeqQ, flashBlock)
}

// flash models flash attention: one CTA per (batch, head, 128-query block),
// each sweeping 128-key blocks; a block costs its matrix FLOPs at the SM's
// achievable tensor rate plus its exponentials on the SFU. A CTA computes
// its whole 128-row query tile even when fewer queries exist (a decode step
// through a kernel without a split-KV decode path). Causal masking skips
// blocks above the diagonal; diagonal blocks cost CausalDiagonal full
// blocks. CTAs are spread over the SMs in waves.
func (m *Model) flash(op ops.Op, rate float64) float64 {
	const blk = flashBlock
	sms := float64(m.dev.SMs)
	perSM := rate / sms
	sfuSM := m.sfu / sms
	qb := ceilDiv(op.SeqQ, blk)
	kb := ceilDiv(op.SeqK, blk)
	rows := float64(blk)
	cols := math.Min(blk, float64(op.SeqK))
	block := 4*rows*cols*float64(op.HeadDim)/perSM + rows*cols/sfuSM
	blocks := qb * kb
	if op.Causal {
		// Query block i (aligned to the end of the keys) sees the key
		// blocks up to its diagonal: kb−qb+i+1 of them, the last masked.
		full := 0.0
		for i := 0.0; i < qb; i++ {
			full += math.Max(kb-qb+i, 0)
		}
		blocks = full + qb*m.eff.CausalDiagonal
	}
	ctas := flashCTAs(op)
	perCTA := blocks / qb * block
	return math.Ceil(ctas/sms) * perCTA
}

// naiveAttention is three kernels: S = QKᵀ, softmax over S, O = PV, each
// with its launch, S and P going through DRAM. The products are computed in
// full; a causal mask only zeroes scores in the softmax.
func (m *Model) naiveAttention(op ops.Op, key string, peak float64) (float64, string) {
	bh := op.B * op.Heads
	qk := ops.Op{Kind: ops.Matmul, DType: op.DType, Out: op.DType, Batch: bh, M: op.SeqQ, N: op.SeqK, K: op.HeadDim}
	pv := ops.Op{Kind: ops.Matmul, DType: op.DType, Out: op.DType, Batch: bh, M: op.SeqQ, N: op.HeadDim, K: op.SeqK}
	sm := ops.Op{Kind: ops.Softmax, DType: op.DType, Rows: bh * op.SeqQ, Cols: op.SeqK}
	total, worst, bound := 0.0, 0.0, ""
	for _, sub := range []ops.Op{qk, sm, pv} {
		c := sub.Cost()
		k, p := key, peak
		if sub.Kind == ops.Softmax {
			k, p = "fp32", m.vectorPeak()
		}
		t, b := m.expected(sub, c, k, p)
		total += t
		if t > worst {
			worst, bound = t, b
		}
	}
	return total, bound
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
		Op: op, Device: m.dev.Name, Count: 1,
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
