package train

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

// Time is one step's time on one GPU, in seconds. GPU times are the
// kernels' durations summed as a profiler sums them (each kernel's ramp
// and its work at the device's achievable rates); the step is the longer
// of that and the CPU's launches, phase by phase.
type Time struct {
	Forward float64 `json:"forward_seconds"`
	// Backward includes the recomputed forward under checkpointing
	// (Recompute, also given apart).
	Backward  float64 `json:"backward_seconds"`
	Recompute float64 `json:"recompute_seconds"`
	Optimizer float64 `json:"optimizer_seconds"`
	// Comm is the data-parallel communication the step waits for, after
	// overlapping with compute as DDP and FSDP overlap it; CommTotal is
	// all of it.
	Comm      float64 `json:"comm_exposed_seconds"`
	CommTotal float64 `json:"comm_seconds"`
	// GPU is the step's GPU time: forward, backward, optimizer and
	// exposed communication.
	GPU float64 `json:"gpu_seconds"`
	// Kernels launched in the step; CPU the host's time to issue the
	// step eagerly: the kernels (TrainCPUPerKernel each), the collectives,
	// and FSDP2's, ZeroRedundancyOptimizer's and DTensor's work per module
	// or tensor (HostBy).
	Kernels int                `json:"kernels"`
	CPU     float64            `json:"cpu_launch_seconds"`
	HostBy  map[string]float64 `json:"host_seconds_by_cause"`
	// Step is the step as a user times it: per phase the longer of GPU
	// and CPU time.
	Step float64 `json:"step_seconds"`
	// HostBound is the time the GPU waits for the host: each phase's time
	// less its GPU work (Step = GPU + HostBound); HostShare its share of
	// the step.
	HostBound float64 `json:"host_bound_seconds"`
	HostShare float64 `json:"host_bound_share"`
	// LaunchBound: the CPU's launches take longer than the GPU's work.
	LaunchBound bool `json:"launch_bound"`
	// TokensPerSecond over all GPUs; MFU the model FLOPs of the step (the
	// forward's matrix FLOPs × 3, × 2 for LoRA's frozen base; no
	// recomputation) per second over the GPUs' datasheet dense bf16 peak.
	TokensPerSecond float64 `json:"tokens_per_second"`
	MFU             float64 `json:"mfu"`
	// By is the GPU time by what it is spent on (matmul, attention,
	// elementwise, loss, lora, autocast, optimizer, communication).
	By map[string]float64 `json:"time_seconds_by_part"`
	// Dominant is the part taking most of the step ("launches" when the
	// CPU sets the pace).
	Dominant string `json:"dominant"`
	// phases are the forward's, backward's and optimizer's GPU times and
	// kernels, for the tests that take the host's figures from measured
	// phases.
	phases [3]phase
	host   host
}

// Parts of step time.
const (
	PartMatmul    = "matmul"
	PartAttention = "attention"
	PartElement   = "elementwise"
	PartLoss      = "loss"
	PartLoRA      = "lora"
	PartAutocast  = "autocast"
	PartOptimizer = "optimizer"
	PartComm      = "communication"
	PartLaunches  = "launches"
)

// Attention's backward: FlashAttention-2 recomputes the scores and runs
// five matrix products per block to the forward's two (2.5× the work), in
// three kernels (the dO·O row sums, the main loop, dQ's conversion).
const (
	attnBackward        = 2.5
	attnBackwardKernels = 3
)

// parts lists the parts of step time in the order phase.by holds them.
var parts = [...]string{PartMatmul, PartAttention, PartElement, PartLoss, PartLoRA, PartAutocast, PartOptimizer, PartComm}

type part int

const (
	matmul part = iota
	attention
	element
	loss
	lora
	autocast
	optimizer
	comm
)

// phase accumulates GPU time and kernels, and, when log is set, what
// each op or pass of the phase takes (the design review's op table).
type phase struct {
	gpu     float64
	kernels int
	by      [len(parts)]float64
	name    string
	log     *[]stepOp
}

// stepOp is one line of a step's op table: an op of the model's op list
// (Op set) run Runs times its work per count, or a part's memory-bound
// passes (Op nil: loss, LoRA, autocast, embedding).
type stepOp struct {
	Phase, Name string
	Op          *ops.Op
	Count       int
	Runs        float64
	Seconds     float64
	Kernels     int
}

// add adds a part's passes; the log merges them by part.
func (p *phase) add(pt part, t float64, kernels int) {
	p.gpu += t
	p.kernels += kernels
	p.by[pt] += t
	if p.log == nil {
		return
	}
	for i, e := range *p.log {
		if e.Op == nil && e.Phase == p.name && e.Name == parts[pt] {
			(*p.log)[i].Seconds += t
			(*p.log)[i].Kernels += kernels
			return
		}
	}
	*p.log = append(*p.log, stepOp{Phase: p.name, Name: parts[pt], Seconds: t, Kernels: kernels})
}

// addOp adds n runs of op o (runs times its work each) taking t in all.
func (p *phase) addOp(pt part, name string, o ops.Op, n int, runs, t float64, kernels int) {
	p.gpu += t
	p.kernels += kernels
	p.by[pt] += t
	if p.log != nil {
		*p.log = append(*p.log, stepOp{Phase: p.name, Name: name, Op: &o, Count: n, Runs: runs, Seconds: t, Kernels: kernels})
	}
}

// pricer prices ops on one device, remembering each op's price: a step
// repeats shapes (norms, forward and recomputation), and a batch repeats
// them across rows.
type pricer struct {
	m     *roofline.Model
	ramp  float64
	cache map[ops.Op]priced
}

type priced struct {
	t float64
	k int
}

func newPricer(m *roofline.Model) pricer {
	return pricer{m: m, ramp: m.Efficiency().Ramp, cache: map[ops.Op]priced{}}
}

// op is an op's GPU time and kernels, as a profiler sums them. Matrix
// ops, whose tiling costs the most to price, are remembered.
func (p pricer) op(o ops.Op) (float64, int, error) {
	matrix := o.IsMatrix()
	if v, ok := p.cache[o]; matrix && ok {
		return v.t, v.k, nil
	}
	pt, err := p.m.Analyze(o)
	if err != nil {
		return 0, 0, err
	}
	v := priced{p.m.Busy(pt), pt.Kernels}
	if matrix && len(p.cache) < 1<<16 {
		p.cache[o] = v
	}
	return v.t, v.k, nil
}

// pass is a memory-bound kernel moving bytes at the measured streaming
// bandwidth.
func (p pricer) pass(bytes float64) float64 { return bytes/p.m.Stream() + p.ramp }

// StepTime prices one training step of c under r with the roofline model m.
func StepTime(c model.Config, r Request, m *roofline.Model) (Time, error) {
	r = r.Defaults()
	if err := r.Validate(c); err != nil {
		return Time{}, err
	}
	return newLayout(c, r).time(newPricer(m))
}

func (l layout) time(pr pricer) (Time, error) {
	return l.timeLogged(pr, nil)
}

// timeLogged is time, listing each op and pass in log when it is not nil.
func (l layout) timeLogged(pr pricer, log *[]stepOp) (Time, error) {
	m := pr.m
	c, r := l.c, l.r
	list, err := c.Ops(model.Shape{Phase: model.Prefill, Batch: r.Batch, Seq: r.Seq, TP: r.TP, Engine: model.Eager})
	if err != nil {
		return Time{}, err
	}
	fwd, bwd, rec := phase{name: "forward", log: log}, phase{name: "backward", log: log}, phase{name: "recompute", log: log}
	T := r.Tokens()
	full := r.Method == Full
	var matrixFLOPs float64
	for _, o := range list {
		name, op, n := o.Name, o.Op, o.Count
		if strings.HasPrefix(name, "kv_cache_write") {
			continue // training keeps no cache
		}
		if name == "lm_head" {
			op.M = T // every position's logits, not the last one's
		}
		t, k, err := pr.op(op)
		if err != nil {
			return Time{}, fmt.Errorf("%s: %w", name, err)
		}
		inLayer := name != "embedding" && name != "lm_head" && name != "step_end" &&
			!strings.HasPrefix(name, "positions") && !strings.HasPrefix(name, "final_norm")
		pt := element
		switch {
		case op.Kind == ops.Linear || op.Kind == ops.Matmul:
			pt = matmul
			matrixFLOPs += float64(n) * op.Cost().MatrixFLOPs
		case op.Kind == ops.Attention:
			pt = attention
			matrixFLOPs += float64(n) * op.Cost().MatrixFLOPs
		case op.Kind == ops.AllReduce:
			pt = comm
		}
		fwd.addOp(pt, name, op, n, 1, float64(n)*t, n*k)
		if r.Ckpt == FullCkpt && inLayer {
			rec.addOp(pt, name, op, n, 1, float64(n)*t, n*k)
		}
		switch {
		case pt == matmul:
			// dX = dY·W; dW = dYᵀ·X unless the weight is frozen.
			dx := op
			dx.N, dx.K = op.K, op.N
			t, k, err := pr.op(dx)
			if err != nil {
				return Time{}, err
			}
			bwd.addOp(pt, name+" dX", dx, n, 1, float64(n)*t, n*k)
			if full {
				dw := op
				dw.M, dw.N, dw.K = op.N, op.K, op.M
				if t, k, err = pr.op(dw); err != nil {
					return Time{}, err
				}
				bwd.addOp(pt, name+" dW", dw, n, 1, float64(n)*t, n*k)
			}
		case pt == attention:
			bwd.addOp(pt, name, op, n, attnBackward, float64(n)*(attnBackward*(t-pr.ramp)+attnBackwardKernels*pr.ramp), n*attnBackwardKernels)
		case pt == comm:
			bwd.addOp(pt, name, op, n, 1, float64(n)*t, n*k)
		case name == "embedding":
			if full { // a zeroed table and the scatter of the rows' gradients
				vocab := float64(l.n.Embedding) / l.tp
				bwd.add(pt, pr.pass(2*vocab)+pr.pass(2*2*float64(T*c.Hidden)), 2)
			}
		default:
			// Autograd's elementwise backward reads the saved input
			// and the gradient and writes the input's gradient.
			bwd.addOp(pt, name, op, n, 2, 2*float64(n)*t, 2*n*k)
		}
	}
	l.loss(pr, &fwd, &bwd)
	if r.Method == LoRA {
		if err := l.lora(pr, &fwd, &bwd, &rec); err != nil {
			return Time{}, err
		}
	}
	if l.autocast() {
		l.casts(pr, &fwd, &bwd, &rec)
	}
	bwd.gpu += rec.gpu
	bwd.kernels += rec.kernels
	out := Time{Forward: fwd.gpu, Backward: bwd.gpu, Recompute: rec.gpu, By: map[string]float64{}}
	opt, optKernels := l.optimizer(pr)
	out.Optimizer = opt
	fwd.by[optimizer] += opt
	exposed, total, afterStep, err := l.comm(m, fwd.gpu, bwd.gpu)
	if err != nil {
		return Time{}, err
	}
	out.Comm, out.CommTotal = exposed, total
	fwd.by[comm] += exposed
	for i, name := range parts {
		if v := fwd.by[i] + bwd.by[i] + rec.by[i]; v > 0 {
			out.By[name] = v
		}
	}
	out.GPU = fwd.gpu + bwd.gpu + opt + exposed
	out.Kernels = fwd.kernels + bwd.kernels + optKernels
	out.phases = [3]phase{fwd, bwd, {gpu: opt, kernels: optKernels}}
	h := l.host(fwd.kernels, bwd.kernels, optKernels)
	out.CPU, out.HostBy, out.host = h.total(), h.causes(), h
	// The parameters gathered after the optimizer's step run in its phase,
	// issued with it.
	optGPU := opt + afterStep
	hf, hb, ho := h.phase[0], h.phase[1], h.phase[2]
	pf, pb, po := paced(fwd.gpu, hf), paced(bwd.gpu, hb), paced(optGPU, ho)
	out.Step = pf + pb + po + exposed - afterStep
	out.HostBound = pf - fwd.gpu + pb - bwd.gpu + po - optGPU
	out.HostShare = out.HostBound / out.Step
	out.LaunchBound = out.CPU > out.GPU
	out.TokensPerSecond = float64(T*r.DP()) / out.Step
	if peak, err := m.Device().Peak(devices.BF16, devices.Tensor); err == nil && peak > 0 {
		mult := 3.0
		if !full {
			mult = 2
		}
		out.MFU = mult * matrixFLOPs / out.Step / peak
	}
	for _, name := range parts { // in order: ties go to the first
		if out.By[name] > out.By[out.Dominant] || out.Dominant == "" {
			out.Dominant = name
		}
	}
	if out.LaunchBound {
		out.Dominant = PartLaunches
	}
	return out, nil
}

// loss prices transformers' cross-entropy over the full vocabulary: the
// fp32 upcast of the logits, log_softmax, and their backward (nll_loss's
// zeroed gradient and scatter, log_softmax's backward, the cast back),
// with the label shift's few small kernels.
func (l layout) loss(pr pricer, fwd, bwd *phase) {
	n := float64(l.r.Tokens()) * l.vocab()
	rows, cols := l.r.Tokens(), int64(l.vocab())
	cast, _, _ := pr.op(ops.Op{Kind: ops.Copy, DType: devices.BF16, Out: devices.FP32, Elems: int64(n)})
	soft, _, _ := pr.op(ops.Op{Kind: ops.Softmax, DType: devices.FP32, Rows: rows, Cols: cols})
	const small = 6 // pad, shift, view, nll, sum, division
	fwd.add(loss, cast+soft+small*pr.ramp, 2+small)
	bwd.add(loss, pr.pass(4*n)+pr.pass(12*n)+pr.pass(6*n)+small*pr.ramp, 3+small)
}

// lora prices peft's adapters on every targeted projection: the input cast
// to fp32, A and B as fp32 matmuls (CUDA cores: PyTorch does not use TF32
// unless asked), the scaling, the sum with the base output and its cast
// back; in backward each matmul's two products and the casts' and sums'
// passes.
func (l layout) lora(pr pricer, fwd, bwd, rec *phase) error {
	T := l.r.Tokens()
	rank := l.r.LoRARank
	for _, x := range projections(l.c) {
		if !l.r.targeted(x.name) {
			continue
		}
		in, out := x.in, x.out
		switch x.name {
		case "q_proj", "k_proj", "v_proj", "gate_proj", "up_proj":
			out /= l.r.TP
		default:
			in /= l.r.TP
		}
		n := float64(l.c.Layers)
		mm := func(m, nn, k int64) (float64, error) {
			t, _, err := pr.op(ops.Op{Kind: ops.Linear, DType: devices.FP32, M: m, N: nn, K: k, Batch: 1})
			return t, err
		}
		a, err := mm(T, rank, in)
		if err != nil {
			return err
		}
		b, _ := mm(T, out, rank)
		f := a + b + pr.pass(6*float64(T*in)) + pr.pass(8*float64(T*out)) + pr.pass(10*float64(T*out)) + pr.pass(6*float64(T*out))
		fwd.add(lora, n*f, int(n)*6)
		if l.r.Ckpt == FullCkpt {
			rec.add(lora, n*f, int(n)*6)
		}
		bdx, _ := mm(T, rank, out)
		bdw, _ := mm(out, rank, T)
		adx, _ := mm(T, in, rank)
		adw, _ := mm(rank, in, T)
		// The output cast's and the sum's backward cast the gradient to fp32
		// and back to bf16 for the base; the scaling, the input cast and the
		// sum of the base's and the adapter's input gradients.
		g := bdx + bdw + adx + adw + 2*pr.pass(6*float64(T*out)) + pr.pass(8*float64(T*out)) + 2*pr.pass(6*float64(T*in))
		bwd.add(lora, n*g, int(n)*9)
	}
	return nil
}

// casts prices autocast: every forward casts the fp32 weights of the
// linear layers and the LM head to bf16 (read 4, write 2 bytes each) and
// the fp32 residual stream's normalised inputs to bf16 for q, k, v, gate
// and up (and rotary's fp32 q and k for attention); backward casts the
// weights' bf16 gradients to fp32 and the activations' gradients back.
func (l layout) casts(pr pricer, fwd, bwd, rec *phase) {
	linear, _, _ := l.perGPU()
	lm := float64(l.n.LMHead) / l.tp
	L := float64(l.c.Layers)
	T := float64(l.r.Tokens())
	h, hq, kv, _, _ := l.widths()
	weights := pr.pass(6*linear) + pr.pass(6*lm)
	acts := L * (5*pr.pass(6*T*h) + pr.pass(6*T*(hq+kv)))
	kw, ka := int(7*L+1), int(6*L)
	fwd.add(autocast, weights+acts, kw+ka)
	if l.r.Ckpt == FullCkpt {
		rec.add(autocast, pr.pass(6*linear)+acts, int(7*L)+ka)
	}
	bwd.add(autocast, weights+acts, kw+ka)
}

// optimizer prices fused AdamW (or SGD) as memory-bound passes over each
// GPU's share of the parameters and states: AdamW reads the weight, its
// gradient and two states and writes the weight and the states;
// multi_tensor_apply launches a kernel per group of up to 110 tensors.
func (l layout) optimizer(pr pricer) (float64, int) {
	linear, vocab, norms := l.perGPU()
	params := linear + vocab + norms
	if l.r.Method == LoRA {
		params = float64(l.n.Adapters) / l.tp
	}
	if l.r.ZeRO >= 1 {
		params /= l.dp
	}
	master, states, copyBack := l.train.w, l.train.o, 0.0
	if l.r.Precision == Mixed && l.r.ZeRO >= 2 {
		// DeepSpeed's and FSDP's: fp32 master weights among the states,
		// the bf16 model weights written back.
		master, states, copyBack = 4, l.train.o-4, 2
	}
	per := 2*master + l.train.g + 2*states + copyBack
	kernels := int((l.tensors() + 109) / 110)
	return pr.pass(per*params) + float64(kernels-1)*pr.ramp, kernels
}

// comm prices the data-parallel reduction of gradients over DP ranks on
// the device's peer link (roofline's all-reduce from the NCCL curve) and
// overlaps it as the frameworks do: DDP's buckets and ZeRO-2's
// reduce-scatters run under the backward, so only what exceeds it and the
// last bucket wait; FSDP's (ZeRO-3's) all-gathers of parameters run under
// forward and backward likewise; ZeRO-1 and -2 all-gather the updated
// parameters after the step, exposed. A reduce-scatter or all-gather is
// half a ring all-reduce.
func (l layout) comm(m *roofline.Model, fwd, bwd float64) (exposed, total, afterStep float64, err error) {
	dp := l.r.DP()
	if dp <= 1 {
		return 0, 0, 0, nil
	}
	if m.Device().Peer().BytesPerSecond <= 0 {
		return 0, 0, 0, fmt.Errorf("%s has no GPU-to-GPU link in the catalog: cannot price %d-way data parallelism", m.Device().Name, dp)
	}
	gradType := devices.BF16
	if l.train.g == 4 {
		gradType = devices.FP32
	}
	elems := int64(l.gradsFull() / l.train.g)
	ar := func(dt devices.DType, n int64) float64 {
		p, _ := m.Analyze(ops.Op{Kind: ops.AllReduce, DType: dt, Elems: max(n, 1), Ranks: dp})
		return p.Expected
	}
	const bucket = 25 << 20 // DDP's bucket_cap_mb
	last := ar(gradType, int64(bucket/gradType.Size()))
	weights := int64(float64(l.n.Total) / l.tp)
	switch l.r.ZeRO {
	case 0:
		total = ar(gradType, elems)
		exposed = math.Max(0, total-bwd) + last
	case 1, 2:
		red := ar(gradType, elems)
		if l.r.ZeRO == 2 {
			red /= 2
		}
		gather := ar(devices.BF16, weights) / 2
		total = red + gather
		exposed = math.Max(0, red-bwd) + last + gather
		afterStep = gather
	case 3:
		gather := ar(devices.BF16, weights) / 2
		rs := ar(gradType, elems) / 2
		total = 2*gather + rs
		layer := ar(devices.BF16, weights/l.c.Layers) / 2
		exposed = math.Max(0, gather-fwd) + math.Max(0, gather+rs-bwd) + layer + last
	}
	return exposed, total, afterStep, nil
}

// overlapExponent is p in a phase's time from its GPU's (g) and its
// host's (h), (g^p + h^p)^(1/p): the longer of the two when one is far
// the longer, more when they are close, as the GPU then idles on bursts of
// short kernels while the host waits on long ones (g = h: 32% over
// either). 2.5 is the best of 2, 2.5, 3, 4 and the plain longer on the rows
// read (multigpu_fam_x2.csv) and the ground truth (train_h100.csv),
// TestOverlapExponent.
var overlapExponent = 2.5

// paced is a phase's time from its GPU's and its host's.
func paced(g, h float64) float64 {
	m := math.Max(g, h)
	if g <= 0 || h <= 0 {
		return m
	}
	return m * math.Pow(math.Pow(g/m, overlapExponent)+math.Pow(h/m, overlapExponent), 1/overlapExponent)
}
