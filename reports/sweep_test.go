package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
)

func TestSweepPlot(t *testing.T) {
	a, err := devices.ArchFor(devices.CC{Major: 9})
	if err != nil {
		t.Fatal(err)
	}
	tg := occupancy.Target{Device: "H100 SXM", Arch: a, CC: a.CC, SMs: 132}
	k, l := occupancy.Kernel{Regs: 64}, occupancy.Launch{Threads: 256, DynamicSmem: 48 * 1024}
	for _, q := range []occupancy.Quantity{occupancy.VaryThreads, occupancy.VaryRegs, occupancy.VarySmem} {
		pts, err := occupancy.Sweep(a, k, l, q)
		if err != nil {
			t.Fatal(err)
		}
		var svg, png bytes.Buffer
		if err := SweepPlot(&svg, "svg", tg, q, pts, 64); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "Occupancy (%)") {
			t.Errorf("%s: not an SVG chart", q)
		}
		if err := SweepPlot(&png, "png", tg, q, pts, 64); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG (%v)", q, err)
		}
	}
	// A panic inside the plotting library comes back as an error.
	if err := SweepPlot(&bytes.Buffer{}, "svg", tg, occupancy.VaryRegs, nil, 0); err == nil {
		t.Error("no error for an empty sweep")
	}
}
