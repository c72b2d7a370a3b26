package model

import (
	"math"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

// TestPublishedSizes: total parameters within 2% of the sizes the models'
// publishers state (DeepSeek-V3 671 B, gpt-oss-120b 116.8 B and
// gpt-oss-20b 20.9 B in OpenAI's model card, Qwen3-235B-A22B 235 B,
// MiniMax-M2.5 230 B, GLM-5 744 B, Qwen3.5-397B-A17B 397 B with its
// vision tower; Kimi-K2.5's "1 T" is rounded and left out).
func TestPublishedSizes(t *testing.T) {
	for name, want := range map[string]float64{
		"deepseek-v3": 671e9, "deepseek-r1": 671e9, "gpt-oss-120b": 116.8e9, "gpt-oss-20b": 20.9e9,
		"qwen3-235b-a22b-fp8": 235e9, "minimax-m2.5": 230e9, "glm-5": 744e9, "qwen3.5-397b-a17b": 397e9,
	} {
		c, err := LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		got := float64(c.Params().Total)
		if math.Abs(got-want)/want > 0.02 {
			t.Errorf("%s: %.4g parameters, published %.4g (more than 2%% apart)", name, got, want)
		}
	}
}

// TestPeerConfigsOnB200: every config of the peer's serving sample (the
// built-ins copied from it) answers on 8 B200s with memory and both times.
func TestPeerConfigsOnB200(t *testing.T) {
	d, err := devices.Lookup("B200")
	if err != nil {
		t.Fatal(err)
	}
	m, err := roofline.New(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"minimax-m2.5", "qwen3-235b-a22b-fp8", "qwen3-32b-fp8", "qwen3-32b", "qwen3.5-397b-a17b", "deepseek-r1",
		"deepseek-v3", "llama-3.1-70b", "llama-3.1-8b", "kimi-k2.5", "gpt-oss-120b", "gpt-oss-20b", "glm-5"} {
		c, err := LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Serve(Request{TP: 8}, m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !r.Fits() || r.TPOT == nil || r.TTFT == nil || *r.TPOT <= 0 || *r.TTFT <= *r.TPOT {
			t.Errorf("%s on 8 B200s: fits %v, TTFT %v, TPOT %v", name, r.Fits(), r.TTFT, r.TPOT)
		}
	}
}

// opCounts is how many times each op of a step runs, by name, and the op.
func opCounts(t *testing.T, name string, s Shape) (map[string]int, map[string]ops.Op) {
	c, err := LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err = c.FillShape(s)
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.Ops(s)
	if err != nil {
		t.Fatal(err)
	}
	n, op := map[string]int{}, map[string]ops.Op{}
	for _, o := range list {
		n[o.Name] += o.Count
		op[o.Name] = o.Op
	}
	return n, op
}

// TestDeepSeekOps: DeepSeek-V3's steps are built from the mla and moe ops:
// 61 latent attentions (absorbed at decode over the cached latent, after the
// query absorption; expanded at prefill after kv_b_proj), 58 MoE layers of
// 256 experts (top-8, 2048 wide, split over TP) beside a shared expert, and
// 3 dense layers.
func TestDeepSeekOps(t *testing.T) {
	const moe, dense = " [full attention, MoE]", " [full attention, dense MLP]"
	n, op := opCounts(t, "deepseek-v3", Shape{Phase: Decode, Batch: 8, Ctx: 4096, TP: 8})
	for name, want := range map[string]int{
		"mla" + moe: 58, "mla" + dense: 3, "q_absorb" + moe: 58, "v_absorb" + moe: 58, "moe" + moe: 58,
		"shared_expert_down" + moe: 58, "mlp_down" + dense: 3, "kv_b_proj" + moe: 0, "kv_cache_write" + moe: 0, "attention" + moe: 0,
	} {
		if n[name] != want {
			t.Errorf("decode: %s runs %d times, want %d", name, n[name], want)
		}
	}
	m := op["mla"+moe]
	if m.Kind != ops.MLA || !m.Absorbs() || m.Heads != 16 || m.B != 8 || m.SeqQ != 1 || m.SeqK != 4097 || m.KVLoRA != 512 || m.Rope != 64 || m.VDim != 128 {
		t.Errorf("decode mla op: %s, want absorbed b=8 h=16 sq=1 sk=4097 over a 512+64 latent", m)
	}
	e := op["moe"+moe]
	if e.Kind != ops.MoE || e.Tokens != 8 || e.Experts != 256 || e.TopK != 8 || e.Inter != 2048 || e.TP != 8 || e.Hidden != 7168 {
		t.Errorf("decode moe op: %s", e)
	}
	n, op = opCounts(t, "deepseek-v3", Shape{Phase: Prefill, Batch: 1, Seq: 2048, TP: 8})
	if n["kv_b_proj"+moe] != 58 || n["mla"+moe] != 58 || n["q_absorb"+moe] != 0 {
		t.Errorf("prefill: kv_b_proj %d, mla %d, q_absorb %d; want 58, 58, 0", n["kv_b_proj"+moe], n["mla"+moe], n["q_absorb"+moe])
	}
	if m := op["mla"+moe]; m.Absorbs() || !m.Causal || m.SeqQ != 2048 || m.SeqK != 2048 {
		t.Errorf("prefill mla op: %s, want expanded causal over 2048 tokens", m)
	}
}

// TestGLM5SparseAttention: GLM-5's indexer scores all 8192 cached tokens
// and its latent attention reads the index_topk 2048 it selects.
func TestGLM5SparseAttention(t *testing.T) {
	const moe = " [full attention, MoE]"
	n, op := opCounts(t, "glm-5", Shape{Phase: Decode, Batch: 4, Ctx: 8191, TP: 8})
	if n["indexer_scores"+moe] != 75 || n["mla"+moe] != 75 {
		t.Errorf("indexer_scores %d, mla %d in MoE layers; want 75 each", n["indexer_scores"+moe], n["mla"+moe])
	}
	if s := op["indexer_scores"+moe]; s.N != 8192 || s.M != 32 || s.K != 128 {
		t.Errorf("indexer scores %s, want 32 heads × 8192 keys × 128", s)
	}
	if m := op["mla"+moe]; m.SeqK != 2048 || m.Heads != 8 || m.Nope != 192 || m.VDim != 256 {
		t.Errorf("mla %s, want 2048 selected keys, 8 heads per GPU, nope 192, v 256", m)
	}
}

// TestGptOss: gpt-oss-120b alternates 128-token sliding windows with full
// attention, ships MXFP4 experts (4.25 bits) beside bf16 attention, and so
// fits one 80 GB GPU as OpenAI states; in bf16 it would not.
func TestGptOss(t *testing.T) {
	c, err := LoadBuiltin("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	sl := 0
	for _, s := range c.Sliding {
		if s {
			sl++
		}
	}
	if sl != 18 || c.SlidingWindow != 128 || !c.Sinks {
		t.Errorf("%d sliding layers of %d, sinks %v; want 18 of 128, sinks", sl, c.SlidingWindow, c.Sinks)
	}
	d, err := devices.Lookup("H100 SXM")
	if err != nil {
		t.Fatal(err)
	}
	mem, err := c.Memory(Shape{Phase: Decode, Ctx: 8192}, d)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.FillShape(Shape{})
	if s.ExpertWeights != MXFP4 || s.Weights != "bf16" || !mem.Fits {
		t.Errorf("experts %s, other weights %s, fits one H100 %v (%.1f GiB)", s.ExpertWeights, s.Weights, mem.Fits, mem.Total/(1<<30))
	}
	mem, err = c.Memory(Shape{Phase: Decode, Ctx: 8192, Weights: "bf16"}, d)
	if err != nil || mem.Fits {
		t.Errorf("all-bf16 gpt-oss-120b fits one H100: %v %v", mem.Fits, err)
	}
}

// TestQwen35Hybrid: Qwen3.5's 45 gated delta-net layers keep a fixed
// state per sequence, so only its 15 full-attention layers' cache grows
// with the context; a multimodal config answers for its text_config.
func TestQwen35Hybrid(t *testing.T) {
	c, err := LoadBuiltin("qwen3.5-397b-a17b")
	if err != nil {
		t.Fatal(err)
	}
	lin := 0
	for i := range int(c.Layers) {
		if c.LinearAttention(i) {
			lin++
		}
	}
	if lin != 45 || c.TextConfig != "qwen3_5_moe_text" || c.ModelType != "qwen3_5_moe" {
		t.Errorf("%d linear layers, text_config %q, model_type %s", lin, c.TextConfig, c.ModelType)
	}
	d, _ := devices.Lookup("B200")
	m1, err := c.Memory(Shape{Phase: Decode, Ctx: 1000, TP: 8}, d)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := c.Memory(Shape{Phase: Decode, Ctx: 2000, TP: 8}, d)
	// 15 layers × 2 KV heads / 8 GPUs (one each, replicated) × 256 × 2 bytes × 2 (K and V)
	perToken := 15.0 * 1 * 256 * 2 * 2
	if got := m2.KV - m1.KV; got != 1000*perToken || m1.KVPerToken != perToken {
		t.Errorf("KV grows %.0f bytes for 1000 tokens (per token %.0f); want %.0f", got, m1.KVPerToken, 1000*perToken)
	}
	n, _ := opCounts(t, "qwen3.5-397b-a17b", Shape{Phase: Decode, Batch: 2, Ctx: 1024, TP: 8})
	if n["delta_rule [linear attention, MoE]"] != 45 || n["attention [full attention, MoE]"] != 15 || n["moe [linear attention, MoE]"] != 45 {
		t.Errorf("delta rules %d, attentions %d, MoE in linear layers %d", n["delta_rule [linear attention, MoE]"], n["attention [full attention, MoE]"], n["moe [linear attention, MoE]"])
	}
	k, err := LoadBuiltin("kimi-k2.5")
	if err != nil || k.TextConfig != "kimi_k2" || !k.MLA() || k.Experts != 384 {
		t.Errorf("kimi-k2.5: %v text_config %q MLA %v experts %d", err, k.TextConfig, k.MLA(), k.Experts)
	}
}

// TestExpertParallel: with ep=8 each of DeepSeek-V3's MoE layers sends the
// step's tokens to their experts' GPUs and back (two all-to-alls over the 8
// GPUs, each token to the 5.25 GPUs its 8 of 256 experts fall on, uniform
// routing: 8·(1−(7/8)^8)), computes a 1/8 share of the routed rows of all 8 data-parallel
// groups' tokens with whole experts, and each GPU holds an eighth of the
// experts; shapes expert parallelism cannot split are refused.
func TestExpertParallel(t *testing.T) {
	const moe = " [full attention, MoE]"
	s := Shape{Phase: Decode, Batch: 32, Ctx: 4096, TP: 1, EP: 8}
	n, op := opCounts(t, "deepseek-v3", s)
	if n["moe_dispatch"+moe] != 58 || n["moe_combine"+moe] != 58 || n["moe"+moe] != 58 {
		t.Errorf("dispatch %d, combine %d, moe %d; want 58 each", n["moe_dispatch"+moe], n["moe_combine"+moe], n["moe"+moe])
	}
	if a, want := op["moe_dispatch"+moe], 32*5.251*7168; a.Kind != ops.AllToAll || a.Ranks != 8 || math.Abs(float64(a.Elems)-want) > 1e-3*want {
		t.Errorf("dispatch: %s, want alltoall n=%.0f ranks=8", a, want)
	}
	if e := op["moe"+moe]; e.Tokens != 8*32 || e.EP != 8 || e.TP != 1 || e.LocalExperts() != 32 {
		t.Errorf("moe: %s, want 256 tokens over ep=8 (32 local experts), tp=1", e)
	}
	c, err := LoadBuiltin("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	d, err := devices.Lookup("H200 SXM")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := c.Memory(s, d)
	if err != nil {
		t.Fatal(err)
	}
	s1 := s
	s1.EP = 1
	one, err := c.Memory(s1, d)
	if err != nil {
		t.Fatal(err)
	}
	size := 1.0 // DeepSeek-V3 ships fp8 experts
	if got, want := one.Weights-ep.Weights, 7.0/8*float64(one.Params.Experts)*size; math.Abs(got-want) > 1 {
		t.Errorf("ep=8 holds %.4g fewer bytes of weights than ep=1, want 7/8 of the experts' %.4g", got, want)
	}
	rm, err := roofline.New(d)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Analyze(s, rm)
	if err != nil {
		t.Fatal(err)
	}
	if r.Time[Comm] <= 0 {
		t.Errorf("ep=8 decode: communication %g s, want the all-to-alls' time", r.Time[Comm])
	}
	// The general layout: within one attention group (tp 8 over 8
	// whole-expert GPUs) every GPU has the group's tokens and no
	// all-to-all runs; experts split 2 ways over 4 EP groups serve 4
	// groups of tp 2, each token sent to the 2 GPUs of each of the
	// 4·(1−(3/4)^8) EP groups its 8 experts fall in.
	for _, x := range []struct {
		s                   Shape
		tokens, tp, a2a     int64
		dispatchElems, gpus float64
	}{
		{s: Shape{Phase: Decode, Batch: 32, Ctx: 4096, TP: 8, EP: 8}, tokens: 32, tp: 1, gpus: 8},
		{s: Shape{Phase: Decode, Batch: 32, Ctx: 4096, TP: 2, EP: 4, MoETP: 2}, tokens: 4 * 32, tp: 2, a2a: 8,
			dispatchElems: 16 * 3.5995 * 2 * 7168, gpus: 8},
	} {
		n, op := opCounts(t, "deepseek-v3", x.s)
		e := op["moe"+moe]
		if e.Tokens != x.tokens || e.TP != x.tp || e.EP != x.s.EP {
			t.Errorf("tp %d ep %d moe-tp %d: %s, want %d tokens, tp %d", x.s.TP, x.s.EP, x.s.MoETP, e, x.tokens, x.tp)
		}
		a := op["moe_dispatch"+moe]
		if x.a2a == 0 && n["moe_dispatch"+moe] != 0 || x.a2a > 0 && (a.Ranks != x.a2a || math.Abs(float64(a.Elems)-x.dispatchElems) > 1e-4*x.dispatchElems) {
			t.Errorf("tp %d ep %d moe-tp %d: %d dispatches %s, want %d ranks, %.0f elements", x.s.TP, x.s.EP, x.s.MoETP, n["moe_dispatch"+moe], a, x.a2a, x.dispatchElems)
		}
		m, err := c.Memory(x.s, d)
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(m.Params.Experts) * size / x.gpus; math.Abs(m.Experts-want) > 1 {
			t.Errorf("tp %d ep %d moe-tp %d: experts %.4g bytes a GPU, want 1/%g of them, %.4g", x.s.TP, x.s.EP, x.s.MoETP, m.Experts, x.gpus, want)
		}
	}
	for _, bad := range []Shape{
		{Phase: Decode, Batch: 1, TP: 1, EP: 3},
		{Phase: Decode, Batch: 1, TP: 2, EP: 4 + 1},
		{Phase: Decode, Batch: 1, TP: 8, EP: 2, MoETP: 2},
	} {
		if _, err := c.Memory(bad, d); err == nil {
			t.Errorf("tp=%d ep=%d: accepted", bad.TP, bad.EP)
		}
	}
	llama, err := LoadBuiltin("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llama.Memory(Shape{Phase: Decode, Batch: 1, EP: 8}, d); err == nil || !strings.Contains(err.Error(), "routed experts") {
		t.Errorf("ep=8 on a dense model: %v, want refused", err)
	}
}
