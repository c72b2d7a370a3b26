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
// B200 and L40S (the fraction with the lowest median error over every
// configuration of the family's GPU, TestPeerCalibration); architectures
// without a figure take Hopper's.
var groupedRate = map[string]float64{"Ampere": 0.3, "Hopper": 0.25, "Blackwell": 0.25, "Ada Lovelace": 0.5}

// groupedMemory is, by architecture, the fraction of the GEMMs' bandwidth
// at which the grouped GEMMs read the experts' weights, where it is not
// the dense GEMMs' (TestPeerCalibration, as groupedRate); others read at
// the dense GEMMs' bandwidth.
var groupedMemory = map[string]float64{"Ampere": 0.85, "Ada Lovelace": 0.7}

// mlaRate is the same for latent-attention kernels (FlashAttention 3 on
// Hopper, TensorRT-LLM's MLA kernels on Blackwell, Triton on Ada), of the
// tensor rate in prefill (and a prefill's few queries) and in decode.
var mlaRate = map[string][2]float64{"Hopper": {0.9, 0.7}, "Blackwell": {1.0, 0.7}, "Ada Lovelace": {0.34, 0.12}}

// mlaTritonDecode is, by architecture, the key splits of the absorbed-MLA
// decode where the engine runs SGLang's Triton attention backend (on Ada:
// no FlashInfer MLA or FlashMLA kernel for sm_89): every sequence's keys
// in num_kv_splits = 8 splits whatever their length (aiconfigurator's L40S
// table: 64 sequences of 128 heads take 372 µs over 2 keys and over 32
// alike), 16 query heads (BLOCK_H) to a CTA, each split's fp32 partial
// output written and merged by a second kernel.
var mlaTritonDecode = map[string]float64{"Ada Lovelace": 8}

// mlaCast is, by architecture, the fraction of the streaming bandwidth at
// which the engine's absorbed-MLA decode casts an fp8 cache to bf16 before
// attending over it, where its kernel cannot read fp8 (SGLang's
// FlashAttention 3 backend on Hopper: fp8-cache decode takes 5.4 times the
// bf16 cache's at long contexts in aiconfigurator's H100 table).
var mlaCast = map[string]float64{"Hopper": 0.34}

// archRate is a per-architecture fraction, Hopper's where the table has
// none for the device's architecture.
func archRate[T any](m *Model, table map[string]T) T {
	if v, ok := table[m.dev.Architecture]; ok {
		return v
	}
	return table["Hopper"]
}

// moeRowTile is the grouped GEMM's row tile (BLOCK_M) fused MoE kernels
// pick by the tokens of the batch, not by each expert's: 16 rows while the
// tokens are no more than the experts (most experts get one or none), 64
// beyond (SGLang's and vLLM's default Triton configuration).
func moeRowTile(tokens float64, experts int64) int64 {
	if tokens <= float64(experts) {
		return 16
	}
	return 64
}

// moeTileCols are the grouped GEMM's column tiles (BLOCK_N).
var moeTileCols = []int64{64, 128, 256}

// localOnlyMoE reports whether the engine's MoE kernel on the device
// handles only the tokens routed to the GPU's own experts under expert
// parallelism: on datacenter Blackwell (compute capability 10.x, the only
// target of FlashInfer's TensorRT-LLM MoE kernels) SGLang runs that kernel,
// which permutes the routed rows of its local experts alone and finalizes
// from them. Elsewhere it runs Triton fused MoE (or Marlin), which keeps
// every token's k slots: the slots of experts on other GPUs (expert id -1)
// go through the alignment, their GEMM tiles write zeros
// (fused_moe_kernel's write_zeros_to_output), and the activation and the
// combine run over all of them.
func (m *Model) localOnlyMoE() bool { return m.dev.CC.Major == 10 }

// moeUngated is, by architecture, the fractions of the GEMM rate and of the
// streaming bandwidth that the engine's kernel for experts without a gate
// (squared-ReLU experts, NVIDIA's Nemotron-3) reaches, where that kernel
// is not the gated one: SGLang 0.5.14 on Hopper runs them with FlashInfer's
// CUTLASS MoE, which handles only the local experts' rows and reads the
// weights at about a fifth of the DRAM bandwidth in aiconfigurator's H100
// table (a 22-of-512 layer of 2048×5120 experts reads its 21.5 GB in
// 32.7 ms at 64 tokens).
var moeUngated = map[string][2]float64{"Hopper": {0.1, 0.2}}

// moeKernel is how the engine's MoE kernel on a device runs a layer: the
// fraction of the GEMM rate its grouped GEMMs reach, the fraction of the
// GEMMs' bandwidth at which they read weights, and whether it keeps every
// token's k slots under expert parallelism (localOnlyMoE).
type moeKernel struct {
	rate, memory float64
	allSlots     bool
}

// moePath is the kernel the engine runs op with on this device.
func (m *Model) moePath(op ops.Op) moeKernel {
	mem, ok := groupedMemory[m.dev.Architecture]
	if !ok {
		mem = 1
	}
	k := moeKernel{archRate(m, groupedRate), mem, !m.localOnlyMoE()}
	if f, ok := moeUngated[m.dev.Architecture]; ok && op.Ungated {
		k = moeKernel{f[0], f[1], false}
	}
	return k
}

// moeWorkingSet is the bytes op's kernels touch on this device: the
// experts hit, the routed rows and the tokens (ops.Op.MoEWorkingSet), and
// where the kernel keeps every token's slots, the zeros, activations and
// partial outputs of the other GPUs' slots too.
func (m *Model) moeWorkingSet(op ops.Op) float64 {
	ws := op.MoEWorkingSet()
	if !m.moePath(op).allSlots || op.EP <= 1 {
		return ws
	}
	f := func(x int64) float64 { return float64(x) }
	act := devices.BF16.Size()
	li := f(op.LocalInter())
	gu := li
	if !op.Ungated {
		gu *= 2
	}
	routed := 0.0
	for _, l := range op.Loads() {
		routed += l
	}
	other := math.Max(0, f(op.Tokens*op.TopK)-routed)
	return ws + other*(gu+li+f(op.Hidden))*act
}

// moe prices a MoE layer on one GPU as fused MoE kernels run it, kernel
// by kernel, one after another: the top-k over the router's logits, the
// sort of the routed rows by expert, the activation's quantization where
// the GEMMs take quantized inputs, the gate/up grouped GEMM, the
// activation (and its quantization), the down grouped GEMM and the
// weighted combine of each token's k rows. Each kernel depends on the one
// before, so each after the first also pays the kernel ramp (filling the
// SMs and a DRAM round trip) on top of its work. The grouped GEMMs run one
// CTA per (expert, BLOCK_M rows of its tokens, BLOCK_N columns): every hit
// expert's rows are padded to the tile, and the CTAs go in waves over the
// SMs; each hit expert's weights are read once. Where the kernels keep
// every token's slots under expert parallelism (localOnlyMoE), the
// alignment, activation and combine run over all T·k of them and the
// GEMMs write zeros for the slots of other GPUs' experts.
func (m *Model) moe(op ops.Op, key string, peak float64) estimate {
	f := func(x int64) float64 { return float64(x) }
	in, w := op.ExpertSizes()
	act := devices.BF16.Size()
	loads := op.Loads()
	t, h, e := f(op.Tokens), f(op.Hidden), f(op.Experts)
	local := op.LocalTokens()
	routed := 0.0
	for _, l := range loads {
		routed += l
	}
	path := m.moePath(op)
	rate := m.rate(key, peak) * path.rate
	if path.allSlots {
		local = t
	}
	slots := local * f(op.TopK)
	var total estimate
	add := func(e estimate) {
		if total.kernels > 0 {
			e.work += m.eff.Ramp
		}
		total.work += e.work
		total.kernels += e.kernels
		if total.bound == "" || e.bound == string(ComputeBound) {
			total.bound = e.bound
		}
	}
	stream := func(bytes float64) estimate { return m.kernel(0, bytes/m.stream) }
	// quantize casts n bf16 elements to the GEMMs' input type with a
	// scale per group, where that type is not bf16.
	quantize := func(n float64) {
		if op.Quant.Scheme().Kernels > 0 || (op.Quant == ops.QuantNone && op.DType != devices.BF16 && op.DType != devices.FP16) {
			add(stream(n*act + n*in))
		}
	}
	add(stream(t*e*act + slots*8))
	add(stream(slots * 8))
	gu, li := op.LocalInter(), op.LocalInter()
	if !op.Ungated {
		gu *= 2
	}
	quantize(local * h)
	bm := moeRowTile(local, op.LocalExperts())
	// Slots of other GPUs' experts get zeros from the GEMMs.
	other := 0.0
	if path.allSlots {
		other = math.Max(0, slots-routed) * act
	}
	add(m.groupedGEMM(loads, bm, gu, op.Hidden, w, in, act, rate, path.memory, other*f(gu)))
	add(stream(slots*f(gu)*act + slots*f(li)*act))
	quantize(slots * f(li))
	add(m.groupedGEMM(loads, bm, op.Hidden, li, w, in, act, rate, path.memory, other*h))
	// The down GEMM writes a row for every slot, which the combine reads.
	add(stream(slots*h*act + local*h*act))
	return total
}

// groupedGEMM is one grouped GEMM over the hit experts: expert i multiplies
// its loads[i] rows of K by its K×N weight, one CTA per (BLOCK_M rows of
// an expert's tokens, BLOCK_N columns), every expert's rows padded to the
// tile. The
// CTAs run in waves over the SMs at the SM's share of the grouped rate;
// the weights of every hit expert and the routed rows stream at the GEMM's
// share of the bandwidth over the SMs the CTAs occupy, and the zeros
// written for other GPUs' slots at the streaming rate. The fastest tile
// wins, as the kernel's configuration table picks one by the tokens per
// expert.
func (m *Model) groupedGEMM(loads []float64, bm, n, k int64, w, in, out, rate, memFrac, zeros float64) estimate {
	sms := float64(m.dev.SMs)
	perSM := rate / sms
	routed := 0.0
	for _, l := range loads {
		routed += l
	}
	bytes := float64(len(loads))*float64(n*k)*w + routed*float64(k)*in + routed*float64(n)*out
	rowTiles := 0.0
	for _, l := range loads {
		rowTiles += math.Ceil(l / float64(bm))
	}
	var best estimate
	for _, bn := range moeTileCols {
		tiles := rowTiles * ceilDiv(n, bn)
		compute := math.Ceil(tiles/sms) * 2 * float64(bm) * float64(bn) * float64(k) / perSM
		memory := bytes/(m.stream*memFrac*m.eff.GEMMMemory*m.active(tiles)) + zeros/m.stream
		e := m.kernel(compute, memory)
		if best.kernels == 0 || e.work < best.work {
			best = e
		}
	}
	return best
}
