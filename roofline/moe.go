package roofline

import (
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// groupedRate is the fraction of the GEMM rate (measured, or the family's
// fraction of the dense peak) that fused MoE kernels' grouped GEMMs reach,
// by architecture: SGLang 0.5.14's fastest MoE kernel per configuration
// (Triton fused MoE, FlashInfer/TensorRT-LLM and CUTLASS MoE) in
// aiconfigurator's tables, fitted once per architecture on the A100, H100,
// B200 and L40S (the median over every configuration); architectures
// without a figure take Hopper's.
var groupedRate = map[string]float64{"Ampere": 0.45, "Hopper": 0.3, "Blackwell": 0.3, "Ada Lovelace": 0.25}

// mlaRate is the same for latent-attention kernels (FlashAttention 3 on
// Hopper, TensorRT-LLM's MLA kernels on Blackwell, Triton on Ada),
// prefill and decode.
var mlaRate = map[string][2]float64{"Hopper": {0.95, 0.15}, "Blackwell": {1.15, 0.8}, "Ada Lovelace": {0.35, 0.2}}

// archRate is a per-architecture fraction, Hopper's where the table has
// none for the device's architecture.
func archRate[T any](m *Model, table map[string]T) T {
	if v, ok := table[m.dev.Architecture]; ok {
		return v
	}
	return table["Hopper"]
}

// moeTiles are the grouped GEMM's row tiles (BLOCK_M) a fused MoE kernel
// picks from by the tokens per expert; small tiles waste less on experts of
// few tokens.
var moeTiles = []int64{16, 32, 64, 128}

// moe prices a MoE layer on one GPU: each kernel's compute and memory time
// at achievable rates, summed (they run one after another). The grouped
// GEMMs run one CTA per (expert, BLOCK_M rows of its tokens, BLOCK_N
// columns): every hit expert's rows are padded to the tile, so the busiest
// expert sets how many row tiles there are, and the CTAs go in waves over
// the SMs; each hit expert's weights are read once (from DRAM, or from L2
// when warm and the layer's bytes fit). The activation and the combine
// stream every token's k rows.
func (m *Model) moe(op ops.Op, key string, peak float64, warm bool) estimate {
	f := func(x int64) float64 { return float64(x) }
	in := op.DType.Size()
	w := in
	if op.Weight != "" {
		w = op.Weight.Size()
	}
	act := devices.BF16.Size()
	loads := op.Loads()
	routed := 0.0
	for _, l := range loads {
		routed += l
	}
	t, h, e := f(op.Tokens), f(op.Hidden), f(op.Experts)
	local := op.LocalTokens()
	rows := local * f(op.TopK)
	rate := m.rate(key, peak) * archRate(m, groupedRate)
	var total estimate
	add := func(e estimate) {
		total.work += e.work
		total.kernels += e.kernels
		if total.bound == "" || e.bound == string(ComputeBound) {
			total.bound = e.bound
		}
	}
	stream := func(bytes float64) estimate { return m.kernel(0, m.memoryTime(bytes, m.stream, warm)) }
	// router: T×E logits (a skinny GEMM), softmax/top-k, the sort by expert
	bf := m.rate(devices.PeakKey(devices.BF16, devices.Tensor), peak)
	rc, rm := m.gemm(1, op.Tokens, op.Experts, op.Hidden, t*h*act+h*e*act+t*e*act, bf)
	add(m.kernel(rc, rm*m.warmShare(t*h*act+h*e*act, warm)))
	add(stream(t*e*act + rows*8))
	add(stream(rows * 8))
	gu, li := op.LocalInter(), op.LocalInter()
	if !op.Ungated {
		gu *= 2
	}
	add(m.groupedGEMM(loads, gu, op.Hidden, w, in, act, rate, warm))
	add(stream(rows*f(gu)*act + rows*f(li)*act))
	add(m.groupedGEMM(loads, op.Hidden, li, w, in, act, rate, warm))
	// The down GEMM writes a row for every choice (zeros for experts on
	// other GPUs), which the combine reads.
	add(stream(rows*h*act + local*h*act))
	return total
}

// groupedGEMM is one grouped GEMM over the hit experts: expert i multiplies
// its loads[i] rows of K by its K×N weight. The fastest row tile wins, as the
// kernel's configuration table picks one by the tokens per expert.
func (m *Model) groupedGEMM(loads []float64, n, k int64, w, in, out, rate float64, warm bool) estimate {
	sms := float64(m.dev.SMs)
	perSM := rate / sms
	routed := 0.0
	for _, l := range loads {
		routed += l
	}
	bytes := float64(len(loads))*float64(n*k)*w + routed*float64(k)*in + routed*float64(n)*out
	// Row tiles per candidate BLOCK_M: every hit expert's rows padded.
	rowTiles := make([]float64, len(moeTiles))
	for i, tm := range moeTiles {
		for _, l := range loads {
			rowTiles[i] += math.Ceil(l / float64(tm))
		}
	}
	var best estimate
	for _, tl := range m.eff.Tiles {
		for i, tm := range moeTiles {
			// A row tile under 64 rows costs a 64-row tile: fused MoE
			// kernels run the tensor cores' 64-row instructions on
			// padding (the fit to the tables says so).
			if tm != int64(tl.M) && (tm > 64 || tl.M != 64) {
				continue
			}
			tiles := rowTiles[i] * ceilDiv(n, int64(tl.N))
			compute := math.Ceil(tiles/sms) * 2 * float64(tl.M) * float64(tl.N) * float64(k) / (perSM * tl.Efficiency)
			memory := m.memoryTime(bytes, m.stream*m.eff.GEMMMemory*m.active(tiles), warm)
			e := m.kernel(compute, memory)
			if best.kernels == 0 || e.work < best.work {
				best = e
			}
		}
	}
	return best
}

// memoryTime is bytes at bandwidth bw, or, warm, at the L2's where they fit
// in it (a kernel replayed over the same data finds it there).
func (m *Model) memoryTime(bytes, bw float64, warm bool) float64 {
	return bytes / bw * m.warmShare(bytes, warm)
}

// warmShare scales a DRAM time for data that may sit in L2: 1 cold or where
// the bytes do not fit, else the ratio of the DRAM to the L2 bandwidth.
func (m *Model) warmShare(bytes float64, warm bool) float64 {
	if !warm || m.l2 <= 0 || bytes > float64(m.dev.L2.Bytes) {
		return 1
	}
	return m.dram / m.l2
}
