package deploy

import (
	"bytes"
	"testing"

	"github.com/gpucalc/gpucalc/internal/testfile"
)

// BenchmarkAnswer is one deploy answer from a fresh planner (the issue's
// target: 50 ms): Llama-3.1-70B on four H100s, 32 clients at 1k/1k.
func BenchmarkAnswer(b *testing.B) {
	q := Query{Model: "llama-3.1-70b", Device: "h100", TP: 4, Weights: "fp8", Concurrency: 32}
	for b.Loop() {
		if _, err := q.Answer(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatch is deploy batch over the 2,969 shared deployments (the
// issue's target: 10 s on one core; run with -cpu 1).
func BenchmarkBatch(b *testing.B) {
	data := testfile.Gunzip(b, "testdata/serving.csv.gz")
	for b.Loop() {
		bt, err := ReadBatch(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		RunBatch(bt.Rows, testConfigs)
	}
}

// BenchmarkSearch is an SLA search over three GPUs (the target:
// 2 s): Llama-3.1-70B at 1k/1k, TTFT ≤ 2 s, TPOT ≤ 50 ms.
func BenchmarkSearch(b *testing.B) {
	s := Search{Base: Query{Model: "llama-3.1-70b", Weights: "fp8"}, Devices: []string{"h100", "h200", "b200"}, TTFT: 2, TPOT: 0.05}
	for b.Loop() {
		if _, err := s.Answer(nil); err != nil {
			b.Fatal(err)
		}
	}
}
