package train

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/model"
)

// TestAnswersInRange: over random setups, every figure of an answer is
// finite and in its range. Byte counts are whole and not negative (ZeRO
// over 3 GPUs held 5353507498.67 bytes of weights), the peak is at least
// the states and at most the sum of what it itemises, a step that fits has
// positive times adding up, MFU within (0, 1], and one that does not fit
// has none.
func TestAnswersInRange(t *testing.T) {
	m := h100(t)
	models := []model.Config{builtin(t, "llama-3.2-1b"), builtin(t, "llama-3.1-8b"), builtin(t, "qwen3-8b")}
	rng := rand.New(rand.NewPCG(35, 1))
	pick := func(xs ...int64) int64 { return xs[rng.IntN(len(xs))] }
	for i := range 300 {
		c := models[rng.IntN(len(models))]
		tp := pick(1, 2, 4)
		r := Request{Method: []Method{Full, LoRA}[rng.IntN(2)], Precision: []Precision{BF16, Mixed}[rng.IntN(2)],
			Optimizer: []Optimizer{AdamW, SGD}[rng.IntN(2)], Ckpt: []Ckpt{NoCkpt, FullCkpt}[rng.IntN(2)],
			Batch: 1 + rng.Int64N(16), Seq: pick(128, 1000, 2048, 4097), TP: tp, GPUs: tp * pick(1, 2, 3, 5, 8), ZeRO: rng.Int64N(4)}
		if r.Method == LoRA {
			r.Precision = BF16
		}
		if r.Validate(c) != nil {
			continue
		}
		res, err := Analyze(c, r, m)
		if err != nil {
			t.Fatalf("%d: %s %+v: %v", i, c.Name, r, err)
		}
		where := func() string { return c.Name }
		mem := reflect.ValueOf(res.Memory)
		for j := range mem.NumField() {
			f := mem.Type().Field(j)
			if !strings.HasSuffix(f.Tag.Get("json"), "_bytes") || f.Type.Kind() != reflect.Float64 {
				continue
			}
			if v := mem.Field(j).Float(); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v != math.Trunc(v) {
				t.Errorf("%s %+v: %s = %v bytes; want a whole number, 0 or more", where(), r, f.Tag.Get("json"), v)
			}
		}
		x := res.Memory
		items := x.Weights + x.Grads + x.Optimizer + x.Copies + x.Activations + x.Logits + x.Transient + x.Other + x.Rebuild
		if x.Peak < x.Weights+x.Optimizer || x.Peak > items+1 {
			t.Errorf("%s %+v: peak %g outside its items (states %g, all %g)", where(), r, x.Peak, x.Weights+x.Optimizer, items)
		}
		if x.Fits != (x.SecondStep <= x.Usable) || x.SecondStep < x.Peak || (x.Verdict == DoesNotFit) != (x.Peak > x.Usable) {
			t.Errorf("%s %+v: fits %v, %s, with a peak of %g (second step %g) of %g usable", where(), r, x.Fits, x.Verdict, x.Peak, x.SecondStep, x.Usable)
		}
		tm := res.Time
		if (tm == nil) != (x.Verdict == DoesNotFit) {
			t.Errorf("%s %+v: %s, with a time %v", where(), r, x.Verdict, tm != nil)
		}
		if tm == nil {
			continue
		}
		for name, v := range map[string]float64{"forward": tm.Forward, "backward": tm.Backward, "optimizer": tm.Optimizer,
			"gpu": tm.GPU, "step": tm.Step, "tokens/s": tm.TokensPerSecond} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("%s %+v: %s = %v", where(), r, name, v)
			}
		}
		if !(tm.MFU > 0 && tm.MFU <= 1) || tm.Step < tm.GPU*(1-1e-12) || tm.Comm < 0 || tm.Recompute < 0 {
			t.Errorf("%s %+v: MFU %v, step %v of GPU time %v, exposed comm %v, recompute %v", where(), r, tm.MFU, tm.Step, tm.GPU, tm.Comm, tm.Recompute)
		}
	}
}
