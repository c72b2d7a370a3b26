package model

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpucalc/gpucalc/roofline"
)

// TestAnswersInRange: over random shapes of every built-in on a few GPUs,
// every figure of an answer is finite and in its range: memory not
// negative, the expected time at least the lower bound and positive, the
// categories' times adding up to the expected time, tokens per second
// positive, and JSON writes it (a NaN anywhere fails there).
func TestAnswersInRange(t *testing.T) {
	names := []string{"llama-3.2-1b", "llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "qwen3-8b", "phi-3-mini-4k-instruct",
		"gemma-2-9b", "gemma-3-1b-it", "mixtral-8x7b-v0.1", "qwen3-30b-a3b", "deepseek-v3"}
	ms := []*roofline.Model{onDevice(t, "h100-sxm"), onDevice(t, "l4"), onDevice(t, "a100-sxm4-80gb")}
	rng := rand.New(rand.NewPCG(35, 2))
	configs := map[string]Config{}
	answered := 0
	for range 200 {
		name := names[rng.IntN(len(names))]
		c, ok := configs[name]
		if !ok {
			c = builtin(t, name)
			configs[name] = c
		}
		s := Shape{Phase: []Phase{Prefill, Decode}[rng.IntN(2)], Batch: 1 + rng.Int64N(64), Seq: 1 + rng.Int64N(8192),
			Ctx: rng.Int64N(32768), TP: []int64{1, 2, 4, 8}[rng.IntN(4)], Engine: []Engine{Graph, Eager}[rng.IntN(2)]}
		m := ms[rng.IntN(len(ms))]
		r, err := c.Analyze(s, m)
		if err != nil {
			continue // a tp the heads do not divide, an fp8 model on an A100: refused, not answered
		}
		answered++
		where := func() string { return name + " on " + m.Device().Name }
		mem := r.Memory
		for what, v := range map[string]float64{"weights": mem.Weights, "kv per token": mem.KVPerToken, "kv": mem.KV,
			"workspace": mem.Workspace, "total": mem.Total, "usable": mem.Usable} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s %+v: %s = %v bytes", where(), s, what, v)
			}
		}
		if !(r.LowerBound > 0) || r.Expected < r.LowerBound*(1-1e-9) || math.IsInf(r.Expected, 0) {
			t.Errorf("%s %+v: expected %v s, lower bound %v s", where(), s, r.Expected, r.LowerBound)
		}
		var sum float64
		for _, v := range r.Time {
			if v < 0 || math.IsNaN(v) {
				t.Errorf("%s %+v: a category's time %v", where(), s, v)
			}
			sum += v
		}
		if math.Abs(sum-r.Expected) > 1e-6*r.Expected {
			t.Errorf("%s %+v: categories sum to %v s of %v s", where(), s, sum, r.Expected)
		}
		if !(r.TokensPerSecond > 0) || math.IsInf(r.TokensPerSecond, 0) || !(r.PerSequence > 0) || r.Wall < 0 || r.Step() < r.Expected {
			t.Errorf("%s %+v: %v tokens/s, %v per sequence, wall %v s, step %v s", where(), s, r.TokensPerSecond, r.PerSequence, r.Wall, r.Step())
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("%s %+v: JSON: %v", where(), s, err)
		}
	}
	if answered < 100 {
		t.Errorf("%d of 200 shapes answered; the test checks too few", answered)
	}
}
