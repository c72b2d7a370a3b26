// Package train answers the fine-tuning questions of a decoder-only LLM on a
// GPU: does one training step fit (the memory at the step's peak, item by
// item), the largest micro-batch that fits and the smallest change that
// makes it fit, and how long a step takes (forward, backward, optimizer,
// data-parallel communication) and what dominates it.
//
// Memory is counted per allocation from what PyTorch, transformers (sdpa
// attention, the model's own shifted cross-entropy over the full
// vocabulary), peft LoRA, torch.autocast and fused AdamW allocate and what
// autograd saves for backward, then followed through the step's timeline
// (forward, the loss's backward, the layers' backward, the optimizer) to its
// peak. Times are the op models of package model (transformers' eager
// forward) priced by roofline at the device's measured ceilings. Multi-GPU
// sharding (ZeRO stages 1-3, FSDP) and tensor parallelism are arithmetic on
// the same counts, checked against the ZeRO paper and Korthikanti et al.
package train

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/model"
)

// Method is what the step trains.
type Method string

// Methods.
const (
	// Full trains every parameter.
	Full Method = "full"
	// LoRA freezes the base model (bf16) and trains peft's low-rank
	// adapters, which peft keeps in fp32 (autocast_adapter_dtype).
	LoRA Method = "lora"
)

// Precision is how weights, gradients and optimizer states are held.
type Precision string

// Precisions.
const (
	// BF16 keeps weights, gradients and AdamW states in bf16 (2+2+4 bytes
	// per parameter), as torchtune-style full fine-tuning does.
	BF16 Precision = "bf16"
	// Mixed keeps fp32 master weights under torch.autocast(bfloat16) with
	// fp32 AdamW (4+4+8 bytes per parameter, and bf16 copies of the
	// weights made per forward), as a Trainer with bf16=True does; ZeRO-1
	// (PyTorch's ZeroRedundancyOptimizer under DDP) shards only the fp32
	// AdamW states of that. Under ZeRO-2 and -3 it is DeepSpeed's and
	// FSDP's mixed precision: bf16 weights and gradients, fp32 master
	// weights in the optimizer (2+2+12, the ZeRO paper's 2Ψ+2Ψ+KΨ).
	Mixed Precision = "mixed"
)

// Optimizer is the optimizer the step runs.
type Optimizer string

// Optimizers.
const (
	// AdamW is torch.optim.AdamW(fused=True): two states per parameter.
	AdamW Optimizer = "adamw"
	// SGD is torch.optim.SGD without momentum: no state.
	SGD Optimizer = "sgd"
)

// Ckpt is activation checkpointing.
type Ckpt string

// Checkpointing modes.
const (
	// NoCkpt saves every activation backward needs.
	NoCkpt Ckpt = "none"
	// FullCkpt checkpoints every decoder layer (transformers'
	// gradient_checkpointing_enable(use_reentrant=False)): a layer keeps
	// only its input and is recomputed in backward.
	FullCkpt Ckpt = "full"
)

// Request is a training step's setup. Zero fields take the defaults
// (Defaults).
type Request struct {
	Method    Method    `json:"method"`
	Precision Precision `json:"precision"`
	Optimizer Optimizer `json:"optimizer"`
	Ckpt      Ckpt      `json:"ckpt"`
	// Batch is the micro-batch per GPU (sequences), Seq the tokens per
	// sequence.
	Batch int64 `json:"batch"`
	Seq   int64 `json:"seq"`
	// GPUs in all; TP of them split each layer (tensor parallel), the rest
	// are data parallel (GPUs / TP ranks).
	GPUs int64 `json:"gpus"`
	TP   int64 `json:"tp"`
	// ZeRO is the sharding stage over the data-parallel ranks: 0 none
	// (DDP), 1 optimizer states, 2 and gradients, 3 and parameters (FSDP
	// FULL_SHARD).
	ZeRO int64 `json:"zero"`
	// BucketView is DDP's gradient_as_bucket_view (ZeRO 0 and 1 on
	// several data-parallel GPUs): the gradients are views of the
	// all-reduce buckets instead of tensors of their own.
	BucketView bool `json:"bucket_view,omitempty"`
	// LoRA's rank, alpha and target projections (method lora).
	LoRARank    int64    `json:"lora_rank,omitempty"`
	LoRAAlpha   int64    `json:"lora_alpha,omitempty"`
	LoRATargets []string `json:"lora_targets,omitempty"`
}

// Defaults: full bf16 AdamW, no checkpointing, batch 1 of 2048 tokens, one
// GPU; LoRA rank 16, alpha 32 on every linear projection.
const (
	DefaultBatch = 1
	DefaultSeq   = 2048
	DefaultRank  = 16
	DefaultAlpha = 32
)

// The ranges a request's sizes take (Validate), flags and batch cells
// alike.
const (
	MaxSequences = 1 << 16
	MinSeq       = 2
	MaxSeq       = 1 << 22
	MaxGPUs      = 1 << 16
	MaxTP        = 64
	MaxRank      = 1 << 14
)

// Projections are the linear layers of a dense decoder layer, by the names
// peft targets.
var Projections = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// Defaults fills unset fields.
func (r Request) Defaults() Request {
	if r.Method == "" {
		r.Method = Full
	}
	if r.Precision == "" {
		r.Precision = BF16
	}
	if r.Optimizer == "" {
		r.Optimizer = AdamW
	}
	if r.Ckpt == "" {
		r.Ckpt = NoCkpt
	}
	if r.Batch == 0 {
		r.Batch = DefaultBatch
	}
	if r.Seq == 0 {
		r.Seq = DefaultSeq
	}
	if r.GPUs == 0 {
		r.GPUs = 1
	}
	if r.TP == 0 {
		r.TP = 1
	}
	if r.Method == LoRA {
		if r.LoRARank == 0 {
			r.LoRARank = DefaultRank
		}
		if r.LoRAAlpha == 0 {
			r.LoRAAlpha = DefaultAlpha
		}
		if len(r.LoRATargets) == 0 {
			r.LoRATargets = []string{"all-linear"}
		}
	}
	return r
}

// ParseTargets reads peft's target_modules as people give them: all-linear
// (every projection of the decoder layers, not the LM head), or a comma
// list of projection names, with or without _proj (q,k,v,o,gate,up,down).
func ParseTargets(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if t == "all-linear" || t == "all" {
			return []string{"all-linear"}, nil
		}
		if !strings.HasSuffix(t, "_proj") {
			t += "_proj"
		}
		if !slices.Contains(Projections, t) {
			return nil, fmt.Errorf("LoRA target %q: expected all-linear or some of q,k,v,o,gate,up,down", t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no LoRA targets: give all-linear or some of q,k,v,o,gate,up,down")
	}
	return out, nil
}

// targeted reports whether LoRA adapts projection p.
func (r Request) targeted(p string) bool {
	return r.Method == LoRA && (slices.Contains(r.LoRATargets, "all-linear") || slices.Contains(r.LoRATargets, p))
}

// Tokens is the tokens one GPU's micro-batch holds.
func (r Request) Tokens() int64 { return r.Batch * r.Seq }

// DP is the data-parallel degree.
func (r Request) DP() int64 { return r.GPUs / r.TP }

// Validate checks the request on its own and against the model.
func (r Request) Validate(c model.Config) error {
	switch r.Method {
	case Full, LoRA:
	default:
		return fmt.Errorf("method %q: expected full or lora", r.Method)
	}
	switch r.Precision {
	case BF16, Mixed:
	default:
		return fmt.Errorf("precision %q: expected bf16 or mixed", r.Precision)
	}
	if r.Method == LoRA && r.Precision == Mixed {
		return fmt.Errorf("precision mixed applies to full fine-tuning; LoRA keeps the base in bf16 and its adapters in fp32 (use --precision bf16)")
	}
	switch r.Optimizer {
	case AdamW, SGD:
	default:
		return fmt.Errorf("optimizer %q: expected adamw or sgd", r.Optimizer)
	}
	switch r.Ckpt {
	case NoCkpt, FullCkpt:
	default:
		return fmt.Errorf("ckpt %q: expected none or full", r.Ckpt)
	}
	if r.Batch < 1 || r.Batch > MaxSequences || r.Seq < MinSeq || r.Seq > MaxSeq {
		return fmt.Errorf("batch %d, seq %d: expected a batch of 1 to %d sequences of %d to %d tokens", r.Batch, r.Seq, MaxSequences, MinSeq, MaxSeq)
	}
	if r.GPUs < 1 || r.GPUs > MaxGPUs {
		return fmt.Errorf("gpus %d: expected 1 to %d GPUs", r.GPUs, MaxGPUs)
	}
	if r.TP < 1 || r.TP > MaxTP || r.GPUs%r.TP != 0 {
		return fmt.Errorf("gpus %d, tp %d: expected tp (1 to %d) to divide the GPUs", r.GPUs, r.TP, MaxTP)
	}
	if r.ZeRO < 0 || r.ZeRO > 3 {
		return fmt.Errorf("zero %d: expected a stage 0, 1, 2 or 3", r.ZeRO)
	}
	if r.BucketView && (r.ZeRO > 1 || r.DP() < 2) {
		return fmt.Errorf("bucket view: DDP's gradient_as_bucket_view needs zero 0 or 1 over at least 2 data-parallel GPUs (gpus %d, tp %d, zero %d)", r.GPUs, r.TP, r.ZeRO)
	}
	if r.Method == LoRA && (r.LoRARank < 1 || r.LoRARank > MaxRank || r.LoRAAlpha < 1) {
		return fmt.Errorf("LoRA rank %d, alpha %d: expected a rank of 1 to %d and a positive alpha", r.LoRARank, r.LoRAAlpha, MaxRank)
	}
	if err := supports(c); err != nil {
		return err
	}
	if c.Heads%r.TP != 0 || c.Intermediate%r.TP != 0 {
		return fmt.Errorf("tp=%d does not divide the %d heads and %d MLP columns of %s", r.TP, c.Heads, c.Intermediate, c.Name)
	}
	return nil
}

// supports says why the training model cannot describe c, or nil: it
// counts what transformers' dense Llama-family decoders (llama, mistral,
// qwen2, qwen3) save for backward; other layouts save other tensors.
func supports(c model.Config) error {
	switch {
	case c.MLA() || c.Experts > 0:
		return fmt.Errorf("training %s (%s) is not modelled: the training model covers dense decoders (llama, mistral, qwen2, qwen3)", c.Name, map[bool]string{true: "MLA", false: "mixture of experts"}[c.MLA()])
	case c.Quantization != nil:
		// model prices such weights (or refuses them); training them is
		// another model (QLoRA's 4-bit base, fp8 training), not a bf16 one.
		return fmt.Errorf("training %s is not modelled: it ships %s weights (quantization_config), and the training model holds a bf16 or fp32 base (QLoRA's 4-bit base and fp8 training are not modelled); give the unquantized model's config.json", c.Name, c.Quantization)
	case c.FusedQKV || c.FusedGateUp || c.NormsPerLayer != 2 || c.Activation != "silu":
		return fmt.Errorf("training %s (model_type %s) is not modelled: its fused projections or extra norms save other tensors; the training model covers llama, mistral, qwen2 and qwen3", c.Name, c.ModelType)
	}
	return nil
}

// ParamCount is the model's parameters as the step holds them.
type ParamCount struct {
	// Total counts every parameter, adapters included; Trainable those the
	// optimizer updates (peft's trainable count for LoRA).
	Total     int64 `json:"params"`
	Trainable int64 `json:"trainable_params"`
	// Adapters are LoRA's parameters (0 for full fine-tuning).
	Adapters int64 `json:"adapter_params"`
	// Linear are the decoder layers' projection weights (what autocast
	// copies), LMHead the output projection's (shared with the
	// embedding when tied), Embedding the input table's.
	Linear    int64 `json:"linear_params"`
	LMHead    int64 `json:"lm_head_params"`
	Embedding int64 `json:"embedding_params"`
}

// projections lists the decoder layer's projections with their input and
// output widths (unsharded).
func projections(c model.Config) []struct {
	name    string
	in, out int64
} {
	hq, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	return []struct {
		name    string
		in, out int64
	}{
		{"q_proj", c.Hidden, hq}, {"k_proj", c.Hidden, kv}, {"v_proj", c.Hidden, kv}, {"o_proj", hq, c.Hidden},
		{"gate_proj", c.Hidden, c.Intermediate}, {"up_proj", c.Hidden, c.Intermediate}, {"down_proj", c.Intermediate, c.Hidden},
	}
}

// Count counts parameters: transformers' exact count (model.Params), and
// peft's adapters, r·(in+out) per targeted projection per layer.
func Count(c model.Config, r Request) ParamCount {
	p := c.Params()
	n := ParamCount{Total: p.Total, Embedding: p.Embedding, LMHead: p.Embedding}
	if !c.TiedEmbeddings {
		n.LMHead = p.LMHead
	}
	for _, x := range projections(c) {
		n.Linear += x.in * x.out
		if r.targeted(x.name) {
			n.Adapters += r.LoRARank * (x.in + x.out)
		}
	}
	n.Linear *= c.Layers
	n.Adapters *= c.Layers
	n.Total += n.Adapters
	n.Trainable = p.Total
	if r.Method == LoRA {
		n.Trainable = n.Adapters
	}
	return n
}
