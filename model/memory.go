package model

import (
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/devices"
)

// Phase is what one forward does: prefill a prompt or decode one token.
type Phase string

// Phases.
const (
	Prefill Phase = "prefill"
	Decode  Phase = "decode"
)

// Shape is the work a model is asked to do and how it is laid out.
type Shape struct {
	Phase Phase `json:"phase"`
	// Batch sequences; Seq prompt tokens per sequence (prefill); Ctx tokens
	// already in each sequence's KV cache (decode).
	Batch int64 `json:"batch"`
	Seq   int64 `json:"seq"`
	Ctx   int64 `json:"ctx"`
	// TP is the tensor-parallel degree (GPUs of one host), 1 for none.
	TP int64 `json:"tp"`
	// EP and MoETP lay out a MoE model's routed experts: split EP ways,
	// each GPU holding Experts/EP of them, and each expert split MoETP
	// ways (tensor parallel inside the expert), over MoETP × EP GPUs, a
	// multiple of TP. Those GPUs form MoETP × EP / TP attention groups of
	// TP that each run attention, dense and shared layers for their own
	// Batch sequences (Batch, Seq and Ctx are one group's) and share the
	// experts: with more than one group a MoE layer sends every token to
	// its experts' GPUs and back with two all-to-alls (dispatch and
	// combine) and computes the experts' share of all the groups' tokens.
	// Defaults (0): EP 1; MoETP TP without expert parallelism, 1 (whole
	// experts) with it. ExpertLayout checks a layout.
	EP    int64 `json:"ep,omitempty"`
	MoETP int64 `json:"moe_tp,omitempty"`
	// Weights is the storage type of the linear layers' weights (bf16,
	// fp8, int4); Activations the compute type; KV the cache's.
	Weights     WeightType    `json:"weights_dtype"`
	Activations devices.DType `json:"activations_dtype"`
	KV          devices.DType `json:"kv_dtype"`
	// ExpertWeights is the routed experts' storage type, where it differs
	// from the other linear layers' (gpt-oss ships MXFP4 experts and bf16
	// attention); default Weights.
	ExpertWeights WeightType `json:"expert_weights_dtype,omitempty"`
	// FullCache keeps every token of the context in a sliding-window
	// layer's cache (a cache sized for the context, as a preallocated
	// reference decoder does) instead of only the window (transformers).
	FullCache bool `json:"full_cache,omitempty"`
	// AttentionImpl is the decode attention's schedule (ops.Op.Impl): ""
	// for split-KV, as serving engines run it; ops.ImplRows folds a KV
	// group's query heads into query rows (the reference decoder's
	// ref_bench timing).
	AttentionImpl string `json:"attention_impl,omitempty"`
	// Engine is the software that runs the step (default Graph).
	Engine Engine `json:"engine"`
}

// WeightType is how linear weights are stored: a data type, or int4 with
// one bf16 scale per group of 128 weights (GPTQ/AWQ-style weight-only
// quantization, computed in the activation type).
type WeightType string

// Int4 is 4-bit weight-only quantization.
const Int4 WeightType = "int4"

// MXFP4 is the OCP microscaling format: 4-bit e2m1 values with one 8-bit
// power-of-two scale per 32 (gpt-oss's experts). On GPUs without fp4
// tensor cores it is dequantized into the activation type, as int4 is.
const MXFP4 WeightType = "mxfp4"

// mxBlock is the elements that share one MXFP4 scale.
const mxBlock = 32

// int4Group is the quantization group of int4 weights.
const int4Group = 128

// ParseWeightType accepts int4 or any data type name.
func ParseWeightType(s string) (WeightType, error) {
	if s == "int4" || s == "w4" || s == "w4a16" {
		return Int4, nil
	}
	if s == string(MXFP4) {
		return MXFP4, nil
	}
	d, err := devices.ParseDType(s)
	if err != nil {
		return "", fmt.Errorf("%w, int4 or mxfp4", err)
	}
	return WeightType(d), nil
}

// size is the bytes of one weight, scales included.
func (w WeightType) size() float64 {
	switch w {
	case Int4:
		return 0.5 + 2.0/int4Group
	case MXFP4:
		return 0.5 + 1.0/mxBlock
	}
	return devices.DType(w).Size()
}

// compute is the data type the linear layers run in: fp8 weights run fp8
// GEMMs (activations quantized per token, as FP8 serving does on Hopper);
// int4 weights are dequantized into the activation type.
func (s Shape) compute() devices.DType { return computeType(s.Weights, s.Activations) }

// expertCompute is the data type the routed experts run in.
func (s Shape) expertCompute() devices.DType { return computeType(s.ExpertWeights, s.Activations) }

func computeType(w WeightType, act devices.DType) devices.DType {
	switch w {
	case Int4, MXFP4, "":
		return act
	}
	return devices.DType(w)
}

// Defaults fills unset fields: batch 1, tp 1, bf16 everywhere.
func (s Shape) Defaults() Shape {
	if s.Batch == 0 {
		s.Batch = 1
	}
	if s.TP == 0 {
		s.TP = 1
	}
	if s.Activations == "" {
		s.Activations = devices.BF16
	}
	if s.Weights == "" {
		s.Weights = WeightType(s.Activations)
	}
	if s.ExpertWeights == "" {
		s.ExpertWeights = s.Weights
	}
	if s.KV == "" {
		s.KV = s.Activations
	}
	if s.Engine == "" {
		s.Engine = Graph
	}
	return s
}

// Experts is the shape's expert layout with its defaults: each expert's
// tensor-parallel GPUs, the expert-parallel GPUs, and the attention groups
// that share the experts. The shape is valid (ExpertLayout).
func (s Shape) Experts() (moeTP, ep, groups int64) {
	moeTP, ep = s.MoETP, max(s.EP, 1)
	if moeTP == 0 {
		moeTP = 1
		if ep == 1 {
			moeTP = s.TP
		}
	}
	return moeTP, ep, moeTP * ep / s.TP
}

// gpus is the GPUs one step of the shape spans: the attention group's TP,
// or the experts' MoETP × EP where they span more.
func (s Shape) gpus() int64 {
	moeTP, ep, _ := s.Experts()
	return max(s.TP, moeTP*ep)
}

// ExpertLayout checks an expert layout (Shape.EP and MoETP, 0 for their
// defaults) against tp GPUs of attention, and returns the attention groups
// that share the experts: MoETP × EP / tp, 1 where the experts span the
// tp GPUs that run attention.
func ExpertLayout(tp, ep, moeTP int64) (groups int64, err error) {
	switch {
	case tp < 1:
		return 0, fmt.Errorf("tp=%d: expected 1 or more GPUs", tp)
	case ep < 0 || ep > maxEP:
		return 0, fmt.Errorf("ep=%d: expected 1 (none) to %d GPUs", ep, maxEP)
	case moeTP < 0 || moeTP > maxEP:
		return 0, fmt.Errorf("moe-tp=%d: expected 1 to %d GPUs", moeTP, maxEP)
	}
	moeTP, ep, groups = Shape{TP: tp, EP: ep, MoETP: moeTP}.Experts()
	if moeTP*ep%tp != 0 {
		return 0, fmt.Errorf("moe-tp × ep = %d × %d: expected a multiple of tp=%d (the experts span the attention's GPUs, or several groups of them)", moeTP, ep, tp)
	}
	return groups, nil
}

// validate checks the shape against the model.
func (s Shape) validate(c Config) error {
	if err := s.validateShape(); err != nil {
		return err
	}
	for _, x := range []struct {
		what string
		n    int64
	}{{"attention heads", c.Heads}, {"intermediate size", c.Intermediate}} {
		if x.n%s.TP != 0 {
			return fmt.Errorf("tp=%d does not divide the %d %s of %s", s.TP, x.n, x.what, c.Name)
		}
	}
	if s.EP > 1 && c.Experts == 0 {
		return fmt.Errorf("ep=%d: %s has no routed experts: expert parallelism needs a MoE model", s.EP, c.Name)
	}
	if s.EP > 1 && c.Experts%s.EP != 0 {
		return fmt.Errorf("ep=%d does not divide the %d routed experts of %s", s.EP, c.Experts, c.Name)
	}
	// Each expert's gate, up and down projections are split MoETP ways.
	if moeTP, _, _ := s.Experts(); c.Experts > 0 && c.MoEIntermediate%moeTP != 0 {
		return fmt.Errorf("moe-tp=%d does not divide the %d-wide experts (moe_intermediate_size) of %s", moeTP, c.MoEIntermediate, c.Name)
	}
	// The widest activation (tokens × the widest row an op writes) is
	// counted in int64 element counts: refuse what would wrap.
	_, t := s.tokens()
	widest := max(c.Hidden, c.Intermediate, (c.Heads+2*c.KVHeads)*c.HeadDim, c.Experts*max(c.MoEIntermediate, 1),
		c.KVLoRARank+c.QKRopeDim, c.Vocab)
	if n := float64(t) * float64(widest); n > maxElems {
		return fmt.Errorf("%d tokens × %d-wide activations of %s are %.3g elements, beyond the %.0e gpucalc counts exactly: lower the batch or the prompt", t, widest, c.Name, n, float64(maxElems))
	}
	return nil
}

// maxElems is the most elements one activation may hold: 2^53, below which
// int64 products and their float64 costs are exact.
const maxElems = 1 << 53

// beyondPositions warns of a sequence longer than the model supports. It
// is a warning, not an error: memory and time still hold (the reference
// decoder timed Phi-3-mini-4k at 32768 tokens of context, and gpucalc
// predicts it), only what the model writes there does not.
func (c Config) beyondPositions(what string, n int64) string {
	if c.MaxPositions > 0 && n > c.MaxPositions {
		return fmt.Sprintf("%s of %d tokens is beyond the %d positions of %s (max_position_embeddings; YaRN or dynamic rope scaling extend it): memory and time hold, the model's output does not", what, n, c.MaxPositions, c.Name)
	}
	return ""
}

// validateShape checks what does not depend on the model.
func (s Shape) validateShape() error {
	switch s.Phase {
	case Prefill:
		if s.Seq <= 0 {
			return fmt.Errorf("prefill needs a prompt length (seq) of 1 or more tokens")
		}
	case Decode:
		if s.Ctx < 0 {
			return fmt.Errorf("decode context (ctx) must be 0 or more tokens")
		}
	default:
		return fmt.Errorf("phase %q: expected prefill or decode", s.Phase)
	}
	if s.Batch <= 0 || s.Batch > maxBatch || s.Seq > maxTokens || s.Ctx > maxTokens {
		return fmt.Errorf("batch must be 1 to %d and seq, ctx at most %d tokens", maxBatch, maxTokens)
	}
	if s.TP <= 0 || s.TP > maxTP {
		return fmt.Errorf("tp=%d: expected 1 to %d GPUs", s.TP, maxTP)
	}
	if _, err := ExpertLayout(s.TP, s.EP, s.MoETP); err != nil {
		return err
	}
	if s.Weights.size() == 0 || s.ExpertWeights.size() == 0 || s.Activations.Size() == 0 || s.KV.Size() == 0 {
		return fmt.Errorf("unknown data type in weights=%s expert weights=%s activations=%s kv=%s", s.Weights, s.ExpertWeights, s.Activations, s.KV)
	}
	return nil
}

// Memory is what one GPU holds for the shape. Sizes in bytes.
type Memory struct {
	Params Params `json:"params"`
	// Weights per GPU: linear layers in the weight type, embeddings, norms
	// and routers in the activation type, sharded over TP.
	Weights float64 `json:"weights_bytes"`
	// Experts is the routed experts' part of Weights (what expert
	// parallelism spreads over other GPUs than the attention's).
	Experts float64 `json:"expert_weights_bytes,omitempty"`
	// KVPerToken is the cache one token of one sequence adds on this GPU,
	// over all layers (sliding layers included).
	KVPerToken float64 `json:"kv_bytes_per_token"`
	// KV is the cache of the whole batch at this context.
	KV float64 `json:"kv_bytes"`
	// Workspace is the activations alive at the forward's peak.
	Workspace float64 `json:"workspace_bytes"`
	Total     float64 `json:"memory_bytes"`
	// Usable is the memory the step may use on each GPU (see Usable).
	Usable float64 `json:"usable_bytes"`
	Fits   bool    `json:"fits"`
}

// reservedShare is the part of a GPU's memory that CUDA never hands out
// (driver, ECC and firmware reservations): an 80 GiB H100 SXM reports
// totalGlobalMem = 85,017,493,504 bytes (cudaGetDeviceProperties, driver
// 580, CUDA 13.0), 1.03% less than 80 GiB. The share is applied to every
// GPU, as the reservation scales with the memory.
const reservedShare = 1 - 85017493504.0/(80<<30)

// Allocatable is the memory CUDA can allocate on d: 79.2 GiB on an 80 GiB
// H100 (the CUDA context lives inside it; Usable takes it out).
func Allocatable(d devices.Device) float64 {
	return math.Floor(float64(d.Memory.Bytes) * (1 - reservedShare))
}

// cudaContext is the memory the CUDA context holds on each GPU once
// PyTorch has made it (a 1-element tensor: cudaMemGetInfo's used bytes less
// PyTorch's reserved bytes). It is inside what CUDA reports as its total, and
// no allocator can ever have it: 648,871,936 bytes on rank 0 of two H100s
// (64 KiB more on rank 1; tools/multigpu/results/nccl_memory_2gpu_h100.csv).
const cudaContext = 648871936

// ncclCommunicator is the memory NCCL's communicator holds on each rank,
// outside PyTorch's caching allocator (cudaMemGetInfo's used bytes less
// PyTorch's reserved bytes, less the CUDA context): 1,027,670,016 bytes
// once a DDP model's first backward has run, the same after all-gathers
// and reduce-scatters (0.83 GiB after NCCL's init and a first
// all-reduce); rank 0's, 64 KiB more than rank 1's. Measured on two H100s
// with NCCL 2.28.9 as PyTorch 2.11 ships it
// (tools/multigpu/results/nccl_memory_2gpu_h100.csv); it is applied to
// any GPU and rank count, as no other was measured.
const ncclCommunicator = 1676541952 - 648871936

// Usable is the one definition of the memory a step may use on each of
// gpus GPUs of d, for serving (model, check) and training (train) alike:
// what CUDA can allocate less the CUDA context, and less NCCL's
// communicator when the step spans more than one GPU. It is never negative:
// a GPU too small to hold the context (and communicator) has 0 usable, and
// nothing fits.
func Usable(d devices.Device, gpus int64) float64 {
	u := Allocatable(d) - cudaContext
	if gpus > 1 {
		u -= ncclCommunicator
	}
	return max(u, 0)
}

// kvLayer is the cache one token adds to one layer on one GPU. MLA caches
// its latent and rotary key, replicated on every TP rank; other attention
// caches K and V of its KV heads, split over TP (replicated when there are
// fewer KV heads than ranks).
func (c Config) kvLayer(s Shape) float64 {
	if c.MLA() {
		// DeepSeek sparse attention also caches its indexer's key.
		return float64(c.KVLoRARank+c.QKRopeDim+c.IndexHeadDim) * s.KV.Size()
	}
	return 2 * float64(kvHeads(c, s.TP)*c.HeadDim) * s.KV.Size()
}

// linearState is what one gated delta-net layer keeps per sequence on one
// GPU, whatever the context: the recurrent state (a key × value matrix per
// value head, fp32 as Qwen3.5's mamba_ssm_dtype says) and the convolution's
// last LinearConv−1 inputs of q, k and v; heads split over TP.
func (c Config) linearState(s Shape) float64 {
	tp := s.TP
	state := float64(c.LinearValueHeads/tp*c.LinearKeyDim*c.LinearValueDim) * devices.FP32.Size()
	conv := float64((2*c.LinearKeyHeads*c.LinearKeyDim+c.LinearValueHeads*c.LinearValueDim)/tp*(c.LinearConv-1)) * s.Activations.Size()
	return state + conv
}

func kvHeads(c Config, tp int64) int64 { return max(1, c.KVHeads/tp) }

// cached is how many tokens layer i holds for a sequence of n tokens.
func (c Config) cached(i int, n int64, s Shape) int64 {
	if c.Sliding[i] && !s.FullCache && c.SlidingWindow < n {
		return c.SlidingWindow
	}
	return n
}

// tokens is the sequence length the cache holds after this step, and the
// tokens the step computes.
func (s Shape) tokens() (context, computed int64) {
	if s.Phase == Prefill {
		return s.Seq, s.Batch * s.Seq
	}
	return s.Ctx + 1, s.Batch
}

// Memory computes what one GPU holds for shape s on device d.
func (c Config) Memory(s Shape, d devices.Device) (Memory, error) {
	s, err := c.fill(s)
	if err != nil {
		return Memory{}, err
	}
	if err := s.validate(c); err != nil {
		return Memory{}, err
	}
	p := c.Params()
	m := Memory{Params: p, Usable: Usable(d, s.gpus())}
	tp := float64(s.TP)
	act := s.Activations.Size()
	linear := p.Attention + p.MLP - c.attentionNormParams()
	moeTP, ep, _ := s.Experts()
	m.Experts = float64(p.Experts) / float64(moeTP*ep) * s.ExpertWeights.size()
	m.Weights = float64(linear)/tp*s.Weights.size() + m.Experts +
		float64(p.Embedding+p.LMHead)/tp*act + float64(p.Norms+p.Router+c.attentionNormParams())*act
	ctx, computed := s.tokens()
	for i := range int(c.Layers) {
		if c.LinearAttention(i) {
			m.KV += c.linearState(s) * float64(s.Batch)
			continue
		}
		kv := c.kvLayer(s)
		m.KVPerToken += kv
		m.KV += kv * float64(s.Batch*c.cached(i, ctx, s))
	}
	m.Workspace = c.workspace(s, computed)
	m.Total = m.Weights + m.KV + m.Workspace
	m.Fits = m.Usable > 0 && m.Total <= m.Usable
	return m, nil
}

// attentionNormParams are the norms and biases inside attention (q/k norms,
// MLA's latent norms), kept in the activation type and replicated.
func (c Config) attentionNormParams() int64 {
	var n int64
	if c.QKNorm {
		n += int64(c.qkNormParams())
	}
	if c.MLA() {
		n += c.KVLoRARank + c.QLoRARank
	}
	return n * c.Layers
}

// workspace is the peak of activations during one forward over t tokens on
// one GPU: the residual stream and its normalised copy (2·D per token) plus
// the widest intermediate alive at once, the MLP's three I-wide tensors
// (activated gate, up, their product) or attention's q, k and v; and the
// last tokens' logits in fp32.
func (c Config) workspace(s Shape, t int64) float64 {
	tp := s.TP
	width := 3 * c.Intermediate / tp
	if c.Experts > 0 {
		width = max(width, 3*(c.TopK+c.SharedExperts)*c.MoEIntermediate/tp)
	}
	width = max(width, (c.Heads+2*kvHeads(c, tp))*c.HeadDim/tp)
	perToken := float64(2*c.Hidden+width) * s.Activations.Size()
	return float64(t)*perToken + float64(s.Batch*c.Vocab/tp)*4
}

// SmallestTP is the smallest tensor-parallel degree (a power of two up to 64
// that divides the heads and the MLP) at which the shape fits on d, or 0
// when none does.
func (c Config) SmallestTP(s Shape, d devices.Device) int64 {
	for tp := int64(1); tp <= 64; tp *= 2 {
		s.TP = tp
		m, err := c.Memory(s, d)
		if err == nil && m.Fits {
			return tp
		}
	}
	return 0
}
