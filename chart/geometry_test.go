package chart_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/project"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/trace"
)

// docCharts are the figures of docs/, built as the commands under them
// build them (docs/charts.md, roofline.md, ncu.md, occupancy.md,
// simulate.md, trace.md), and the golden charts.
func docCharts(t *testing.T) map[string]chart.Chart {
	nc, _ := ncuChart(t)
	cs := map[string]chart.Chart{
		"roofline-llama3-prefill-h100":   exampleChart(t, "../examples/llama3-8b-prefill.yaml", "h100"),
		"roofline-llama3-decode-3gpus":   exampleChart(t, "../examples/llama3-8b-decode.yaml", "h100", "A100 SXM4 80GB", "h200"),
		"ncu-h100-kernels":               nc,
		"occupancy-h100":                 occupancyChart(t),
		"simulate-stream-h100":           simulationChart(t),
		"trace-projection-resnet50-h200": projectionChart(t),
	}
	// A title longer than the canvas (the simulation's, with the hint
	// about flags it once carried) wraps.
	long := simulationChart(t)
	long.Title = "Simulated stream kernel on H100 SXM (default; set --device or GPUCALC_DEVICE), 128-thread blocks"
	cs["simulate-long-title"] = long
	for k, c := range goldenCharts(t) {
		cs["golden "+k] = c
	}
	return cs
}

// projectionChart is docs/trace.md's figure: ResNet-50's training step
// traced on an H100, projected to an H200.
func projectionChart(t *testing.T) chart.Roofline {
	tr, err := trace.Read(bytes.NewReader(testfile.Gunzip(t, "../project/testdata/resnet50_train_h100.json.gz")))
	if err != nil {
		t.Fatal(err)
	}
	src, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	dst, err := devices.Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	m, err := roofline.New(src)
	if err != nil {
		t.Fatal(err)
	}
	arch, err := trace.Arch(tr, src)
	if err != nil {
		t.Fatal(err)
	}
	a, err := trace.Analyze(tr, m, arch)
	if err != nil {
		t.Fatal(err)
	}
	r, err := project.Project(tr, &a, src, arch, []devices.Device{dst})
	if err != nil {
		t.Fatal(err)
	}
	return reports.TraceProjectionChart(a, r)
}

// TestChartGeometry: on every chart of the docs, every string (the title,
// the legend, labels, ticks) and every mark lies inside the canvas, and no
// two entries of a legend look alike. (The simulation's title ran off both
// edges and its legend off the right; a multi-device roofline drew its first
// device and "expected" with the same grey filled circle.)
func TestChartGeometry(t *testing.T) {
	// Points of slack: a text box spans the font's whole ascent and
	// descent, a little more than the glyphs drawn; a mark is exact.
	const textSlack, markSlack = vg.Length(1.5), vg.Length(0.25)
	for name, c := range docCharts(t) {
		g, err := chart.Layout(c)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		in := func(b vg.Rectangle, slack vg.Length) bool {
			return b.Min.X >= g.Canvas.Min.X-slack && b.Min.Y >= g.Canvas.Min.Y-slack && b.Max.X <= g.Canvas.Max.X+slack && b.Max.Y <= g.Canvas.Max.Y+slack
		}
		for _, tb := range g.Texts {
			if strings.TrimSpace(tb.Text) != "" && !in(tb.Box, textSlack) {
				t.Errorf("%s: %q at %v leaves the %v canvas", name, tb.Text, tb.Box, g.Canvas.Max)
			}
		}
		for _, p := range g.Paths {
			if !in(p, markSlack) {
				t.Errorf("%s: a mark at %v leaves the %v canvas", name, p, g.Canvas.Max)
				break
			}
		}
		if r, ok := c.(chart.Roofline); ok {
			// Points left off (0 FLOPs: copies, casts) are said on the
			// chart, not dropped silently.
			noted := slices.ContainsFunc(g.Texts, func(tb chart.TextBox) bool { return strings.Contains(tb.Text, "not shown") })
			if len(r.Unplaced()) > 0 && !noted {
				t.Errorf("%s: leaves out %q without a note", name, r.Unplaced())
			}
			bad, err := chart.LabelCollisions(r)
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			for _, b := range bad {
				t.Errorf("%s: %s", name, b)
			}
		}
		looks, err := chart.LegendLooks(c)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, l := range looks {
			for i, a := range l {
				if j := slices.Index(l[i+1:], a); j >= 0 {
					t.Errorf("%s: legend entries %d and %d look alike (%s)", name, i+1, i+j+2, a)
				}
			}
		}
	}
}
