package model

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/units"
)

// Engine is the software that runs a step: which kernels it launches and
// how.
type Engine string

// Engines.
const (
	// Graph is a serving engine (vLLM, SGLang, TensorRT-LLM) or the lean
	// reference decoder: a decode step replayed as a CUDA graph (kernels
	// back to back, no CPU launch cost), split-KV decode attention over
	// the KV heads, FlashAttention-class prefill.
	Graph Engine = "graph"
	// Eager is Hugging Face transformers' eager forward with
	// attn_implementation="sdpa" and a StaticCache, as users run it: Python
	// launches every kernel; RMSNorm is eight PyTorch kernels; at decode the
	// KV heads are repeated before attention (a mask is present, so SDPA
	// gets no GQA) and a masked SDPA kernel gives each query head its own
	// CTA over the whole static cache.
	Eager Engine = "eager"
)

// Engines lists the engines, the default first.
var Engines = []Engine{Graph, Eager}

// ParseEngine reads an engine name.
func ParseEngine(s string) (Engine, error) {
	for _, e := range Engines {
		if strings.EqualFold(s, string(e)) {
			return e, nil
		}
	}
	return "", fmt.Errorf("engine %q: expected graph or eager", s)
}

// EagerCPUPerKernel is the host's time per kernel that transformers' eager
// decode launches from Python (module calls, the PyTorch dispatcher,
// cudaLaunchKernel): the median (nearest rank) of wall_ms / kernels over the
// decode rows of hf_bench_h100.csv whose GPU time is under half their wall
// time, where the CPU sets the pace (Llama-3.2-1B and Llama-3.1-8B,
// transformers 5.17.0, PyTorch 2.11.0, the ground truth's H100 host;
// testdata/hf_bench_h100.csv, TestEagerCPUPerKernel). A property of that
// host and software, not of the GPU.
const EagerCPUPerKernel = 21.16e-6

// Assumes says in one line what the engine's expected times assume.
func (e Engine) Assumes() string {
	if e == Eager {
		return fmt.Sprintf("Assumes transformers' eager forward (sdpa, StaticCache): Python launches every kernel (%s of CPU each, measured on the reference host), KV heads repeated before the masked decode attention; expected = GPU time (kernel durations summed), wall = the longer of that and the launches.",
			units.FormatDuration(EagerCPUPerKernel))
	}
	return "Assumes a serving engine: CUDA-graph decode (kernels back to back, no CPU launch cost), split-KV GQA decode attention, FlashAttention-class prefill; --engine eager prices transformers' eager path."
}

// eagerSupports says why the eager engine cannot model c, or nil.
func eagerSupports(c Config) error {
	if c.MLA() || c.Experts > 0 {
		return fmt.Errorf("--engine eager models transformers' dense decoders; %s has %s layers, whose eager path is not modelled (use --engine graph)", c.Name, map[bool]string{true: "MLA", false: "MoE"}[c.MLA()])
	}
	return nil
}

// hfNorm is transformers' RMSNorm as eager PyTorch runs it: upcast to
// fp32, square, mean, add ε, rsqrt, scale, cast back, multiply by the
// weight: eight kernels.
func (b *builder) hfNorm(name string, rows, cols int64) {
	n := rows * cols
	f32, act := devices.FP32, b.act
	b.add(name+"_to_fp32", Elementwise, 1, ops.Op{Kind: ops.Copy, DType: act, Out: f32, Elems: n})
	b.add(name+"_pow", Elementwise, 1, ops.Op{Kind: ops.Unary, DType: f32, Elems: n})
	b.add(name+"_mean", Elementwise, 1, ops.Op{Kind: ops.Reduce, DType: f32, Rows: rows, Cols: cols})
	b.add(name+"_add_eps", Elementwise, 1, ops.Op{Kind: ops.Unary, DType: f32, Elems: rows})
	b.add(name+"_rsqrt", Elementwise, 1, ops.Op{Kind: ops.Unary, DType: f32, Elems: rows})
	b.add(name+"_scale", Elementwise, 1, ops.Op{Kind: ops.Mul, DType: f32, Elems: n})
	b.add(name+"_to_act", Elementwise, 1, ops.Op{Kind: ops.Copy, DType: f32, Out: act, Elems: n})
	b.add(name+"_weight", Elementwise, 1, ops.Op{Kind: ops.Mul, DType: act, Elems: n})
}

// eagerDecodeAttention is transformers' decode attention over a
// StaticCache of keys slots: three small kernels of cache indexing, the
// two index_copy writes, K and V repeated to every query head (when there
// are fewer KV heads), the mask made additive (two fills and a where), and
// a masked SDPA kernel with one CTA per query head.
func (b *builder) eagerDecodeAttention(h, kv, d, keys int64) {
	s, t := b.s, b.t
	b.add("cache_index", Elementwise, 3, ops.Op{Kind: ops.Unary, DType: b.act, Elems: t})
	b.add("kv_cache_write", KVCache, 2, ops.Op{Kind: ops.Copy, DType: s.KV, Elems: t * kv * d})
	if h > kv {
		b.add("repeat_kv", KVCache, 2, ops.Op{Kind: ops.Copy, DType: s.KV, Elems: s.Batch * h * keys * d, Repeat: h / kv})
	}
	b.add("attention_mask", Elementwise, 3, ops.Op{Kind: ops.Unary, DType: b.act, Elems: s.Batch * keys})
	b.add("attention", KVCache, 1, ops.Op{Kind: ops.Attention, DType: s.KV, B: s.Batch, Heads: h, KVHeads: h, HeadDim: d, SeqQ: 1, SeqK: keys, Impl: ops.ImplHeads})
}
