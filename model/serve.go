package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/roofline"
)

// Request is a serving question: batch sequences of a prompt, decoding at a
// context, optionally generating a number of tokens.
type Request struct {
	Batch int64 `json:"batch"`
	// Prompt tokens prefilled per sequence.
	Prompt int64 `json:"prompt"`
	// Ctx tokens in the cache when a decode step is timed (default: the
	// prompt).
	Ctx int64 `json:"ctx"`
	// Gen tokens generated (0: no end-to-end time).
	Gen int64 `json:"gen"`
	// Shape's TP, expert layout and data types apply to both phases.
	TP          int64         `json:"tp"`
	EP          int64         `json:"ep,omitempty"`
	MoETP       int64         `json:"moe_tp,omitempty"`
	Weights     WeightType    `json:"weights_dtype"`
	Activations devices.DType `json:"activations_dtype"`
	KV          devices.DType `json:"kv_dtype"`
	// ExpertWeights is the routed experts' storage type (see
	// Shape.ExpertWeights).
	ExpertWeights WeightType `json:"expert_weights_dtype,omitempty"`
	// FullCache sizes sliding-window layers' caches for the whole context
	// (see Shape.FullCache).
	FullCache bool `json:"full_cache,omitempty"`
	// Engine runs both phases (default Graph).
	Engine Engine `json:"engine"`
}

// Defaults of a request.
const (
	DefaultBatch  = 1
	DefaultPrompt = 2048
)

// Defaults fills unset fields.
func (q Request) Defaults() Request {
	if q.Batch == 0 {
		q.Batch = DefaultBatch
	}
	if q.Prompt == 0 {
		q.Prompt = DefaultPrompt
	}
	if q.Ctx == 0 {
		q.Ctx = q.Prompt
	}
	s := Shape{TP: q.TP, Weights: q.Weights, ExpertWeights: q.ExpertWeights, Activations: q.Activations, KV: q.KV, Engine: q.Engine}.Defaults()
	q.TP, q.Weights, q.ExpertWeights, q.Activations, q.KV, q.Engine = s.TP, s.Weights, s.ExpertWeights, s.Activations, s.KV, s.Engine
	return q
}

func (q Request) shape(p Phase) Shape {
	return Shape{Phase: p, Batch: q.Batch, Seq: q.Prompt, Ctx: q.Ctx, TP: q.TP, EP: q.EP, MoETP: q.MoETP, Weights: q.Weights, ExpertWeights: q.ExpertWeights, Activations: q.Activations, KV: q.KV,
		FullCache: q.FullCache, Engine: q.Engine}
}

// Report answers a request on one device.
type Report struct {
	Model   string  `json:"model"`
	Device  string  `json:"device"`
	Request Request `json:"request"`
	// Memory is the larger of the prefill's and the decode step's (the
	// cache at its fullest: ctx, or prompt + gen); MemoryPhase says which,
	// and so whose activation workspace it holds.
	Memory      Memory `json:"memory"`
	MemoryPhase Phase  `json:"memory_phase"`
	// SmallestTP is the smallest tensor-parallel degree at which both
	// phases fit (0: none up to 64); above HostGPUs it spans hosts.
	SmallestTP int64 `json:"smallest_tp"`
	// Prefill and Decode are the priced steps, nil when the request does
	// not fit: a model that does not fit gets no times.
	Prefill *Result `json:"prefill"`
	Decode  *Result `json:"decode"`
	// TTFT is the prefill time; TPOT the decode step's, both expected (the
	// eager engine's wall time); nil when the request does not fit.
	TTFT *float64 `json:"ttft_seconds"`
	TPOT *float64 `json:"tpot_seconds"`
	// EndToEnd is TTFT plus gen decode steps, each at its own context
	// (their mean: the step at prompt + gen/2); 0 without gen or a fit.
	EndToEnd float64 `json:"end_to_end_seconds,omitempty"`
	// TextConfig is set for a multimodal config: the numbers are its
	// language model's (the text_config of that model_type), without the
	// vision tower.
	TextConfig string `json:"text_config,omitempty"`
	// Warnings are what the numbers hold despite: a context beyond the
	// model's positions.
	Warnings []string `json:"warnings,omitempty"`
	// NotAvailable is why the device cannot run the request ("no bf16
	// tensor cores"), in a side-by-side answer whose other devices can;
	// Error the whole message. Such a report has no memory or times.
	NotAvailable string `json:"not_available,omitempty"`
	Error        string `json:"error,omitempty"`
}

// HostGPUs is the GPUs of one host (an HGX or DGX board): tensor
// parallelism beyond them runs its all-reduces over the network between
// hosts, not over the GPU-to-GPU link the times are priced on.
const HostGPUs = 8

// Fits says whether the request fits in each GPU's memory; only then does
// the report carry times.
func (r Report) Fits() bool { return r.Memory.Fits }

// Serve answers request q for model c on the roofline model m. A request
// that does not fit is answered with its memory and the smallest TP that
// fits, and no times.
func (c Config) Serve(q Request, m *roofline.Model) (Report, error) {
	q, err := c.FillRequest(q)
	if err != nil {
		return Report{}, err
	}
	if q.Ctx < q.Prompt {
		return Report{}, fmt.Errorf("ctx=%d is less than prompt=%d: the cache holds the prompt, so decode runs at %d tokens of context or more; raise ctx or shorten the prompt", q.Ctx, q.Prompt, q.Prompt)
	}
	r := Report{Model: c.Name, Device: m.Device().Name, Request: q, TextConfig: c.TextConfig}
	longest := q.Ctx // the cache at its fullest
	if q.Gen > 0 {
		longest = max(longest, q.Prompt+q.Gen-1)
	}
	if w := c.beyondPositions("a context", longest); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if q.TP > HostGPUs {
		r.Warnings = append(r.Warnings, fmt.Sprintf("tp=%d spans more than one host's %d GPUs: TP across nodes runs its all-reduces over the network, "+
			"slower than the GPU-to-GPU link the times assume", q.TP, HostGPUs))
	}
	end := q.shape(Decode)
	if q.Gen > 0 {
		end.Ctx = max(end.Ctx, q.Prompt+q.Gen-1)
	}
	// Both steps are priced even when the request does not fit, so that
	// what cannot run at all (an engine's unmodelled layers, a missing
	// link) is an error either way.
	p, err := c.Analyze(q.shape(Prefill), m)
	if err != nil {
		return Report{}, err
	}
	d, err := c.Analyze(q.shape(Decode), m)
	if err != nil {
		return Report{}, err
	}
	dm, err := c.Memory(end, m.Device())
	if err != nil {
		return Report{}, err
	}
	r.Memory, r.MemoryPhase = dm, Decode
	if p.Memory.Total > dm.Total {
		r.Memory, r.MemoryPhase = p.Memory, Prefill
	}
	// Both phases must fit.
	if a, b := c.SmallestTP(end, m.Device()), c.SmallestTP(q.shape(Prefill), m.Device()); a > 0 && b > 0 {
		r.SmallestTP = max(a, b)
	}
	if !r.Fits() {
		return r, nil
	}
	ttft, tpot := p.Step(), d.Step()
	r.Prefill, r.Decode, r.TTFT, r.TPOT = &p, &d, &ttft, &tpot
	if q.Gen > 0 {
		mid := q.shape(Decode)
		mid.Ctx = q.Prompt + q.Gen/2
		step, err := c.Analyze(mid, m)
		if err != nil {
			return Report{}, err
		}
		r.EndToEnd = ttft + float64(q.Gen)*step.Step()
	}
	return r, nil
}

// ServeBeside answers q on m as one of several devices side by side: a
// device that cannot run the model's types (roofline.UnsupportedError:
// bf16 on a V100) gets a report that says why, instead of an error that
// would abort the others' answers.
func (c Config) ServeBeside(q Request, m *roofline.Model) (Report, error) {
	r, err := c.Serve(q, m)
	if err != nil {
		return c.notAvailable(q, m, err)
	}
	return r, nil
}

// notAvailable is the report of a device that cannot run q's types (err a
// roofline.UnsupportedError), else err.
func (c Config) notAvailable(q Request, m *roofline.Model, err error) (Report, error) {
	var ue *roofline.UnsupportedError
	if errors.As(err, &ue) {
		q, _ = c.FillRequest(q)
		return Report{Model: c.Name, Device: m.Device().Name, Request: q, NotAvailable: ue.Reason(), Error: err.Error()}, nil
	}
	return Report{}, err
}

// Answered is an error when no report of a side-by-side answer has numbers:
// every device lacked what the model needs.
func Answered(name string, rs []Report) error {
	var gaps []string
	for _, r := range rs {
		if r.NotAvailable == "" {
			return nil
		}
		gaps = append(gaps, r.Error)
	}
	return fmt.Errorf("%s: no device can run it: %s", name, strings.Join(gaps, "; "))
}
