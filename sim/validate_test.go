package sim

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// point is one measured point of testdata/lat_hide.csv.
type point struct {
	kind      string
	ilp       int // loads or chains per thread (section 1), FMAs per component (ai)
	block     int
	warps     int
	gbps      float64
	gflops    float64
	flopsByte float64
}

// readLatHide reads both sections of the H100 latency-hiding measurements.
func readLatHide(t testing.TB, file string) []point {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pts []point
	var header []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rec := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if rec[0] == "kind" {
			header = rec
			continue
		}
		col := func(name string) float64 {
			for i, h := range header {
				if h == name {
					x, err := strconv.ParseFloat(rec[i], 64)
					if err != nil {
						t.Fatalf("%s: %q: %v", file, sc.Text(), err)
					}
					return x
				}
			}
			return 0
		}
		p := point{kind: rec[0], block: int(col("block")), gbps: col("gbps"), gflops: col("gflops")}
		if p.kind == "ai" {
			p.ilp, p.flopsByte, p.warps = int(col("fmas_per_elem")), col("flop_per_byte"), 64
		} else {
			p.ilp, p.warps = int(col("ilp")), int(col("warps_per_sm"))
		}
		pts = append(pts, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pts
}

func h100(t testing.TB) Setup {
	t.Helper()
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ForDevice(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// curveError returns the mean absolute relative error over a curve and the
// relative error of its last (plateau) point.
type curveError struct{ mae, plateau float64 }

func compare(t *testing.T, s Setup, name string, pts []point, kernel func(point) Kernel, gflops bool) curveError {
	t.Helper()
	var sum float64
	var last float64
	for _, p := range pts {
		r, err := Run(s.Params, kernel(p), p.warps)
		if err != nil {
			t.Fatal(err)
		}
		got, want := s.GBps(r), p.gbps
		if gflops {
			got, want = s.GFLOPs(r), p.gflops
		}
		e := (got - want) / want
		t.Logf("%s warps=%2d ilp|F=%d: sim %8.0f measured %8.0f (%+5.1f%%) latency %.0f", name, p.warps, p.ilp, got, want, 100*e, r.MeanLoadLatency)
		sum += math.Abs(e)
		last = e
	}
	ce := curveError{sum / float64(len(pts)), math.Abs(last)}
	t.Logf("%s: mean absolute error %.1f%%, plateau error %.1f%%", name, 100*ce.mae, 100*ce.plateau)
	return ce
}

func filter(pts []point, kind string, ilp, block int) []point {
	var out []point
	for _, p := range pts {
		if p.kind == kind && (ilp == 0 || p.ilp == ilp) && (block == 0 || p.block == block) {
			out = append(out, p)
		}
	}
	return out
}

// TestH100 checks the model against the H100 measurements: the read and
// FMA occupancy curves and the arithmetic-intensity sweep, each within a
// mean absolute error of 15 % and a plateau error of 10 %.
func TestH100(t *testing.T) {
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("measured", func(t *testing.T) { checkH100(t, d) })
	// Without the measured figures: the catalog's published latencies and
	// achievable bandwidth fraction.
	t.Run("datasheet", func(t *testing.T) { checkH100(t, d.Datasheet()) })
}

func checkH100(t *testing.T, d devices.Device) {
	s, err := ForDevice(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	pts := readLatHide(t, "testdata/lat_hide.csv")
	curves := []struct {
		name   string
		pts    []point
		kernel func(point) Kernel
		gflops bool
	}{
		{"read ILP 1, 128 threads", filter(pts, "read", 1, 128), func(p point) Kernel { return Stream(p.ilp) }, false},
		{"fma 1 chain, 128 threads", filter(pts, "fma", 1, 128), func(p point) Kernel { return FMAChains(p.ilp) }, true},
		{"AI sweep, 64 warps", filter(pts, "ai", 0, 0)[1:], func(p point) Kernel {
			k, err := Mixed(p.flopsByte, 1)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}, true},
	}
	for _, c := range curves {
		if len(c.pts) < 10 {
			t.Fatalf("%s: %d points in testdata", c.name, len(c.pts))
		}
		e := compare(t, s, c.name, c.pts, c.kernel, c.gflops)
		if e.mae > 0.15 || e.plateau > 0.10 {
			t.Errorf("%s: mean absolute error %.1f%% (limit 15%%), plateau error %.1f%% (limit 10%%)", c.name, 100*e.mae, 100*e.plateau)
		}
	}
}

// TestH100FourChains predicts, with the same parameters, the FMA kernel with
// four independent chains per thread, measured on the H100 (simulation.md
// §4.4: 4 warps/SM 54644, 8 → 62637, 64 → 63689 GFLOP/s), within 10 %.
func TestH100FourChains(t *testing.T) {
	s := h100(t)
	pts := []point{
		{kind: "fma", ilp: 4, block: 128, warps: 4, gflops: 54644},
		{kind: "fma", ilp: 4, block: 128, warps: 8, gflops: 62637},
		{kind: "fma", ilp: 4, block: 128, warps: 64, gflops: 63689},
	}
	e := compare(t, s, "fma 4 chains, 128 threads", pts, func(p point) Kernel { return FMAChains(p.ilp) }, true)
	if e.mae > 0.10 || e.plateau > 0.10 {
		t.Errorf("4 chains: mean absolute error %.1f%%, plateau error %.1f%% (limit 10%%)", 100*e.mae, 100*e.plateau)
	}
}

// TestH100OutOfSample predicts, with the same parameters, every curve of
// testdata/lat_hide_extra.csv (measured on an H100 after the model was
// fitted): reads with 1, 2 and 4 float4 loads per thread and 32-, 128- and
// 256-thread blocks; FMA with 1, 2, 4 and 8 chains and 32- and 128-thread
// blocks. Each must be within a mean absolute error of 15 % and a plateau
// error of 10 %.
func TestH100OutOfSample(t *testing.T) {
	s := h100(t)
	pts := readLatHide(t, "testdata/lat_hide_extra.csv")
	type key struct {
		kind       string
		ilp, block int
	}
	var keys []key
	seen := map[key]bool{}
	for _, p := range pts {
		k := key{p.kind, p.ilp, p.block}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if len(keys) < 15 {
		t.Fatalf("%d curves in lat_hide_extra.csv, want 17", len(keys))
	}
	for _, k := range keys {
		kernel := func(p point) Kernel { return Stream(p.ilp) }
		if k.kind == "fma" {
			kernel = func(p point) Kernel { return FMAChains(p.ilp) }
		}
		name := fmt.Sprintf("%s ILP %d, %d threads", k.kind, k.ilp, k.block)
		e := compare(t, s, name, filter(pts, k.kind, k.ilp, k.block), kernel, k.kind == "fma")
		if e.mae > 0.15 || e.plateau > 0.10 {
			t.Errorf("%s: mean absolute error %.1f%% (limit 15%%), plateau error %.1f%% (limit 10%%)", name, 100*e.mae, 100*e.plateau)
		}
	}
}
