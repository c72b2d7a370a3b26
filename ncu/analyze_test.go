package ncu

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

func h100(t *testing.T) devices.Device {
	t.Helper()
	d, err := devices.Lookup("NVIDIA H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The DRAM arithmetic intensity is the counters' ratio: every FLOP the
// instruction and tensor counters record over dram__bytes_read +
// dram__bytes_write (h100Kernels, computed apart from gpucalc).
func TestAnalyzeDRAMIntensity(t *testing.T) {
	d := h100(t)
	for i, k := range readKernels(t, groundTruth(t)) {
		a := Analyze(k, d, nil)
		w := h100Kernels[i]
		if a.Memory[0].Level != DRAM || !near(a.Memory[0].Intensity, w.dramIntensity, 1e-5) {
			t.Errorf("ID %d: DRAM intensity %g, want %g", k.ID, a.Memory[0].Intensity, w.dramIntensity)
		}
		if want := w.fp32 + w.fp16 + w.bf16Tensor; !near(a.FLOPs, want, 1e-5) {
			t.Errorf("ID %d: total FLOPs %g, want %g", k.ID, a.FLOPs, want)
		}
	}
}

// The shares are the achieved rates over the catalog's H100 ceilings, and
// the bound is what the kernels are known to be: the large matmuls and the
// attention reach for the tensor cores, the skinny matmul and the
// elementwise and normalization kernels for DRAM.
func TestAnalyzeBound(t *testing.T) {
	d := h100(t)
	ks := readKernels(t, groundTruth(t))
	want := map[int]string{0: "bf16_tensor", 1: "fp32", 2: "dram", 3: "dram", 6: "dram", 8: "dram", 10: "dram", 11: "dram", 12: "bf16_tensor"}
	for _, k := range ks {
		a := Analyze(k, d, nil)
		if b, ok := want[k.ID]; ok && a.Bound != b {
			t.Errorf("ID %d: bound %s %.3f, want %s", k.ID, a.Bound, a.BoundShare, b)
		}
		if k.ID == 0 {
			// 2·4096³ FLOPs in 179.456 µs against 989.4 TFLOP/s.
			if share := a.Compute[0].Share; !near(share, 2*4096*4096*4096/179456e-9/989.4e12, 1e-9) {
				t.Errorf("ID 0: bf16 tensor share %g", share)
			}
			// 178553088 B in 179.456 µs against 3.35 TB/s.
			if share := a.Memory[0].Share; !near(share, 178553088/179456e-9/3.35e12, 1e-9) {
				t.Errorf("ID 0: DRAM share %g", share)
			}
		}
		if a.Occupancy.NCU != k.Occupancy.Theoretical || a.Occupancy.Achieved != k.Occupancy.Achieved {
			t.Errorf("ID %d: occupancy %+v does not carry ncu's %+v", k.ID, a.Occupancy, k.Occupancy)
		}
	}
}
