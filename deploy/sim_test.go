package deploy

import (
	"math"
	"testing"
)

// A step that carries prefill tokens and is not replayed as a CUDA graph
// takes at least its kernels' launches from the host. Against the two
// published eager forwards the constant comes from: SGLang's DeepSeek-V3
// over one new token, 82.6 ms (sgl-project/sglang pull request 12160), and
// a Qwen3-4B prefill of 129 tokens, 16.6 ms (wejoncy/sfllm pull request 46;
// Qwen3-8B's op list has its 36 layers and kernels), both far above their
// GPU time (23.1 and 5.7 ms as CUDA graphs).
func TestHostLaunches(t *testing.T) {
	for _, c := range []struct {
		model, device string
		tp, tokens    int64
		eager         float64
	}{
		{"deepseek-v3", "h200", 8, 1, 82.6e-3},
		{"qwen3-8b", "h100", 1, 129, 16.6e-3},
	} {
		q := Query{Model: c.model, Device: c.device, TP: c.tp, Engine: "sglang"}.Filled()
		r, err := NewPlanner().prepare(q, q.layout())
		if err != nil {
			t.Fatal(err)
		}
		sim := &simulator{e: r.e, p: r.pr, l: load{isl: c.tokens, osl: 2}}
		dt, err := sim.stepTime(nil, []chunk{{&seq{target: c.tokens}, c.tokens}})
		if err != nil {
			t.Fatal(err)
		}
		if got := dt - r.e.StepOverhead; math.Abs(got-c.eager)/c.eager > 0.15 {
			t.Errorf("%s: an eager prefill of %d tokens takes %.1f ms; measured %.1f ms", c.model, c.tokens, got*1e3, c.eager*1e3)
		}
	}
	// vLLM replays piecewise graphs up to 512 tokens: a 512-token step is
	// the GPU's time, a 513-token one the host's launches.
	q := Query{Model: "deepseek-v3", Device: "b200", TP: 8, Engine: "vllm"}.Filled()
	r, err := NewPlanner().prepare(q, q.layout())
	if err != nil {
		t.Fatal(err)
	}
	sim := &simulator{e: r.e, p: r.pr, l: load{isl: 513, osl: 2}}
	graph, err := sim.stepTime(nil, []chunk{{&seq{target: 512}, 512}})
	if err != nil {
		t.Fatal(err)
	}
	eager, err := sim.stepTime(nil, []chunk{{&seq{target: 513}, 513}})
	if err != nil {
		t.Fatal(err)
	}
	host := r.pr.launches * hostKernelSeconds
	if graph >= host || math.Abs(eager-r.e.StepOverhead-host) > 1e-9 {
		t.Errorf("vLLM: 512 tokens %.1f ms, 513 tokens %.1f ms; host launches %.1f ms", graph*1e3, eager*1e3, host*1e3)
	}
	// Under an overlap scheduler the launches start with the previous step.
	sim.last = 0.02
	if after, _ := sim.stepTime(nil, []chunk{{&seq{target: 513}, 513}}); math.Abs(after-r.e.StepOverhead-(host-0.02)) > 1e-9 {
		t.Errorf("after a 20 ms step: %.1f ms; want the launches less 20 ms", after*1e3)
	}
}
