package roofline

import (
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// groupedRate is the fraction of the GEMM rate (measured, or the family's
// fraction of the dense peak) that the grouped GEMMs of MoE kernels priced
// without their tiles reach (FlashInfer's TensorRT-LLM and CUTLASS MoE,
// Marlin, and Triton fused MoE on schemes other than bf16 and fp8 blocks),
// by architecture: SGLang 0.5.14's MoE kernels in aiconfigurator's tables,
// fitted once per architecture on the A100, H100, B200 and L40S (the
// fraction with the lowest median error over every configuration of the
// family's GPU, TestPeerCalibration); architectures without a figure take
// Hopper's.
var groupedRate = map[string]float64{"Ampere": 0.3, "Hopper": 0.25, "Blackwell": 0.25, "Ada Lovelace": 0.5}

// groupedMemory is, by architecture, the fraction of the GEMMs' bandwidth
// at which the grouped GEMMs read the experts' weights, where it is not
// the dense GEMMs' (TestPeerCalibration, as groupedRate); others read at
// the dense GEMMs' bandwidth.
var groupedMemory = map[string]float64{"Ampere": 0.85, "Ada Lovelace": 0.7}

// tritonFeed is, by architecture, the bytes of operands an SM brings in a
// clock for SGLang's Triton fused-MoE kernel (its gathered token rows and
// its weight tiles, loaded without the tensor memory accelerator), which
// sets the kernel's pace with the tile's arithmetic intensity: the same
// kernel runs about 230 TFLOP/s on the H100 with the default 64×64×32
// tiles and 600 with a tuned file's 128×256 (aiconfigurator's H100 table,
// 8192 tokens and more). Fitted once per architecture with tritonStep on
// aiconfigurator's calibration tables, from a grid scored by the larger of
// median/15% and p90/35% over the GPU's moe cell (TestPeerCalibration):
// H100 23 bytes and 700 clocks (14.5%, 33.8%), A100 14 and 500, L40S 14
// (its step binds nowhere at 300 and below), B200 25 and 700 (its Triton
// rows).
var tritonFeed = map[string]float64{"Hopper": 23, "Ampere": 14, "Ada Lovelace": 14, "Blackwell": 25}

// tritonStep is, by architecture, the SM clocks a Triton fused-MoE CTA
// spends on each BLOCK_SIZE_K step of its K loop when nothing hides its
// loads (about a loaded DRAM round trip): CTAs that are few per SM run at
// this pace whatever their bytes, as at decode under wide expert
// parallelism (aiconfigurator's H100 table: with one of 256 experts of
// 4096×2048 on the GPU, 64 tokens take 102 µs where reading its 50 MB
// takes 17; its 64 CTAs of 64×64 tiles step 192 times over K). Fitted with
// tritonFeed.
var tritonStep = map[string]float64{"Hopper": 700, "Ampere": 500, "Ada Lovelace": 300, "Blackwell": 700}

// mlaRate is the same for latent-attention kernels (FlashAttention 3 on
// Hopper, TensorRT-LLM's MLA kernels on Blackwell, Triton on Ada), of the
// tensor rate in prefill (and a prefill's few queries) and in decode. Ada's
// prefill figure is the fraction SGLang's Triton extend kernel sustains
// over its 576-wide tiles (priced by tritonKernels), fitted on the L40S
// table's 880 prefill rows (median|p90 |error| at 0.26|0.28|0.30|0.34:
// 10.3|25.9, 7.1|21.8, 8.9|25.2, 16.2|30.6; the family's Triton fraction
// for attention, 0.5, gives 41.4|48.7).
var mlaRate = map[string][2]float64{"Hopper": {0.9, 0.7}, "Blackwell": {1.0, 0.7}, "Ada Lovelace": {0.28, 0.12}}

// mlaTriton are the architectures where SGLang serves latent attention
// with its Triton backend (on Ada: no FlashInfer MLA, FlashMLA or
// TensorRT-LLM MLA kernel for sm_89; aiconfigurator's L40S tables name
// Triton for every MLA row). Its decode puts every sequence's keys in
// tritonSplits splits whatever their length (the L40S table: 64 sequences
// of 128 heads take 372 µs over 2 keys and over 32 alike), tritonHeads
// query heads to a CTA, each split's fp32 partial output written and
// merged by a second kernel.
var mlaTriton = map[string]bool{"Ada Lovelace": true}

// mlaGen is, by architecture, the SM time each CTA of the engine's MLA
// decode kernel spends besides its key blocks, where SGLang runs
// TensorRT-LLM's generation kernels (its TensorRT-LLM MLA backend, on the
// B200). Fitted: on aiconfigurator's B200 decode table (2,896 rows) 1,024
// sequences of 32 heads over 2-64 keys take 77-101 µs, 5.6-7.3 µs of SM
// time for each of their 2,048 CTAs; from a 0.5 µs grid, median|p90 of the
// decode cell's |error| 13.7|31.8% at 3 µs, 11.9|25.8 at 5, 11.3|25.9 at
// 5.5, 11.3|26.5 at 6, 11.4|27.9 at 7 (the family's 1 µs: 14.7|37.8).
var mlaGen = map[string]float64{"Blackwell": 5.5e-6}

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

// moeImpl is the MoE kernel op runs with on this device: its impl=, else
// the one SGLang runs by default. On datacenter Blackwell (compute
// capability 10.x, the only target of FlashInfer's TensorRT-LLM MoE
// kernels) that is TensorRT-LLM's for the models served there
// (server_args.py picks flashinfer_trtllm on sm100 for DeepSeek, Qwen3
// MoE, GLM and the fp8 and fp4 checkpoints; others, Mixtral and Llama 4
// in bf16, keep Triton: impl=triton); experts without a gate run
// FlashInfer's CUTLASS MoE on Hopper (moeUngated); everything else runs
// Triton fused MoE.
func (m *Model) moeImpl(op ops.Op) string {
	switch {
	case op.Impl != "":
		return op.Impl
	case m.dev.CC.Major == 10:
		return ops.ImplTRTLLM
	case op.Ungated && moeUngated[m.dev.Architecture] != [2]float64{}:
		return ops.ImplCUTLASS
	}
	return ops.ImplTriton
}

// moeUngated is, by architecture, the fractions of the GEMM rate and of the
// streaming bandwidth that the engine's kernel for experts without a gate
// (squared-ReLU experts, NVIDIA's Nemotron-3) reaches, where that kernel
// is not the gated one: SGLang 0.5.14 on Hopper runs them with FlashInfer's
// CUTLASS MoE, which handles only the local experts' rows and reads the
// weights at about a fifth of the DRAM bandwidth in aiconfigurator's H100
// table (a 22-of-512 layer of 2048×5120 experts reads its 21.5 GB in
// 32.7 ms at 64 tokens).
var moeUngated = map[string][2]float64{"Hopper": {0.1, 0.2}}

// moeKernelNames are the moe op's kernels as the output names them.
var moeKernelNames = map[string]string{ops.ImplTriton: "Triton fused MoE", ops.ImplTRTLLM: "FlashInfer's TensorRT-LLM MoE",
	ops.ImplCUTLASS: "FlashInfer's CUTLASS MoE", ops.ImplMarlin: "Marlin MoE"}

// moeNote says which kernel prices op, and under Triton its configuration.
func (m *Model) moeNote(op ops.Op) string {
	how := "its default on this GPU; impl= picks another"
	if op.Impl != "" {
		how = "impl=" + op.Impl
	}
	note := fmt.Sprintf("priced as SGLang's %s (%s)", moeKernelNames[m.moeImpl(op)], how)
	if !m.moePath(op).triton {
		return note
	}
	c, tuned := tritonConfig(cudaName(m.dev.Aliases), op.LocalExperts(), op.LocalInter(), op.Tokens, op.Quant == ops.QuantFP8Block, false)
	src := "SGLang's tuned configuration for"
	if !tuned {
		src = "get_default_config's tiles: SGLang has no tuned configuration for"
	}
	return fmt.Sprintf("%s, %s E=%d, N=%d on this GPU: %d×%d×%d tiles at %d tokens", note, src, op.LocalExperts(), op.LocalInter(), c.BM, c.BN, c.BK, op.Tokens)
}

// moeKernel is how the engine's MoE kernel on a device runs a layer: the
// fraction of the GEMM rate its grouped GEMMs reach, the fraction of the
// GEMMs' bandwidth at which they read weights, and whether it keeps every
// token's k slots under expert parallelism. TensorRT-LLM's and CUTLASS's
// kernels permute the routed rows of the GPU's own experts alone and
// finalize from them; Triton fused MoE and Marlin keep every token's k
// slots: the slots of experts on other GPUs (expert id -1) go through the
// alignment, their GEMM tiles write zeros (fused_moe_kernel's
// write_zeros_to_output), and the activation and the combine run over all
// of them.
type moeKernel struct {
	rate, memory float64
	allSlots     bool
	// triton: SGLang's Triton fused MoE on bf16 or fp8_block GEMMs,
	// priced by its configuration's tiles (tritonConfig) rather than by
	// the rate fraction; upcast: on mxfp4 weights, which SGLang's Triton
	// runner upcasts to bf16 when it loads them where no native mxfp4
	// kernel runs (quantization/mxfp4.py, upcast_from_mxfp), so its GEMMs
	// read bf16 weights.
	triton, upcast bool
}

// moePath is the kernel the engine runs op with on this device.
func (m *Model) moePath(op ops.Op) moeKernel {
	mem, ok := groupedMemory[m.dev.Architecture]
	if !ok {
		mem = 1
	}
	k := moeKernel{rate: archRate(m, groupedRate), memory: mem, allSlots: true}
	switch m.moeImpl(op) {
	case ops.ImplTRTLLM:
		k.allSlots = false
	case ops.ImplCUTLASS:
		if f, ok := moeUngated[m.dev.Architecture]; ok && op.Ungated {
			return moeKernel{rate: f[0], memory: f[1]}
		}
	case ops.ImplTriton:
		bf16 := op.Quant == ops.QuantNone && (op.DType == devices.BF16 || op.DType == devices.FP16) && op.Weight == ""
		// SGLang's default runner for mxfp4 experts off Blackwell is
		// OpenAI's triton_kernels (matmul_ogs on the 4-bit weights:
		// the rate fraction); only its Triton fused-MoE runner, named,
		// upcasts them.
		k.upcast = op.Impl == ops.ImplTriton && m.dev.CC.Major != 10 && (op.Quant == ops.QuantW4A16MXFP4 || op.Quant == ops.QuantMXFP4)
		k.triton = bf16 || op.Quant == ops.QuantFP8Block || k.upcast
	}
	return k
}

// moeWorkingSet is the bytes op's kernels touch on this device: the
// experts hit, the routed rows and the tokens (ops.Op.MoEWorkingSet), and
// where the kernel keeps every token's slots, the zeros, activations and
// partial outputs of the other GPUs' slots too.
func (m *Model) moeWorkingSet(op ops.Op) float64 {
	ws := op.MoEWorkingSet()
	path := m.moePath(op)
	f := func(x int64) float64 { return float64(x) }
	act := devices.BF16.Size()
	li := f(op.LocalInter())
	gu := li
	if !op.Ungated {
		gu *= 2
	}
	if path.upcast {
		_, w := op.ExpertSizes()
		ws += f(int64(len(op.Loads()))) * (gu + li) * f(op.Hidden) * (act - w)
	}
	if !path.allSlots || op.EP <= 1 {
		return ws
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
	rate := m.rate(key, peak)
	if !path.triton {
		rate *= path.rate
	}
	if path.upcast {
		in, w = act, act
	}
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
		if (op.Quant.Scheme().Kernels > 0 && !path.upcast) || (op.Quant == ops.QuantNone && op.DType != devices.BF16 && op.DType != devices.FP16) {
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
	// tiles are the GEMM's candidate CTA tiles: the Triton kernel's
	// configuration, else a row tile by the batch's tokens and the
	// fastest of the column tiles.
	tiles := func(down bool) []tritonTile {
		if path.triton {
			c, _ := tritonConfig(cudaName(m.dev.Aliases), op.LocalExperts(), op.LocalInter(), op.Tokens, op.Quant == ops.QuantFP8Block, down)
			return []tritonTile{c}
		}
		bm := moeRowTile(local, op.LocalExperts())
		var out []tritonTile
		for _, bn := range moeTileCols {
			out = append(out, tritonTile{BM: bm, BN: bn})
		}
		return out
	}
	// Slots of other GPUs' experts get zeros from the GEMMs.
	other := 0.0
	if path.allSlots {
		other = math.Max(0, slots-routed) * act
	}
	add(m.groupedGEMM(loads, tiles(false), gu, op.Hidden, w, in, act, rate, path, other*f(gu)))
	add(stream(slots*f(gu)*act + slots*f(li)*act))
	quantize(slots * f(li))
	add(m.groupedGEMM(loads, tiles(true), op.Hidden, li, w, in, act, rate, path, other*h))
	// The down GEMM writes a row for every slot, which the combine reads.
	add(stream(slots*h*act + local*h*act))
	return total
}

// tritonResident is the CTAs of Triton configuration c an SM holds at once:
// its pipeline's shared memory (num_stages copies of a BM×BK and a BK×BN
// block), its warps and its registers (the fp32 accumulator's BM·BN/threads
// per thread over a base of 64, at most 255) allow.
func (m *Model) tritonResident(c tritonTile, in, w float64) float64 {
	a, err := m.dev.Limits()
	if err != nil {
		return 1
	}
	threads := float64(32 * c.Warps)
	smem := float64(c.Stages)*float64(c.BK)*(float64(c.BM)*in+float64(c.BN)*w) + float64(a.SmemReservedPerBlock)
	regs := math.Min(255, 64+float64(c.BM*c.BN)/threads)
	n := math.Min(math.Floor(float64(a.SmemPerSM)/smem), math.Floor(float64(a.MaxWarpsPerSM)/float64(c.Warps)))
	n = math.Min(n, math.Floor(float64(a.RegsPerSM)/(regs*threads)))
	return math.Max(1, math.Min(n, float64(a.MaxBlocksPerSM)))
}

// groupedGEMM is one grouped GEMM over the hit experts: expert i multiplies
// its loads[i] rows of K by its K×N weight, one CTA per (BM rows of an
// expert's tokens, BN columns), every expert's rows padded to the tile.
// The CTAs run in waves over the SMs, each at its SM's share of the rate;
// where the kernel is SGLang's Triton fused MoE, an SM also computes no
// faster than its operand feed (tritonFeed bytes a clock) brings the
// tile's rows and columns in: a BM×BN tile does 2·BM·BN FLOPs per
// (BM·in + BN·w) bytes of K. The weights of every hit expert and the
// routed rows stream at the GEMM's share of the bandwidth over the SMs
// the CTAs occupy, and the zeros written for other GPUs' slots at the
// streaming rate. The fastest candidate tile wins.
func (m *Model) groupedGEMM(loads []float64, cands []tritonTile, n, k int64, w, in, out, rate float64, path moeKernel, zeros float64) estimate {
	sms := float64(m.dev.SMs)
	routed := 0.0
	for _, l := range loads {
		routed += l
	}
	bytes := float64(len(loads))*float64(n*k)*w + routed*float64(k)*in + routed*float64(n)*out
	var best estimate
	for _, c := range cands {
		bm, bn := float64(c.BM), float64(c.BN)
		rowTiles := 0.0
		for _, l := range loads {
			rowTiles += math.Ceil(l / bm)
		}
		tiles := rowTiles * ceilDiv(n, c.BN)
		perSM := math.Ceil(tiles / sms)
		compute := perSM * 2 * bm * bn * float64(k) / (rate / sms)
		if path.triton {
			clock := m.dev.BoostClockHz
			feed := perSM * (bm*in + bn*w) * float64(k) / (archRate(m, tritonFeed) * clock)
			steps := math.Ceil(perSM/m.tritonResident(c, in, w)) * ceilDiv(k, c.BK) * archRate(m, tritonStep) / clock
			compute = math.Max(compute, math.Max(feed, steps))
		}
		memory := bytes/(m.stream*path.memory*m.eff.GEMMMemory*m.active(tiles)) + zeros/m.stream
		e := m.kernel(compute, memory)
		if best.kernels == 0 || e.work < best.work {
			best = e
		}
	}
	return best
}
