package model

import (
	"slices"
	"strings"
	"testing"
)

// TestMLAOpList asserts the attention block DeepSeek-V3's layers run (its
// modeling code: q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
// kv_a_layernorm, rotary on the rope part, kv_b_proj in prefill; the
// absorbed q and v products in decode), with the counts its config gives
// (61 layers, the first 3 dense, first_k_dense_replace) and the shapes that
// set the step's bytes and FLOPs (hidden 7168, 128 heads over tp 8, q LoRA
// rank 1536, KV LoRA rank 512, nope 128 + rope 64, v 128). The attention
// itself is one mla op (its cache write counted inside it): expanded over
// per-head keys in prefill, absorbed over the latent in decode.
func TestMLAOpList(t *testing.T) {
	c := builtin(t, "deepseek-v3")
	const (
		tp, dense, moe        = 8, 3, 58
		hidden, heads         = 7168, 128 / tp
		qRank, kvRank         = 1536, 512
		nope, rope, vDim, tok = 128, 64, 128, 16
	)
	common := []string{"input_norm", "q_a_proj", "q_a_norm", "q_b_proj", "kv_a_proj", "kv_a_norm",
		"rotary_q_rotate", "rotary_q_mul_add", "rotary_k_rotate", "rotary_k_mul_add"}
	tail := []string{"o_proj", "attention_allreduce", "attention_residual", "post_attention_norm"}
	for _, tc := range []struct {
		phase Phase
		attn  []string // between the rotary embedding and o_proj
	}{
		{Prefill, []string{"kv_b_proj", "mla"}},
		{Decode, []string{"q_absorb", "mla", "v_absorb"}},
	} {
		t.Run(string(tc.phase), func(t *testing.T) {
			s := Shape{Phase: tc.phase, Batch: 1, Seq: tok, Ctx: 4096, TP: tp}
			if tc.phase == Decode {
				s.Seq = 1
			}
			got, err := c.Ops(s)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Concat(common, tc.attn, tail)
			for _, g := range []struct {
				label string
				n     int
			}{{"full attention, dense MLP", dense}, {"full attention, MoE", moe}} {
				var names []string
				byName := map[string]Op{}
				for _, o := range got {
					if name, ok := strings.CutSuffix(o.Name, " ["+g.label+"]"); ok {
						names = append(names, name)
						byName[name] = o
					}
				}
				if len(names) < len(want) || !slices.Equal(names[:len(want)], want) {
					t.Fatalf("%s layers' attention ops:\n  %v\nwant\n  %v", g.label, names, want)
				}
				for _, name := range want {
					per := 1
					switch {
					case strings.HasSuffix(name, "_rotate"):
						per = 2
					case strings.HasSuffix(name, "_mul_add"):
						per = 3
					}
					if o := byName[name]; o.Count != per*g.n {
						t.Errorf("%s [%s]: count %d, want %d (%d a layer × %d layers)", name, g.label, o.Count, per*g.n, per, g.n)
					}
				}
				op := func(name string) Op { return byName[name] }
				for _, sh := range []struct {
					name      string
					got, want int64
				}{
					{"q_a_proj N", op("q_a_proj").Op.N, qRank},
					{"q_a_proj K", op("q_a_proj").Op.K, hidden},
					{"q_b_proj N", op("q_b_proj").Op.N, heads * (nope + rope)},
					{"kv_a_proj N", op("kv_a_proj").Op.N, kvRank + rope},
					{"o_proj K", op("o_proj").Op.K, heads * vDim},
				} {
					if sh.got != sh.want {
						t.Errorf("%s [%s] = %d, want %d", sh.name, g.label, sh.got, sh.want)
					}
				}
				a := op("mla").Op
				wantKV, wantDim := int64(heads), int64(nope+rope) // prefill: per-head keys from kv_b_proj
				if tc.phase == Decode {
					wantKV, wantDim = 1, kvRank+rope // decode: the cached latent, one shared head
				}
				if sh := a.MLAShape(); a.Heads != heads || sh.KVHeads != wantKV || sh.QK != wantDim || a.KVLoRA != kvRank || a.Rope != rope {
					t.Errorf("mla [%s]: %d heads over %d KV heads of dimension %d (latent %d, rope %d), want %d over %d of %d", g.label, a.Heads, sh.KVHeads, sh.QK, a.KVLoRA, a.Rope, heads, wantKV, wantDim)
				}
			}
		})
	}
}
