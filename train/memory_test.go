package train

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/model"
)

func builtin(t testing.TB, name string) model.Config {
	t.Helper()
	c, err := model.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestZeROPaper checks the model states per GPU against Rajbhandari et al.,
// "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models"
// (SC 2020), Figure 1: mixed-precision Adam holds 2Ψ + 2Ψ + KΨ bytes (K =
// 12); sharded over Nd GPUs, P_os = 2Ψ + 2Ψ + KΨ/Nd, P_os+g = 2Ψ +
// (2+K)Ψ/Nd, P_os+g+p = (2+2+K)Ψ/Nd. The paper's example, Ψ = 7.5B on
// Nd = 64, is 120, 31.4, 16.6 and 1.9 GB. Stage 1 in mixed precision is
// PyTorch's ZeroRedundancyOptimizer here (below); bf16 checks P_os's form.
func TestZeROPaper(t *testing.T) {
	c := builtin(t, "llama-3.1-8b")
	psi := float64(Count(c, Request{}.Defaults()).Total)
	const nd, k = 64.0, 12.0
	paper := []struct {
		formula float64 // bytes per Ψ
		example float64 // GB at Ψ = 7.5B
	}{
		{2 + 2 + k, 120}, {2 + 2 + k/nd, 31.4}, {2 + (2+k)/nd, 16.6}, {(2 + 2 + k) / nd, 1.9},
	}
	// --zero 1 is PyTorch's ZeroRedundancyOptimizer under DDP, not
	// DeepSpeed's stage 1: the model stays fp32 under autocast (4 + 4
	// bytes) and only the fp32 AdamW states (8) are sharded.
	paper[1].formula, paper[1].example = 4+4+8/nd, (4+4+8/nd)*7.5
	for stage, want := range paper {
		l := newLayout(c, Request{Precision: Mixed, GPUs: nd, ZeRO: int64(stage)}.Defaults())
		w, g, o := l.states()
		got := (w + g + o) / psi
		if math.Abs(got/want.formula-1) > 1e-9 {
			t.Errorf("stage %d: %.4f bytes per parameter; the paper's formula gives %.4f", stage, got, want.formula)
		}
		if ex := got * 7.5e9 / 1e9; math.Abs(ex-want.example) > 0.05 {
			t.Errorf("stage %d: %.2f GB for Ψ = 7.5B; the paper says %.1f", stage, ex, want.example)
		}
	}
	// bf16 AdamW (states in bf16): K = 4 in the same forms.
	for stage, want := range []float64{2 + 2 + 4, 2 + 2 + 4/nd, 2 + (2+4)/nd, (2 + 2 + 4) / nd} {
		w, g, o := newLayout(c, Request{GPUs: nd, ZeRO: int64(stage)}.Defaults()).states()
		if got := (w + g + o) / psi; math.Abs(got/want-1) > 1e-9 {
			t.Errorf("bf16 stage %d: %.4f bytes per parameter; want %.4f", stage, got, want)
		}
	}
}

// TestKorthikanti checks activation memory against Korthikanti et al.,
// "Reducing Activation Recomputation in Large Transformer Models" (MLSys
// 2023), Table 2: with full recomputation a layer keeps only its input,
// 2sbh bytes; without, sbh(34 + 5as/h), whose 5as/h term (the score
// matrix, softmax and dropout) FlashAttention removes, so a layer's
// activations grow linearly with s; with tensor parallelism and no
// sequence parallelism, sbh(10 + 24/t + ...): an affine function of 1/t
// (norms and their inputs replicated, the rest split).
func TestKorthikanti(t *testing.T) {
	c := builtin(t, "llama-3.1-8b")
	for _, s := range []int64{1024, 4096, 16384} {
		r := Request{Batch: 2, Seq: s, Ckpt: FullCkpt}.Defaults()
		m := newLayout(c, r).memory(0)
		if want := 2 * float64(r.Tokens()*c.Hidden); m.PerLayerCkpt != want {
			t.Errorf("s=%d: %g bytes per checkpointed layer; the paper's 2sbh is %g", s, m.PerLayerCkpt, want)
		}
		per := m.PerLayer / float64(r.Tokens())
		ref := newLayout(c, Request{Batch: 2, Seq: 1024}.Defaults()).memory(0)
		if math.Abs(per/(ref.PerLayer/2048)-1) > 1e-12 {
			t.Errorf("s=%d: %.0f bytes per token per layer, not linear in s as flash attention makes it", s, per)
		}
	}
	at := func(tp int64) float64 {
		return newLayout(c, Request{GPUs: tp, TP: tp}.Defaults()).layerSaved(true)
	}
	if a1, a2, a4 := at(1), at(2), at(4); math.Abs((a1-a2)-2*(a2-a4)) > 1e-6*a1 {
		t.Errorf("activations per layer at tp 1, 2, 4: %.0f, %.0f, %.0f; not affine in 1/t", a1, a2, a4)
	}
	// Without recomputation, the paper's 34sbh (GPT: LayerNorm, GELU MLP
	// of 4h, dropout) against this Llama layer's own count (RMSNorm with
	// its fp32 copy, SwiGLU of 3.5h, no dropout): the same order.
	ratio := at(1) / float64(34*c.Hidden)
	t.Logf("Llama-3.1-8B: %.0f bytes per token per layer, %.2f × Korthikanti's 34h (flash attention, no 5as/h term)", at(1), ratio)
	if ratio < 1 || ratio > 2 {
		t.Errorf("%.2f × 34sbh: out of the range a SwiGLU layer with fp32 norm copies gives", ratio)
	}
}

func TestTrainableLoRATargets(t *testing.T) {
	c := builtin(t, "llama-3.2-1b")
	for _, tc := range []struct {
		targets []string
		want    int64
	}{
		{[]string{"q_proj", "v_proj"}, 16 * 16 * ((2048 + 2048) + (2048 + 512))},
		{[]string{"all-linear"}, 11272192},
	} {
		n := Count(c, Request{Method: LoRA, LoRATargets: tc.targets}.Defaults())
		if n.Trainable != tc.want {
			t.Errorf("%v: %d trainable; peft counts %d", tc.targets, n.Trainable, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	c := builtin(t, "llama-3.2-1b")
	for _, r := range []Request{
		{Method: LoRA, Precision: Mixed}, {Batch: -1}, {GPUs: 3, TP: 2}, {ZeRO: 4}, {TP: 3},
		{BucketView: true}, {GPUs: 2, TP: 2, BucketView: true}, {GPUs: 2, ZeRO: 2, BucketView: true},
	} {
		if err := r.Defaults().Validate(c); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	if _, err := PeakMemory(builtin(t, "mixtral-8x7b-v0.1"), Request{}, deviceFor(t, "")); err == nil {
		t.Error("MoE: no error")
	}
}

// TestUsableLessCommunicator: on more than one GPU, each rank can allocate
// what CUDA hands out less what NCCL's communicator holds outside
// PyTorch's allocator, as measured on two H100s
// (testdata/nccl_memory_2gpu_h100.csv: outside_bytes after a DDP model's
// first backward less outside_bytes after the CUDA context, the larger of
// the two ranks).
func TestUsableLessCommunicator(t *testing.T) {
	d := deviceFor(t, "")
	outside := map[string]map[string]float64{}
	recs, col := testfile.CSV(t, "testdata/nccl_memory_2gpu_h100.csv")
	for _, rec := range recs {
		rank, stage := rec[col["rank"]], rec[col["stage"]]
		if outside[rank] == nil {
			outside[rank] = map[string]float64{}
		}
		v, err := strconv.ParseFloat(rec[col["outside_bytes"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		outside[rank][stage] = v
	}
	if len(outside) != 2 {
		t.Fatalf("%d ranks in the measurement, want 2", len(outside))
	}
	comm := 0.0
	for _, o := range outside {
		comm = max(comm, o["ddp"]-o["context"])
	}
	ctx := outside["0"]["context"] // rank 0's, as the communicator's
	one := model.Usable(d, Request{}.Defaults().GPUs)
	if one != model.Allocatable(d)-ctx {
		t.Errorf("one GPU: usable %.0f bytes, want CUDA's %.0f less the context's %.0f", one, model.Allocatable(d), ctx)
	}
	for _, r := range []Request{{GPUs: 2}, {GPUs: 2, TP: 2}, {GPUs: 8, ZeRO: 3}} {
		if got := model.Usable(d, r.Defaults().GPUs); got != one-comm {
			t.Errorf("%d GPUs (tp %d): usable %.0f bytes, want %.0f less the communicator's %.0f", r.GPUs, r.TP, got, one, comm)
		}
	}
}

// TestRebuild: only DDP's reducer (ZeRO 0 and 1 over several data-parallel
// GPUs, without gradient_as_bucket_view) leaves a second set of buckets to
// the second step, one gradient per parameter in the gradients' dtype.
func TestRebuild(t *testing.T) {
	c := builtin(t, "llama-3.2-1b")
	n := float64(Count(c, Request{}.Defaults()).Total)
	for _, tc := range []struct {
		r       Request
		perElem float64
	}{
		{Request{GPUs: 2}, 2}, {Request{GPUs: 2, Precision: Mixed}, 4}, {Request{GPUs: 4, ZeRO: 1}, 2}, {Request{GPUs: 2, BucketView: true}, 0},
		{Request{GPUs: 2, ZeRO: 2}, 0}, {Request{GPUs: 2, ZeRO: 3}, 0}, {Request{}, 0}, {Request{GPUs: 2, TP: 2}, 0},
	} {
		m, err := PeakMemory(c, tc.r, deviceFor(t, ""))
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.perElem * n; m.Rebuild != want || m.SecondStep != m.Peak+want {
			t.Errorf("%+v: rebuild %.0f, second step %.0f; want %.0f and peak + that", tc.r, m.Rebuild, m.SecondStep, want)
		}
	}
}

// TestUsableAgreesWithModel: train, model (and so check, which asks them)
// count one usable memory for the same GPUs: CUDA's allocatable memory less
// the CUDA context, and less NCCL's communicator over more than one GPU; on
// a GPU too small for those, zero, and the step does not fit. (model said
// "78.74 GiB of 79.18 GiB usable: fits" for DeepSeek-V3 on 8 H100s, where
// train counted 77.62 GiB; a 1 GiB GPU over two ranks had -0.6 GiB.)
func TestUsableAgreesWithModel(t *testing.T) {
	c := builtin(t, "llama-3.2-1b")
	tiny := deviceFor(t, "")
	tiny.Name, tiny.Memory.Bytes = "1 GiB GPU", 1<<30
	for _, d := range []devices.Device{deviceFor(t, ""), deviceFor(t, "NVIDIA H200"), tiny} {
		for _, gpus := range []int64{1, 2, 8} {
			r := Request{GPUs: gpus, TP: gpus, Batch: 1, Seq: 512}.Defaults()
			tm, err := PeakMemory(c, r, d)
			if err != nil {
				t.Fatal(err)
			}
			mm, err := c.Memory(model.Shape{Phase: model.Prefill, Batch: 1, Seq: 512, TP: gpus}, d)
			if err != nil {
				t.Fatal(err)
			}
			if tm.Usable != mm.Usable {
				t.Errorf("%s over %d GPUs: train %.0f usable bytes, model %.0f", d.Name, gpus, tm.Usable, mm.Usable)
			}
			if tm.Usable < 0 || d.Memory.Bytes == 1<<30 && gpus > 1 && (tm.Usable != 0 || tm.Fits || tm.Verdict != DoesNotFit || mm.Fits) {
				t.Errorf("%s over %d GPUs: usable %.0f, train fits %v (%s), model fits %v", d.Name, gpus, tm.Usable, tm.Fits, tm.Verdict, mm.Fits)
			}
		}
	}
}
