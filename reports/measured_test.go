package reports

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/project"
	"github.com/gpucalc/gpucalc/trace"
)

// open opens a file of testdata.
func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// An Nsight Compute export of an H100 run (profile.csv: a bf16 GEMM and
// an elementwise kernel): every kernel's measured duration and counters in
// every format, as the export gives them.
func TestNCUReport(t *testing.T) {
	ks, err := ncu.Read(open(t, "profile.csv"))
	if err != nil {
		t.Fatal(err)
	}
	d := device(t, "h100")
	as := ncu.AnalyzeAll(ks, d)
	out := golden(t, "ncu", rendered{tables: NCU(as, d.Name, "from the export"), records: NCURecords(as, d.Name),
		view: NCUView{Device: d.Name, DeviceOrigin: "from the export", Kernels: as}})
	for a := range as.All() {
		contains(t, out, num(a.Kernel.Duration))
	}
	if as.Len() == 0 {
		t.Fatal("no kernels in profile.csv")
	}
}

// A torch.profiler step on the H100 (step.json), its projection to the
// H200 and the A100, and two ranks of one run (r0.json, r1.json).
func TestTraceReports(t *testing.T) {
	tr, err := trace.Read(open(t, "step.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := models(t, "h100")[0]
	arch, err := trace.Arch(tr, m.Device())
	if err != nil {
		t.Fatal(err)
	}
	a, err := trace.Analyze(tr, m, arch)
	if err != nil {
		t.Fatal(err)
	}
	out := golden(t, "trace", rendered{tables: Trace(a, "", 0), records: TraceRecords(a), view: TraceView{Analysis: a}})
	if len(a.Ops) == 0 {
		t.Fatal("no ops in step.json")
	}
	for _, o := range a.Ops {
		contains(t, out, o.Name)
	}
	if c := TraceChart(a, m.Device()); len(c.Devices) != 1 {
		t.Errorf("trace chart: %d devices", len(c.Devices))
	}

	p, err := project.Project(tr, &a, m.Device(), arch, []devices.Device{device(t, "h200"), device(t, "a100")})
	if err != nil {
		t.Fatal(err)
	}
	out = golden(t, "trace_on", rendered{tables: TraceProjection(p, "", 0, true), records: ProjectionRecords(p), view: TraceView{Analysis: a, Projection: &p}})
	contains(t, out, "H200", "A100")
	if c := TraceProjectionChart(a, p); len(c.Devices) != 3 {
		t.Errorf("projection chart: %d devices, want the source and two targets", len(c.Devices))
	}

	var rts []trace.RankTrace
	for _, name := range []string{"r0.json", "r1.json"} {
		// A rank's trace needs no shapes: its kernels' times are the answer.
		rt, err := trace.Read(open(t, name))
		if err != nil && !errors.Is(err, trace.ErrNoShapes) {
			t.Fatal(err)
		}
		rts = append(rts, trace.RankTrace{Name: name, Trace: rt})
	}
	rs, err := trace.AnalyzeRanks(rts, m)
	if err != nil {
		t.Fatal(err)
	}
	out = golden(t, "trace_ranks", rendered{tables: TraceRanks(rs, "", 0), records: TraceRanksRecords(rs), view: TraceRanksView{Ranks: rs}})
	if len(rs.Ranks) != 2 || rs.MedianWindow != (rs.Ranks[0].Window+rs.Ranks[1].Window)/2 {
		t.Fatalf("two ranks: %d, median window %g", len(rs.Ranks), rs.MedianWindow)
	}
	contains(t, out, "r0.json", "r1.json", num(rs.Ranks[0].Compute), num(rs.Ranks[1].Compute))
	if !strings.Contains(out, "rank") {
		t.Error("no rank column")
	}
}
