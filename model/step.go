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

// layerGroup is a set of identical layers: sliding, full or linear
// attention, dense or MoE MLP.
type layerGroup struct {
	sliding, moe, linear bool
	n                    int
}

func (c Config) groups() []layerGroup {
	var g []layerGroup
	for i := range int(c.Layers) {
		sl, moe, lin := c.Sliding[i], c.MoE(i), c.LinearAttention(i)
		found := false
		for j := range g {
			if g[j].sliding == sl && g[j].moe == moe && g[j].linear == lin {
				g[j].n++
				found = true
			}
		}
		if !found {
			g = append(g, layerGroup{sl, moe, lin, 1})
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
		if g.linear {
			b.linearAttention()
		} else {
			b.attention(g.sliding, ctx)
		}
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
	if g.linear {
		a = "linear attention"
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
		qw := h * hd
		if c.AttnGate {
			qw *= 2 // q and the output gate
		}
		if c.FusedQKV {
			b.add("qkv_proj", Weights, 1, b.linear(t, (h+2*kv)*hd, c.Hidden, c.QKVBias))
		} else {
			b.add("q_proj", Weights, 1, b.linear(t, qw, c.Hidden, c.QKVBias))
			b.add("k_proj", Weights, 1, b.linear(t, kv*hd, c.Hidden, c.QKVBias))
			b.add("v_proj", Weights, 1, b.linear(t, kv*hd, c.Hidden, c.QKVBias))
		}
		switch {
		case c.QKNormFull:
			b.norm("q_norm", t, h*hd)
			b.norm("k_norm", t, kv*hd)
		case c.QKNorm:
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
		if c.AttnGate {
			b.add("attention_gate", Elementwise, 1, ops.Op{Kind: ops.Mul, DType: b.act, Elems: t * h * hd})
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

// mla is multi-head latent attention, its attention an mla op: prefill
// expands the latent into per-head keys and values (kv_b_proj) and attends
// over them; decode absorbs the key and value up-projections into the query
// (q_absorb) and output (v_absorb) and attends over the cached latent
// directly (FlashMLA's form). With DeepSeek sparse attention an indexer
// scores every cached token and each query attends to IndexTopK of them.
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
	if c.DSA() {
		b.indexer(keys)
		keys = min(keys, c.IndexTopK)
	}
	op := ops.Op{Kind: ops.MLA, DType: b.act, Out: b.act, KVType: s.KV, B: s.Batch, Heads: h, SeqQ: 1, SeqK: keys,
		KVLoRA: c.KVLoRARank, Rope: c.QKRopeDim, Nope: c.QKNopeDim, VDim: c.VHeadDim, QLoRA: max(c.QLoRARank, 1), Absorbed: true}
	if s.Phase == Prefill {
		b.add("kv_b_proj", Weights, 1, b.linear(t, h*(c.QKNopeDim+c.VHeadDim), c.KVLoRARank, false))
		op.SeqQ, op.SeqK, op.Causal, op.Absorbed = s.Seq, min(s.Seq, keys), s.Seq <= keys, false
		b.add("mla", KVCache, 1, op)
	} else {
		lat := c.KVLoRARank
		b.add("q_absorb", Weights, 1, ops.Op{Kind: ops.Matmul, DType: b.w, Out: b.act, Weight: b.weight(), Batch: h, M: t, N: lat, K: c.QKNopeDim})
		b.add("mla", KVCache, 1, op)
		b.add("v_absorb", Weights, 1, ops.Op{Kind: ops.Matmul, DType: b.w, Out: b.act, Weight: b.weight(), Batch: h, M: t, N: c.VHeadDim, K: lat})
	}
	b.add("o_proj", Weights, 1, b.linear(t, c.Hidden, h*c.VHeadDim, false))
}

// indexer is DeepSeek sparse attention's token selection: its query
// (wq_b, from the query latent), one key per token (wk, a LayerNorm) cached,
// per-head weights (weights_proj), the scores of every query against every
// cached key (a ReLU'd product summed over its heads: one GEMM, replicated on
// every TP rank) and the top-k of each row.
func (b *builder) indexer(keys int64) {
	c, s, t := b.c, b.s, b.t
	ih, id := c.IndexHeads, c.IndexHeadDim
	b.add("indexer_wq_b", Weights, 1, b.linear(t, ih*id, c.QLoRARank, false))
	b.add("indexer_wk", Weights, 1, b.linear(t, id, c.Hidden, false))
	b.add("indexer_k_norm", Elementwise, 1, ops.Op{Kind: ops.LayerNorm, DType: b.act, Rows: t, Cols: id})
	b.add("indexer_weights_proj", Weights, 1, b.linear(t, ih, c.Hidden, false))
	b.add("indexer_cache_write", KVCache, 1, ops.Op{Kind: ops.Copy, DType: s.KV, Elems: t * id})
	q := t / s.Batch // queries per sequence
	b.add("indexer_scores", KVCache, 1, ops.Op{Kind: ops.Matmul, DType: b.act, Out: b.act, Batch: s.Batch, M: q * ih, N: keys, K: id})
	b.add("indexer_topk", KVCache, 1, ops.Op{Kind: ops.Reduce, DType: b.act, Rows: t, Cols: keys})
}

// linearAttention is a gated delta-net layer (Qwen3.5): the input
// projections (q, k, v; the output gate z; the decay and write strengths),
// the depthwise causal convolution, the delta rule and the gated norm and
// output projection. Prefill runs the chunked delta rule (chunks of 64
// tokens per value head: the chunk's own products and its state update, as
// GEMMs); decode reads and writes each value head's fp32 state once.
func (b *builder) linearAttention() {
	c, s, t := b.c, b.s, b.t
	tp := s.TP
	nk, nv, dk, dv := c.LinearKeyHeads/tp, c.LinearValueHeads/tp, c.LinearKeyDim, c.LinearValueDim
	conv := 2*nk*dk + nv*dv
	b.norm("input_norm", t, c.Hidden)
	b.add("in_proj_qkv", Weights, 1, b.linear(t, conv, c.Hidden, false))
	b.add("in_proj_z", Weights, 1, b.linear(t, nv*dv, c.Hidden, false))
	b.add("in_proj_ba", Weights, 1, b.linear(t, 2*nv, c.Hidden, false))
	b.add("conv1d", Elementwise, 1, ops.Op{Kind: ops.Mul, DType: b.act, Elems: t * conv})
	if s.Phase == Prefill {
		const chunk = 64
		chunks := (s.Seq + chunk - 1) / chunk
		b.add("delta_rule", KVCache, 1, ops.Op{Kind: ops.Matmul, DType: b.act, Out: b.act, Batch: s.Batch * nv * chunks, M: chunk, N: 2*chunk + 2*dv, K: dk})
	} else {
		b.add("delta_rule", KVCache, 1, ops.Op{Kind: ops.Copy, DType: devices.FP32, Elems: s.Batch * nv * dk * dv})
	}
	b.norm("gated_norm", t*nv, dv)
	b.add("gated_norm_gate", Elementwise, 1, ops.Op{Kind: ops.Mul, DType: b.act, Elems: t * nv * dv})
	b.add("out_proj", Weights, 1, b.linear(t, c.Hidden, nv*dv, false))
	b.allReduce("attention_allreduce")
	b.add("attention_residual", Elementwise, 1, ops.Op{Kind: ops.Add, DType: b.act, Elems: t * c.Hidden})
}

// mlp adds a gated MLP of width i (split over TP), its all-reduce and
// residual add.
func (b *builder) mlp(name string, i int64) {
	b.preMLP()
	b.gated(name, b.t, i/b.s.TP)
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
// down projection of t tokens through an MLP of width i.
func (b *builder) gated(name string, t, i int64) {
	c := b.c
	proj := func(n, k int64) ops.Op { return b.linear(t, n, k, c.MLPBias) }
	if c.FusedGateUp {
		b.add(name+"_gate_up", Weights, 1, proj(2*i, c.Hidden))
	} else {
		b.add(name+"_gate", Weights, 1, proj(i, c.Hidden))
		b.add(name+"_up", Weights, 1, proj(i, c.Hidden))
	}
	act := ops.Op{Kind: ops.SiLU, DType: b.act, Elems: t * i}
	if c.Activation == "gelu_tanh" {
		act.Kind, act.Tanh = ops.GELU, true
	}
	b.add(name+"_act", Elementwise, 1, act)
	b.add(name+"_mul", Elementwise, 1, ops.Op{Kind: ops.Mul, DType: b.act, Elems: t * i})
	b.add(name+"_down", Weights, 1, proj(c.Hidden, i))
}

// moe is the router's logits (a linear layer in the activation type, as
// engines keep it) and the routed experts as one moe op (top-k, grouped
// GEMMs over the experts the step's tokens hit, activation and combine),
// each token's experts drawn uniformly (E·(1−(1−k/E)^T) experts hit), laid
// out as Shape.EP and MoETP say: where the experts serve several attention
// groups the op computes all the groups' tokens, between a dispatch and a
// combine all-to-all over the experts' GPUs; within one group every GPU
// has the group's tokens and the MLP's all-reduce combines. Shared experts
// run every token as a dense MLP.
func (b *builder) moe() {
	c, s, t := b.c, b.s, b.t
	b.preMLP()
	b.add("router", Weights, 1, ops.Op{Kind: ops.Linear, DType: b.act, Out: b.act, M: t, N: c.Experts, K: c.Hidden, Batch: 1})
	moeTP, ep, groups := s.Experts()
	op := ops.Op{Kind: ops.MoE, DType: s.expertCompute(), Out: b.act, Tokens: t * groups, Hidden: c.Hidden, Inter: c.MoEIntermediate,
		TopK: c.TopK, Experts: c.Experts, TP: moeTP, EP: ep, Dist: ops.DistUniform}
	if w := s.ExpertWeights; w == Int4 || w == MXFP4 {
		op.Weight = devices.FP4
	}
	if groups > 1 {
		// Each GPU sends its 1/TP share of its group's tokens to every
		// GPU of each EP group that holds one of their k experts (the
		// expected distinct groups, ep·(1−(1−1/ep)^k), times the
		// expert's MoETP GPUs), and gets their rows back.
		e := float64(ep)
		hit := e * (1 - math.Pow(1-1/e, float64(c.TopK)))
		elems := float64(t) / float64(s.TP) * hit * float64(moeTP) * float64(c.Hidden)
		a2a := ops.Op{Kind: ops.AllToAll, DType: b.act, Elems: max(int64(math.Round(elems)), 1), Ranks: moeTP * ep}
		b.add("moe_dispatch", Comm, 1, a2a)
		b.add("moe", Weights, 1, op)
		b.add("moe_combine", Comm, 1, a2a)
	} else {
		b.add("moe", Weights, 1, op)
	}
	if c.SharedExperts > 0 {
		b.gated("shared_expert", t, c.sharedWidth()/s.TP)
	}
	b.postMLP()
}
