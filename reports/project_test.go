package reports

import (
	"math"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/project"
	"github.com/gpucalc/gpucalc/trace"
)

// A projection's chart: each op at its measured rate on the source's roofs
// (hollow) and at its projected rate on the target's (filled), each point
// with its own device's roof at its intensity.
func TestTraceProjectionChart(t *testing.T) {
	ceil := func(name string) project.Ceilings {
		d, err := devices.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		arch, err := d.Limits()
		if err != nil {
			t.Fatal(err)
		}
		c, err := project.CeilingsOf(d, arch, true)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A 4096³ bf16 matmul measured at 200 µs on the H100, projected to
	// 400 µs on an A100; and a row without FLOPs, which no log axis shows.
	mm := ops.Op{Kind: ops.Matmul, DType: devices.BF16, M: 4096, N: 4096, K: 4096, Batch: 1}
	flops, bytes := 2*4096.0*4096*4096, 3*4096.0*4096*2
	a := trace.Analysis{Ops: []trace.OpRow{
		{Name: "aten::mm", Shapes: "[4096,4096] [4096,4096]", Model: []ops.Op{mm}, FLOPs: flops, Bytes: bytes, Measured: 200e-6,
			AchievedFLOPs: flops / 200e-6, Ceiling: "bf16_tensor"},
		{Name: "aten::copy_", Model: []ops.Op{{Kind: ops.Copy, DType: devices.BF16, Out: devices.BF16, Elems: 1 << 20}}, Bytes: 4 << 20, Measured: 5e-6},
	}}
	r := project.Result{Source: ceil("h100"), Projections: []project.Projection{{Device: "A100 SXM4 80GB", Ceilings: ceil("a100-sxm4-80gb"),
		Ops: []project.Op{{Projected: 400e-6, Ceiling: "bf16_tensor", TargetCeiling: "bf16_tensor"}, {Projected: 9e-6}}}}}
	c := TraceProjectionChart(a, r)
	if len(c.Devices) != 2 || c.Devices[0].Name != "H100 SXM" || c.Devices[1].Name != "A100 SXM4 80GB" || c.Filled != "projected" {
		t.Fatalf("devices %+v, filled %q", c.Devices, c.Filled)
	}
	// Datasheet roofs: 3.35 and 2.039 TB/s, 989.4 and 312 TFLOP/s bf16.
	for i, want := range []float64{989.4e12, 312e12} {
		if cs := c.Devices[i].Ceilings; len(cs) != 1 || cs[0].FLOPS != want {
			t.Errorf("%s ceilings %+v, want BF16 tensor at %g", c.Devices[i].Name, cs, want)
		}
	}
	// The copy is kept once, unplaced, so the chart says it left it out.
	if len(c.Points) != 3 || c.Points[2].FLOPs != 0 || len(c.Unplaced()) != 1 {
		t.Fatalf("%d points (unplaced %q), want the matmul on each device and the copy once", len(c.Points), c.Unplaced())
	}
	ai := flops / bytes // 1365 FLOP/byte: above both ridges
	for i, want := range []struct {
		rate, roof float64
		measured   bool
	}{{flops / 200e-6, 989.4e12, true}, {flops / 400e-6, 312e12, false}} {
		p := c.Points[i]
		if p.Device != i || math.Abs(p.Rate/want.rate-1) > 1e-12 || p.Roof != min(want.roof, c.Devices[i].DRAM*ai) || p.Measured != want.measured || p.Label == "" {
			t.Errorf("point %d: %+v; want device %d at %g FLOP/s, roof %g, measured %v, labelled", i, p, i, want.rate, want.roof, want.measured)
		}
	}
}
