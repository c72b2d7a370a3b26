package roofline

import (
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// SGLang's Triton attention kernels (python/sglang/srt/layers/attention/
// triton_ops/): the decode kernel packs at most tritonHeads query heads of
// a KV group into a CTA's rows, splits each sequence's keys in at most
// tritonSplits (server_args' triton_attention_num_kv_splits), each split a
// multiple of tritonMinSplit keys, and sweeps them tritonDecodeBlock keys
// at a time (64 where a KV group is one head); its second kernel merges
// the splits' fp32 partial outputs, which the first writes even unsplit.
const (
	tritonHeads       = 16
	tritonSplits      = 8
	tritonMinSplit    = 32
	tritonDecodeBlock = 32
)

// tritonExtendTile is the query and key tile of SGLang's Triton prefill
// (extend) kernel by compute capability and head dimension
// (_get_block_sizes_for_extend_attention): GPUs with about 100 KB of
// shared memory per SM (8.6, 8.9, 12.x) take narrower tiles than the
// A100, Hopper and Blackwell.
func tritonExtendTile(cc devices.CC, d int64) (bm, bn float64) {
	switch {
	case cc.Major == 12 || (cc.Major == 8 && (cc.Minor == 6 || cc.Minor == 9)):
		switch {
		case d <= 128:
			return 64, 128
		case d <= 256:
			return 64, 64
		}
		return 32, 32
	case cc.Major == 10:
		if d <= 256 {
			return 64, 64
		}
		return 16, 64
	case cc.Major == 9:
		switch {
		case d <= 128:
			return 128, 64
		case d <= 256:
			return 64, 64
		}
		return 32, 64
	}
	switch {
	case d <= 128:
		return 128, 128
	case d <= 256:
		return 64, 64
	}
	return 32, 64
}

// tritonAttention prices SGLang's Triton attention kernels. Prefill is a
// CTA per sequence × query head × query tile (no KV group shares its
// reads), each sweeping its key tiles up to the diagonal; a decode step is
// a CTA per sequence × group of up to tritonHeads query heads × split of
// the keys, as many splits as the backend's heuristic gives (enough CTAs
// for the SMs, more for longer keys), then the merge kernel. A CTA's
// tiles run at its SM's share of rate (QKᵀ at the head dimension, PV at
// the value tile's power of two, mma.sync with the softmax in turn); the
// whole GPU sustains frac of that.
func (m *Model) tritonAttention(op ops.Op, c ops.Cost, rate, frac float64) estimate {
	d := float64(op.HeadDim)
	return m.tritonKernels(op, c, rate, frac, tritonWidths{qk: d, v: d, kv: 2 * d})
}

// tritonWidths are the widths a Triton attention kernel works over: the
// query and key width qk, the value width v (its PV tile padded to a power
// of two), and the cache elements read per key and KV head, kv (keys and
// values apart; absorbed MLA's latent, once, its keys and values alike).
type tritonWidths struct{ qk, v, kv float64 }

// tritonKernels prices SGLang's Triton attention kernels over op's
// sequences and heads with the widths w (op.HeadDim aside).
func (m *Model) tritonKernels(op ops.Op, c ops.Cost, rate, frac float64, w tritonWidths) estimate {
	sms := float64(m.dev.SMs)
	d := w.qk
	dv := math.Exp2(math.Ceil(math.Log2(w.v)))
	tile := func(rows, cols float64) float64 {
		return 2*rows*cols*(d+dv)/(rate/sms) + rows*cols/(m.sfu/sms)
	}
	run := func(ctas, cta float64) float64 {
		return math.Max(math.Ceil(ctas/sms)*cta, ctas/sms*cta/frac)
	}
	if !decodeStep(op) {
		bm, bn := tritonExtendTile(m.dev.CC, int64(d))
		qt := ceilDiv(op.SeqQ, int64(bm))
		prefix := float64(op.SeqK - op.SeqQ)
		blocks, most := 0.0, 0.0
		for i := 0.0; i < qt; i++ {
			keys := float64(op.SeqQ)
			if op.Causal {
				keys = math.Min(keys, (i+1)*bm)
			}
			n := math.Ceil(prefix/bn) + math.Ceil(keys/bn)
			blocks, most = blocks+n, math.Max(most, n)
		}
		ctas := float64(op.B*op.Heads) * qt
		t := tile(bm, bn)
		// The kernel lasts as long as its longest CTA (the last query
		// tile's, under a causal mask) or its work over the SMs.
		compute := math.Max(most*t, float64(op.B*op.Heads)*blocks*t/sms) / frac
		// Only the cached prefix is read from the cache (and converted
		// from a narrower type); this step's keys come as computed.
		compute += m.pagedCost(op, ctas, 0, float64(op.B*op.Heads)*prefix*w.kv)
		return m.kernel(compute, c.Bytes/(m.stream*m.eff.GEMMMemory*m.active(ctas)))
	}
	g := op.Heads / op.KVHeads
	tiles, rows, bn := float64(op.B*op.Heads), float64(mmaRows), float64(2*tritonDecodeBlock)
	if g > 1 {
		tiles, bn = float64(op.B)*ceilDiv(op.Heads, min(tritonHeads, g)), tritonDecodeBlock
	}
	// get_num_kv_splits_triton, for sequences of one length.
	sk := float64(op.SeqK)
	want := sms * math.Max(math.Log2(sk/64), 1)
	splits := math.Min(math.Ceil(math.Floor(want)/tiles), tritonSplits)
	per := math.Ceil(math.Ceil(sk/splits)/tritonMinSplit) * tritonMinSplit
	used := math.Ceil(sk / per)
	ctas := tiles * used
	compute := run(ctas, math.Ceil(per/bn)*tile(rows, bn)) +
		m.pagedCost(op, ctas, 0, float64(op.B*op.KVHeads*op.SeqK)*w.kv)
	in, out := op.DType.Size(), op.Out.Size()
	if out == 0 {
		out = in
	}
	queries := float64(op.B*op.Heads*op.SeqQ) * d
	kv := float64(op.B*op.KVHeads*op.SeqK) * w.kv * op.KVSize()
	partials := used * float64(op.B*op.Heads) * (dv + 1) * 4
	inflight := 2 * bn * w.kv * op.KVSize()
	memory := m.streamTime(queries*in+kv+partials, ctas, inflight)
	if m.eff.TritonRead > 0 {
		// A CTA's own reads: its split of one KV head's keys.
		memory = math.Max(memory, math.Min(per, sk)*w.kv*op.KVSize()/(m.eff.TritonRead*m.dev.BoostClockHz))
	}
	e := m.kernel(compute, memory)
	merge := m.kernel(0, m.streamTime(partials+queries/d*w.v*out, float64(op.B*op.Heads), inflight))
	e.work += merge.work
	e.kernels++
	return e
}

// tritonFraction is the fraction of the GEMM rate a serving engine's
// Triton attention kernels sustain over the GPU: the family's TritonMMA
// for the peak key, else its AttentionMMA, else the whole rate.
func (m *Model) tritonFraction(key string) float64 {
	if f, ok := m.eff.TritonMMA[key]; ok {
		return f
	}
	if f, ok := m.eff.AttentionMMA[key]; ok {
		return f
	}
	return 1
}
