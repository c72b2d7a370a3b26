package train

import "testing"

// Held-out measurements, taken after the model was built and never tuned
// to (testdata/train_gpu2.csv and train_gpu3.csv: Qwen2.5-1.5B, Qwen3-1.7B,
// Llama-3.2-3B, Qwen3-8B and Mistral-7B-v0.1 on H100s; train_h200.csv:
// Llama-3.2-1B, Qwen2.5-1.5B and Llama-3.2-3B on an H200; the same
// train_bench.py). Goals for unseen models and GPUs: memory median 8%,
// p90 15%; step time median 15%, p90 30%. The fits verdict and the GPU
// time under the measured step are reported row by row where they
// disagree (HELD-OUT MISMATCH), not failed: see docs/train.md.
var heldOut = []string{"testdata/train_gpu2.csv", "testdata/train_gpu3.csv", "testdata/train_h200.csv"}

// multiGPU are the lead's data-parallel steps on two and four H100s
// (rank 0's row of each shape): ddp (zero 0), DDP with
// ZeroRedundancyOptimizer (zero 1), FSDP2 per decoder layer without (zero
// 2) and with (zero 3) resharding after the forward.
var multiGPU = []string{"testdata/multigpu_x2.csv", "testdata/multigpu_x4.csv", "testdata/multigpu_x2b.csv", "testdata/multigpu_x2c.csv"}

func TestMultiGPUMemory(t *testing.T) {
	for _, f := range multiGPU {
		t.Run(f, func(t *testing.T) { checkMemory(t, f, 0.08, 0.15, false) })
	}
}

func TestMultiGPUStepTime(t *testing.T) {
	for _, f := range multiGPU {
		t.Run(f, func(t *testing.T) { checkTime(t, f, 0.15, 0.30, false) })
	}
}

func TestHeldOutParams(t *testing.T) {
	for _, f := range heldOut {
		for _, m := range readMeasured(t, f) {
			n := Count(configFor(t, m.model), m.request())
			if n.Total != m.params || n.Trainable != m.trainable {
				t.Errorf("%s %s: params %d trainable %d; measured %d, %d", f, m.label, n.Total, n.Trainable, m.params, m.trainable)
			}
		}
	}
}

func TestHeldOutMemory(t *testing.T) {
	for _, f := range heldOut {
		t.Run(f, func(t *testing.T) { checkMemory(t, f, 0.08, 0.15, false) })
	}
}

func TestHeldOutStepTime(t *testing.T) {
	for _, f := range heldOut {
		t.Run(f, func(t *testing.T) { checkTime(t, f, 0.15, 0.30, false) })
	}
}
