package train

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/roofline"
)

// hostFigure checks that a host constant is the median (nearest rank) of
// what the measurements give, to 2%.
func hostFigure(t *testing.T, name string, got float64, xs []float64) {
	t.Helper()
	if len(xs) == 0 {
		t.Fatalf("%s: no measured rows", name)
	}
	med, _ := quantiles(xs)
	t.Logf("%s: median %.4g s over %d rows; constant %.4g s", name, med, len(xs), got)
	if math.Abs(got/med-1) > 0.02 {
		t.Errorf("%s is %.4g s; the measurements give %.4g s", name, got, med)
	}
}

func TestTrainCPUPerKernel(t *testing.T) {
	rm, err := roofline.New(deviceFor(t, "NVIDIA H100 80GB HBM3"))
	if err != nil {
		t.Fatal(err)
	}
	var per []float64
	for _, m := range readMeasured(t, "testdata/train_h100.csv") {
		if m.status != "ok" {
			continue
		}
		st, err := StepTime(configFor(t, m.model), m.request(), rm)
		if err != nil {
			t.Fatal(err)
		}
		if st.GPU < 0.5*m.stepMS/1e3 {
			per = append(per, m.stepMS/1e3/float64(st.Kernels))
		}
	}
	hostFigure(t, "TrainCPUPerKernel", TrainCPUPerKernel, per)
}

func TestCollectiveIssue(t *testing.T) {
	recs, col := testfile.CSV(t, "testdata/comm_2gpu_h100.csv")
	var xs []float64
	for _, rec := range recs {
		v, err := strconv.ParseFloat(rec[col["host_us"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, v/1e6)
	}
	hostFigure(t, "CollectiveIssue", CollectiveIssue, xs)
}

// hostRows are the rows of multigpu_fam_x2.csv (the rows read to
// understand the steps, not the held-out ones) whose phase the host sets:
// the phase's GPU time, as modelled, is under half its measured host time.
// f gets each such row's step and phase (0 forward, 1 backward, 2
// optimizer) with the host time left for cause: the measured host time
// less every other cause's modelled time.
func hostRows(t *testing.T, cause string, f func(m measuredRow, st Time, phase int, left float64)) {
	rm, err := roofline.New(deviceFor(t, "NVIDIA H100 80GB HBM3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range readMeasured(t, "testdata/multigpu_fam_x2.csv") {
		if m.status != "ok" || m.rank != 0 {
			continue
		}
		st, err := StepTime(configFor(t, m.model), m.request(), rm)
		if err != nil {
			t.Fatal(err)
		}
		for i, cpu := range []float64{m.cpuFwd, m.cpuBwd, m.cpuOpt} {
			cpu /= 1e3
			if p := st.phases[i]; p.gpu < 0.5*cpu {
				f(m, st, i, cpu-st.host.phase[i]+st.host.by[i][cause])
			}
		}
	}
}

func TestFSDPUnitHost(t *testing.T) {
	var fwd, bwd []float64
	hostRows(t, HostFSDP, func(m measuredRow, st Time, phase int, left float64) {
		if m.zero < 2 || m.tp > 1 {
			return
		}
		units := float64(configFor(t, m.model).Layers + 1)
		switch phase {
		case 0:
			fwd = append(fwd, left/units)
		case 1:
			bwd = append(bwd, left/units)
		}
	})
	hostFigure(t, "FSDPUnitForward", FSDPUnitForward, fwd)
	hostFigure(t, "FSDPUnitBackward", FSDPUnitBackward, bwd)
}

func TestZeROTensorHost(t *testing.T) {
	var xs []float64
	hostRows(t, HostZeRO, func(m measuredRow, st Time, phase int, left float64) {
		if m.zero == 1 && phase == 2 {
			xs = append(xs, left/float64(newLayout(configFor(t, m.model), m.request()).tensors()))
		}
	})
	hostFigure(t, "ZeROTensorHost", ZeROTensorHost, xs)
}

func TestDTensorModuleHost(t *testing.T) {
	var fwd, bwd []float64
	hostRows(t, HostDTensor, func(m measuredRow, st Time, phase int, left float64) {
		if m.tp < 2 {
			return
		}
		mods := float64(7*configFor(t, m.model).Layers + 2)
		switch phase {
		case 0:
			fwd = append(fwd, left/mods)
		case 1:
			bwd = append(bwd, left/mods)
		}
	})
	hostFigure(t, "DTensorModuleForward", DTensorModuleForward, fwd)
	hostFigure(t, "DTensorModuleBackward", DTensorModuleBackward, bwd)
}

func TestCheckpointLayerHost(t *testing.T) {
	var xs []float64
	hostRows(t, HostCheckpoint, func(m measuredRow, st Time, phase int, left float64) {
		if m.ckpt && phase == 1 {
			xs = append(xs, left/float64(configFor(t, m.model).Layers))
		}
	})
	hostFigure(t, "CheckpointLayerHost", CheckpointLayerHost, xs)
}

// TestOverlapExponent checks that overlapExponent is the best of the
// exponents tried (and of the plain longer of GPU and host) on the rows
// read and the ground truth: the median error of steps of at least 4,096
// tokens per GPU over both.
func TestOverlapExponent(t *testing.T) {
	rm, err := roofline.New(deviceFor(t, "NVIDIA H100 80GB HBM3"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(p float64) { overlapExponent = p }(overlapExponent)
	median := func(p float64) float64 {
		overlapExponent = p
		var errs []float64
		for _, f := range []string{"testdata/multigpu_fam_x2.csv", "testdata/train_h100.csv"} {
			for _, m := range readMeasured(t, f) {
				if m.status != "ok" || m.rank != 0 || m.batch*m.seq < 4096 {
					continue
				}
				st, err := StepTime(configFor(t, m.model), m.request(), rm)
				if err != nil {
					t.Fatal(err)
				}
				errs = append(errs, math.Abs(st.Step*1e3/m.stepMS-1))
			}
		}
		med, _ := quantiles(errs)
		return med
	}
	chosen := overlapExponent
	best := median(chosen)
	for _, p := range []float64{2, 3, 4, 1000} {
		e := median(p)
		t.Logf("exponent %g: median error %.2f%% (chosen %g: %.2f%%)", p, 100*e, chosen, 100*best)
		if e < best {
			t.Errorf("exponent %g gives %.2f%%, under the chosen %g's %.2f%%", p, 100*e, chosen, 100*best)
		}
	}
}
