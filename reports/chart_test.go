package reports

import (
	"compress/gzip"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var update = flag.Bool("update", false, "rewrite the golden charts in testdata")

// exampleChart analyses an example workload on the named devices, as
// `gpucalc roofline --workload FILE --devices ... --plot` does.
func exampleChart(t testing.TB, file string, names ...string) RooflineChart {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ops.ParseWorkload(file, data)
	if err != nil {
		t.Fatal(err)
	}
	var devs []devices.Device
	var pts [][]roofline.Point
	for _, n := range names {
		d, err := devices.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		m, err := roofline.New(d)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.AnalyzeWorkload(w)
		if err != nil {
			t.Fatal(err)
		}
		devs, pts = append(devs, d), append(pts, p)
	}
	return RooflineChartOf("Roofline: "+strings.Join(names, " vs ")+"\n"+w.Name, devs, pts)
}

// ncuChart charts the H100 Nsight Compute export in ncu/testdata.
func ncuChart(t testing.TB) (RooflineChart, []string) {
	t.Helper()
	f, err := os.Open("../ncu/testdata/ncu_raw.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ncu.Read(z)
	if err != nil {
		t.Fatal(err)
	}
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := e.Kernels()
	if err != nil {
		t.Fatal(err)
	}
	var as []ncu.Analysis
	for _, k := range ks {
		as = append(as, ncu.Analyze(k, d))
	}
	return NCUChart(as, d)
}

// denseChart is n points in a tight cluster under the roof of one device.
func denseChart(n int, seed int64) RooflineChart {
	r := rand.New(rand.NewSource(seed))
	d := ChartDevice{Name: "H100 SXM", DRAM: 3.35e12, Ceilings: []ChartCeiling{{"BF16 tensor", 989.4e12}}}
	c := RooflineChart{Title: fmt.Sprintf("%d points, seed %d", n, seed), Devices: []ChartDevice{d}}
	for i := 0; i < n; i++ {
		ai := math.Pow(10, 1+r.Float64()*0.6)
		roof := math.Min(d.Ceilings[0].FLOPS, d.DRAM*ai)
		c.Points = append(c.Points, ChartPoint{Label: fmt.Sprintf("kernel_%02d", i), Group: []string{"a", "b", "c"}[i%3],
			FLOPs: ai * 1e9, Bytes: 1e9, Rate: roof * (0.3 + 0.6*r.Float64()), Roof: roof})
	}
	return c
}

// renderLabels lays c out at its default size and returns the labeller.
func renderLabels(t testing.TB, c RooflineChart) *labeller {
	t.Helper()
	s := c.defaultSize()
	cv := vgsvg.New(vg.Length(s.Width)*vg.Centimeter, vg.Length(s.Height)*vg.Centimeter)
	lab, err := c.render(draw.New(cv))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// checkPlacement asserts, over the placed boxes, what a reader needs: no
// two labels overlap; none leaves the chart, covers a line or another
// point's mark; each point label is nearer its own point than any other.
func checkPlacement(t *testing.T, lab *labeller) (labelled, unlabelled int) {
	t.Helper()
	if !lab.roofClean {
		t.Errorf("a roof label found no clean place")
	}
	for i, a := range lab.placed {
		b := a.box
		if b.x0 < lab.area.x0 || b.x1 > lab.area.x1 || b.y0 < lab.area.y0 || b.y1 > lab.area.y1 {
			t.Errorf("label %q leaves the chart", a.text)
		}
		for _, o := range lab.placed[i+1:] {
			if b.overlaps(o.box) {
				t.Errorf("labels %q and %q overlap", a.text, o.text)
			}
		}
		for _, s := range lab.segs {
			if b.crosses(s[0], s[1]) {
				t.Errorf("label %q crosses a line", a.text)
			}
		}
		var own []int
		if a.site >= 0 {
			own = lab.sites[a.site].pts
		}
		for _, m := range lab.markBoxes {
			if b.overlaps(m.rect) && !containsInt(own, m.owner) {
				t.Errorf("label %q covers another point's mark", a.text)
			}
		}
		if a.site < 0 {
			continue
		}
		labelled++
		// Distances to the points, not to sites, so that the check does
		// not lean on the grouping it checks.
		ownD := math.Inf(1)
		for _, i := range own {
			ownD = min(ownD, b.dist(lab.pointAt[i]))
		}
		for i, p := range lab.pointAt {
			if !containsInt(own, i) && b.dist(p) <= ownD {
				t.Errorf("label %q is nearer another point (%.1f ≤ %.1f pt)", a.text, b.dist(p), ownD)
			}
		}
	}
	return labelled, len(lab.unplaced)
}

func TestLabelPlacement(t *testing.T) {
	examples, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatal("no examples", err)
	}
	charts := map[string]RooflineChart{}
	for _, f := range examples {
		charts[filepath.Base(f)+" h100"] = exampleChart(t, f, "h100")
		charts[filepath.Base(f)+" h100 a100 h200"] = exampleChart(t, f, "h100", "a100", "h200")
	}
	charts["ncu"], _ = ncuChart(t)
	for seed := int64(1); seed <= 5; seed++ {
		charts[fmt.Sprintf("dense 50 seed %d", seed)] = denseChart(50, seed)
	}
	for name, c := range charts {
		t.Run(name, func(t *testing.T) {
			lab := renderLabels(t, c)
			n, skipped := checkPlacement(t, lab)
			// Every point of the examples and the export is labelled or
			// numbered; a dense cluster's numbers may be left off where
			// there is no clean place (the key marks them), but not all.
			dense := strings.HasPrefix(name, "dense")
			if !dense && skipped > 0 || dense && n < 8 {
				t.Errorf("%d labels placed, %d keys left off", n, skipped)
			}
			t.Logf("%d sites, %d labels, numbered %v, %d keys left off", len(lab.sites), n, lab.numbered, skipped)
		})
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
