package train

import (
	"encoding/json"
	"strings"
	"testing"
)

// A step that does not fit has no time: the review says so, and JSON
// writes its times as null. They were 0 s.
func TestReviewNoFit(t *testing.T) {
	m := h100(t)
	c := builtin(t, "llama-3.1-8b")
	rep, err := Review(c, Request{Batch: 64, Seq: 8192}, m)
	if err != nil {
		t.Fatal(err)
	}
	if rep.NoTime == "" || rep.Expected != 0 || rep.LowerBound != 0 {
		t.Errorf("no time %q, expected %g s, lower bound %g s", rep.NoTime, rep.Expected, rep.LowerBound)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"expected_seconds":null`, `"lower_bound_seconds":null`, `"no_time":"the step does not fit"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	// A step that fits keeps its figures.
	rep, err = Review(c, Request{Batch: 1, Seq: 1024, Ckpt: FullCkpt}, m)
	if err != nil || rep.NoTime != "" || !(rep.Expected > 0) || !(rep.LowerBound > 0) || rep.LowerBound > rep.Expected {
		t.Errorf("a step that fits: %v, no time %q, expected %g s, lower bound %g s", err, rep.NoTime, rep.Expected, rep.LowerBound)
	}
}
