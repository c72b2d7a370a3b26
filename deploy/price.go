package deploy

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

// pricer times engine steps from model's op lists priced by roofline, a
// step being any mix of decode tokens and prefill chunks. A step's time is
// the sum of
//   - the token-wise ops (projections, MLP or experts, norms, rotary, cache
//     writes, all-reduces; the experts in the shape's layout, where ranks
//     share them over every rank's tokens between a dispatch and a combine
//     all-to-all) over all of its tokens: model's decode op list at a batch
//     of that many tokens, less its attention and LM head;
//   - the LM head and final norm over the sequences that emit a token;
//   - decode attention of the decoding sequences at their mean context;
//   - each prefill chunk's causal attention against its prefix.
//
// Each op runs back to back (roofline's BackToBack), as in a CUDA graph or
// a GPU-bound step. Times are kept per token count on a grid (every count
// up to gridExact, then 32 points per doubling, linear in between), so a
// simulation of thousands of steps prices a few hundred op lists. A pricer
// is not safe for concurrent use.
type pricer struct {
	c     model.Config
	shape model.Shape // TP, experts' layout and types; batch and context set per call
	m     *roofline.Model
	// link is the peer link's collective curve; domain the GPUs one
	// NVLink domain joins.
	link   roofline.Collectives
	domain int64
	// decodeAttn and prefillAttn are the attention ops of one step, with
	// their layer counts (a model with sliding and full layers has two).
	decodeAttn, prefillAttn []model.Op
	dense, head             map[int64]float64
	dattn, pattn            map[[2]int64]float64
	// steps are whole decode steps' GPU times by sequences and rounded
	// context.
	steps map[[2]int64]float64
	// launches is the kernels one forward launches (kernels).
	launches float64
}

const (
	gridExact = 64
	gridSteps = 32
	// probeCtx is the context of the op list the attention templates are
	// read from: longer than any window, so a sliding layer's op shows it.
	probeCtx = 1 << 22
)

// nvlinkDomain is the GPUs one NVLink domain joins: 72 in a GB200/GB300
// NVL72 rack (NVIDIA GB200 NVL72: 72 GPUs in one NVLink domain), 8 on an
// HGX or DGX board (8 GPUs on NVSwitch) and anything else. A collective
// over more GPUs crosses hosts on their NICs.
func nvlinkDomain(d devices.Device) int64 {
	if strings.HasPrefix(strings.ToUpper(d.Name), "GB") {
		return 72
	}
	return 8
}

func newPricer(c model.Config, s model.Shape, m *roofline.Model) (*pricer, error) {
	p := &pricer{c: c, shape: s, m: m, link: m.Collectives(), domain: nvlinkDomain(m.Device()),
		dense: map[int64]float64{}, head: map[int64]float64{},
		dattn: map[[2]int64]float64{}, pattn: map[[2]int64]float64{}, steps: map[[2]int64]float64{}}
	d := s
	d.Phase, d.Batch, d.Ctx = model.Decode, 1, probeCtx
	list, err := c.Ops(d)
	if err != nil {
		return nil, err
	}
	for _, o := range list {
		if attends(o.Op) {
			p.decodeAttn = append(p.decodeAttn, o)
		}
	}
	f := s
	f.Phase, f.Batch, f.Seq = model.Prefill, 1, probeCtx
	if list, err = c.Ops(f); err != nil {
		return nil, err
	}
	for _, o := range list {
		if attends(o.Op) {
			p.prefillAttn = append(p.prefillAttn, o)
		}
	}
	// Price one step of each kind now, so that an op the device cannot
	// run is an error here rather than deep in a simulation.
	if _, err := p.tokens(1); err != nil {
		return nil, err
	}
	if _, err := p.decode(1, 1); err != nil {
		return nil, err
	}
	if p.launches, err = p.kernels(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pricer) time(op ops.Op, count int) (float64, error) {
	pt, err := p.m.Analyze(op)
	if err != nil {
		return 0, err
	}
	return float64(count) * p.m.BackToBack(pt), nil
}

// fused are the ops of model's op list that a serving engine runs inside
// another op's kernel, by the share of their kernels it still launches:
// q, k and v are one GEMM, as are gate and up; one rotary kernel ropes q
// and k; one kernel writes K and V into the paged cache (reshape_and_cache);
// SiLU and the product are one kernel (silu_and_mul); each residual add is
// fused into the next RMSNorm (fused_add_rms_norm). vLLM, SGLang and
// TensorRT-LLM all run these kernels. A fused op costs its work, not a
// kernel period.
var fused = map[string]float64{
	"k_proj": 0, "v_proj": 0, "mlp_up": 0, "experts_up": 0, "shared_expert_up": 0,
	"rotary_q_rotate": 0.5, "rotary_q_mul_add": 0, "rotary_k_rotate": 0, "rotary_k_mul_add": 0,
	"kv_cache_write": 0.5, "mlp_mul": 0, "experts_mul": 0, "shared_expert_mul": 0,
	"attention_residual": 0, "mlp_residual": 0,
}

// engineTime is an op's time in a serving engine's step: back to back, less
// the kernel periods of what the engine fuses; a collective over more GPUs
// than one NVLink domain crosses hosts on their NICs.
func (p *pricer) engineTime(o model.Op) (float64, error) {
	if o.Op.Ranks > p.domain {
		switch o.Op.Kind {
		case ops.AllReduce:
			return float64(o.Count) * p.allReduce(float64(o.Op.Elems)*o.Op.DType.Size(), o.Op.Ranks), nil
		case ops.AllToAll:
			return float64(o.Count) * p.collective(o.Op.Cost().Bytes, o.Op.Ranks), nil
		}
	}
	name := o.Name
	if i := strings.Index(name, " ["); i >= 0 {
		name = name[:i]
	}
	share, ok := fused[name]
	if !ok {
		return p.time(o.Op, o.Count)
	}
	pt, err := p.m.Analyze(o.Op)
	if err != nil {
		return 0, err
	}
	period := p.m.FixedCost() - p.m.Efficiency().Ramp
	return float64(o.Count) * (pt.Work() + share*float64(pt.Kernels)*period), nil
}

// collective is a collective that moves bytes from each of ranks GPUs, the
// share bound for other hosts (beyond the NVLink domain) at the NIC's rate
// as NCCL reaches the peer link's.
func (p *pricer) collective(bytes float64, ranks int64) float64 {
	if ranks <= p.domain {
		return p.link.Time(bytes)
	}
	off := float64(ranks-p.domain) / float64(ranks)
	t := p.link.Time(bytes * (1 - off))
	if p.link.Link.BytesPerSecond > 0 {
		t += p.link.Latency + bytes*off/(NICBytesPerSecond*p.link.BusBandwidth/p.link.Link.BytesPerSecond)
	}
	return t
}

// allReduce is an all-reduce of a message of bytes over ranks GPUs on more
// than one host, hierarchical as NCCL runs it: a reduce-scatter and an
// all-gather within each NVLink domain, and between the hosts an
// all-reduce of each GPU's 1/domain of the message on its NIC.
func (p *pricer) allReduce(bytes float64, ranks int64) float64 {
	d := p.domain
	hosts := float64((ranks + d - 1) / d)
	intra := p.link.Time(2 * float64(d-1) / float64(d) * bytes)
	inter := 2 * (hosts - 1) / hosts * bytes / float64(d)
	if p.link.Link.BytesPerSecond > 0 {
		intra += p.link.Latency + inter/(NICBytesPerSecond*p.link.BusBandwidth/p.link.Link.BytesPerSecond)
	}
	return intra
}

// grid returns the grid points around n and n's weight on the upper one.
func grid(n int64) (lo, hi int64, w float64) {
	if n <= gridExact {
		return n, n, 0
	}
	k := math.Log2(float64(n)/gridExact) * gridSteps
	lo = int64(math.Round(gridExact * math.Exp2(math.Floor(k)/gridSteps)))
	hi = int64(math.Round(gridExact * math.Exp2(math.Ceil(k)/gridSteps)))
	if hi <= lo {
		return n, n, 0
	}
	return lo, hi, float64(n-lo) / float64(hi-lo)
}

// onGrid evaluates f at n by the grid, memoised in cache.
func onGrid(n int64, cache map[int64]float64, f func(int64) (float64, error)) (float64, error) {
	lo, hi, w := grid(n)
	at := func(k int64) (float64, error) {
		if v, ok := cache[k]; ok {
			return v, nil
		}
		v, err := f(k)
		if err == nil {
			cache[k] = v
		}
		return v, err
	}
	a, err := at(lo)
	if err != nil || hi == lo {
		return a, err
	}
	b, err := at(hi)
	return a + w*(b-a), err
}

// tokens is the time of the token-wise ops over n tokens.
func (p *pricer) tokens(n int64) (float64, error) {
	return onGrid(n, p.dense, func(n int64) (float64, error) {
		return p.sum(n, func(o model.Op) bool { return !attends(o.Op) && !isHead(o.Name) }, p.engineTime)
	})
}

// attends says whether an op reads the cached context: flash attention or
// latent attention (MLA), priced per step at the sequences' contexts.
func attends(op ops.Op) bool { return op.Kind == ops.Attention || op.Kind == ops.MLA }

func isHead(name string) bool { return name == "lm_head" || name == "final_norm" }

// logits is the time of the final norm and LM head over n sequences.
func (p *pricer) logits(n int64) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	return onGrid(n, p.head, func(n int64) (float64, error) {
		return p.sum(n, func(o model.Op) bool { return isHead(o.Name) }, func(o model.Op) (float64, error) { return p.time(o.Op, o.Count) })
	})
}

// sum prices the ops that keep selects of a decode step over n sequences
// (one token each), each by price.
func (p *pricer) sum(n int64, keep func(model.Op) bool, price func(model.Op) (float64, error)) (float64, error) {
	s := p.shape
	s.Phase, s.Batch, s.Ctx = model.Decode, n, 1
	list, err := p.c.Ops(s)
	if err != nil {
		return 0, err
	}
	var t float64
	for _, o := range list {
		if !keep(o) {
			continue
		}
		d, err := price(o)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", o.Name, err)
		}
		t += d
	}
	return t, nil
}

// roundCtx rounds a context to 1/64 of itself (at least 16 tokens), so that
// the steps of a long decode share their attention prices.
func roundCtx(n int64) int64 {
	q := max(n/64, 16)
	return max((n+q/2)/q*q, 1)
}

// decode is the attention of n sequences decoding one token each at a mean
// context of ctx tokens.
func (p *pricer) decode(n, ctx int64) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	k := [2]int64{n, roundCtx(ctx)}
	if v, ok := p.dattn[k]; ok {
		return v, nil
	}
	var t float64
	for _, o := range p.decodeAttn {
		op := o.Op
		op.B, op.SeqK = n, min(k[1], op.SeqK) // a sliding layer keeps its window
		d, err := p.time(op, o.Count)
		if err != nil {
			return 0, err
		}
		t += d
	}
	p.dattn[k] = t
	return t, nil
}

// prefill is the causal attention of a chunk of q queries after a prefix of
// done tokens.
func (p *pricer) prefill(q, done int64) (float64, error) {
	k := [2]int64{roundCtx(q), roundCtx(done + q)}
	if done == 0 {
		k[1] = k[0]
	}
	if v, ok := p.pattn[k]; ok {
		return v, nil
	}
	var t float64
	for _, o := range p.prefillAttn {
		op := o.Op
		op.B, op.SeqQ, op.SeqK = 1, k[0], k[1]
		if w := o.Op.SeqQ; w < probeCtx {
			// A sliding layer (model lays it out in window-long query
			// blocks): each query sees the window before it.
			op.SeqK = min(op.SeqK, w+op.SeqQ)
		}
		d, err := p.time(op, o.Count)
		if err != nil {
			return 0, err
		}
		t += d
	}
	p.pattn[k] = t
	return t, nil
}

// hostKernelSeconds is the host's time per kernel of a forward run eagerly
// (no CUDA graph): PyTorch's dispatch and launch of each op and the glue
// between them (views, casts, routing, metadata) that model's op list does
// not count. SGLang measured an eager forward of DeepSeek-V3 over one new
// token at 82.6 ms, 23.1 ms as a CUDA graph (sgl-project/sglang pull
// request 12160); its op list here launches 1,684 kernels: 49 µs each. A
// Qwen3-4B prefill of 129 tokens, 16.6 ms eager and 5.7 ms as a graph
// (wejoncy/sfllm pull request 46), over the 435 kernels of Qwen3-8B's op
// list (the same 36 layers): 38 µs. The mean of the two.
const hostKernelSeconds = 43.6e-6

// kernels is the kernels one forward launches: every op's kernels, the
// fused ops' at their share (the same count whatever its tokens).
func (p *pricer) kernels() (float64, error) {
	s := p.shape
	s.Phase, s.Batch, s.Ctx = model.Decode, 1, 1
	list, err := p.c.Ops(s)
	if err != nil {
		return 0, err
	}
	var k float64
	for _, o := range list {
		pt, err := p.m.Analyze(o.Op)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", o.Name, err)
		}
		name := o.Name
		if i := strings.Index(name, " ["); i >= 0 {
			name = name[:i]
		}
		share, ok := fused[name]
		if !ok {
			share = 1
		}
		k += float64(o.Count) * share * float64(pt.Kernels)
	}
	return k, nil
}
