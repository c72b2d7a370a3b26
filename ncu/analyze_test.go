package ncu

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
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
		a := Analyze(k, d)
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
		a := Analyze(k, d)
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
	}
}

// Done when: gpucalc's theoretical occupancy, computed from the launch
// statistics, equals Nsight Compute's sm__maximum_warps_per_active_cycle_pct
// for every kernel of the H100 export, and so do the blocks each limit
// allows (launch__occupancy_limit_*) and the limits that bind.
func TestOccupancyMatchesNsight(t *testing.T) {
	d := h100(t)
	for i, k := range readKernels(t, groundTruth(t)) {
		o := Analyze(k, d).Occupancy
		if o.Error != "" {
			t.Errorf("ID %d: %s", k.ID, o.Error)
			continue
		}
		if o.Theoretical != h100Kernels[i].ncuTheoretical || !o.Match {
			t.Errorf("ID %d: gpucalc %g%%, Nsight Compute %g%% (match %v)", k.ID, o.Theoretical, h100Kernels[i].ncuTheoretical, o.Match)
		}
		if o.BlocksPerSM != k.Occupancy.BlocksPerSM || o.Limiters != k.Occupancy.Limiters {
			t.Errorf("ID %d: %d blocks/SM limited by %v; Nsight Compute %d by %v", k.ID, o.BlocksPerSM, o.Limiters, k.Occupancy.BlocksPerSM, k.Occupancy.Limiters)
		}
		// Nsight Compute caps each limit at the blocks per SM the
		// architecture allows (32 on cc 9.0): one barrier allows 64.
		maxBlocks := o.By[3]
		for j, l := range occupancy.Limiters {
			if min(o.By[j], maxBlocks) != k.Occupancy.By[j] {
				t.Errorf("ID %d: %v allows %d blocks, Nsight Compute says %d", k.ID, l, o.By[j], k.Occupancy.By[j])
			}
		}
	}
}

// A disagreement is flagged, and a launch gpucalc cannot compute says why.
func TestOccupancyDisagreement(t *testing.T) {
	d := h100(t)
	k := readKernels(t, groundTruth(t))[3]
	fifty := 50.0
	k.Occupancy.Theoretical = &fifty // ncu says 75
	if o := Analyze(k, d).Occupancy; o.Match || o.Theoretical != 75 {
		t.Errorf("occupancy %+v: want gpucalc 75%% flagged against 50%%", o)
	}
	l := *k.Launch
	l.RegistersPerThread = 300
	k.Launch = &l
	if o := Analyze(k, d).Occupancy; o.Error == "" || o.Match {
		t.Errorf("300 registers: occupancy %+v, want an error", o)
	}
	k.CC = devices.CC{Major: 1, Minor: 0}
	if o := Analyze(k, d).Occupancy; !strings.Contains(o.Error, "compute capability 1.0") {
		t.Errorf("cc 1.0: occupancy %+v, want an error naming it", o)
	}
}
