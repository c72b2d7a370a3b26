package ncu

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/peak"
	"github.com/gpucalc/gpucalc/internal/synth"
)

// BenchmarkRead1MRows reads a generated export of a million launches and
// sets each against the H100. It reports the export's size, the peak heap
// in use (sampled) as a multiple of it (target: at most a few) and the
// seconds (target: a few).
func BenchmarkRead1MRows(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	size := synth.Size(synth.NCUExport(n))
	d, err := devices.Lookup("h100")
	if err != nil {
		b.Fatal(err)
	}
	var most uint64
	b.SetBytes(size)
	for b.Loop() {
		most = max(most, peak.Heap(func() {
			l, err := ReadLaunches(synth.NCUExport(n), MaxKernels)
			if err != nil || l.Len() != n {
				b.Fatalf("%d kernels: %v", l.Len(), err)
			}
			seen := 0
			for range l.Analyze(d).All() {
				seen++
			}
			if seen != n {
				b.Fatalf("%d analysed", seen)
			}
		}))
	}
	b.ReportMetric(float64(size)/1e6, "file-MB")
	b.ReportMetric(float64(most)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(most)/float64(size), "peak-heap/file")
}
