package roofline

import (
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// mlaRows is the query rows of one absorbed-MLA CTA: FlashMLA packs 64 of a
// sequence's (query head, query) rows into a tile that shares every latent
// block it loads.
const mlaRows = 64

// mla prices latent attention. Expanded, it is flash attention over the
// per-head keys and values: one CTA per (sequence, head, 128 queries),
// sweeping key blocks of the causal share. Absorbed, a sequence's query
// heads share tiles of mlaRows rows, so the latent is read once per tile
// group; when those tiles are too few to fill the SMs the keys are split,
// and a second kernel merges the splits (FlashMLA's schedule). A block of
// QKᵀ and PV costs 2·rows·cols·(QK+V) FLOPs at the SM's share of the tensor
// rate plus its exponentials on the SFU.
func (m *Model) mla(op ops.Op, c ops.Cost, rate float64) estimate {
	sms := float64(m.dev.SMs)
	g := op.MLAShape()
	d := (g.QK + g.V + 1) / 2 // flashBlockTime's 4·rows·cols·d
	att := ops.Op{Kind: ops.Attention, DType: op.DType, B: op.B, Heads: op.Heads, KVHeads: g.KVHeads, SeqQ: op.SeqQ, SeqK: op.SeqK, HeadDim: d, Causal: op.Causal}
	perBlock, cols := m.keyBlocks(att)
	bw := m.stream * m.eff.GEMMMemory
	r := archRate(m, mlaRate)
	// Every form writes the new tokens' latent rows to the cache first.
	kvSize := op.DType.Size()
	if op.KVType != "" {
		kvSize = op.KVType.Size()
	}
	write := m.kernel(0, float64(op.B*op.SeqQ*(op.KVLoRA+op.Rope))*kvSize/m.stream)
	triton := m.mlaImpl(op) == ops.ImplTriton
	decode := op.SeqQ == 1 && !op.Causal
	if _, cast := mlaCast[m.dev.Architecture]; kvSize < op.DType.Size() && !cast && !triton {
		// Where the engine's kernels read a quantized cache as it is
		// (SGLang's TensorRT-LLM MLA backend casts the query, or the
		// expanded prefill's query, keys and values, to fp8 instead),
		// their products run at the cache type's GEMM rate.
		if p, err := m.dev.Peak(op.KVType, devices.Tensor); err == nil {
			rate = m.rate(devices.PeakKey(op.KVType, devices.Tensor), p)
		}
	}
	// The expanded form also assembles each head's query and key from
	// their nope and rotary parts (a kernel each), prefill over a
	// latent cache concatenates the rotary key, and an fp8 cache is
	// quantized before it is attended over.
	extra := 1
	if !op.Absorbs() {
		extra += 2
	} else if op.SeqQ > 1 {
		extra++
	}
	_, cast := mlaCast[m.dev.Architecture]
	if kvSize < op.DType.Size() {
		if !decode || cast || triton {
			// (A decode step whose kernel reads the fp8 cache as it is
			// takes the query cast in its rotary kernel: SGLang's
			// TensorRT-LLM MLA backend, quantize_and_rope_for_fp8.)
			extra++
		}
		if !op.Absorbs() {
			// Over an fp8 cache the expanded prefill runs in fp8: the
			// query, keys and values are each cast to it first, a
			// kernel apiece (SGLang's TensorRT-LLM MLA backend,
			// _quantize_fp8_qkv, before trtllm_ragged_attention_deepseek).
			q := float64(op.B * op.SeqQ * op.Heads * g.QK)
			kv := float64(op.B * op.SeqK * op.Heads * (g.QK + g.V))
			write.work += (q + kv) * (op.DType.Size() + kvSize) / m.stream
			extra += 2
		}
	}
	// Each kernel waits for the one before: all but the first pay the
	// kernel ramp on top of their work.
	withWrite := func(e estimate) estimate {
		e.work += write.work
		e.kernels += extra
		e.work += float64(e.kernels-1) * m.eff.Ramp
		return e
	}
	if triton && !decode {
		// SGLang's Triton prefill (extend) kernel over the paged cache,
		// its tiles by the key width as for attention: absorbed, one
		// latent KV head whose rows are the keys and, their first
		// KVLoRA columns, the values; expanded, per-head keys and
		// values. Its CTAs sustain the family's MLA prefill fraction.
		att.HeadDim, att.Paged, att.KVType = g.QK, true, op.KVType
		w := tritonWidths{qk: float64(g.QK), v: float64(g.V), kv: float64(g.QK)}
		if !op.Absorbs() {
			w.kv += float64(g.V)
		}
		return withWrite(m.tritonKernels(att, c, rate, r[0], w))
	}
	if !op.Absorbs() || op.SeqQ >= flashBlock {
		// A CTA runs its blocks at its SM's share of the GEMM rate; the
		// whole GPU sustains only the family's fraction of that over
		// many waves (on the L40S a lone 256-query prefill CTA takes a
		// third of what the fraction fitted on full waves gives it).
		ctas := float64(op.B*op.Heads) * ceilDiv(op.SeqQ, flashBlock)
		cta := perBlock * m.flashBlockTime(flashBlock, cols, d, rate)
		compute := math.Max(math.Ceil(ctas/sms)*cta, ctas/sms*cta/r[0])
		if !op.Absorbs() {
			// The engine's forward kernel spends the family's SM time on
			// every CTA however short (PrefillCTA, as paged prefill's).
			compute += ctas * m.eff.PrefillCTA / sms
		}
		return withWrite(m.kernel(compute, c.Bytes/(bw*m.active(ctas))))
	}
	// A prefill's few queries run the prefill kernels (their CTAs at the
	// SM's share of the rate, the GPU at the family's fraction of it);
	// one query per sequence attending to its cache (not a causal
	// prefill of one token), the decode kernels, whose fraction holds for
	// every CTA, except Triton's, whose fixed splits (tritonSplits)
	// leave long single sequences a few CTAs running at their SMs' rate.
	frac := r[0]
	if decode {
		frac = r[1]
		if !triton {
			rate, frac = rate*r[1], 1
		}
	}
	if f, ok := mlaCast[m.dev.Architecture]; ok && kvSize < op.DType.Size() {
		// The decode kernel has no path for a quantized cache: a kernel
		// first casts the whole cache to the compute type, which the
		// attention then reads.
		cache := float64(op.B*op.SeqK*(op.KVLoRA+op.Rope)) * kvSize
		write.work += (cache + cache/kvSize*op.DType.Size()) / (m.stream * f)
		extra++
		c.Bytes += cache / kvSize * (op.DType.Size() - kvSize)
	}
	rows := op.Heads * op.SeqQ
	tileRows, splits := int64(mlaRows), 0.0
	ctaTime := m.eff.AttentionCTA
	gen, trtllm := mlaGen[m.dev.Architecture]
	switch {
	case decode && triton:
		tileRows, splits = tritonHeads, tritonSplits
	case decode && trtllm:
		// TensorRT-LLM's generation kernels (trtllm-gen, through
		// FlashInfer; TllmGenFmhaKernel's kernel selection) take the
		// low-latency form, 16 query heads to a CTA (8 for at most 8),
		// where a sequence has at most 32 heads or its 16-head CTAs
		// number at most half the SMs; else the high-throughput one, 64
		// heads to a CTA. Either spends gen's SM time on every CTA.
		tileRows, ctaTime = mlaRows, gen
		if op.Heads <= 32 || float64(op.B)*ceilDiv(op.Heads, 16)*2 <= sms {
			tileRows = 16
			if op.Heads <= 8 {
				tileRows = 8
			}
		}
	}
	tiles := float64(op.B) * ceilDiv(rows, tileRows)
	tm := math.Min(float64(tileRows), roundUp(rows, mmaRows))
	kb := ceilDiv(op.SeqK, splitBlock)
	var best estimate
	first, last := 1.0, kb
	if splits > 0 {
		first, last = splits, splits
	}
	for s := first; s <= last; s *= 2 {
		if splits == 0 && s > 1 && tiles*s > splitFill*sms*2 {
			break
		}
		ctas := tiles * s
		cta := math.Ceil(kb/s) * m.flashBlockTime(tm, splitBlock, d, rate)
		compute := math.Max(math.Ceil(ctas/sms)*cta, ctas/sms*cta/frac)
		if decode && splits == 0 {
			// Each CTA's own SM time besides its blocks, as the
			// family's paged attention kernels take (AttentionCTA).
			compute += ctas * ctaTime / sms
		}
		bytes := c.Bytes
		var partials float64
		if s > 1 {
			partials = s * float64(op.B*rows) * float64(g.V+1) * 4
		}
		e := m.kernel(compute, (bytes+partials)/(bw*m.active(ctas)))
		if s > 1 {
			merge := m.kernel(0, (partials+float64(op.B*rows*g.V)*op.DType.Size())/(m.stream*m.active(float64(op.B*rows))))
			e.work += merge.work
			e.kernels++
		}
		if best.kernels == 0 || m.opTime(e) < m.opTime(best) {
			best = e
		}
	}
	// and plans its splits in a scheduling kernel (FlashMLA's metadata).
	if splits == 0 {
		best.kernels++
	}
	return withWrite(best)
}

// mlaImpl is the attention kernel family op runs with: its impl=, else
// Triton where SGLang serves latent attention with it (mlaTriton), else
// "" (FlashMLA, FlashAttention 3 or TensorRT-LLM's MLA kernels).
func (m *Model) mlaImpl(op ops.Op) string {
	if op.Impl == "" && mlaTriton[m.dev.Architecture] {
		return ops.ImplTriton
	}
	return op.Impl
}
