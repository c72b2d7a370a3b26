package roofline

import (
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// flashBlock is flash attention's query and key tile.
const flashBlock = 128

// Split-KV kernels (flash-decoding, FlashAttention's split path) pad query
// tiles to the MMA's row count (mmaRows: mma.sync m16n8k16), sweep keys in
// blocks of splitBlock (the Triton decode kernel's, and FlashAttention 2's
// for head dimension 256), and size their splits for at most splitFill
// CTAs per SM (FlashAttention 2's num_splits heuristic targets 2 × the
// SMs, as flash-decoding kernels do).
const (
	mmaRows    = 16
	splitBlock = 64
	splitFill  = 2
)

// flashAttention prices flash attention by its schedule. impl=rows folds a
// KV group's query heads into query rows and runs the forward kernel on
// them (one CTA per batch × KV head × 128-query block, at decode a few
// CTAs). impl=heads runs one CTA per batch × query head × 128-query block,
// its rows padded to the MMA's 16, each reading its head's K and V,
// unsplit: a masked SDPA kernel (cuDNN's, in transformers' eager decode).
// The default takes the fastest of the forward kernel and split-KV
// kernels, as FlashAttention's heuristics and decode kernels choose, which
// a library runs where the forward kernel's tiles cannot fill every SM
// twice, its 128-row tiles would be mostly padding, or a KV group's query
// rows fit one tile (decode); a family whose engine runs prefill on its
// forward kernel alone (engineForward) takes that kernel for it.
func (m *Model) flashAttention(op ops.Op, c ops.Cost, rate float64) estimate {
	if op.KOnly && !m.genericDecode(op) {
		// Over a K-only cache a tile's V is the lines its K tile just
		// brought: read again from L2 (A100 rows over 0.5-2 GB of K and
		// V ran at 3.3 TB/s counting both, above its 2.04 TB/s DRAM).
		m = m.warmed(c.Bytes, float64(op.B*op.KVHeads*op.SeqK*op.HeadDim)*op.KVSize())
	}
	switch op.Impl {
	case ops.ImplRows:
		g := op.Heads / op.KVHeads
		op.Heads, op.SeqQ = op.KVHeads, op.SeqQ*g
		return m.flashForward(op, c, rate)
	case ops.ImplHeads:
		return m.splitKVAt(op, rate, splitTiling(op, false, flashBlock), 1)
	}
	if m.genericDecode(op) {
		t := splitTiling(op, false, mmaRows)
		t.cta = m.eff.AttentionHeadCTA
		// The query heads of a KV group run side by side (consecutive
		// CTAs) and read the same K and V: the first read comes from
		// where the cache lies, the group's others from L2.
		again := 2 * float64(op.B*(op.Heads-op.KVHeads)*op.SeqK*op.HeadDim) * op.KVSize()
		first := c.Bytes
		if op.KOnly {
			// The generic kernel sweeps all of a head's keys before
			// its values (QKᵀ, softmax, then PV), so over a K-only
			// cache V's reads find K's lines gone from L2 and read
			// them again (the A100's one-head rows over 0.5-2 GB of
			// K and V: 1.73 TB/s, as distinct K and V).
			first += float64(op.B*op.KVHeads*op.SeqK*op.HeadDim) * op.KVSize()
		}
		return m.warmed(first, again).splitKV(op, rate, t)
	}
	best := m.flashForward(op, c, rate)
	if m.engineForward(op) {
		return best
	}
	rows := op.SeqQ * (op.Heads / op.KVHeads)
	tiles := float64(op.B*op.Heads) * ceilDiv(op.SeqQ, flashBlock)
	if op.SeqQ >= flashBlock && rows > flashBlock && tiles >= splitFill*float64(m.dev.SMs) {
		return best
	}
	if m.eff.AttentionGroupMax > 0 && decodeStep(op) {
		// XQA: one CTA per sequence × KV head holding the group's query
		// rows (its warps work them 16 at a time, so a CTA's own time
		// grows with its row tiles), split over the keys as its
		// multi-block heuristic says.
		t := splitTiling(op, true, flashBlock)
		t.cta = m.eff.AttentionCTA * t.rows / mmaRows
		return m.splitKVAt(op, rate, t, xqaSplits(op, m.dev.SMs))
	}
	for _, pack := range []bool{true, false} {
		for _, tm := range []int64{mmaRows, splitBlock, flashBlock} {
			t := splitTiling(op, pack, tm)
			if e := m.splitKV(op, rate, t); m.opTime(e) < m.opTime(best) {
				best = e
			}
		}
	}
	return best
}

// TensorRT-LLM's XQA multi-block heuristic (decoderXQAImplCommon.h,
// computeMultiBlockCount; decoderXQAConstants.h): a split per
// xqaMinKeys keys of history, at most √(8 × that) splits (more and the
// final reduction dominates), fewer where the batch × KV heads × splits
// CTAs would exceed xqaWaves waves of the SMs. (Its workspace cap of
// 6000 sub-sequences binds only above 750 SMs.) The history is the
// step's keys, its own included (the PyTorch backend passes kv_lens as
// past_key_value_lengths).
const (
	xqaMinKeys = 128
	xqaWaves   = 8
)

// xqaSplits is the number of key splits XQA's multi-block mode gives a
// decode step on a GPU of sms SMs.
func xqaSplits(op ops.Op, sms int) float64 {
	n := math.Floor(float64(op.SeqK) / xqaMinKeys)
	n = math.Max(1, math.Min(n, math.Round(math.Sqrt(8*n))))
	if waves := float64(op.B*op.KVHeads) * n / float64(sms) / xqaWaves; waves > 1 {
		n = math.Floor(n / waves)
	}
	return math.Max(1, n)
}

// engineForward says op is a serving engine's prefill that the family's
// engine runs on its forward kernel alone, one CTA per sequence × query
// head × 128-query tile, however short (PrefillCTA: the B200's prefill of
// b sequences of 1–16 tokens costs about 3 µs of SM time per sequence ×
// query head, whatever the KV heads).
func (m *Model) engineForward(op ops.Op) bool {
	return m.eff.PrefillCTA > 0 && op.Paged && !decodeStep(op)
}

// decodeStep says op is a serving engine's decode step: paged, one query
// per sequence, against keys cached before it (a one-token prefill has
// none and runs the prefill path).
func decodeStep(op ops.Op) bool {
	return op.Paged && op.SeqQ == 1 && op.SeqK > 1
}

// genericDecode says a serving engine's decode step runs its generic
// masked kernel rather than the grouped one: one query per sequence, and a
// KV group of one query head (the grouped kernel gains nothing there) or
// of more heads than the grouped kernel packs into one CTA's rows
// (AttentionGroupMax; TensorRT-LLM's XQA takes at most 32). The generic
// kernel runs a CTA per query head (split over the keys where they are
// few), each reading its head's K and V.
func (m *Model) genericDecode(op ops.Op) bool {
	if !decodeStep(op) || m.eff.AttentionGroupMax == 0 {
		return false
	}
	g := op.Heads / op.KVHeads
	return g == 1 || g > int64(m.eff.AttentionGroupMax)
}

// attentionRate is the rate a serving engine's paged flash kernels reach
// for their products: the GEMM rate of the peak key times the family's
// attention fraction for it (fitted on those engines' tables).
func (m *Model) attentionRate(key string, rate float64) float64 {
	if f, ok := m.eff.AttentionMMA[key]; ok {
		rate *= f
	}
	return rate
}

// flashForward is FlashAttention's forward kernel: one CTA per (batch,
// head, 128-query block), each sweeping the key blocks keyBlocks gives; a
// block costs its matrix FLOPs at the SM's achievable tensor rate plus its
// exponentials on the SFU. A CTA computes its whole 128-row query tile even
// when fewer queries exist. CTAs are spread over the SMs in waves; memory
// streams the ideal bytes at the memory-bound GEMM fraction, over the SMs
// the CTAs occupy.
func (m *Model) flashForward(op ops.Op, c ops.Cost, rate float64) estimate {
	sms := float64(m.dev.SMs)
	perBlock, cols := m.keyBlocks(op)
	ctas := float64(op.B*op.Heads) * ceilDiv(op.SeqQ, flashBlock)
	cta := 0.0
	if m.engineForward(op) {
		cta = m.eff.PrefillCTA
	}
	compute := math.Ceil(ctas/sms)*perBlock*m.blockTime(op, flashBlock, cols, rate) +
		m.pagedCost(op, ctas, cta, 2*float64(op.B*op.KVHeads*op.SeqK*op.HeadDim))
	memory := c.Bytes / (m.stream * m.eff.GEMMMemory * m.active(ctas))
	return m.kernel(compute, memory)
}

// keyBlocks is the key work of one 128-query block, in blocks of 128 keys
// (cols keys wide: 128, or all the keys when fewer), the last block
// computed in 64-key halves. Causal masking skips the blocks above the
// diagonal, and a diagonal block costs CausalDiagonal full blocks (at most
// the work of the full attention); the result is the mean over the query
// blocks.
func (m *Model) keyBlocks(op ops.Op) (perBlock, cols float64) {
	const blk = flashBlock
	qb := ceilDiv(op.SeqQ, blk)
	kb, cols := ceilDiv(op.SeqK, splitBlock)/2, float64(blk)
	if op.SeqK <= blk {
		kb, cols = 1, float64(op.SeqK)
	}
	if !op.Causal {
		return kb, cols
	}
	// Query block i (aligned to the end of the keys) sees the key blocks
	// up to its diagonal: kb−qb+i+1 of them, the last masked.
	full := 0.0
	for i := 0.0; i < qb; i++ {
		full += math.Max(kb-qb+i, 0)
	}
	// Masking never costs more than computing every block.
	return math.Min(kb, (full+qb*m.eff.CausalDiagonal)/qb), cols
}

// flashBlockTime is one rows × cols block of flash attention on one SM:
// QKᵀ and PV (4·rows·cols·d FLOPs) at the SM's share of the tensor rate,
// then rows × cols exponentials on its SFU.
func (m *Model) flashBlockTime(rows, cols float64, d int64, rate float64) float64 {
	sms := float64(m.dev.SMs)
	return 4*rows*cols*float64(d)/(rate/sms) + rows*cols/(m.sfu/sms)
}

// blockTime is a block of op's flash kernel. A serving engine's paged
// kernel on an SM whose tensor cores run asynchronously to the warps that
// issue them (wgmma, compute capability 9.x: FlashAttention 3, SGLang's
// Hopper backend) computes one block's softmax while the next block's
// products run (ping-pong warpgroups), so a block costs the longer of the
// two, not their sum; so do Blackwell's (tcgen05, 10.x: the products
// run from tensor memory while the warps work the softmax). mma.sync
// kernels (FlashAttention 2, PyTorch's SDPA on every GPU, 8.x and 12.x
// engines) do both in turn.
func (m *Model) blockTime(op ops.Op, rows, cols float64, rate float64) float64 {
	if !op.Paged || (m.dev.CC.Major != 9 && m.dev.CC.Major != 10) {
		return m.flashBlockTime(rows, cols, op.HeadDim, rate)
	}
	sms := float64(m.dev.SMs)
	return math.Max(4*rows*cols*float64(op.HeadDim)/(rate/sms), rows*cols/(m.sfu/sms))
}

// pagedCost is the SM time a serving engine's paged kernel adds to its
// blocks, spread over the SMs: each CTA's own fixed cost (cta, or the
// family's AttentionCTA where zero), and converting kv cache elements read
// from a narrower cache type (an fp8 cache under bf16 attention) at the
// family's KVDequant rate. Plain attention has neither.
func (m *Model) pagedCost(op ops.Op, ctas, cta, kv float64) float64 {
	if !op.Paged {
		return 0
	}
	if cta == 0 {
		cta = m.eff.AttentionCTA
	}
	sms := float64(m.dev.SMs)
	t := ctas * cta / sms
	if op.KVSize() < op.DType.Size() && m.eff.KVDequant > 0 {
		t += kv / (m.eff.KVDequant * sms * m.dev.BoostClockHz)
	}
	return t
}

// queryCast adds to a paged layer over a narrower cache (fp8 under bf16
// attention) the kernel that casts the query to the cache's type, where
// the family's engine kernels compute on the cache's type natively (no
// KVDequant figure, and tensor cores for the cache's type: Blackwell's
// TensorRT-LLM kernels take an fp8 query against an fp8 cache): a
// kernel's ramp plus its bytes, elementwise over the tokens.
func (m *Model) queryCast(op ops.Op, e estimate) estimate {
	if op.KVType == "" || op.KVSize() >= op.DType.Size() || m.eff.KVDequant > 0 {
		return e
	}
	if _, err := m.dev.Peak(op.KVType, devices.Tensor); err != nil {
		return e
	}
	q := float64(op.B*op.Heads*op.SeqQ*op.HeadDim) * (op.DType.Size() + op.KVSize())
	e.work += m.eff.Ramp + q/(m.stream*m.active(float64(op.B*op.SeqQ)))
	e.kernels++
	return e
}

// tiling is how a split-KV kernel lays out its query rows: tiles of rows
// rows (padded to the MMA's 16), and the K and V heads it reads per
// sequence.
type tiling struct {
	tiles, rows float64
	reads       int64
	// cta is a paged kernel's SM time per CTA besides its blocks; zero
	// takes the family's AttentionCTA.
	cta float64
}

// splitTiling tiles the query rows tm at a time. Packed, the query rows of
// a KV group (sq × h/kv) share tiles, so all query heads of a group share
// one read of K and V; otherwise each query head has its own tiles and
// reads K and V itself.
func splitTiling(op ops.Op, pack bool, tm int64) tiling {
	units, rows, reads := op.B*op.KVHeads, op.SeqQ*(op.Heads/op.KVHeads), op.KVHeads
	if !pack {
		units, rows, reads = op.B*op.Heads, op.SeqQ, op.Heads
	}
	return tiling{tiles: float64(units) * ceilDiv(rows, tm), rows: roundUp(min(rows, tm), mmaRows), reads: reads}
}

// splitKV is a split-KV kernel and the pass that merges its splits, with
// the number of splits that gives the shortest time: at most enough for
// splitFill CTAs per SM and one split per splitBlock keys, fewer where the
// merge would cost more than the splits gain (see splitKVAt).
func (m *Model) splitKV(op ops.Op, rate float64, t tiling) estimate {
	most := math.Max(1, math.Min(math.Ceil(splitFill*float64(m.dev.SMs)/t.tiles), ceilDiv(op.SeqK, splitBlock)))
	best := m.splitKVAt(op, rate, t, most)
	for s := 1.0; s < most; s *= 2 {
		if e := m.splitKVAt(op, rate, t, s); m.opTime(e) < m.opTime(best) {
			best = e
		}
	}
	return best
}

// splitKVAt is a split-KV kernel with splits splits of the keys: tiles ×
// splits CTAs, each sweeping its share of the key blocks (keyBlocks, in
// 64-key halves, on its padded rows) and streaming its share of K and V
// (streamTime). With more than one split each CTA writes its partial
// output and log-sum-exp in fp32, and a second kernel, one CTA per query
// row, reads them back and writes the output.
func (m *Model) splitKVAt(op ops.Op, rate float64, t tiling, splits float64) estimate {
	sms := float64(m.dev.SMs)
	in, out := op.DType.Size(), op.Out.Size()
	if out == 0 {
		out = in
	}
	perBlock, cols := m.keyBlocks(op)
	ctas := t.tiles * splits
	compute := math.Ceil(ctas/sms)*math.Ceil(2*perBlock/splits)/2*m.blockTime(op, t.rows, cols, rate) +
		m.pagedCost(op, ctas, t.cta, 2*float64(op.B*t.reads*op.SeqK*op.HeadDim))
	queries := float64(op.B*op.Heads*op.SeqQ) * float64(op.HeadDim)
	kv := 2 * float64(op.B*t.reads*op.SeqK*op.HeadDim) * op.KVSize()
	// A CTA keeps two stages of a K and a V block in flight.
	inflight := 2 * 2 * splitBlock * float64(op.HeadDim) * op.KVSize()
	if splits == 1 {
		return m.kernel(compute, m.streamTime(queries*in+kv+queries*out, ctas, inflight))
	}
	partials := splits * float64(op.B*op.Heads*op.SeqQ) * float64(op.HeadDim+1) * 4
	e := m.kernel(compute, m.streamTime(queries*in+kv+partials, ctas, inflight))
	combine := m.kernel(0, m.streamTime(partials+queries*out, float64(op.B*op.Heads*op.SeqQ), inflight))
	e.work += combine.work
	e.kernels++
	return e
}

// streamTime is the time n CTAs take to read (mostly) bytes, spread evenly
// over them: no less than the bytes at the read bandwidth, nor than each
// CTA's bytes beyond the inflight bytes its first round trip brings (within
// the kernel's ramp) at twice its SM's share of the bandwidth (active).
func (m *Model) streamTime(bytes, n, inflight float64) float64 {
	rest := math.Max(0, bytes/n-inflight) * n
	return math.Max(bytes/m.read, rest/(m.read*m.active(n)))
}

// naiveAttention is three kernels: S = QKᵀ, softmax over S, O = PV, each
// S and P going through DRAM. The products are computed in full; a causal
// mask only zeroes scores in the softmax.
func (m *Model) naiveAttention(op ops.Op, key string, peak float64) estimate {
	bh := op.B * op.Heads
	qk := ops.Op{Kind: ops.Matmul, DType: op.DType, Out: op.DType, Batch: bh, M: op.SeqQ, N: op.SeqK, K: op.HeadDim}
	pv := ops.Op{Kind: ops.Matmul, DType: op.DType, Out: op.DType, Batch: bh, M: op.SeqQ, N: op.HeadDim, K: op.SeqK}
	sm := ops.Op{Kind: ops.Softmax, DType: op.DType, Rows: bh * op.SeqQ, Cols: op.SeqK}
	var total estimate
	worst := 0.0
	for _, sub := range []ops.Op{qk, sm, pv} {
		k, p := key, peak
		if sub.Kind == ops.Softmax {
			k, p = "fp32", m.vectorPeak()
		}
		e := m.estimate(sub, sub.Cost(), k, p)
		total.work += e.work
		total.kernels += e.kernels
		if e.work >= worst {
			worst, total.bound = e.work, e.bound
		}
	}
	return total
}
