package model

import (
	"fmt"

	"github.com/gpucalc/gpucalc/roofline"
)

// Result is a model step on one device: memory per GPU, every op priced on
// the roofline, and the step's totals.
type Result struct {
	Model  string           `json:"model"`
	Device string           `json:"device"`
	Shape  Shape            `json:"shape"`
	Memory Memory           `json:"memory"`
	Ops    []Op             `json:"-"`
	Points []roofline.Point `json:"ops"`

	// LowerBound is the sum of the ops' roofline lower bounds (datasheet
	// peaks, no fixed costs): no implementation runs the step faster.
	LowerBound float64 `json:"lower_bound_seconds"`
	// Expected is the step's GPU time: with the graph engine a stream of
	// back-to-back kernels, each op's work at achievable rates plus the
	// kernel period; with the eager engine the kernels' durations summed,
	// each its ramp plus its work, as a profiler sums them (see Analyze).
	Expected float64 `json:"expected_seconds"`
	// Kernels is the number of kernels the step launches.
	Kernels int `json:"kernels"`
	// Wall is the eager engine's step as a user waits for it: the longer
	// of the GPU time (Expected) and the CPU's launches (Kernels ×
	// EagerCPUPerKernel). Zero for the graph engine, whose CPU cost is
	// nil.
	Wall float64 `json:"wall_seconds,omitempty"`
	// Time by category of op; Launches is the kernels' fixed cost.
	Time map[Category]float64 `json:"time_seconds_by_category"`
	// Dominant is the category taking the most expected time, or Launches
	// when the eager engine's CPU launches outlast the GPU time (the wall
	// time is the launches').
	Dominant Category `json:"dominant"`
	// TokensPerSecond is the tokens the step produces per second for the
	// batch (decode: one per sequence; prefill: the prompt tokens), at the
	// eager engine's wall time where it has one, and PerSequence for one
	// sequence.
	TokensPerSecond float64  `json:"tokens_per_second"`
	PerSequence     float64  `json:"tokens_per_second_per_sequence"`
	Notes           []string `json:"notes,omitempty"`
}

// Step is the time of the step as a user sees it: the eager engine's wall
// time, else the expected time.
func (r Result) Step() float64 {
	if r.Wall > 0 {
		return r.Wall
	}
	return r.Expected
}

// Analyze prices one step of shape s with the roofline model m (one GPU of
// the tensor-parallel group; all ranks do the same work).
//
// With the graph engine each op's expected time is its work — the slower
// of its kernels' compute and memory time at the achievable rates roofline
// uses — plus the kernel period: the device's measured time per
// back-to-back empty kernel (launch, start-up and drain; roofline's launch
// overhead), at least one period per kernel (roofline's BackToBack). That
// is how kernels run when the GPU is the bottleneck: a decode step replayed
// as a CUDA graph (no CPU launch cost, the way the reference decoder is
// timed), or a prefill long enough that the CPU queues kernels ahead of the
// GPU.
//
// With the eager engine the expected time is the GPU time a profiler sums:
// each kernel's ramp plus its work (roofline's Busy), no launch gaps; Wall
// adds what the CPU costs, the longer of that and the kernels' launches.
func (c Config) Analyze(s Shape, m *roofline.Model) (Result, error) {
	s, err := c.fill(s)
	if err != nil {
		return Result{}, err
	}
	d := m.Device()
	mem, err := c.Memory(s, d)
	if err != nil {
		return Result{}, err
	}
	list, err := c.Ops(s)
	if err != nil {
		return Result{}, err
	}
	if s.gpus() > 1 && d.Peer().BytesPerSecond <= 0 {
		return Result{}, fmt.Errorf("%s has no GPU-to-GPU or host link in the catalog: cannot price tp=%d ep=%d", d.Name, s.TP, s.EP)
	}
	r := Result{Model: c.Name, Device: d.Name, Shape: s, Memory: mem, Ops: list,
		Points: make([]roofline.Point, 0, len(list)), Time: map[Category]float64{}}
	for _, o := range list {
		p, err := m.Analyze(o.Op)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", o.Name, err)
		}
		p.Name, p.Count = o.Name, o.Count
		n := float64(o.Count)
		if s.Engine == Eager {
			p.Expected = m.Busy(p)
		} else {
			p.Expected = m.BackToBack(p)
		}
		work := p.Expected
		if o.Category != Comm {
			work = p.Work()
			r.Kernels += o.Count * p.Kernels
			r.Time[Launches] += n * (p.Expected - work)
		}
		r.Time[o.Category] += n * work
		r.Expected += n * p.Expected
		r.LowerBound += n * p.LowerBound
		r.Points = append(r.Points, p)
	}
	for _, k := range []Category{Weights, KVCache, Elementwise, Comm, Launches} {
		if r.Time[k] > r.Time[r.Dominant] {
			r.Dominant = k
		}
	}
	tokens := float64(s.Batch)
	if s.Phase == Prefill {
		tokens *= float64(s.Seq)
	}
	step := r.Expected
	if s.Engine == Eager {
		r.Wall = max(float64(r.Kernels)*EagerCPUPerKernel, r.Expected)
		step = r.Wall
		if r.Wall > r.Expected {
			// The CPU's launches set the pace: the GPU idles between
			// kernels, whatever its own time is spent on.
			r.Dominant = Launches
		}
	}
	r.TokensPerSecond = tokens / step
	r.PerSequence = r.TokensPerSecond / float64(s.Batch)
	what, n := "a prompt", s.Seq
	if s.Phase == Decode {
		what, n = "a context", s.Ctx
	}
	if w := c.beyondPositions(what, n); w != "" {
		r.Notes = append(r.Notes, w)
	}
	if !mem.Fits && mem.Usable == 0 {
		held := "the CUDA context"
		if s.gpus() > 1 {
			held += " and NCCL's communicator"
		}
		r.Notes = append(r.Notes, fmt.Sprintf("does not fit: %s's %.1f GiB cannot hold %s", d.Name, float64(d.Memory.Bytes)/(1<<30), held))
	} else if !mem.Fits {
		r.Notes = append(r.Notes, fmt.Sprintf("does not fit: %.1f GiB needed per GPU, %.1f GiB usable", mem.Total/(1<<30), mem.Usable/(1<<30)))
	}
	return r, nil
}
