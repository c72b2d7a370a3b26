package model

import (
	"github.com/gpucalc/gpucalc/roofline"
	"strings"
	"testing"
)

func TestParseEngine(t *testing.T) {
	for in, want := range map[string]Engine{"graph": Graph, "EAGER": Eager} {
		if got, err := ParseEngine(in); err != nil || got != want {
			t.Errorf("ParseEngine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseEngine("vllm"); err == nil {
		t.Error("ParseEngine(vllm): no error")
	}
}

// The eager engine launches transformers' kernels: eight per RMSNorm, K and
// V repeated at decode (a mask is present) before an unsplit SDPA; MoE and
// MLA models are refused rather than priced as dense ones.
func TestEagerOps(t *testing.T) {
	c := builtin(t, "llama-3.1-8b")
	ops, err := c.Ops(Shape{Phase: Decode, Batch: 1, Ctx: 4096, Engine: Eager})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, o := range ops {
		names[o.Name] += o.Count
	}
	if names["repeat_kv"] != 2*32 || names["input_norm_rsqrt"] != 32 || names["attention"] != 32 {
		t.Errorf("eager decode ops: repeat_kv %d, input_norm_rsqrt %d, attention %d; want 64, 32, 32", names["repeat_kv"], names["input_norm_rsqrt"], names["attention"])
	}
	for _, o := range ops {
		if o.Name == "attention" && (o.Op.KVHeads != 32 || o.Op.Impl != "heads") {
			t.Errorf("eager decode attention %s: want the 32 repeated heads, impl=heads", o.Op)
		}
	}
	for _, name := range []string{"mixtral-8x7b-v0.1", "deepseek-v3"} {
		if _, err := builtin(t, name).Ops(Shape{Phase: Decode, Batch: 1, Ctx: 16, Engine: Eager}); err == nil || !strings.Contains(err.Error(), "--engine graph") {
			t.Errorf("%s eager: %v", name, err)
		}
	}
}

// TestEagerLaunchBound: an eager step whose CPU launches outlast its GPU
// time is dominated by launches, whatever its GPU time is spent on; one
// whose GPU time is the longer is not. (Llama-3.1-8B's eager decode, 33 ms
// of wall time against 10 ms of GPU time, was "dominated by weights".)
func TestEagerLaunchBound(t *testing.T) {
	m, err := roofline.New(lookup(t, "h100"))
	if err != nil {
		t.Fatal(err)
	}
	bound := 0
	for _, name := range []string{"llama-3.2-1b", "llama-3.1-8b", "qwen3-8b"} {
		c := builtin(t, name)
		for _, s := range []Shape{{Phase: Decode, Batch: 1, Ctx: 2048}, {Phase: Decode, Batch: 64, Ctx: 8192}, {Phase: Prefill, Batch: 1, Seq: 128}, {Phase: Prefill, Batch: 8, Seq: 4096}} {
			s.Engine = Eager
			r, err := c.Analyze(s, m)
			if err != nil {
				t.Fatal(err)
			}
			if launchBound := r.Wall > r.Expected; launchBound != (r.Dominant == Launches && r.Wall > r.Expected) {
				t.Errorf("%s %+v: wall %g s, GPU %g s, dominated by %s", name, s, r.Wall, r.Expected, r.Dominant)
			} else if launchBound {
				bound++
			}
		}
	}
	if bound == 0 {
		t.Error("no launch-bound step among the cases")
	}
}
