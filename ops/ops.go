// Package ops describes what an operation costs, independent of any device:
// floating-point operations, transcendental operations and the ideal bytes it
// moves.
//
// Conventions (see the README's Roofline section for references):
//   - An FMA counts 2 FLOPs; a compare, add, multiply or divide counts 1.
//   - Transcendentals (exp, erf, tanh, rsqrt) are counted apart, never as
//     FLOPs, as Nsight Compute does: they run on the SFU (MUFU) pipe.
//   - Matrix FLOPs are the products of matrices (matmul, attention's QKᵀ and
//     PV, convolution); vector FLOPs are everything else. FLOPs() is their
//     sum. Counting matrix FLOPs alone is the torch.utils.flop_counter (and
//     roof_bench) convention.
//   - Ideal bytes read every input once and write every output once: a lower
//     bound on DRAM traffic.
//
// Per-element FLOPs of the non-matrix ops (tools disagree by up to 10×):
// layernorm 7 (LLM-Viewer's count), rmsnorm 4, softmax 4 + 1 exp, GELU (erf)
// 4 + 1 erf, GELU (tanh) 8 + 1 tanh, SiLU 3 + 1 exp, ReLU 1, add 1, mul 1,
// copy 0. Norms add one rsqrt per row.
package ops

import (
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/devices"
)

// Kind names an operation.
type Kind string

// The operations gpucalc knows.
const (
	Matmul    Kind = "matmul"
	Linear    Kind = "linear"
	LayerNorm Kind = "layernorm"
	RMSNorm   Kind = "rmsnorm"
	Softmax   Kind = "softmax"
	GELU      Kind = "gelu"
	ReLU      Kind = "relu"
	SiLU      Kind = "silu"
	Add       Kind = "add"
	Mul       Kind = "mul"
	Copy      Kind = "copy"
	Attention Kind = "attention"
	Conv2D    Kind = "conv2d"
	// AllReduce sums Elems elements across Ranks GPUs (tensor parallel).
	AllReduce Kind = "allreduce"
	// AllToAll sends each of Ranks GPUs' Elems elements in Ranks equal
	// parts, one to every GPU (expert parallelism's dispatch and combine).
	AllToAll Kind = "alltoall"
)

// Flash attention schedules (Op.Impl).
const (
	ImplSplit = "split"
	ImplRows  = "rows"
	ImplHeads = "heads"
	// ImplTriton is a serving engine's Triton kernels (SGLang's): for
	// attention its triton backend (a CTA per sequence × query head ×
	// query tile at prefill, and at decode a CTA per sequence × group of
	// up to 16 query heads × split of the keys); for a moe op its fused
	// MoE (fused_moe_kernel), tiled by its tuned configuration files.
	ImplTriton = "triton"
	// ImplNCCL prices an all-reduce as NCCL's own collective, as
	// nccl-tests times it (Op.Impl of an allreduce).
	ImplNCCL = "nccl"
)

// MoE kernels (Op.Impl of a moe op): the serving engine's (SGLang's) MoE
// runners (and ImplTriton), "" for the one it runs by default on the
// device.
const (
	// ImplTRTLLM is FlashInfer's TensorRT-LLM MoE (datacenter Blackwell).
	ImplTRTLLM = "trtllm"
	// ImplCUTLASS is FlashInfer's CUTLASS MoE.
	ImplCUTLASS = "cutlass"
	// ImplMarlin is the Marlin weight-only MoE.
	ImplMarlin = "marlin"
)

// MoEImpls lists the moe op's kernels, for help text and errors.
var MoEImpls = []string{ImplTriton, ImplTRTLLM, ImplCUTLASS, ImplMarlin}

// Kinds lists every operation, for help text and errors.
var Kinds = []Kind{Matmul, Linear, LayerNorm, RMSNorm, Softmax, GELU, ReLU, SiLU, Add, Mul, Copy, Attention, Conv2D, AllReduce, AllToAll, MoE, MLA}

// Per-element FLOP and transcendental counts of the vector ops; the package
// comment gives the convention, the README the derivation.
const (
	layerNormFLOPs = 7 // sub mean, square, sum, sum for mean, ×rstd, ×γ, +β
	rmsNormFLOPs   = 4 // square, sum, ×rstd, ×γ
	softmaxFLOPs   = 4 // max, sub, sum, ×(1/sum); the exp is a transcendental
	geluErfFLOPs   = 4 // x/√2, 1+, x·, 0.5·; erf is a transcendental
	geluTanhFLOPs  = 8 // x³ (2), ·0.044715, +x, ·√(2/π), 1+, x·, 0.5·; tanh apart
	siluFLOPs      = 3 // -x, 1+, x/·; exp is a transcendental
	rowNormFLOPs   = 3 // per row: /cols for the mean or mean square, +ε, and 1 for LN's mean
)

// Cost is what an op costs: operations and ideal bytes.
type Cost struct {
	// MatrixFLOPs are FLOPs of matrix products, which run on tensor cores
	// where the data type allows.
	MatrixFLOPs float64 `json:"matrix_flops"`
	// VectorFLOPs are the other arithmetic FLOPs (norms, activations,
	// softmax, bias), on CUDA cores.
	VectorFLOPs float64 `json:"vector_flops"`
	// Transcendentals are exp, erf, tanh and rsqrt evaluations.
	Transcendentals float64 `json:"transcendentals"`
	// Bytes are the ideal bytes: each input read once, each output written
	// once.
	Bytes float64 `json:"bytes"`
}

// FLOPs is all arithmetic: matrix plus vector FLOPs.
func (c Cost) FLOPs() float64 { return c.MatrixFLOPs + c.VectorFLOPs }

// AI is the arithmetic intensity, FLOPs per ideal byte (0 when no bytes).
func (c Cost) AI() float64 {
	if c.Bytes <= 0 {
		return 0
	}
	return c.FLOPs() / c.Bytes
}

// Op is an operation with its shape and data types.
type Op struct {
	Kind Kind `json:"kind"`
	// DType is the input (and compute) data type; Out the output's, which
	// differs for matmuls such as fp8 in, bf16 out or int8 in, int32 out.
	DType devices.DType `json:"dtype"`
	Out   devices.DType `json:"out_dtype"`
	// Weight is the storage type of a matmul's or linear's B operand (the
	// weight) when it differs from DType: weight-only quantization (int4
	// weights are 4-bit, stored as fp4 is) dequantized to DType to compute.
	Weight devices.DType `json:"weight_dtype,omitempty"`
	// Quant quantizes a matmul's or linear's operands as serving engines
	// do (quant.go): the weight stored quantized with its scales, the
	// DType activation quantized on the fly by a kernel of its own, the
	// product on the scheme's tensor cores, the output in Out.
	Quant Quant `json:"quant,omitempty"`

	// Matmul and linear: C[M,N] = A[M,K]·B[K,N], Batch independent
	// products (batched matmul; linear shares its weight, so Batch is 1).
	M     int64 `json:"m,omitempty"`
	N     int64 `json:"n,omitempty"`
	K     int64 `json:"k,omitempty"`
	Batch int64 `json:"batch,omitempty"`
	Bias  bool  `json:"bias,omitempty"`

	// Norms and softmax: Rows × Cols, reduced over Cols.
	Rows int64 `json:"rows,omitempty"`
	Cols int64 `json:"cols,omitempty"`

	// Elementwise ops: Elems elements.
	Elems int64 `json:"elems,omitempty"`
	// Repeat makes a copy a broadcast: each of its Elems/Repeat input
	// elements is written Repeat times (an expanded tensor made contiguous,
	// as transformers' repeat_kv does).
	Repeat int64 `json:"repeat,omitempty"`
	// Tanh selects GELU's tanh approximation (erf otherwise).
	Tanh bool `json:"tanh,omitempty"`

	// Attention: B batch, Heads query heads, KVHeads key/value heads
	// (fewer for GQA), SeqQ query and SeqK key length, HeadDim.
	B       int64 `json:"b,omitempty"`
	Heads   int64 `json:"heads,omitempty"`
	KVHeads int64 `json:"kv_heads,omitempty"`
	SeqQ    int64 `json:"seq_q,omitempty"`
	SeqK    int64 `json:"seq_k,omitempty"`
	HeadDim int64 `json:"head_dim,omitempty"`
	Causal  bool  `json:"causal,omitempty"`
	// Paged is a serving engine's attention layer over a paged KV cache
	// (SGLang, vLLM, TensorRT-LLM): this step's K and V are appended to the
	// cache by a kernel of their own, then the attention kernel reads it.
	Paged bool `json:"paged,omitempty"`
	// KOnly is a paged decode step over a K-only cache (TensorRT-LLM's
	// CacheType SELFKONLY, MLA's layout, which aiconfigurator's TensorRT-LLM
	// attention collector builds): the block manager points V's block
	// offsets at K's blocks (WindowBlockManager::setOffsets), so the cache
	// holds K alone and V's reads find the lines K's brought into L2.
	KOnly bool `json:"k_only,omitempty"`
	// Naive attention writes and reads the score matrix; flash does not.
	Naive bool `json:"naive,omitempty"`
	// Impl is flash attention's schedule: "" (split, the default) lets
	// the kernel split the keys when its query tiles are too few to fill
	// the SMs, packing the query heads of a KV group into one tile
	// (flash-decoding, FlashAttention's split-KV path); ImplRows folds a
	// KV group's query heads into query rows of one head and never splits
	// (one CTA per batch × KV head at decode); ImplHeads gives each query
	// head its own CTA and never splits (a masked SDPA kernel, at decode
	// one CTA per batch × query head); ImplTriton tiles as SGLang's
	// Triton attention kernels do. A moe op's names its kernel (ImplTriton…;
	// "" the device's default), an allreduce's ImplNCCL.
	Impl string `json:"impl,omitempty"`

	// Conv2d: input N×C×H×W, K filters of C/Groups×R×S, Stride, Pad on
	// each side. Batch is N (the B field is attention's).
	C      int64 `json:"c,omitempty"`
	H      int64 `json:"h,omitempty"`
	W      int64 `json:"w,omitempty"`
	R      int64 `json:"r,omitempty"`
	S      int64 `json:"s,omitempty"`
	Stride int64 `json:"stride,omitempty"`
	Pad    int64 `json:"pad,omitempty"`
	Groups int64 `json:"groups,omitempty"`

	// AllReduce: Elems elements summed over Ranks GPUs.
	Ranks int64 `json:"ranks,omitempty"`

	// MoE (moe.go): Tokens of Hidden routed to TopK of Experts experts of
	// width Inter, each split over TP GPUs and the experts over EP; Dist
	// the routing (power law of exponent Alpha, else balanced); Ungated
	// experts have no gate projection; Quant is the experts' GEMMs'
	// scheme, as a matmul's (DType then the activation's type).
	Tokens  int64   `json:"tokens,omitempty"`
	Hidden  int64   `json:"hidden,omitempty"`
	Inter   int64   `json:"inter,omitempty"`
	TopK    int64   `json:"topk,omitempty"`
	Experts int64   `json:"experts,omitempty"`
	TP      int64   `json:"tp,omitempty"`
	EP      int64   `json:"ep,omitempty"`
	Dist    string  `json:"dist,omitempty"`
	Alpha   float64 `json:"alpha,omitempty"`
	Ungated bool    `json:"ungated,omitempty"`

	// MLA (mla.go): B, Heads, SeqQ, SeqK and Causal as attention's, the
	// latent geometry, the form and the cache's type.
	KVLoRA   int64 `json:"kv_lora_rank,omitempty"`
	Rope     int64 `json:"rope_dim,omitempty"`
	Nope     int64 `json:"nope_dim,omitempty"`
	VDim     int64 `json:"v_dim,omitempty"`
	QLoRA    int64 `json:"q_lora_rank,omitempty"`
	Absorbed bool  `json:"absorbed,omitempty"`
	// KVType is the storage type of attention's or MLA's K and V cache
	// when it differs from DType (an fp8 KV cache read by a bf16 kernel).
	KVType devices.DType `json:"kv_dtype,omitempty"`
}

// Path is where the op's main work runs: tensor cores for matrix products in
// a tensor data type (tf32, bf16, fp16, fp8, int8, fp4, and fp64 on parts
// with FP64 tensor cores), CUDA cores otherwise. fp32 matmuls run on CUDA
// cores: frameworks do not use TF32 unless asked (dtype=tf32).
func (o Op) Path() devices.Path {
	if !o.IsMatrix() {
		return devices.CUDACores
	}
	if o.Quant != QuantNone {
		return devices.Tensor
	}
	switch o.DType {
	case devices.FP32, devices.INT32:
		return devices.CUDACores
	}
	return devices.Tensor
}

// IsCollective reports whether the op moves data between GPUs (all-reduce,
// all-to-all): it is priced on the peer link, not on one GPU's roofline.
func (o Op) IsCollective() bool { return o.Kind == AllReduce || o.Kind == AllToAll }

// IsMatrix reports whether the op is a matrix product (matmul, linear,
// attention, conv2d).
func (o Op) IsMatrix() bool {
	switch o.Kind {
	case Matmul, Linear, Attention, Conv2D, MoE, MLA:
		return true
	}
	return false
}

// KVSize is the bytes per element of attention's K and V: KVType's, or
// DType's when the cache is stored as computed.
func (o Op) KVSize() float64 {
	if o.KVType != "" {
		return o.KVType.Size()
	}
	return o.DType.Size()
}

// P and Q are the convolution's output height and width.
func (o Op) P() int64 { return (o.H+2*o.Pad-o.R)/max(o.Stride, 1) + 1 }

// Q is the convolution's output width.
func (o Op) Q() int64 { return (o.W+2*o.Pad-o.S)/max(o.Stride, 1) + 1 }

// CausalFraction is the share of the Sq×Sk score matrix a causal mask keeps,
// with the queries aligned to the end of the keys: (Sq·Sk − Sq²/2)/(Sq·Sk),
// exactly ½ when Sq = Sk (FlashAttention's benchmark convention) and nearly 1
// for one decode query. 1 for full attention.
func (o Op) CausalFraction() float64 {
	if !o.Causal {
		return 1
	}
	q, k := float64(o.SeqQ), float64(o.SeqK)
	if q > k {
		q = k
	}
	return (q*k - q*q/2) / (float64(o.SeqQ) * k)
}

// GEMM returns the matrix product an op amounts to, as batch × (M×N×K):
// the op itself for matmul and linear, the implicit GEMM of a convolution
// (per group), and the two products per (batch, head) of attention (QKᵀ with
// N = SeqK, K = HeadDim). ok is false for other ops.
func (o Op) GEMM() (batch, m, n, k int64, ok bool) {
	switch o.Kind {
	case Matmul, Linear:
		return max(o.Batch, 1), o.M, o.N, o.K, true
	case Conv2D:
		g := max(o.Groups, 1)
		return g, o.N * o.P() * o.Q(), o.K / g, o.C / g * o.R * o.S, true
	case Attention:
		return o.B * o.Heads, o.SeqQ, o.SeqK, o.HeadDim, true
	}
	return 0, 0, 0, 0, false
}

// Cost computes the op's FLOPs, transcendentals and ideal bytes.
func (o Op) Cost() Cost {
	in, out := o.DType.Size(), o.Out.Size()
	if out == 0 {
		out = in
	}
	f := func(xs ...int64) float64 {
		p := 1.0
		for _, x := range xs {
			p *= float64(x)
		}
		return p
	}
	var c Cost
	switch o.Kind {
	case Matmul, Linear:
		if o.Quant != QuantNone {
			return o.quantCost()
		}
		b := max(o.Batch, 1)
		w := in
		if o.Weight != "" {
			w = o.Weight.Size()
		}
		c.MatrixFLOPs = 2 * f(b, o.M, o.N, o.K)
		c.Bytes = f(b, o.M, o.K)*in + f(b, o.K, o.N)*w + f(b, o.M, o.N)*out
		if o.Bias {
			c.VectorFLOPs = f(b, o.M, o.N)
			c.Bytes += f(o.N) * out
		}
	case LayerNorm, RMSNorm:
		per, params := float64(rmsNormFLOPs), 1.0
		if o.Kind == LayerNorm {
			per, params = layerNormFLOPs, 2
		}
		c.VectorFLOPs = per*f(o.Rows, o.Cols) + rowNormFLOPs*f(o.Rows)
		c.Transcendentals = f(o.Rows) // rsqrt per row
		c.Bytes = 2*f(o.Rows, o.Cols)*in + params*f(o.Cols)*in
	case Softmax:
		c.VectorFLOPs = softmaxFLOPs * f(o.Rows, o.Cols)
		c.Transcendentals = f(o.Rows, o.Cols)
		c.Bytes = 2 * f(o.Rows, o.Cols) * in
	case GELU, SiLU, ReLU, Copy:
		n := f(o.Elems)
		c.Bytes = n*in + n*out // a copy may cast: out differs from in
		if o.Repeat > 1 {
			c.Bytes = n/float64(o.Repeat)*in + n*out
		}
		switch {
		case o.Kind == GELU && o.Tanh:
			c.VectorFLOPs, c.Transcendentals = geluTanhFLOPs*n, n
		case o.Kind == GELU:
			c.VectorFLOPs, c.Transcendentals = geluErfFLOPs*n, n
		case o.Kind == SiLU:
			c.VectorFLOPs, c.Transcendentals = siluFLOPs*n, n
		case o.Kind == ReLU:
			c.VectorFLOPs = n
		}
	case Add, Mul:
		c.VectorFLOPs = f(o.Elems)
		c.Bytes = 3 * f(o.Elems) * in
	case Attention:
		scores := f(o.B, o.Heads, o.SeqQ, o.SeqK) * o.CausalFraction()
		c.MatrixFLOPs = 4 * scores * float64(o.HeadDim)
		c.VectorFLOPs = softmaxFLOPs * scores
		c.Transcendentals = scores
		cache := 2.0
		if o.KOnly {
			cache = 1 // V's reads are K's blocks
		}
		c.Bytes = 2*f(o.B, o.Heads, o.SeqQ, o.HeadDim)*in + cache*f(o.B, o.KVHeads, o.SeqK, o.HeadDim)*o.KVSize()
		if o.Paged {
			// This step's K and V read and written into the cache.
			c.Bytes += 2 * f(o.B, o.KVHeads, o.SeqQ, o.HeadDim) * (in + o.KVSize())
		}
		if o.Naive {
			// S = QKᵀ written, read by softmax, P written, read by PV;
			// the whole matrix is materialised even when masked.
			c.Bytes += 4 * f(o.B, o.Heads, o.SeqQ, o.SeqK) * in
		}
	case AllReduce:
		// Bytes are what each rank sends over its link in a ring
		// all-reduce, 2(n−1)/n of the message (nccl-tests' bus bytes);
		// each rank adds its (n−1)/n share of the elements.
		share := float64(o.Ranks-1) / float64(max(o.Ranks, 1))
		c.Bytes = 2 * share * f(o.Elems) * in
		c.VectorFLOPs = share * f(o.Elems)
	case AllToAll:
		// Bytes are what each rank sends over its link: the (n−1)/n of
		// its elements bound for the other ranks (nccl-tests' bus bytes).
		c.Bytes = float64(o.Ranks-1) / float64(max(o.Ranks, 1)) * f(o.Elems) * in
	case Conv2D:
		g := max(o.Groups, 1)
		pq := f(o.P(), o.Q())
		c.MatrixFLOPs = 2 * f(o.N, o.K, o.C/g, o.R, o.S) * pq
		c.Bytes = f(o.N, o.C, o.H, o.W)*in + f(o.K, o.C/g, o.R, o.S)*in + f(o.N, o.K)*pq*out
		if o.Bias {
			c.VectorFLOPs = f(o.N, o.K) * pq
			c.Bytes += f(o.K) * out
		}
	case Embedding, Reduce, BatchNorm, Unary:
		c = o.tracedCost(in, out)
	case MoE:
		c = o.moeCost(out)
	case MLA:
		c = o.mlaCost(in)
	}
	return c
}

// validate checks the shape: every size positive and the dependent sizes
// consistent. Sizes are capped so that costs stay exact in float64.
func (o Op) validate() error {
	const maxDim = 1 << 40
	check := func(name string, v int64) error {
		if v <= 0 || v > maxDim {
			return fmt.Errorf("%s: %s=%d must be between 1 and 2^40", o.Kind, name, v)
		}
		return nil
	}
	type dim struct {
		name string
		v    int64
	}
	var dims []dim
	switch o.Kind {
	case Matmul, Linear:
		dims = []dim{{"m", o.M}, {"n", o.N}, {"k", o.K}, {"batch", o.Batch}}
	case LayerNorm, RMSNorm, Softmax:
		dims = []dim{{"rows", o.Rows}, {"cols", o.Cols}}
	case GELU, ReLU, SiLU, Add, Mul, Copy:
		dims = []dim{{"n", o.Elems}}
	case Attention:
		dims = []dim{{"b", o.B}, {"h", o.Heads}, {"kv", o.KVHeads}, {"sq", o.SeqQ}, {"sk", o.SeqK}, {"d", o.HeadDim}}
	case AllReduce, AllToAll:
		dims = []dim{{"n", o.Elems}, {"ranks", o.Ranks}}
	case Conv2D:
		dims = []dim{{"n", o.N}, {"c", o.C}, {"h", o.H}, {"w", o.W}, {"k", o.K}, {"r", o.R}, {"s", o.S}, {"stride", o.Stride}, {"groups", o.Groups}}
	case MoE:
		dims = []dim{{"tokens", o.Tokens}, {"hidden", o.Hidden}, {"inter", o.Inter}, {"topk", o.TopK}, {"experts", o.Experts}, {"tp", o.TP}, {"ep", o.EP}}
	case MLA:
		dims = []dim{{"b", o.B}, {"h", o.Heads}, {"sq", o.SeqQ}, {"sk", o.SeqK}, {"kv_lora", o.KVLoRA}, {"rope", o.Rope}, {"nope", o.Nope}, {"v", o.VDim}, {"q_lora", o.QLoRA}}
	default:
		return fmt.Errorf("unknown op %q", o.Kind)
	}
	for _, d := range dims {
		if err := check(d.name, d.v); err != nil {
			return err
		}
	}
	switch o.Kind {
	case Copy:
		if o.Repeat < 0 || o.Repeat > maxDim || (o.Repeat > 1 && o.Elems%o.Repeat != 0) {
			return fmt.Errorf("copy: n=%d is not a whole number of repeat=%d copies", o.Elems, o.Repeat)
		}
	case MoE:
		if err := o.moeValidate(); err != nil {
			return err
		}
	case MLA:
		if o.KVType != "" && o.KVType.Size() == 0 {
			return fmt.Errorf("mla: unknown kv_dtype %q", o.KVType)
		}
	case Attention:
		if o.Heads%o.KVHeads != 0 {
			return fmt.Errorf("attention: h=%d query heads is not a multiple of kv=%d key/value heads", o.Heads, o.KVHeads)
		}
	case Conv2D:
		if o.Pad < 0 || o.Pad > maxDim {
			return fmt.Errorf("conv2d: pad=%d must be 0 or more", o.Pad)
		}
		if o.C%o.Groups != 0 || o.K%o.Groups != 0 {
			return fmt.Errorf("conv2d: c=%d and k=%d must both be multiples of groups=%d", o.C, o.K, o.Groups)
		}
		if o.P() <= 0 || o.Q() <= 0 || o.H+2*o.Pad < o.R || o.W+2*o.Pad < o.S {
			return fmt.Errorf("conv2d: the %dx%d filter does not fit the %dx%d input with pad=%d", o.R, o.S, o.H, o.W, o.Pad)
		}
	}
	if o.DType.Size() == 0 {
		return fmt.Errorf("%s: unknown data type %q", o.Kind, o.DType)
	}
	if err := o.validQuant(); err != nil {
		return err
	}
	c := o.Cost()
	for _, v := range []float64{c.MatrixFLOPs, c.VectorFLOPs, c.Bytes} {
		if v > 1<<53 || math.IsNaN(v) {
			return fmt.Errorf("%s: shape too large (over 2^53 FLOPs or bytes, where counts stop being exact)", o.Kind)
		}
	}
	return nil
}
