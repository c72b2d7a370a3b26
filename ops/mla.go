package ops

import (
	"fmt"
	"strings"
)

// MLA is multi-head latent attention (DeepSeek-V2/V3): B sequences of SeqQ
// queries over SeqK cached tokens, Heads query heads on this GPU. The cache
// holds one latent row per token, KVLoRA wide, and a Rope-wide rotary key.
//
// Expanded (prefill, the default with more than one query): the latent is
// projected into per-head keys (Nope + Rope wide) and values (VDim wide) by
// the model's kv_b projection, and attention runs over them as multi-head
// attention. Absorbed (decode, the default with one query; FlashMLA's
// form): the key and value projections are folded into the query and the
// output, so every head attends to the latent itself, keys KVLoRA + Rope
// wide and values KVLoRA wide, one shared KV head: each latent row is read
// once for all the heads of a sequence.
const MLA Kind = "mla"

// DeepSeek-V3's latent-attention geometry, the mla op's defaults.
const (
	MLAKVLoRA = 512
	MLARope   = 64
	MLANope   = 128
	MLAVDim   = 128
	MLAQLoRA  = 1536
)

// MLAShape is the attention an MLA op amounts to: query/key width QK,
// value width V, the KV heads (1 absorbed, Heads expanded) and the cache
// row's width as read (the latent and rotary key absorbed; per-head keys
// and values expanded).
type MLAShape struct {
	QK, V, KVHeads int64
}

// Absorbs reports whether the op runs in the absorbed form (a spec that
// names neither form absorbs with one query per sequence).
func (o Op) Absorbs() bool { return o.Absorbed }

// MLAShape is the attention geometry of the op's form.
func (o Op) MLAShape() MLAShape {
	if o.Absorbs() {
		return MLAShape{QK: o.KVLoRA + o.Rope, V: o.KVLoRA, KVHeads: 1}
	}
	return MLAShape{QK: o.Nope + o.Rope, V: o.VDim, KVHeads: o.Heads}
}

// mlaCost is the attention's FLOPs (QKᵀ and PV over the causal share of
// the scores) and ideal bytes: queries and outputs in the compute type, the
// cache in KVType (absorbed: one latent row per token read once; expanded:
// the per-head keys and values the projection wrote).
func (o Op) mlaCost(in float64) Cost {
	f := func(x int64) float64 { return float64(x) }
	g := o.MLAShape()
	kv := in
	if o.KVType != "" {
		kv = o.KVType.Size()
	}
	scores := f(o.B) * f(o.Heads) * f(o.SeqQ) * f(o.SeqK) * o.CausalFraction()
	var c Cost
	c.MatrixFLOPs = 2 * scores * f(g.QK+g.V)
	c.VectorFLOPs = softmaxFLOPs * scores
	c.Transcendentals = scores
	q := f(o.B) * f(o.Heads) * f(o.SeqQ)
	c.Bytes = q*f(g.QK)*in + q*f(g.V)*in
	if o.Absorbs() {
		c.Bytes += f(o.B) * f(o.SeqK) * f(g.QK) * kv
	} else {
		c.Bytes += f(o.B) * f(o.Heads) * f(o.SeqK) * f(g.QK+g.V) * kv
	}
	return c
}

// mlaDefaults fills DeepSeek-V3's geometry where the spec gave none.
func (o *Op) mlaDefaults() {
	for _, d := range []struct {
		p *int64
		v int64
	}{{&o.KVLoRA, MLAKVLoRA}, {&o.Rope, MLARope}, {&o.Nope, MLANope}, {&o.VDim, MLAVDim}, {&o.QLoRA, MLAQLoRA}} {
		if *d.p == 0 {
			*d.p = d.v
		}
	}
}

// mlaString writes the mla op's spec after its name.
func (o Op) mlaString(b *strings.Builder) {
	fmt.Fprintf(b, " b=%d h=%d sq=%d sk=%d", o.B, o.Heads, o.SeqQ, o.SeqK)
	for _, d := range []struct {
		k    string
		v, d int64
	}{{"kv_lora", o.KVLoRA, MLAKVLoRA}, {"rope", o.Rope, MLARope}, {"nope", o.Nope, MLANope}, {"v", o.VDim, MLAVDim}, {"q_lora", o.QLoRA, MLAQLoRA}} {
		if d.v != d.d {
			fmt.Fprintf(b, " %s=%d", d.k, d.v)
		}
	}
	if o.Causal {
		b.WriteString(" causal")
	}
	if o.Absorbed {
		b.WriteString(" absorbed")
	} else {
		b.WriteString(" expanded")
	}
	if o.Impl != "" {
		b.WriteString(" impl=" + o.Impl)
	}
}
