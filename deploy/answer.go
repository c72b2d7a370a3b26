package deploy

import (
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/roofline"
)

// Result is a deployment's answer under its load.
type Result struct {
	Query  Query  `json:"query"`
	Model  string `json:"model"`
	Device string `json:"device"`
	Engine Engine `json:"engine"`
	// GPUs is every GPU of the deployment (tp × dp).
	GPUs   int64  `json:"gpus"`
	Memory Memory `json:"memory"`
	// TTFT, TPOT and E2E are over every request of the run; TPOT is a
	// request's decode time over its output tokens after the first.
	TTFT Stat `json:"ttft"`
	TPOT Stat `json:"tpot"`
	E2E  Stat `json:"end_to_end"`
	// TokensPerSecond is the output tokens of the whole deployment per
	// second of the run; PerGPU that over GPUs; PerUser one request's
	// decode rate (1 / mean TPOT).
	TokensPerSecond float64 `json:"tokens_per_second"`
	PerGPU          float64 `json:"tokens_per_second_per_gpu"`
	PerUser         float64 `json:"tokens_per_second_per_user"`
	// Simulated is the requests simulated (a closed loop's after its first
	// wave) over all replicas.
	Simulated int64 `json:"simulated_requests"`
	// Steps, Preemptions and MeanBatch describe one replica's run.
	Steps       int      `json:"steps"`
	Preemptions int      `json:"preemptions"`
	MeanBatch   float64  `json:"mean_batch"`
	Notes       []string `json:"notes,omitempty"`
	// Disagg is the pools of a disaggregated deployment (nil: one
	// engine does both).
	Disagg *DisaggResult `json:"disagg,omitempty"`
}

// Memory is one GPU's memory as the engine lays it out. Sizes in bytes.
type Memory struct {
	Usable    float64 `json:"usable_bytes"`
	Weights   float64 `json:"weights_bytes"`
	Workspace float64 `json:"workspace_bytes"`
	// KV is the pool of KV blocks; KVTokens the tokens it holds and
	// KVSequences the requests of ISL+OSL tokens at once.
	// KVPerToken is a request's cache over its ISL+OSL tokens.
	KV          float64 `json:"kv_bytes"`
	KVPerToken  float64 `json:"kv_bytes_per_token"`
	KVTokens    int64   `json:"kv_tokens"`
	KVSequences int64   `json:"kv_sequences"`
	// Fits: the weights and workspace fit in the engine's share, and the
	// pool holds at least one request.
	Fits bool `json:"fits"`
}

// Planner answers queries, keeping the models, devices and step prices it
// has made for the next query: a batch or a search prices each op list
// once. A Planner is not safe for concurrent use.
type Planner struct {
	configs map[string]model.Config
	models  map[string]*roofline.Model
	pricers map[pricerKey]*pricer
}

type pricerKey struct {
	model, device string
	shape         model.Shape
}

// layout is one engine's parallelism: tp GPUs per attention replica, dp
// replicas, the experts split ep ways and each moeTP ways.
type layout struct{ tp, dp, ep, moeTP int64 }

func (q Query) layout() layout { return layout{q.TP, q.DP, q.EP, q.MoETP} }

// NewPlanner returns an empty planner.
func NewPlanner() *Planner {
	return &Planner{configs: map[string]model.Config{}, models: map[string]*roofline.Model{}, pricers: map[pricerKey]*pricer{}}
}

// Answer answers q with a fresh planner.
func (q Query) Answer() (Result, error) { return NewPlanner().Answer(q) }

func (p *Planner) config(q Query) (model.Config, error) {
	if q.Config != nil {
		return *q.Config, nil
	}
	if c, ok := p.configs[q.Model]; ok {
		return c, nil
	}
	c, err := model.LoadBuiltin(q.Model)
	if err != nil {
		return model.Config{}, err
	}
	p.configs[q.Model] = c
	return c, nil
}

func (p *Planner) roofline(name string) (*roofline.Model, error) {
	if m, ok := p.models[name]; ok {
		return m, nil
	}
	d, err := devices.Lookup(name)
	if err != nil {
		return nil, err
	}
	m, err := roofline.New(d)
	if err != nil {
		return nil, err
	}
	p.models[name] = m
	return m, nil
}

// replica is one engine replica of a query, ready to simulate.
type replica struct {
	c      model.Config
	m      *roofline.Model
	e      Engine
	shape  model.Shape
	pr     *pricer
	memory Memory
	blocks int64
}

// prepare resolves q's model, device and engine and lays out the memory of
// one replica of parallelism l.
func (p *Planner) prepare(q Query, l layout) (replica, error) {
	c, err := p.config(q)
	if err != nil {
		return replica{}, err
	}
	m, err := p.roofline(q.Device)
	if err != nil {
		return replica{}, err
	}
	e, err := q.engine()
	if err != nil {
		return replica{}, err
	}
	s := model.Shape{TP: l.tp}
	if q.Weights != "" {
		if s.Weights, err = model.ParseWeightType(q.Weights); err != nil {
			return replica{}, err
		}
	}
	if q.KV != "" {
		if s.KV, err = devices.ParseDType(q.KV); err != nil {
			return replica{}, err
		}
	}
	if s, err = c.FillShape(s); err != nil {
		return replica{}, err
	}
	if _, err := m.Device().Peak(devices.FP4, devices.Tensor); err != nil {
		// A GPU without fp4 tensor cores runs 4-bit weights dequantized
		// into bf16 GEMMs (w4a16, as vLLM's Marlin kernels run NVFP4 and
		// MXFP4 checkpoints on Hopper).
		for _, w := range []*model.WeightType{&s.Weights, &s.ExpertWeights} {
			if *w == model.WeightType(devices.FP4) {
				*w = model.Int4
			}
		}
	}
	ranks := int64(1) // the attention replicas that share the experts
	if c.Experts == 0 {
		if l.ep > 1 {
			return replica{}, fmt.Errorf("%s has no routed experts: expert parallelism (ep %d) needs a MoE model", c.Name, l.ep)
		}
	} else {
		s.EP, s.MoETP = l.ep, l.moeTP
		if ranks, err = model.ExpertLayout(l.tp, l.ep, l.moeTP); err != nil {
			return replica{}, err
		}
	}
	e = e.onDevice(m.Device(), l.tp*ranks, ranks > 1, q)
	r := replica{c: c, m: m, e: e, shape: s}
	key := pricerKey{c.Name, m.Device().Name, s}
	if q.Config != nil {
		key.model = "file:" + q.Model
	}
	if r.pr = p.pricers[key]; r.pr == nil {
		if r.pr, err = newPricer(c, s, m); err != nil {
			return replica{}, err
		}
		p.pricers[key] = r.pr
	}
	r.memory, r.blocks, err = memoryLayout(c, s, m.Device(), e, q.ISL+q.OSL)
	return r, err
}

// memoryLayout is the engine's memory on one GPU: the weights (the routed
// experts over the GPUs they span), the activations of a full step (the
// token budget at once) and the KV blocks in what the engine's share
// leaves.
func memoryLayout(c model.Config, s model.Shape, d devices.Device, e Engine, request int64) (Memory, int64, error) {
	s.Phase, s.Batch, s.Seq = model.Prefill, 1, e.MaxTokens
	mm, err := c.Memory(s, d)
	if err != nil {
		return Memory{}, 0, err
	}
	// A request's cache over its tokens: sliding-window layers hold their
	// window and linear-attention layers their state (the engines size
	// those layers' pools apart: vLLM's hybrid KV cache manager,
	// TensorRT-LLM's variable sliding window, SGLang's SWA pool).
	r := s
	r.Phase, r.Batch, r.Seq, r.Ctx = model.Decode, 1, 0, request-1
	rm, err := c.Memory(r, d)
	if err != nil {
		return Memory{}, 0, err
	}
	mem := Memory{Usable: model.Allocatable(d), Weights: mm.Weights, Workspace: mm.Workspace, KVPerToken: rm.KV / float64(request)}
	switch e.MemoryOf {
	case "free":
		mem.KV = e.MemoryShare * (mem.Usable - mem.Weights - mem.Workspace)
	default:
		mem.KV = e.MemoryShare*mem.Usable - mem.Weights - mem.Workspace
	}
	mem.KV = max(mem.KV, 0)
	blocks := int64(mem.KV / (mem.KVPerToken * float64(e.BlockSize)))
	mem.KVTokens = blocks * e.BlockSize
	mem.KVSequences = mem.KVTokens / request
	mem.Fits = mem.KVSequences >= 1
	return mem, blocks, nil
}

// Answer answers q: it simulates one replica serving its share of the
// clients (or of the rate) and scales the throughput by the replicas.
func (p *Planner) Answer(q Query) (Result, error) {
	q = q.Filled()
	if err := q.Validate().Err(); err != nil {
		return Result{}, err
	}
	if q.Disagg != nil {
		return p.answerDisagg(q)
	}
	r, err := p.prepare(q, q.layout())
	if err != nil {
		return Result{}, err
	}
	res := Result{Query: q, Model: r.c.Name, Device: r.m.Device().Name, Engine: r.e, GPUs: q.TP * q.DP, Memory: r.memory}
	if !r.memory.Fits {
		res.Notes = append(res.Notes, fmt.Sprintf("does not fit: %s's share of memory less the weights and activations holds no request of %d tokens",
			r.e.Title, q.ISL+q.OSL))
		return res, nil
	}
	l := load{isl: q.ISL, osl: q.OSL, ratio: q.RangeRatio,
		clients:  ceilDiv(q.Concurrency, q.DP),
		requests: ceilDiv(q.Requests, q.DP),
		rate:     q.Rate / float64(q.DP)}
	var run run
	if l.clients > 0 {
		run, err = closedLoop(r.e, r.pr, r.blocks, l, q.simPerClient())
	} else {
		run, err = simulate(r.e, r.pr, r.blocks, l)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s on %s: %w", r.c.Name, res.Device, err)
	}
	res.TTFT, res.TPOT, res.E2E = run.ttftStats(), stat(run.tpot), stat(run.e2e)
	res.TokensPerSecond = float64(run.outTokens) / run.duration * float64(q.DP)
	res.PerGPU = res.TokensPerSecond / float64(res.GPUs)
	if res.TPOT.Mean > 0 {
		res.PerUser = 1 / res.TPOT.Mean
	}
	res.Steps, res.Preemptions, res.MeanBatch = run.steps, run.preemptions, run.batch
	res.Simulated = int64(len(run.e2e)) * q.DP
	if run.preemptions > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("KV blocks ran out: %d preemptions (recomputed)", run.preemptions))
	}
	return res, nil
}

func ceilDiv(a, b int64) int64 {
	if a == 0 {
		return 0
	}
	return int64(math.Ceil(float64(a) / float64(b)))
}
