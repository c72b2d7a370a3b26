package main

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/internal/peak"
	"github.com/gpucalc/gpucalc/internal/synth"
)

// BenchmarkNCU1M runs 'gpucalc ncu -' on a generated export of a million
// launches (376 MB) in each format, to a pipe. It reports the export's
// size, the output's, and the peak heap in use (sampled) as a multiple of
// the export. Targets (issue 35): at most 10 s and 4 times the export in
// every format.
func BenchmarkNCU1M(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	size := synth.Size(synth.NCUExport(n))
	for _, form := range []string{"table", "markdown", "json", "csv"} {
		b.Run(form, func(b *testing.B) {
			var most uint64
			var out counter
			b.SetBytes(size)
			for b.Loop() {
				out = 0
				most = max(most, peak.Heap(func() {
					var stderr strings.Builder
					if code := run([]string{"ncu", "-", "--format", form}, synth.NCUExport(n), &out, &stderr, func(string) string { return "" }); code != 0 {
						b.Fatalf("exit %d: %s", code, stderr.String())
					}
				}))
			}
			b.ReportMetric(float64(size)/1e6, "file-MB")
			b.ReportMetric(float64(out)/1e6, "output-MB")
			b.ReportMetric(float64(most)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(most)/float64(size), "peak-heap/file")
		})
	}
}

// counter is a writer that counts what it is given.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}
