package trace

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/peak"
	"github.com/gpucalc/gpucalc/internal/synth"
	"github.com/gpucalc/gpucalc/roofline"
)

// BenchmarkRead2MKernels reads (on every core) and analyses a generated
// trace of two million kernels (with their ops and launches: six million
// events). It reports the trace's size, the peak heap in use (sampled
// every 50 ms) as a multiple of it (target: at most a few) and the seconds
// (target, issue 35: at most 5).
func BenchmarkRead2MKernels(b *testing.B) {
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	size := synth.Size(synth.Trace(n))
	d, _ := devices.Lookup("h100")
	m, _ := roofline.New(d)
	var most uint64
	b.SetBytes(size)
	for b.Loop() {
		most = max(most, peak.Heap(func() {
			tr, err := Read(synth.Trace(n))
			if err != nil || tr.Kernels.Len() != n {
				b.Fatalf("%v", err)
			}
			arch, _ := Arch(tr, d)
			if _, err := Analyze(tr, m, arch); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(size)/1e6, "file-MB")
	b.ReportMetric(float64(most)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(most)/float64(size), "peak-heap/file")
}
