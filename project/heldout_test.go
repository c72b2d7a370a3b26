package project

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// The held-out workloads (testdata/heldout): traced on both GPUs like the
// shared pairs and used only to check the method once it was built. Each
// trace projected to the other GPU: a median error of at most 3% over
// workloads and directions, none over 6%.
func TestHeldOut(t *testing.T) {
	dir := filepath.Join("testdata", "heldout")
	steps := map[string]map[string]float64{}
	for g := range gpus {
		steps[g] = stepsKernelMS(t, filepath.Join(dir, "steps_"+g+".csv"))
	}
	var errs []float64
	for _, name := range []string{"llama1b_train", "vit_b16_train", "bert_base_train", "qwen1p5b_decode_b32", "qwen1p5b_decode_b1"} {
		p := pair{dir, name}
		for g := range gpus {
			if got, want := 1e3*kernelSeconds(t, p.file(g)), steps[g][name]; math.Abs(got-want) > 1e-3 {
				t.Fatalf("%s on %s: the trace's kernels take %.4f ms, steps_%s.csv says %.4f", name, g, got, g, want)
			}
		}
		errs = append(errs, checkPair(t, p, 0.06, 0.10)...)
	}
	abs := make([]float64, len(errs))
	for i, e := range errs {
		abs[i] = math.Abs(e)
	}
	slices.Sort(abs)
	med := (abs[len(abs)/2-1] + abs[len(abs)/2]) / 2
	t.Logf("held out: median error %.2f%%, worst %.2f%% over %d projections", 100*med, 100*abs[len(abs)-1], len(abs))
	if med > 0.03 {
		t.Errorf("held out: median error %.2f%%, over 3%%", 100*med)
	}
}
