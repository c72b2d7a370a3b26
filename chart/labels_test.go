package chart

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// denseChart is n points in a tight cluster under the roof of one device.
func denseChart(n int, seed int64) Roofline {
	r := rand.New(rand.NewSource(seed))
	d := Device{Name: "H100 SXM", DRAM: 3.35e12, Ceilings: []Ceiling{{"BF16 tensor", 989.4e12}}}
	c := Roofline{Title: fmt.Sprintf("%d points, seed %d", n, seed), Devices: []Device{d}}
	for i := 0; i < n; i++ {
		ai := math.Pow(10, 1+r.Float64()*0.6)
		roof := math.Min(d.Ceilings[0].FLOPS, d.DRAM*ai)
		c.Points = append(c.Points, Point{Label: fmt.Sprintf("kernel_%02d", i), Group: []string{"a", "b", "c"}[i%3],
			FLOPs: ai * 1e9, Bytes: 1e9, Rate: roof * (0.3 + 0.6*r.Float64()), Roof: roof})
	}
	return c
}

// renderLabels lays c out at its default size and returns the labeller.
func renderLabels(t testing.TB, c Roofline) *labeller {
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

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// DenseChart and CheckLabels serve the external tests (package chart_test),
// which chart the examples through reports.
var DenseChart = denseChart

// CheckLabels lays c out, checks where its labels went (checkPlacement) and
// returns the labels placed, the keys left off, the sites and whether the
// points were numbered.
func CheckLabels(t *testing.T, c Roofline) (labelled, skipped, sites int, numbered bool) {
	t.Helper()
	lab := renderLabels(t, c)
	labelled, skipped = checkPlacement(t, lab)
	return labelled, skipped, len(lab.sites), lab.numbered
}
