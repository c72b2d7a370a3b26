package train

import (
	"fmt"
	"sort"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/roofline"
)

// Result answers one training setup on one device.
type Result struct {
	Model   string     `json:"model"`
	Device  string     `json:"device"`
	Request Request    `json:"request"`
	Params  ParamCount `json:"params"`
	Memory  Memory     `json:"memory"`
	// Time is the step's time, nil when the steady step does not fit (a
	// time for a step that cannot run would mislead).
	Time *Time `json:"time,omitempty"`
	// MaxBatch is the largest micro-batch of this sequence length that
	// fits (0: not even one sequence).
	MaxBatch int64 `json:"max_batch"`
	// Changes are single changes that make a setup that does not fit fit,
	// the smallest first (empty when it fits, or when none does).
	Changes []Change `json:"changes,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// Change is one change to the request and the peak it gives.
type Change struct {
	What    string  `json:"change"`
	Request Request `json:"request"`
	Peak    float64 `json:"peak_bytes"`
}

// Analyze answers request r for model c on the roofline model m's device:
// memory at the peak, the largest micro-batch that fits, the changes that
// make it fit, and the step's time.
func Analyze(c model.Config, r Request, m *roofline.Model) (Result, error) {
	return analyze(c, r, newPricer(m))
}

func analyze(c model.Config, r Request, pr pricer) (Result, error) {
	m := pr.m
	r = r.Defaults()
	if err := r.Validate(c); err != nil {
		return Result{}, err
	}
	d := m.Device()
	usable := model.Usable(d, r.GPUs)
	l := newLayout(c, r)
	res := Result{Model: c.Name, Device: d.Name, Request: r, Params: l.n, Memory: l.memory(usable)}
	res.MaxBatch = l.maxBatch(usable)
	if !res.Memory.Fits {
		res.Changes = changes(c, r, d, res.MaxBatch)
	}
	if res.Memory.Verdict != DoesNotFit {
		t, err := l.time(pr)
		if err != nil {
			return Result{}, err
		}
		res.Time = &t
	}
	if c.MaxPositions > 0 && r.Seq > c.MaxPositions {
		res.Notes = append(res.Notes, fmt.Sprintf("%d tokens per sequence is beyond the %d positions of %s: memory and time hold, the model's output does not", r.Seq, c.MaxPositions, c.Name))
	}
	if r.GPUs > 8 {
		res.Notes = append(res.Notes, fmt.Sprintf("communication is priced on %s's GPU-to-GPU link as if all %d GPUs shared it; a network between hosts is not modelled", d.Name, r.GPUs))
	}
	return res, nil
}

// MaxBatch is the largest micro-batch of r's sequence length whose step
// fits in usable bytes (0 when one sequence does not).
func MaxBatch(c model.Config, r Request, usable float64) int64 {
	return newLayout(c, r.Defaults()).maxBatch(usable)
}

func (l layout) maxBatch(usable float64) int64 {
	// Memory grows with the batch: the first batch that does not fit.
	return int64(sort.Search(MaxSequences, func(i int) bool {
		l.r.Batch = int64(i) + 1
		return !l.memory(usable).Fits
	}))
}

// changes tries single changes, the least intrusive first: DDP's
// gradient_as_bucket_view, a smaller micro-batch (the same global batch
// through gradient accumulation),
// checkpointing, LoRA, a ZeRO stage over the GPUs there are, then more
// GPUs sharded with ZeRO-3 (FSDP). Every change keeps the global batch
// (micro-batch × accumulation steps × data-parallel GPUs), so a smaller
// micro-batch divides it and more GPUs take a smaller micro-batch each.
// After gradient_as_bucket_view (free, and the fix for DDP's second step),
// the changes that fit with room come before those that fit only tightly,
// each group least intrusive first.
func changes(c model.Config, r Request, d devices.Device, maxB int64) []Change {
	var roomy, tight []Change
	try := func(what string, n Request) {
		if n.Validate(c) != nil {
			return
		}
		m := newLayout(c, n).memory(model.Usable(d, n.GPUs))
		switch ch := (Change{What: what, Request: n, Peak: m.SecondStep}); {
		case m.Verdict == Fits:
			roomy = append(roomy, ch)
		case m.Fits:
			tight = append(tight, ch)
		}
	}
	if r.ZeRO <= 1 && r.DP() > 1 && !r.BucketView {
		n := r
		n.BucketView = true
		try("DDP's gradient_as_bucket_view=True (--bucket-view)", n)
		// It costs no time and is the fix for DDP's second step: first,
		// even where it fits tightly.
		roomy, tight = append(roomy, tight...), nil
	}
	// The largest micro-batch that fits and divides the batch: 3 × 2
	// accumulation steps is 6 sequences, not 4.
	if b := largestDivisor(r.Batch, maxB); b > 0 && b < r.Batch {
		n := r
		n.Batch = b
		try(fmt.Sprintf("micro-batch %d with %d gradient-accumulation steps (--batch %d)", b, r.Batch/b, b), n)
	}
	if r.Ckpt == NoCkpt {
		n := r
		n.Ckpt = FullCkpt
		try("activation checkpointing (--ckpt full)", n)
	}
	if r.Method == Full {
		n := r
		n.Method, n.Precision = LoRA, BF16
		n.LoRARank, n.LoRAAlpha, n.LoRATargets = DefaultRank, DefaultAlpha, []string{"all-linear"}
		try("LoRA (--method lora)", n)
	}
	if r.DP() > 1 {
		for z := r.ZeRO + 1; z <= 3; z++ {
			n := r
			n.ZeRO = z
			try(fmt.Sprintf("ZeRO stage %d over the %d GPUs (--zero %d)", z, r.GPUs, z), n)
		}
	}
	global := r.Batch * r.DP()
	for g := r.GPUs * 2; g <= 8*r.TP && g <= r.GPUs*8; g *= 2 {
		n := r
		n.GPUs, n.ZeRO = g, 3
		if global%n.DP() != 0 {
			break // more data-parallel ranks than the global batch's sequences
		}
		n.Batch = global / n.DP()
		what := fmt.Sprintf("%d GPUs with ZeRO-3 / FSDP (--gpus %d --zero 3)", g, g)
		if n.Batch != r.Batch {
			what = fmt.Sprintf("%d GPUs with ZeRO-3 / FSDP, micro-batch %d each (--gpus %d --zero 3 --batch %d)", g, n.Batch, g, n.Batch)
		}
		try(what, n)
	}
	return append(roomy, tight...)
}

// largestDivisor is the largest divisor of n that is at most max (0 when
// max < 1).
func largestDivisor(n, max int64) int64 {
	for b := min(n, max); b >= 1; b-- {
		if n%b == 0 {
			return b
		}
	}
	return 0
}
