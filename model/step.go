package model

import (
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// Category groups the ops of a step by what their time is spent on.
type Category string

// Categories of step time.
const (
	// Weights: linear layers, whose time is reading weights when
	// memory-bound and their FLOPs otherwise.
	Weights Category = "weights"
	// KVCache: attention and the cache writes.
	KVCache Category = "kv_cache"
	// Elementwise: norms, activations, rotary, residual adds, embedding.
	Elementwise Category = "elementwise"
	// Comm: tensor-parallel all-reduces.
	Comm Category = "communication"
	// Launches: the fixed cost of every kernel.
	Launches Category = "launches"
)

// Op is one op of a step: how many times it runs in the step (its count
// over all layers) and what its time counts as.
type Op struct {
	ops.Entry
	Category Category `json:"category"`
}

// layerGroup is a set of identical layers: sliding or full attention, dense
// or MoE MLP.
type layerGroup struct {
	sliding, moe bool
	n            int
}

func (c Config) groups() []layerGroup {
	var g []layerGroup
	for i := range int(c.Layers) {
		sl, moe := c.Sliding[i], c.MoE(i)
		found := false
		for j := range g {
			if g[j].sliding == sl && g[j].moe == moe {
				g[j].n++
				found = true
			}
		}
		if !found {
			g = append(g, layerGroup{sl, moe, 1})
		}
	}
	return g
}

// Ops lists the ops of one forward step of shape s on one GPU: per layer
// (grouped by kind of layer, each op's count the number of such layers times
// its per-layer count), then the embedding, final norm and LM head on each
// sequence's last token. Attention is flash attention over the KV heads
// (grouped-query, no repeated heads); rotary embedding is the rotate-half
// form of transformers and the reference decoder: five elementwise kernels
// per tensor (negate, concatenate, two multiplies, add).
func (c Config) Ops(s Shape) ([]Op, error) {
	s = s.Defaults()
	if err := s.validate(c); err != nil {
		return nil, err
	}
	if s.Engine == Eager {
		if err := eagerSupports(c); err != nil {
			return nil, err
		}
	}
	b := builder{c: c, s: s, act: s.Activations, w: s.compute()}
	ctx, t := s.tokens()
	b.t = t
	groups := c.groups()
	b.out = make([]Op, 0, 32*len(groups))
	for _, g := range groups {
		b.n = g.n
		suffix := ""
		if len(groups) > 1 {
			suffix = fmt.Sprintf(" [%s]", g.label())
		}
		b.suffix = suffix
		b.attention(g.sliding, ctx)
		if g.moe {
			b.moe()
		} else {
			b.mlp("mlp", c.Intermediate)
		}
	}
	b.n, b.suffix = 1, ""
	b.add("embedding", Elementwise, 1, ops.Op{Kind: ops.Copy, DType: b.act, Elems: t * c.Hidden})
	if s.Engine == Eager {
		// Positions, cache positions and the rotary table (arange,
		// compare, an outer product, cat, cos, sin, scaling, casts): 17
		// small kernels in transformers 5.17's trace of Llama-3.2-1B.
		b.add("positions_rotary_table", Elementwise, 17, ops.Op{Kind: ops.Unary, DType: devices.FP32, Elems: t * c.HeadDim})
	}
	b.norm("final_norm", s.Batch, c.Hidden)
	// The LM head (like the embedding and routers) stays in the activation
	// type whatever the linear layers' weight type.
	b.add("lm_head", Weights, 1, ops.Op{Kind: ops.Linear, DType: b.act, Out: b.act, M: s.Batch, N: c.Vocab / s.TP, K: c.Hidden, Batch: 1})
	if s.Engine == Eager {
		b.add("step_end", Elementwise, 1, ops.Op{Kind: ops.Unary, DType: b.act, Elems: s.Batch})
	}
	return b.out, nil
}

func (g layerGroup) label() string {
	a, m := "full attention", "dense MLP"
	if g.sliding {
		a = "sliding window"
	}
	if g.moe {
		m = "MoE"
	}
	return a + ", " + m
}

type builder struct {
	c      Config
	s      Shape
	act, w devices.DType
	t      int64 // tokens computed
	n      int   // layers in the current group
	suffix string
	out    []Op
}

func (b *builder) add(name string, cat Category, per int, op ops.Op) {
	if op.Out == "" {
		op.Out = op.DType
	}
	b.out = append(b.out, Op{Entry: ops.Entry{Name: name + b.suffix, Op: op, Count: per * b.n}, Category: cat})
}

// linear is a linear layer in the compute type, writing the activation type.
func (b *builder) linear(m, n, k int64, bias bool) ops.Op {
	return ops.Op{Kind: ops.Linear, DType: b.w, Out: b.act, Weight: b.weight(), M: m, N: n, K: k, Batch: 1, Bias: bias}
}

// weight is the storage type of quantized-only weights: int4 weights are
// read as 4-bit values (their group scales, 1.6% more, are left out of the
// op's bytes); other weight types are the compute type.
func (b *builder) weight() devices.DType {
	if b.s.Weights == Int4 {
		return devices.FP4
	}
	return ""
}

// norm is an RMSNorm: one kernel, or transformers' eight in eager.
func (b *builder) norm(name string, rows, cols int64) {
	if b.s.Engine == Eager {
		b.hfNorm(name, rows, cols)
		return
	}
	b.add(name, Elementwise, 1, ops.Op{Kind: ops.RMSNorm, DType: b.act, Rows: rows, Cols: cols})
}

// rotary is the rotate-half embedding of elems elements: negate and
// concatenate the halves (two copies), two multiplies and an add.
func (b *builder) rotary(name string, elems int64) {
	b.add(name+"_rotate", Elementwise, 2, ops.Op{Kind: ops.Copy, DType: b.act, Elems: elems})
	b.add(name+"_mul_add", Elementwise, 3, ops.Op{Kind: ops.Mul, DType: b.act, Elems: elems})
}

func (b *builder) allReduce(name string) {
	if b.s.TP > 1 {
		b.add(name, Comm, 1, ops.Op{Kind: ops.AllReduce, DType: b.act, Elems: b.t * b.c.Hidden, Ranks: b.s.TP})
	}
}

// attention adds one layer's attention block: norm, projections, rotary,
// cache write, flash attention, output projection, all-reduce, residual.
func (b *builder) attention(sliding bool, ctx int64) {
	c, s, t := b.c, b.s, b.t
	tp := s.TP
	h, kv, hd := c.Heads/tp, kvHeads(c, tp), c.HeadDim
	b.norm("input_norm", t, c.Hidden)
	keys := ctx
	if sliding && c.SlidingWindow < keys {
		keys = c.SlidingWindow
	}
	if c.MLA() {
		b.mla(keys)
	} else {
		if c.FusedQKV {
			b.add("qkv_proj", Weights, 1, b.linear(t, (h+2*kv)*hd, c.Hidden, c.QKVBias))
		} else {
			b.add("q_proj", Weights, 1, b.linear(t, h*hd, c.Hidden, c.QKVBias))
			b.add("k_proj", Weights, 1, b.linear(t, kv*hd, c.Hidden, c.QKVBias))
			b.add("v_proj", Weights, 1, b.linear(t, kv*hd, c.Hidden, c.QKVBias))
		}
		if c.QKNorm {
			b.norm("q_norm", t*h, hd)
			b.norm("k_norm", t*kv, hd)
		}
		b.rotary("rotary_q", t*h*hd)
		b.rotary("rotary_k", t*kv*hd)
		if s.Engine == Eager && s.Phase == Decode {
			b.eagerDecodeAttention(h, kv, hd, keys)
		} else {
			b.add("kv_cache_write", KVCache, 2, ops.Op{Kind: ops.Copy, DType: s.KV, Elems: t * kv * hd})
			b.add("attention", KVCache, 1, b.flash(h, kv, hd, keys))
		}
		b.add("o_proj", Weights, 1, b.linear(t, c.Hidden, h*hd, c.OBias))
	}
	b.allReduce("attention_allreduce")
	if c.NormsPerLayer == 4 {
		b.norm("post_attention_norm", t, c.Hidden)
	}
	b.add("attention_residual", Elementwise, 1, ops.Op{Kind: ops.Add, DType: b.act, Elems: t * c.Hidden})
}

// flash is the attention of this step: in prefill a causal pass over the
// prompt (a prompt longer than the window attends window-long blocks), in
// decode one query per head against the cached keys, scheduled as the
// shape's AttentionImpl says (split-KV unless told otherwise).
func (b *builder) flash(h, kv, d, keys int64) ops.Op {
	s := b.s
	op := ops.Op{Kind: ops.Attention, DType: s.KV, B: s.Batch, Heads: h, KVHeads: kv, HeadDim: d, SeqQ: 1, SeqK: keys, Impl: s.AttentionImpl}
	if s.Phase == Prefill {
		op.Causal, op.SeqQ, op.SeqK, op.Impl = true, s.Seq, s.Seq, ""
		if keys < s.Seq {
			// Each window-long block of queries sees its own keys and
			// the window before them.
			blocks := (s.Seq + keys - 1) / keys
			op.B, op.SeqQ, op.SeqK = s.Batch*blocks, keys, 2*keys
		}
	}
	return op
}

// mla is multi-head latent attention. Prefill expands the latent into
// per-head keys and values and runs flash attention at head dimension
// nope+rope; decode absorbs the key and value up-projections into the query
// and output, attending over the cached latent directly (one shared KV head
// of dimension kv_lora_rank + rope).
func (b *builder) mla(keys int64) {
	c, s, t := b.c, b.s, b.t
	h := c.Heads / s.TP
	qk := c.QKNopeDim + c.QKRopeDim
	if c.QLoRARank > 0 {
		b.add("q_a_proj", Weights, 1, b.linear(t, c.QLoRARank, c.Hidden, false))
		b.norm("q_a_norm", t, c.QLoRARank)
		b.add("q_b_proj", Weights, 1, b.linear(t, h*qk, c.QLoRARank, false))
	} else {
		b.add("q_proj", Weights, 1, b.linear(t, h*qk, c.Hidden, false))
	}
	b.add("kv_a_proj", Weights, 1, b.linear(t, c.KVLoRARank+c.QKRopeDim, c.Hidden, false))
	b.norm("kv_a_norm", t, c.KVLoRARank)
	b.rotary("rotary_q", t*h*c.QKRopeDim)
	b.rotary("rotary_k", t*c.QKRopeDim)
	b.add("kv_cache_write", KVCache, 1, ops.Op{Kind: ops.Copy, DType: s.KV, Elems: t * (c.KVLoRARank + c.QKRopeDim)})
	if s.Phase == Prefill {
		b.add("kv_b_proj", Weights, 1, b.linear(t, h*(c.QKNopeDim+c.VHeadDim), c.KVLoRARank, false))
		b.add("attention", KVCache, 1, b.flash(h, h, qk, keys))
	} else {
		lat := c.KVLoRARank
		b.add("q_absorb", Weights, 1, ops.Op{Kind: ops.Matmul, DType: b.w, Out: b.act, Weight: b.weight(), Batch: h, M: t, N: lat, K: c.QKNopeDim})
		b.add("attention", KVCache, 1, b.flash(h, 1, lat+c.QKRopeDim, keys))
		b.add("v_absorb", Weights, 1, ops.Op{Kind: ops.Matmul, DType: b.w, Out: b.act, Weight: b.weight(), Batch: h, M: t, N: c.VHeadDim, K: lat})
	}
	b.add("o_proj", Weights, 1, b.linear(t, c.Hidden, h*c.VHeadDim, false))
}

// mlp adds a gated MLP of width i (split over TP), its all-reduce and
// residual add.
func (b *builder) mlp(name string, i int64) {
	b.preMLP()
	b.gated(name, b.t, i/b.s.TP, 1)
	b.postMLP()
}

func (b *builder) preMLP() { b.norm("post_attention_norm", b.t, b.c.Hidden) }

func (b *builder) postMLP() {
	b.allReduce("mlp_allreduce")
	if b.c.NormsPerLayer == 4 {
		b.norm("post_mlp_norm", b.t, b.c.Hidden)
	}
	b.add("mlp_residual", Elementwise, 1, ops.Op{Kind: ops.Add, DType: b.act, Elems: b.t * b.c.Hidden})
}

// gated is gate and up projections, the activation, their product and the
// down projection, for t tokens per expert over experts experts (a grouped
// GEMM when experts > 1).
func (b *builder) gated(name string, t, i, experts int64) {
	c := b.c
	proj := func(n, k int64) ops.Op {
		if experts == 1 {
			return b.linear(t, n, k, c.MLPBias)
		}
		return ops.Op{Kind: ops.Matmul, DType: b.w, Out: b.act, Weight: b.weight(), Batch: experts, M: t, N: n, K: k}
	}
	if c.FusedGateUp {
		b.add(name+"_gate_up", Weights, 1, proj(2*i, c.Hidden))
	} else {
		b.add(name+"_gate", Weights, 1, proj(i, c.Hidden))
		b.add(name+"_up", Weights, 1, proj(i, c.Hidden))
	}
	act := ops.Op{Kind: ops.SiLU, DType: b.act, Elems: experts * t * i}
	if c.Activation == "gelu_tanh" {
		act.Kind, act.Tanh = ops.GELU, true
	}
	b.add(name+"_act", Elementwise, 1, act)
	b.add(name+"_mul", Elementwise, 1, ops.Op{Kind: ops.Mul, DType: b.act, Elems: experts * t * i})
	b.add(name+"_down", Weights, 1, proj(c.Hidden, i))
}

// moe routes t tokens to TopK of the experts each. With uniform routing the
// step touches E·(1−(1−k/E)^t) distinct experts, whose weights it reads; each
// runs its share of the t·k routed tokens (a grouped GEMM). Shared experts
// run every token.
func (b *builder) moe() {
	c, t := b.c, b.t
	b.preMLP()
	b.add("router", Weights, 1, ops.Op{Kind: ops.Linear, DType: b.act, Out: b.act, M: t, N: c.Experts, K: c.Hidden, Batch: 1})
	b.add("router_softmax", Elementwise, 1, ops.Op{Kind: ops.Softmax, DType: b.act, Rows: t, Cols: c.Experts})
	e := float64(c.Experts)
	touched := int64(math.Ceil(e * (1 - math.Pow(1-float64(c.TopK)/e, float64(t)))))
	touched = min(max(touched, 1), c.Experts)
	per := (t*c.TopK + touched - 1) / touched
	b.gated("experts", per, c.MoEIntermediate/b.s.TP, touched)
	if c.SharedExperts > 0 {
		b.gated("shared_expert", t, c.SharedExperts*c.MoEIntermediate/b.s.TP, 1)
	}
	b.postMLP()
}
