package reports

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/examples"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/sim"
)

// The design review of the documentation's Llama-3-8B decode layer on the
// H100, against the A100: the summary, each op's share and every finding,
// in every format including the HTML page.
func TestReviewReport(t *testing.T) {
	data, err := examples.FS.ReadFile("llama3-8b-decode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, err := ops.ParseWorkload("llama3-8b-decode.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := review.Check(w, device(t, "h100"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rv := Review{Reports: []review.Report{r}}
	out := golden(t, "review", rendered{tables: ReviewTables(rv), records: ReviewRecords(rv), view: rv})
	if len(r.Findings) == 0 {
		t.Fatal("the decode layer has no findings")
	}
	for _, f := range r.Findings {
		contains(t, out, f.Check)
	}
	var html strings.Builder
	if err := ReviewHTML(&html, rv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "<svg") || !strings.Contains(html.String(), r.Findings[0].Check) {
		t.Error("the HTML page lacks its charts or its first finding")
	}
}

// Simulated points in base units: GB/s as bytes per second.
func TestSimulationReport(t *testing.T) {
	pts := []sim.Point{{Warps: 8, AchievedGBps: 1500, AchievedGFLOPs: 375, BoundGBps: 3350, BoundGFLOPs: 837.5, IPC: 0.5, Cycles: 10000, Instructions: 5000}}
	s := Simulation{Title: "stream on H100 SXM", Points: pts, Notes: []string{"a note"}}
	out := golden(t, "simulation", rendered{tables: []Table{SimulationTable(s)}, records: SimulationRecords(pts), view: SimPoints(pts)})
	contains(t, out, "1500000000000", "3350000000000", "375000000000")
}

// The version line and its records.
func TestVersionReport(t *testing.T) {
	v := Version{Module: "v1.2.3", Revision: "abc123", Time: "2026-11-27T00:00:00Z", Modified: true, Go: "go1.26"}
	if got, want := v.String(), "v1.2.3 (revision abc123, 2026-11-27T00:00:00Z, modified)"; !strings.HasPrefix(got, want) {
		t.Errorf("String() = %q, want it to start %q", got, want)
	}
	golden(t, "version", rendered{tables: VersionTables(v), records: VersionRecords(v), view: v})
}

// A report without a time (a training step that does not fit) says so in
// every table and leaves CSV's times empty: it read 0 s, and "vs first"
// divided by it.
func TestReviewNoTime(t *testing.T) {
	timed := review.Report{Workload: "step", Device: "H200 SXM", Expected: 2, LowerBound: 1}
	none := review.Report{Workload: "step", Device: "H100 SXM", NoTime: "the step does not fit"}
	for _, rv := range []Review{{Reports: []review.Report{none, timed}}, {Reports: []review.Report{timed, none}}} {
		var b strings.Builder
		if err := Render(&b, FormatTable, 0, ReviewTables(rv)...); err != nil {
			t.Fatal(err)
		}
		if err := Render(&b, FormatCSV, 0, ReviewRecords(rv)[0]); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, bad := range []string{" 0 s", "+Inf", "NaN", "0.00×"} {
			if strings.Contains(out, bad) {
				t.Errorf("%q in:\n%s", bad, out)
			}
		}
		contains(t, out, "none: the step does not fit")
	}
}
