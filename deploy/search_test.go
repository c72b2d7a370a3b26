package deploy

import (
	"strings"
	"testing"
)

// The search ranks what meets the target by tokens/s per GPU, each failure
// carries its reason, and the Pareto front is not dominated.
func TestSearch(t *testing.T) {
	s := Search{Base: Query{Model: "llama-3.1-8b", ISL: 512, OSL: 64}, Devices: []string{"h100"}, TTFT: 1, TPOT: 0.012}
	r, err := s.Answer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Met == 0 || r.Met == len(r.Candidates) {
		t.Fatalf("%d of %d candidates meet the target; want some but not all", r.Met, len(r.Candidates))
	}
	for i, c := range r.Candidates {
		meets := c.Fails == ""
		if meets != (i < r.Met) {
			t.Errorf("candidate %d (%s, %d clients): fails %q, out of rank", i, c.Layout(), c.Result.Query.Concurrency, c.Fails)
		}
		if meets && (c.Result.TTFT.Mean > s.TTFT || c.Result.TPOT.Mean > s.TPOT) {
			t.Errorf("candidate %d meets the target with TTFT %g, TPOT %g", i, c.Result.TTFT.Mean, c.Result.TPOT.Mean)
		}
		if !meets && c.Result.Memory.Fits && c.Result.PerGPU > 0 && !strings.Contains(c.Fails, "TPOT") && !strings.Contains(c.Fails, "TTFT") {
			t.Errorf("candidate %d fails for %q", i, c.Fails)
		}
		if i > 0 && i < r.Met && c.Result.PerGPU > r.Candidates[i-1].Result.PerGPU {
			t.Errorf("candidate %d out of order", i)
		}
	}
	front := r.Pareto("H100 SXM")
	for i := 1; i < len(front); i++ {
		if front[i].Result.PerUser > front[i-1].Result.PerUser || front[i].Result.PerGPU <= front[i-1].Result.PerGPU {
			t.Errorf("front point %d does not trade tokens/s per user for per GPU", i)
		}
	}
	if err := (Search{Base: Query{Model: "llama-3.1-8b"}, Devices: []string{"h100"}}).Validate().Err(); err == nil {
		t.Error("a search without a target is valid")
	}
}
