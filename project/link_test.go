package project

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/trace"
)

// synthetic reads a one-rank H100 trace of the given kernels and analyses
// it on the H100.
func synthetic(t *testing.T, kernels ...string) analysed {
	t.Helper()
	in := `{"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
"traceEvents": [` + strings.Join(kernels, ",\n") + `]}`
	tr, err := trace.Read(strings.NewReader(in))
	if err != nil && !errors.Is(err, trace.ErrNoShapes) {
		t.Fatal(err)
	}
	d := lookup(t, "h100")
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

// An NCCL kernel moves data over the link, so it scales by the links, not
// by SM clock: a 1 ms all-gather at the H100's measured 263.7 GB/s NCCL
// bus bandwidth (after 9.62 µs of latency) moves at most 32 GB/s over the
// L4's PCIe 4.0 x16 (it has no NVLink), so it takes at least
// (1 ms − 9.62 µs) × 263.7/32 there. Before, it was scaled by SM clock:
// 0.97× on the L4. The H200 has the same measured NVLink curve: 1×.
func TestNCCLScalesByLink(t *testing.T) {
	s := synthetic(t, `{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "pid": 0, "tid": 20, "ts": 1000, "dur": 1000, "args": {"stream": 20, "device": 0, "grid": [2, 1, 1], "block": [512, 1, 1]}}`)
	res, err := Project(s.t, &s.a, s.dev, s.arch, []devices.Device{lookup(t, "l4"), lookup(t, "h200")})
	if err != nil {
		t.Fatal(err)
	}
	l4, h200 := res.Projections[0].Summary, res.Projections[1].Summary
	if floor := (1e-3 - 9.62e-6) * 263.7 / 32; l4.ProjectedKernel < floor {
		t.Errorf("L4: the all-gather projected to %.3g s, less than the %.3g s its PCIe link allows", l4.ProjectedKernel, floor)
	}
	if math.Abs(h200.ProjectedKernel/1e-3-1) > 1e-9 {
		t.Errorf("H200: the all-gather projected to %.4g s, want 1 ms (the same measured link curve)", h200.ProjectedKernel)
	}
	for _, p := range res.Projections {
		if len(p.Bounds) != 1 || p.Bounds[0].Bound != Link || p.Unattributed.Bound != Link || p.Unattributed.Ceiling != "link" {
			t.Errorf("%s: bounds %+v, op %+v; want the link", p.Device, p.Bounds, p.Unattributed)
		}
	}
}

// A kernel whose grid the trace gives as 0 (or not at all) has no waves
// to compare: its projection is finite and JSON writes it. It was NaN,
// and JSON failed.
func TestZeroGrid(t *testing.T) {
	s := synthetic(t, `{"ph": "X", "cat": "kernel", "name": "some_kernel", "pid": 0, "tid": 7, "ts": 1000, "dur": 50, "args": {"stream": 7, "device": 0, "grid": [0, 1, 1], "block": [128, 1, 1]}}`,
		`{"ph": "X", "cat": "kernel", "name": "other_kernel", "pid": 0, "tid": 7, "ts": 1100, "dur": 50, "args": {"stream": 7, "device": 0}}`)
	res, err := Project(s.t, &s.a, s.dev, s.arch, []devices.Device{lookup(t, "h200"), lookup(t, "l4")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Projections {
		if x := p.Summary.ProjectedKernel; math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 || math.IsNaN(p.Summary.Speedup) {
			t.Errorf("%s: projected %g s, speed-up %g", p.Device, x, p.Summary.Speedup)
		}
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("JSON: %v", err)
	}
}
