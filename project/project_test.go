package project

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/trace"
)

// analysed is a trace read and analysed on the GPU it names.
type analysed struct {
	t    *trace.Trace
	a    trace.Analysis
	dev  devices.Device
	arch devices.Arch
}

func load(t testing.TB, file string) analysed {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	d, err := devices.Lookup(tr.DeviceName())
	if err != nil {
		t.Fatal(err)
	}
	m, err := roofline.New(d)
	if err != nil {
		t.Fatal(err)
	}
	arch, err := trace.Arch(tr, d)
	if err != nil {
		t.Fatal(err)
	}
	a, err := trace.Analyze(tr, m, arch)
	if err != nil {
		t.Fatal(err)
	}
	return analysed{tr, a, d, arch}
}

func lookup(t testing.TB, name string) devices.Device {
	t.Helper()
	d, err := devices.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// kernelSeconds sums a trace's kernel durations with a decode of its own,
// as trace_pairs.py computes kernel_ms.
func kernelSeconds(t *testing.T, file string) float64 {
	t.Helper()
	var doc struct {
		TraceEvents []struct {
			Cat string  `json:"cat"`
			Dur float64 `json:"dur"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(testfile.Gunzip(t, file), &doc); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, e := range doc.TraceEvents {
		if e.Cat == "kernel" {
			sum += e.Dur * 1e-6
		}
	}
	return sum
}

// stepsKernelMS reads kernel_ms per workload from a steps_*.csv.
func stepsKernelMS(t *testing.T, file string) map[string]float64 {
	t.Helper()
	recs, cols := testfile.CSV(t, file)
	col, ok := cols["kernel_ms"]
	if !ok {
		t.Fatalf("%s: no kernel_ms column", file)
	}
	out := map[string]float64{}
	for _, r := range recs {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[r[0]] = v
	}
	return out
}

// pair is a workload traced on two GPUs.
type pair struct {
	dir, name string
}

func (p pair) file(gpu string) string { return filepath.Join(p.dir, p.name+"_"+gpu+".json.gz") }

var gpus = map[string]string{"h100": "H100 SXM", "h200": "H200 SXM"}

// checkPair projects the trace of each GPU to the other and compares the
// projection with the other trace: total kernel time within tol, and the
// ops over 1% of the source's kernel time within a median opTol.
func checkPair(t *testing.T, p pair, tol, opTol float64) (errs []float64) {
	for _, dir := range [][2]string{{"h100", "h200"}, {"h200", "h100"}} {
		src, dst := load(t, p.file(dir[0])), load(t, p.file(dir[1]))
		if src.dev.Name != gpus[dir[0]] || dst.dev.Name != gpus[dir[1]] {
			t.Fatalf("%s: traces of %s and %s", p.name, src.dev.Name, dst.dev.Name)
		}
		res, err := Project(src.t, &src.a, src.dev, src.arch, []devices.Device{dst.dev})
		if err != nil {
			t.Fatal(err)
		}
		pr := res.Projections[0]
		if !pr.Validated {
			t.Errorf("%s → %s not flagged validated", src.dev.Name, dst.dev.Name)
		}
		want := kernelSeconds(t, p.file(dir[1]))
		got := pr.Summary.ProjectedKernel
		e := got/want - 1
		errs = append(errs, e)
		same := kernelSeconds(t, p.file(dir[0]))/want - 1
		t.Logf("%s %s → %s: projected %.3f ms, measured %.3f ms (%+.2f%%; the same time would be %+.2f%%)",
			p.name, dir[0], dir[1], 1e3*got, 1e3*want, 100*e, 100*same)
		if math.Abs(e) > tol {
			t.Errorf("%s %s → %s: projected kernel time %.3f ms, measured %.3f ms: %+.2f%%, over %.0f%%", p.name, dir[0], dir[1], 1e3*got, 1e3*want, 100*e, 100*tol)
		}
		// Per op: rows of the same name and shapes on both traces.
		measured := map[string]float64{}
		for _, r := range dst.a.Ops {
			measured[r.Name+" "+r.Shapes] += r.Measured
		}
		projected, source := map[string]float64{}, map[string]float64{}
		for _, o := range pr.Ops {
			projected[o.Name+" "+o.Shapes] += o.Projected
			source[o.Name+" "+o.Shapes] += o.Source
		}
		var opErrs []float64
		worst, worstOp := 0.0, ""
		for k, s := range source {
			if s < 0.01*pr.Summary.SourceKernel || measured[k] == 0 {
				continue
			}
			e := projected[k]/measured[k] - 1
			opErrs = append(opErrs, math.Abs(e))
			if math.Abs(e) > math.Abs(worst) {
				worst, worstOp = e, k
			}
		}
		slices.Sort(opErrs)
		med := opErrs[len(opErrs)/2]
		if len(opErrs)%2 == 0 {
			med = (opErrs[len(opErrs)/2-1] + opErrs[len(opErrs)/2]) / 2
		}
		t.Logf("  %d ops over 1%% of the step: median error %.1f%%, worst %+.1f%% (%s)", len(opErrs), 100*med, 100*worst, worstOp)
		if med > opTol {
			t.Errorf("%s %s → %s: ops over 1%% of the step projected within a median %.1f%%, over %.0f%%", p.name, dir[0], dir[1], 100*med, 100*opTol)
		}
	}
	return errs
}

// The shared pairs: each trace projected to the other GPU is within 3% of
// the kernel time measured there, and its ops over 1% of the step within
// a median 10%.
func TestSharedPairs(t *testing.T) {
	steps := map[string]map[string]float64{}
	for g := range gpus {
		steps[g] = stepsKernelMS(t, filepath.Join("testdata", "steps_"+g+".csv"))
	}
	for _, name := range []string{"llama1b_infer", "resnet50_train"} {
		p := pair{"testdata", name}
		for g := range gpus {
			// The traces are the ones steps_*.csv describes.
			if got, want := 1e3*kernelSeconds(t, p.file(g)), steps[g][name]; math.Abs(got-want) > 1e-3 {
				t.Fatalf("%s on %s: the trace's kernels take %.4f ms, steps_%s.csv says %.4f", name, g, got, g, want)
			}
		}
		checkPair(t, p, 0.03, 0.10)
	}
}
