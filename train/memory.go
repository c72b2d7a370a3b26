package train

import (
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
)

// Memory is one GPU's memory at the step's peak, item by item, in bytes.
// The items sum to Peak.
type Memory struct {
	// Weights are the parameters as held (sharded by TP, and by ZeRO-3).
	Weights float64 `json:"weights_bytes"`
	// Grads are the gradients alive at the peak (DDP's buckets
	// included).
	Grads float64 `json:"grads_bytes"`
	// Optimizer are the optimizer states (fp32 master weights under ZeRO
	// mixed precision included).
	Optimizer float64 `json:"optimizer_bytes"`
	// Copies are autocast's bf16 copies of the fp32 weights alive at the
	// peak (mixed precision), or ZeRO-3's gathered parameters.
	Copies float64 `json:"autocast_copies_bytes"`
	// Activations are the tensors autograd saved for backward alive at the
	// peak (with checkpointing, the layer inputs and the layer being
	// recomputed).
	Activations float64 `json:"activations_bytes"`
	// Logits are the logits and the loss's fp32 buffers alive at the peak.
	Logits float64 `json:"logits_bytes"`
	// Transient is the backward pass's short-lived tensors at the peak:
	// activation gradients within a layer, the tied embedding's summed
	// gradient, the gradient's cast under autocast.
	Transient float64 `json:"transient_bytes"`
	// Other is cuBLAS's workspaces and the token ids.
	Other float64 `json:"other_bytes"`
	Peak  float64 `json:"peak_bytes"`
	// At says where in the step the peak falls.
	At string `json:"peak_at"`

	// Persistent is what stays allocated between steps (weights,
	// optimizer states, DDP buckets, workspaces): PyTorch's
	// memory_allocated() after zero_grad.
	Persistent float64 `json:"persistent_bytes"`
	// GradsHeld is every gradient as the end of backward holds them
	// (sharded by ZeRO-2 and -3); Saved what the forward saves for
	// backward over all layers, final norm and LM head included.
	GradsHeld float64 `json:"grads_held_bytes"`
	Saved     float64 `json:"activations_saved_bytes"`
	// PerLayer is the activations one decoder layer saves for the
	// micro-batch without checkpointing, and PerLayerCkpt with it (the
	// layer's input).
	PerLayer     float64 `json:"activations_per_layer_bytes"`
	PerLayerCkpt float64 `json:"activations_per_layer_ckpt_bytes"`
	// Usable is what PyTorch's allocator can take on one GPU (see Usable).
	Usable float64 `json:"usable_bytes"`
	// Rebuild is what a DDP run's second step may hold on top of Peak:
	// DDP rebuilds its buckets at that step's forward (in the order the
	// first backward produced the gradients), while the first step's
	// buckets stay referenced by the finished all-reduces until NCCL's
	// watchdog thread, polling every 100 ms, lets them go. Where it has
	// not polled since, they are still there at the second step's peak
	// (measured on two H100s: Llama-3.2-1B 24.14 GiB against 21.84 GiB
	// from the third step on, and 21.84 GiB after a pause; see
	// tools/multigpu/ddp_oom.py). Counted whole, the worst case. None with
	// gradient_as_bucket_view (BucketView), none without DDP.
	Rebuild float64 `json:"ddp_rebuild_bytes"`
	// SecondStep is Peak + Rebuild: the most a run reaches.
	SecondStep float64 `json:"second_step_peak_bytes"`
	// Fits: SecondStep is within Usable.
	Fits bool `json:"fits"`
	// Verdict says it in one word, hedged where the outcome is not the
	// arithmetic's to decide: Fits, FitsTightly, MayNotFit or DoesNotFit.
	Verdict Verdict `json:"verdict"`
	// Largest is the step's largest tensor: the loss's fp32 logits
	// (tokens × vocabulary / TP × 4 bytes).
	Largest float64 `json:"largest_tensor_bytes"`
	// Headroom is the room a step needs beyond its count to fit
	// surely: its largest tensor, and on several data-parallel GPUs a
	// MultiGPUReserve share of the peak besides.
	Headroom float64 `json:"headroom_bytes"`
	// Tight: it fits with less room to spare than Headroom (on one GPU
	// the step's largest tensor, an fp32 logits buffer). PyTorch's caching allocator reserves
	// more than it allocates (freed blocks split and kept for reuse), so
	// such a step may still run out of memory: of the measured steps this
	// close, 16 ran and 5 ran out (docs/train.md).
	Tight bool `json:"tight"`
}

// MultiGPUReserve is the share of the peak a data-parallel step keeps as
// headroom besides its largest tensor. NCCL's and FSDP2's side streams
// free their blocks to their own stream's pool, which the compute stream
// cannot reuse at once: on the two- and four-GPU dist_bench rows the
// caching allocator reserved a median 20% more than it allocated (the
// FSDP2 rows of 7-8B models up to 14 GiB, 22%), against 8% on one GPU.
// Half that median: a step with less room is graded fits_tightly.
const MultiGPUReserve = 0.10

// Verdict is whether a step fits, in four grades.
type Verdict string

const (
	// Fits: the second step fits with more room than the step's
	// largest tensor.
	Fits Verdict = "fits"
	// FitsTightly: the second step fits with less room than the step's
	// largest tensor; PyTorch's default allocator may still fail
	// (Memory.Tight).
	FitsTightly Verdict = "fits_tightly"
	// MayNotFit: the steady step fits but not the second one with DDP's
	// first buckets still held; whether they are is a race with NCCL's
	// watchdog (Memory.Rebuild), measured going both ways.
	MayNotFit Verdict = "may_not_fit"
	// DoesNotFit: the steady step does not fit.
	DoesNotFit Verdict = "does_not_fit"
)

// Items names the memory items in order, as reports list them.
func (m Memory) Items() []struct {
	Name  string
	Bytes float64
} {
	return []struct {
		Name  string
		Bytes float64
	}{
		{"weights", m.Weights}, {"gradients", m.Grads}, {"optimizer states", m.Optimizer},
		{"autocast copies / gathered", m.Copies}, {"activations", m.Activations}, {"logits and loss", m.Logits},
		{"backward transient", m.Transient}, {"workspace and ids", m.Other},
	}
}

// cublasWorkspace is what PyTorch's caching allocator holds for cuBLAS: a
// 32 MiB workspace per handle on Hopper, one handle for the forward's
// thread and one for autograd's backward thread.
const cublasWorkspace = 2 * 32 << 20

// bytesPer is what one parameter costs, by role.
type bytesPer struct{ w, g, o float64 }

// layout is the step's byte arithmetic for one model and request: what
// each parameter holds and what each token saves, sharded as requested.
type layout struct {
	c     model.Config
	r     Request
	n     ParamCount
	tp    float64
	dp    float64
	train bytesPer // per trainable parameter
	base  float64  // bytes per frozen base parameter (LoRA)
	act   float64  // bytes per element of the residual stream
	// masked: sliding-window attention with a window shorter than the
	// sequence, which transformers runs with a materialised mask, KV heads
	// repeated (no GQA in SDPA) and the memory-efficient kernel.
	masked bool
}

func newLayout(c model.Config, r Request) layout {
	l := layout{c: c, r: r, n: Count(c, r), tp: float64(r.TP), dp: float64(r.DP()), act: 2}
	switch {
	case r.Method == LoRA:
		l.train, l.base = bytesPer{4, 4, 8}, 2
	case r.Precision == Mixed && r.ZeRO <= 1:
		// ZeRO-1 is ZeroRedundancyOptimizer under DDP: the model stays
		// fp32 under autocast, only the states are sharded.
		l.train, l.act = bytesPer{4, 4, 8}, 4
	case r.Precision == Mixed:
		l.train = bytesPer{2, 2, 12} // master weights are optimizer state
	default:
		l.train = bytesPer{2, 2, 4}
	}
	if r.Optimizer == SGD {
		l.train.o = 0
		if r.Precision == Mixed && r.ZeRO >= 2 {
			l.train.o = 4
		}
	}
	for _, s := range c.Sliding {
		l.masked = l.masked || (s && c.SlidingWindow > 0 && c.SlidingWindow < r.Seq)
	}
	return l
}

// autocast reports whether the forward runs under torch.autocast over fp32
// weights.
func (l layout) autocast() bool { return l.r.Precision == Mixed && l.r.ZeRO <= 1 && l.r.Method == Full }

// perGPU is a parameter count on one GPU: linear layers and vocabulary
// split over TP, norms replicated.
func (l layout) perGPU() (linear, vocab, norms float64) {
	vocab = float64(l.n.Embedding)
	if !l.c.TiedEmbeddings {
		vocab += float64(l.n.LMHead)
	}
	norms = float64(l.n.Total-l.n.Adapters-l.n.Linear) - vocab
	// TP divides the heads and MLP columns (Validate); a vocabulary it
	// does not divide is padded, so a GPU holds whole rows.
	return float64(l.n.Linear) / l.tp, math.Ceil(vocab / l.tp), norms
}

// states are the weights, gradients (all of them) and optimizer states one
// GPU holds, sharded by ZeRO.
func (l layout) states() (w, g, o float64) {
	linear, vocab, norms := l.perGPU()
	frozen, trained := 0.0, linear+vocab+norms // parameters on this GPU
	if l.r.Method == LoRA {
		frozen, trained = trained, math.Ceil(float64(l.n.Adapters)/l.tp)
	}
	// ZeRO stage s and above shard a state over the data-parallel GPUs.
	// DeepSpeed and FSDP pad a flat parameter to a multiple of the GPUs,
	// so each holds whole parameters: ⌈n / dp⌉.
	shard := func(n float64, s int64) float64 {
		if l.r.ZeRO >= s {
			return math.Ceil(n / l.dp)
		}
		return n
	}
	w = shard(frozen, 3)*l.base + shard(trained, 3)*l.train.w
	return w, shard(trained, 2) * l.train.g, shard(trained, 1) * l.train.o
}

// gradsFull is every trainable gradient unsharded, bytes.
func (l layout) gradsFull() float64 {
	linear, vocab, norms := l.perGPU()
	if l.r.Method == LoRA {
		return math.Ceil(float64(l.n.Adapters)/l.tp) * l.train.g
	}
	return (linear + vocab + norms) * l.train.g
}

// widths of one layer on one GPU (elements per token).
func (l layout) widths() (h, hq, kv, i, heads float64) {
	c := l.c
	tp := l.r.TP
	return float64(c.Hidden), float64(c.Heads * c.HeadDim / tp), float64(max(1, c.KVHeads/tp) * c.HeadDim),
		float64(c.Intermediate / tp), float64(c.Heads / tp)
}

// norm is what transformers' RMSNorm saves per token over width w from an
// input of din bytes per element: the fp32 copy of its input (pow and the
// scaling save it; the input itself when already fp32) when the input
// needs a gradient, and the normalised tensor the weight multiplies when
// the weight is trained. Its output is saved by whoever consumes it.
func (l layout) norm(w, din float64, inputGrad bool) float64 {
	var s float64
	if inputGrad {
		s += 4 * w
	}
	if l.r.Method == Full {
		s += din * w
	}
	return s
}

// group is what linear layers sharing one input of in elements (din bytes
// each) save per token: in bf16 the input once; under autocast a bf16 cast
// of an fp32 input per call (an input already bf16 is not cast); with LoRA
// the frozen base saves nothing and each adapted layer saves peft's fp32
// cast of the input and its adapter's rank-wide activation.
func (l layout) group(in, din float64, names ...string) float64 {
	switch {
	case l.r.Method == LoRA:
		var s float64
		for _, n := range names {
			if l.r.targeted(n) {
				s += 4*in + 4*float64(l.r.LoRARank)
			}
		}
		return s
	case din == 4:
		return float64(len(names)) * 2 * in
	}
	return 2 * in
}

// layerSaved is what one decoder layer saves for backward per token
// (inputGrad: the layer's input needs a gradient; false only for LoRA's
// first layer, whose input comes from the frozen embedding).
func (l layout) layerSaved(inputGrad bool) float64 {
	h, hq, kv, i, heads := l.widths()
	s := l.norm(h, l.act, inputGrad) + l.group(h, l.act, "q_proj", "k_proj", "v_proj")
	if l.c.QKNorm {
		// Per-head norms of the bf16 projections; rotary saves nothing
		// of its own (cos and sin are shared by every layer).
		s += l.norm(hq, 2, true) + l.norm(kv, 2, true)
	}
	if l.masked {
		kv = hq // repeat_kv's copies are what SDPA saves
	}
	// SDPA saves q, k, v in bf16 (autocast casts fp32 rotary outputs),
	// its output (also o_proj's input) and the fp32 log-sum-exp per head.
	s += 2*hq + 4*kv + 2*hq + 4*heads
	if l.r.Method == LoRA {
		s += l.group(hq, 2, "o_proj")
	}
	s += l.norm(h, l.act, true) + l.group(h, l.act, "gate_proj", "up_proj")
	// gate (SiLU's input), up and SiLU's output (the product's inputs).
	s += 3 * 2 * i
	if l.r.Method == LoRA {
		s += l.group(i, 2, "down_proj")
	} else {
		s += 2 * i // the product, down_proj's input
	}
	return s
}

// finalSaved is the final norm and the LM head's input, per token.
func (l layout) finalSaved() float64 {
	h := float64(l.c.Hidden)
	s := l.norm(h, l.act, true)
	if l.r.Method == Full {
		s += 2 * h // the LM head's bf16 input (autocast's cast under mixed)
	}
	return s
}

// vocab is the logits' width on one GPU.
func (l layout) vocab() float64 { return float64(l.c.Vocab) / l.tp }

// Loss buffers per token, in units of the vocabulary: the forward holds
// the bf16 logits, their fp32 upcast and log_softmax's fp32 output at once
// (10 bytes); the loss's backward holds log_softmax's saved output, the
// gradient nll_loss scatters into and the gradient log_softmax's backward
// writes, all fp32 (12 bytes).
const (
	lossForward  = 2 + 4 + 4
	lossBackward = 4 + 4 + 4
)

// event is the memory at one moment of the step.
type event struct {
	at                                     string
	grads, copies, acts, logits, transient float64
}

// PeakMemory computes one GPU's memory at the step's peak on d.
func PeakMemory(c model.Config, r Request, d devices.Device) (Memory, error) {
	r = r.Defaults()
	if err := r.Validate(c); err != nil {
		return Memory{}, err
	}
	return newLayout(c, r).memory(model.Usable(d, r.GPUs)), nil
}

func (l layout) memory(usable float64) Memory {
	r, c := l.r, l.c
	T := float64(r.Tokens())
	L := float64(c.Layers)
	h := float64(c.Hidden)
	w, gShard, o := l.states()
	gFull := l.gradsFull()
	other := cublasWorkspace + 8*T
	persistent := w + o + other
	ddp, rebuild := 0.0, 0.0
	bucketGrads := false
	if r.ZeRO <= 1 && l.dp > 1 {
		// Gradients reduced whole (DDP, and ZeRO-1 as PyTorch's
		// ZeroRedundancyOptimizer runs under DDP) in the reducer's
		// buckets: apart from .grad by default, and the first step's set
		// may outlive the rebuild (Memory.Rebuild); with
		// gradient_as_bucket_view the gradients are the buckets' views.
		ddp = gFull
		if r.BucketView {
			bucketGrads = true
		} else {
			rebuild = gFull
		}
	}
	persistent += ddp
	linear, vocab, _ := l.perGPU()
	layerParams := linear / L
	lmParams := float64(l.n.LMHead) / l.tp
	// grads alive: unsharded until ZeRO-2 reduce-scatters them bucket by
	// bucket (one layer's bucket in flight).
	alive := func(g float64) float64 {
		if bucketGrads {
			return 0
		}
		if r.ZeRO >= 2 {
			return math.Min(g, gShard+layerParams*l.train.g)
		}
		return g
	}
	var gLayer, gLM float64
	if r.Method == Full {
		gLayer, gLM = layerParams*l.train.g, lmParams*l.train.g
	} else {
		gLayer = gFull / L
	}
	// autocast's bf16 weight copies: all cached in the forward; in
	// backward those the graph saved (without checkpointing, all).
	var cpLayer, cpLM float64
	if l.autocast() {
		cpLayer, cpLM = 2*layerParams, 2*lmParams
	}
	// ZeRO-3 gathers a layer's parameters to use them, and prefetches the
	// next (FSDP's default); the LM head is gathered for the loss.
	var gather, gatherLM float64
	if r.ZeRO == 3 && l.dp > 1 {
		gather, gatherLM = 2*2*layerParams, 2*lmParams
	}

	first, rest := l.layerSaved(r.Ckpt == FullCkpt || r.Method == Full), l.layerSaved(true)
	perLayer := rest * T
	inputs := l.act * h * T
	mask := 0.0
	if l.masked {
		mask = float64(r.Batch) * float64(r.Seq) * float64(r.Seq) // one bool mask shared by the layers
	}
	acts := (first+(L-1)*rest)*T + mask
	recompute := 0.0
	cpBwd := cpLayer*L + cpLM
	if r.Ckpt == FullCkpt {
		acts = L*inputs + mask
		recompute = perLayer
		cpBwd = cpLM
	}
	final := l.finalSaved() * T
	V := l.vocab()
	i := float64(c.Intermediate) / l.tp
	// Within a layer's backward: the residual stream's gradient and its
	// sum, and at the product's backward the gradients of SiLU's output
	// and of up (the product's own gradient frees down_proj's input).
	transient := (2*l.act*h + 2*2*i) * T
	tiedExtra := 0.0
	if c.TiedEmbeddings && r.Method == Full {
		// The embedding's backward makes a fresh table gradient, summed
		// with the LM head's in autograd's input buffer. Under autocast
		// the LM head's arrives fresh from the cast's backward and is
		// summed in place; for bf16 the sum is taken to be a new tensor
		// (the LM head's arrives straight from the matmul's backward, a
		// view autograd does not reuse: assumed, not traced).
		tiedExtra = vocab * l.train.g
		if !l.autocast() {
			tiedExtra *= 2
		}
	}
	firstActs := first*T + mask // layer 0's own, the others freed
	if r.Ckpt == FullCkpt {
		firstActs = inputs + recompute + mask
	}
	events := []event{
		{at: "forward: loss", copies: cpLayer*L + cpLM + gatherLM, acts: acts + final, logits: lossForward * V * T},
		{at: "backward: loss", copies: cpBwd + gatherLM, acts: acts + final, logits: lossBackward * V * T},
		// The LM head's matmul backward writes its weight's gradient
		// (bf16 under autocast) while the logits' gradient is alive;
		// autocast's cast to fp32 follows once it is freed.
		{at: "backward: LM head", copies: cpBwd + gatherLM, acts: acts + final, logits: 2 * V * T, grads: alive(gLM * b2f(!l.autocast())), transient: cpLM},
		{at: "backward: LM head's cast", copies: cpBwd, acts: acts + final, grads: alive(gLM), transient: cpLM},
		{at: "backward: last layer", copies: cpBwd - cpLM + cpLayer*b2f(r.Ckpt == FullCkpt) + gather, acts: acts + recompute,
			grads: alive(gLM + gLayer), transient: transient},
		{at: "backward: first layer", copies: cpLayer + gather, acts: firstActs,
			grads: alive(gFull - float64(l.n.Embedding)/l.tp*l.train.g*b2f(r.Method == Full)), transient: transient},
		{at: "end of backward", grads: alive(gFull), transient: tiedExtra},
		{at: "optimizer step", grads: gShard * b2f(!bucketGrads)},
	}
	m := Memory{Weights: w, Optimizer: o, Persistent: persistent, Usable: usable, PerLayer: perLayer, PerLayerCkpt: inputs,
		GradsHeld: alive(gFull) + ddp, Saved: acts + final}
	for _, e := range events {
		total := persistent + e.grads + e.copies + e.acts + e.logits + e.transient
		if total > m.Peak {
			m.Peak, m.At = total, e.at
			m.Grads, m.Copies, m.Activations, m.Logits, m.Transient = e.grads+ddp, e.copies, e.acts, e.logits, e.transient
		}
	}
	m.Other = other
	m.Rebuild, m.SecondStep, m.Largest = rebuild, m.Peak+rebuild, 4*V*T
	m.Fits = m.SecondStep <= usable
	m.Headroom = m.Largest
	if r.DP() > 1 {
		m.Headroom += math.Ceil(MultiGPUReserve * m.Peak) // whole bytes
	}
	m.Tight = m.Fits && usable-m.SecondStep < m.Headroom
	m.Verdict = m.grade(m.SecondStep)
	return m
}

// grade is the verdict for a step whose most is top: the second step's
// peak for a fresh run, Peak for one whose DDP buckets were rebuilt in an
// earlier step.
func (m Memory) grade(top float64) Verdict {
	switch {
	case m.Peak > m.Usable:
		return DoesNotFit
	case top > m.Usable:
		return MayNotFit
	case m.Usable-top < m.Headroom:
		return FitsTightly
	}
	return Fits
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
