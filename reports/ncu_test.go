package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
)

// A hierarchical point per kernel and level, one label per kernel, the
// precisions' ceilings, and a TMA kernel's L1 point left out with a note.
func TestNCUChart(t *testing.T) {
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	level := func(l ncu.Level, b float64) ncu.LevelRate {
		return ncu.LevelRate{Traffic: ncu.Traffic{Level: l, Bytes: b}}
	}
	gemm := ncu.Analysis{Kernel: ncu.Kernel{ID: 0, Name: "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", Duration: 179.456e-6},
		FLOPs:   137438953472,
		Compute: []ncu.Rate{{Work: ncu.Work{DType: devices.BF16, Path: devices.Tensor, FLOPs: 137438953472}, Peak: 989.4e12}},
		Memory:  []ncu.LevelRate{level(ncu.DRAM, 178553088), level(ncu.L2, 1644191488), level(ncu.L1, 12160)}}
	add := ncu.Analysis{Kernel: ncu.Kernel{ID: 10, Name: "add", Duration: 259.328e-6},
		FLOPs:   134222648,
		Compute: []ncu.Rate{{Work: ncu.Work{DType: devices.FP32, Path: devices.CUDACores, FLOPs: 134222648}, Peak: 66.9e12}},
		Memory:  []ncu.LevelRate{level(ncu.DRAM, 788328448), level(ncu.L2, 805306368), level(ncu.L1, 805306368)}}
	c, notes := NCUChart([]ncu.Analysis{gemm, add}, d)
	if len(c.Devices) != 1 || len(c.Devices[0].Ceilings) != 2 || c.Devices[0].DRAM != 3.35e12 {
		t.Fatalf("devices %+v", c.Devices)
	}
	if len(c.Points) != 5 {
		t.Fatalf("%d points, want 2 + 3", len(c.Points))
	}
	if p := c.Points[0]; p.Label != "0 nvjet_sm90_tst_256x128_64x4…" || p.Level != "dram" || !p.Measured || p.Rate != gemm.FLOPs/gemm.Duration {
		t.Errorf("first point %+v", p)
	}
	if c.Points[1].Label != "" || c.Points[1].Level != "l2" || c.Points[4].Level != "l1" {
		t.Errorf("points %+v", c.Points)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "ID 0's L1 point") {
		t.Errorf("notes %q", notes)
	}
	var svg bytes.Buffer
	if err := c.Write(&svg, "svg", DefaultChartSize, 96); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"measured, DRAM bytes", "measured, L2 bytes", "measured, L1 bytes", "BF16 tensor 989", "FP32 67", "10 add"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Contains(svg.String(), ">measured<") {
		t.Error("plain measured legend entry on a chart with levels only")
	}
}
