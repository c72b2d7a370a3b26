package deploy

import (
	"math"
	"strings"
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

// Under a range ratio each request's lengths are drawn as a benchmark's
// random dataset draws them: numpy's randint(int(ratio × n), n + 1), so
// InferenceMAX's 0.8 at 1024 tokens gives 819 to 1024, 921.5 on average;
// the query refuses a ratio outside (0, 1] and reproduces one it takes.
func TestRangeRatio(t *testing.T) {
	sim := &simulator{l: load{isl: 1024, osl: 8192, ratio: 0.8, requests: 1}}
	sim.lengths = newLengths(sim.l)
	var sumI, sumO float64
	const n = 20000
	for range n {
		s := sim.newSeq(0)
		if s.isl < 819 || s.isl > 1024 || s.osl < 6553 || s.osl > 8192 || s.target != s.isl {
			t.Fatalf("drew %d in, %d out: want 819 to 1024 and 6553 to 8192", s.isl, s.osl)
		}
		sumI += float64(s.isl)
		sumO += float64(s.osl)
	}
	if m := sumI / n; math.Abs(m-921.5)/921.5 > 0.005 {
		t.Errorf("mean prompt %.1f tokens, want 921.5", m)
	}
	if m := sumO / n; math.Abs(m-7372.5)/7372.5 > 0.005 {
		t.Errorf("mean output %.1f tokens, want 7372.5", m)
	}
	q := Query{Model: "llama-3.1-8b", Device: "h100", RangeRatio: 0.8}
	if a := q.Args().String(); !strings.Contains(a, "--range-ratio 0.8") {
		t.Errorf("args %q lack the range ratio", a)
	}
	q.RangeRatio = 1.5
	if err := q.Validate().Err(); err == nil || !strings.Contains(err.Error(), "range-ratio") {
		t.Errorf("range ratio 1.5: %v", err)
	}
}
