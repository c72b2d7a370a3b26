package train

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the comparison table in docs/train.md")

// The published estimators, as their sources compute them, on the same rows.

// deepSpeedZeRO2 is DeepSpeed's estimate_zero2_model_states_mem_needs
// without offload on one GPU: 4Ψ + 16Ψ/gpus bytes; Ψ counts every
// parameter (shared ones once). Model states only.
func deepSpeedZeRO2(psi float64) float64 { return 4*psi + 16*psi }

// accelerateEstimate is accelerate estimate-memory's "Training using Adam"
// for the float16 row (mixed precision): the largest of model (4Ψ),
// gradients (6Ψ), optimizer (8Ψ) and step (8Ψ) for a batch of one, no
// activations.
func accelerateEstimate(psi float64) float64 { return math.Max(math.Max(4*psi, 6*psi), 8*psi) }

// llmAnalysis is llm-analysis's estimated_peak_memory_per_gpu
// (Analysis.training, github.com/cli99/llm-analysis, defaults: flash
// attention, fp32 layernorm activations, 16-bit weights and activations,
// attention dropout masks): optimizer states + weights + max(activations,
// gradients) + max(prefetch, the loss's backward). Mixed precision: Adam
// with fp32 master weights (12Ψ) and fp32 gradients (4Ψ); bf16 AdamW: 2-byte
// master weights and 4 bytes of states (6Ψ), 2-byte gradients. It has no
// LoRA: LoRA rows are priced as the bf16 full fine-tuning it knows.
func llmAnalysis(m measuredRow, psi, h, layers, heads, vocab, inter, layerParams float64) float64 {
	s, b := float64(m.seq), float64(m.batch)
	sbh := s * b * h
	r := inter / h
	opt, grads := 12*psi, 4*psi
	if m.mode != "mixed" {
		opt, grads = 6*psi, 2*psi
	}
	weights := 2 * psi
	perLayer := 25*sbh + 4*r*sbh + 8*heads*s*b
	if m.ckpt {
		perLayer = 2 * sbh
	}
	act := layers*perLayer + 2*sbh + 2*vocab*s*b + 4*sbh
	lossBwd := 2 * vocab * s * b
	prefetch := 2 * 2 * layerParams
	return opt + weights + math.Max(act, grads) + math.Max(prefetch, lossBwd)
}

// TestCompareEstimators prices every ok and oom row of train_h100.csv with
// gpucalc and the three published estimators and writes the comparison
// in docs/train.md (-update) or checks that the docs hold it.
func TestCompareEstimators(t *testing.T) {
	type tool struct {
		name string
		errs []float64
		fits int
		est  func(m measuredRow) float64
	}
	usable := 0.0
	tools := []*tool{
		{name: "gpucalc train", est: func(m measuredRow) float64 {
			c := configFor(t, m.model)
			mem, err := PeakMemory(c, m.request(), deviceFor(t, m.gpu))
			if err != nil {
				t.Fatal(err)
			}
			usable = mem.Usable
			return mem.Peak
		}},
		{name: "llm-analysis", est: func(m measuredRow) float64 {
			c := configFor(t, m.model)
			n := Count(c, Request{}.Defaults())
			layer := float64(n.Linear) / float64(c.Layers)
			return llmAnalysis(m, float64(n.Total), float64(c.Hidden), float64(c.Layers), float64(c.Heads), float64(c.Vocab), float64(c.Intermediate), layer)
		}},
		{name: "DeepSpeed estimator (ZeRO-2, no offload)", est: func(m measuredRow) float64 { return deepSpeedZeRO2(float64(m.params)) }},
		{name: "accelerate estimate-memory (float16 row)", est: func(m measuredRow) float64 { return accelerateEstimate(float64(m.params)) }},
	}
	rows := readMeasured(t, "testdata/train_h100.csv")
	var examples []string
	n, oom := 0, 0
	for _, m := range rows {
		if m.status != "ok" && m.status != "oom" {
			continue
		}
		var cells []string
		for _, tl := range tools {
			v := tl.est(m)
			if (v <= usable) == (m.status == "ok") {
				tl.fits++
			}
			if m.status == "ok" {
				tl.errs = append(tl.errs, math.Abs(v/m.peak-1))
			}
			cells = append(cells, fmt.Sprintf("%.1f", v/(1<<30)))
		}
		if m.status == "oom" {
			oom++
			continue
		}
		n++
		if ex := m.label; ex == "llama-3.2-1b bf16 4x4096" || ex == "llama-3.2-1b mixed 8x1024" || ex == "llama-3.1-8b bf16 1x1024" ||
			ex == "llama-3.1-8b lora 4x1024" || ex == "llama-3.1-8b lora ckpt 16x2048" {
			examples = append(examples, fmt.Sprintf("| %s | %.1f | %s |", ex, m.peak/(1<<30), strings.Join(cells, " | ")))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| Estimator | median error | p90 error | within 10%% | fits verdict right |\n|---|---|---|---|---|\n")
	for _, tl := range tools {
		med, p90 := quantiles(tl.errs)
		within := 0
		for _, e := range tl.errs {
			if e <= 0.10 {
				within++
			}
		}
		fmt.Fprintf(&b, "| %s | %.1f%% | %.1f%% | %d of %d | %d of %d |\n", tl.name, 100*med, 100*p90, within, n, tl.fits, n+oom)
	}
	fmt.Fprintf(&b, "\nPeak GiB on a few of the rows:\n\n| Row | measured | gpucalc | llm-analysis | DeepSpeed | accelerate |\n|---|---|---|---|---|---|\n%s\n",
		strings.Join(examples, "\n"))
	table := b.String()
	t.Log("\n" + table)
	const doc = "../docs/train.md"
	const begin, end = "<!-- compare:begin -->\n", "<!-- compare:end -->"
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", doc, strings.TrimSpace(begin), end)
	}
	if got := text[i+len(begin) : j]; got != table {
		if !*update {
			t.Fatalf("%s's comparison is stale: run go test ./train -run TestCompareEstimators -update", doc)
		}
		if err := os.WriteFile(doc, []byte(text[:i+len(begin)]+table+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	med, _ := quantiles(tools[0].errs)
	for _, tl := range tools[1:] {
		if m, _ := quantiles(tl.errs); m <= med {
			t.Errorf("%s's median error %.1f%% is not above gpucalc's %.1f%%", tl.name, 100*m, 100*med)
		}
	}
}
