package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/chart"
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
	level := func(l ncu.Level, b float64) ncu.Traffic { return ncu.Traffic{Level: l, Bytes: b} }
	gemm := ncu.Kernel{ID: 0, Name: "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", Duration: 179.456e-6,
		Work:    []ncu.Work{{DType: devices.BF16, Path: devices.Tensor, FLOPs: 137438953472}},
		Traffic: []ncu.Traffic{level(ncu.DRAM, 178553088), level(ncu.L2, 1644191488), level(ncu.L1, 12160)}}
	add := ncu.Kernel{ID: 10, Name: "add", Duration: 259.328e-6,
		Work:    []ncu.Work{{DType: devices.FP32, Path: devices.CUDACores, FLOPs: 134222648}},
		Traffic: []ncu.Traffic{level(ncu.DRAM, 788328448), level(ncu.L2, 805306368), level(ncu.L1, 805306368)}}
	gemmFLOPs := gemm.Work[0].FLOPs
	c, notes := NCUChart(ncu.AnalyzeAll([]ncu.Kernel{gemm, add}, d), d)
	if len(c.Devices) != 1 || len(c.Devices[0].Ceilings) != 2 || c.Devices[0].DRAM != 3.35e12 {
		t.Fatalf("devices %+v", c.Devices)
	}
	if len(c.Points) != 5 {
		t.Fatalf("%d points, want 2 + 3", len(c.Points))
	}
	// The H100 has a measured L2 figure: the L2 points are drawn against
	// it, each with its roof min(peak, L2 × intensity).
	l2 := d.Measured.L2
	if !c.Devices[0].L2Measured || c.Devices[0].L2 != l2 {
		t.Errorf("L2 slope %g (measured %v), want the measured %g", c.Devices[0].L2, c.Devices[0].L2Measured, l2)
	}
	if p := c.Points[0]; p.Label != "nvjet_sm90_tst_256x128_64x4_1x2…" || p.Key != "0" || p.Group != "DRAM bytes" || !p.Measured ||
		p.Rate != gemmFLOPs/gemm.Duration || p.Roof != math.Min(989.4e12, 3.35e12*gemmFLOPs/178553088) {
		t.Errorf("first point %+v", p)
	}
	if p := c.Points[1]; p.Group != "L2 bytes" || p.Roof != math.Min(989.4e12, l2*gemmFLOPs/1644191488) {
		t.Errorf("L2 point %+v", p)
	}
	if p := c.Points[4]; p.Group != "L1 bytes" || p.Roof != 0 || p.Key != "10" {
		t.Errorf("L1 point %+v", p)
	}
	// 1644191488 B of L2 traffic in 179.456 µs is 9.16 TB/s, under the
	// measured 12.33 TB/s L2 read ceiling: no L2 point lies above its roof,
	// and the only note is the L1 point left out.
	if gemm.Duration*l2 < 1644191488 || len(notes) != 1 || !strings.Contains(notes[0], "ID 0's L1 point") {
		t.Errorf("notes %q", notes)
	}
	var svg bytes.Buffer
	if err := chart.Write(&svg, c, chart.Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DRAM bytes", "L2 bytes", "L1 bytes", "achieved (measured)", "roof at its intensity", "BF16 tensor 989", "FP32 67", "L2 "} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("chart lacks %q", want)
		}
	}

	// Without an L2 figure the L2 points are left out, with a note.
	d.Measured, d.L2.BytesPerSecond = nil, 0
	c, notes = NCUChart(ncu.AnalyzeAll([]ncu.Kernel{gemm, add}, d), d)
	for _, p := range c.Points {
		if p.Group == "L2 bytes" {
			t.Errorf("L2 point drawn without an L2 ceiling: %+v", p)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[1], "no L2 bandwidth") || !strings.Contains(notes[0], "ID 0's L1 point") {
		t.Errorf("notes %q", notes)
	}
}

// Kernel names shorten to distinct labels: the differing template argument,
// else an index.
func TestDistinctNames(t *testing.T) {
	got := distinctNames([]string{
		"gemm_kernel<float, 128, true>", "gemm_kernel<float, 64, true>", "softmax<half>", "softmax<half>",
		"a_very_long_kernel_name_that_goes_on_and_on_x", "a_very_long_kernel_name_that_goes_on_and_on_y", "add",
	}, 20)
	want := []string{"gemm_kernel<128>", "gemm_kernel<64>", "softmax #1", "softmax #2", "a_very_long_kernel_…", "a_very_long_kernel_… #2", "add"}
	want[4] += " #1"
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("name %d: got %q, want %q", i, got[i], want[i])
		}
	}
}
