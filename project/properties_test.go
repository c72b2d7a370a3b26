package project

import (
	"math"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

func ceilings(t *testing.T, name string) Ceilings {
	t.Helper()
	d := lookup(t, name)
	arch, err := d.Limits()
	if err != nil {
		t.Fatal(err)
	}
	c, err := CeilingsOf(d, arch, true)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Waves on two devices, worked by hand from each part's SMs and clock and
// the blocks one SM holds.
func TestWaveRatios(t *testing.T) {
	h100, a100, b200 := ceilings(t, "h100"), ceilings(t, "a100-sxm4-80gb"), ceilings(t, "b200")
	// 384 threads of 168 registers: one block per SM on all three.
	gemm := func(blocks, smem int) launchShape { return launchShape{blocks, 384, 168, smem} }
	for _, c := range []struct {
		name             string
		s                launchShape
		tgt              Ceilings
		latency, compute float64
		launchesOnTarget bool
	}{
		{"same device", gemm(500, 100<<10), h100, 1, 1, true},
		// A grid that fills the H100 once is a persistent kernel: on the
		// B200 it runs 148 blocks, each with 132/148 of the work.
		{"persistent", gemm(132, 100<<10), b200, 132.0 / 148 * 1980 / 1965, 1, true},
		// 64 blocks: one per SM on both; only the clock and the SM's
		// share of the compute ceiling change.
		{"partial wave", gemm(64, 100<<10), a100, 1980.0 / 1410, 108.0 / 132, true},
		// 264 blocks: 2 waves of 132, 3 of 108.
		{"waves", gemm(264, 100<<10), a100, 3.0 / 2 * 1980 / 1410, 3.0 * 108 / (2 * 132), true},
		// 224 KiB of shared memory does not fit an A100 SM (164 KiB):
		// scaled without quantization, by SM count.
		{"cannot launch", gemm(264, 224<<10), a100, 264.0 / 108 / (264.0 / 132) * 1980 / 1410, 1, false},
	} {
		w, ok := waveRatios(c.s, h100, c.tgt)
		if ok != c.launchesOnTarget || math.Abs(w.latency/c.latency-1) > 1e-9 || math.Abs(w.compute/c.compute-1) > 1e-9 {
			t.Errorf("%s: latency %.4f, compute %.4f, launches %v; want %.4f, %.4f, %v", c.name, w.latency, w.compute, ok, c.latency, c.compute, c.launchesOnTarget)
		}
	}
}

// Projected to the GPU it was recorded on, a trace keeps every kernel's
// time.
func TestIdentity(t *testing.T) {
	for _, f := range []string{"testdata/llama1b_infer_h100.json.gz", "testdata/resnet50_train_h200.json.gz"} {
		s := load(t, f)
		res, err := Project(s.t, &s.a, s.dev, s.arch, []devices.Device{s.dev})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Projections[0]
		if math.Abs(p.Summary.ProjectedKernel/s.a.Summary.KernelTime-1) > 1e-12 {
			t.Errorf("%s: projected %g s, measured %g s", f, p.Summary.ProjectedKernel, s.a.Summary.KernelTime)
		}
		for _, o := range p.Ops {
			if math.Abs(o.Projected-o.Source) > 1e-15 {
				t.Errorf("%s: %s %s: %g s projected from %g s", f, o.Name, o.Shapes, o.Projected, o.Source)
			}
		}
	}
}

// The launch floor is the source's shortest kernel: 0.96 µs in both H100
// traces, 0.672 µs in the H200's ResNet step.
func TestFloor(t *testing.T) {
	for f, want := range map[string]float64{
		"testdata/llama1b_infer_h100.json.gz":  0.96e-6,
		"testdata/resnet50_train_h100.json.gz": 0.96e-6,
		"testdata/resnet50_train_h200.json.gz": 0.671e-6,
	} {
		s := load(t, f)
		res, err := Project(s.t, &s.a, s.dev, s.arch, nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Floor-want) > 1e-9 {
			t.Errorf("%s: floor %g s, want %g", f, res.Floor, want)
		}
	}
}

// Targets without measured ceilings are flagged; an A100 is slower than
// the H100 on both steps (1.6 to 2× less DRAM bandwidth, 3× less bf16
// tensor rate) and a B200 faster (2.1× the DRAM bandwidth, 2.3× the tensor
// rate, 12% more SMs).
func TestUnvalidated(t *testing.T) {
	for _, f := range []string{"testdata/llama1b_infer_h100.json.gz", "testdata/resnet50_train_h100.json.gz"} {
		s := load(t, f)
		res, err := Project(s.t, &s.a, s.dev, s.arch, []devices.Device{lookup(t, "h200"), lookup(t, "a100-sxm4-80gb"), lookup(t, "b200")})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, false, false} {
			p := res.Projections[i]
			if p.Validated != want || p.Ceilings.Measured != want {
				t.Errorf("%s → %s: validated %v, measured ceilings %v; want %v", f, p.Device, p.Validated, p.Ceilings.Measured, want)
			}
		}
		if a := res.Projections[1].Summary.Speedup; a >= 1 {
			t.Errorf("%s: the A100 is %.2f× the H100's speed", f, a)
		}
		if b := res.Projections[2].Summary.Speedup; b <= 1 {
			t.Errorf("%s: the B200 is %.2f× the H100's speed", f, b)
		}
	}
}
