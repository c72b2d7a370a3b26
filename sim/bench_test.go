package sim

import (
	"testing"
)

// BenchmarkRun reports simulated warp instructions per second of one run of
// the FMA and stream kernels at full occupancy (target: 20 million).
func BenchmarkRun(b *testing.B) {
	s := h100(b)
	for _, c := range []struct {
		name string
		k    Kernel
	}{{"fma", FMAChains(1)}, {"stream", Stream(1)}} {
		b.Run(c.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				r, err := Run(s.Params, c.k, 64)
				if err != nil {
					b.Fatal(err)
				}
				n += r.Instructions
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "warp-instr/s")
		})
	}
}

// BenchmarkSweep times the 16-point sweeps of 128-thread blocks (4 to 64
// warps per SM) the command runs by default (target: 2 s each).
func BenchmarkSweep(b *testing.B) {
	s := h100(b)
	var warps []int
	for n := 4; n <= 64; n += 4 {
		warps = append(warps, n)
	}
	mixed, err := Mixed(8, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		k    Kernel
	}{{"fma", FMAChains(1)}, {"stream", Stream(1)}, {"mixed", mixed}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Sweep(c.k, warps, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
