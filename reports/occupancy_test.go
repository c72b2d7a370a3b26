package reports

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/occupancy"
)

// h100 is the H100 as an occupancy target.
func h100(t *testing.T) occupancy.Target {
	t.Helper()
	tg, err := occupancy.DeviceTarget(device(t, "h100"), "")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// 256 threads, 64 registers and 48 KiB of dynamic shared memory on the
// H100: 4 blocks per SM (registers and shared memory both allow 4: 16,384
// registers of 65,536; 49 KiB with the 1 KiB reserve of 228 KiB), 32 warps,
// 50%, as the CUDA runtime answers; a grid of 1000 blocks in 2 waves.
func TestOccupancyReport(t *testing.T) {
	tg := h100(t)
	k, l := occupancy.Kernel{Regs: 64}, occupancy.Launch{Threads: 256, DynamicSmem: 48 << 10}
	r := occupancy.Calculate(tg.Arch, k, l)
	w, err := occupancy.GridWaves(1000, r.Blocks, tg.SMs)
	if err != nil {
		t.Fatal(err)
	}
	cliffs, err := occupancy.FindCliffs(tg.Arch, k, l)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := occupancy.ActiveClusters(tg.Arch, r, 2, tg.SMs, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := NewOccupancy(tg, k, l, []string{"carveout"}, r, &w, &cliffs, &cl)
	if r.Blocks != 4 || r.Warps != 32 || o.Occupancy != 0.5 {
		t.Fatalf("H100 256 threads, 64 regs, 48 KiB: %d blocks, %d warps, %g; the runtime answers 4, 32, 0.5", r.Blocks, r.Warps, o.Occupancy)
	}
	out := golden(t, "occupancy", rendered{tables: o.Tables(), records: o.Records(), view: o})
	contains(t, out, "50.0%", `"blocks_per_sm": 4`, `"warps_per_sm": 32`, "H100 SXM,9.0,132,256,64,49152,0,49152,,1,4,32,64,1024,2048,0.5,registers|shared_memory,")
	for _, section := range []string{"summary", "limits", "waves"} {
		if _, ok := Section(o.Records(), section); !ok {
			t.Errorf("no CSV section %q", section)
		}
	}
}

// No block fits: the reason is the answer, in every format.
func TestOccupancyNone(t *testing.T) {
	tg := h100(t)
	k, l := occupancy.Kernel{Regs: 255}, occupancy.Launch{Threads: 1024}
	r := occupancy.Calculate(tg.Arch, k, l)
	if r.Blocks != 0 {
		t.Fatalf("255 registers × 1024 threads: %d blocks, want 0 (261,120 registers of 65,536)", r.Blocks)
	}
	o := NewOccupancy(occupancy.ArchTarget(tg.Arch), k, l, nil, r, nil, nil, nil)
	out := golden(t, "occupancy_none", rendered{tables: o.Tables(), records: o.Records(), view: o})
	if o.Reason == "" || !strings.Contains(out, o.Reason) {
		t.Errorf("the reason %q is not in the output", o.Reason)
	}
}

// The suggestion, the shared memory available and a sweep, each in every
// format, with the runtime's figures.
func TestOccupancyQuestions(t *testing.T) {
	tg := h100(t)
	k := occupancy.Kernel{Regs: 32}
	so := occupancy.SuggestOptions{SMs: tg.SMs}
	s, err := occupancy.Suggest(tg.Arch, k, so)
	if err != nil {
		t.Fatal(err)
	}
	out := golden(t, "suggest", rendered{tables: Suggestion(tg, k, so, s), records: SuggestionRecords(tg, k, so, s),
		view: SuggestView{Target: tg, Kernel: k, Suggestion: s}})
	if s.BlockSize != 1024 || s.MinGridSize != 2*132 {
		t.Fatalf("32 registers on the H100: block size %d, grid %d; the runtime suggests 1024 and 264", s.BlockSize, s.MinGridSize)
	}
	contains(t, out, "H100 SXM,9.0,132,1024,2,1,264,", "264 (2 blocks per SM × 132 SMs)")

	a, err := occupancy.AvailableSmem(tg.Arch, k, 2, 256, occupancy.Carveout{})
	if err != nil {
		t.Fatal(err)
	}
	out = golden(t, "availsmem", rendered{tables: []Table{AvailSmem(tg, k, 2, 256, a)}, records: AvailSmemRecords(tg, k, 2, 256, a),
		view: AvailSmemView{Target: tg, Kernel: k, Blocks: 2, Threads: 256, AvailSmem: a}})
	contains(t, out, itoa(a.Runtime), itoa(a.Fits))

	l := occupancy.Launch{Threads: 256}
	pts, err := occupancy.Sweep(tg.Arch, k, l, occupancy.VaryThreads)
	if err != nil {
		t.Fatal(err)
	}
	out = golden(t, "sweep", rendered{tables: []Table{SweepTable(tg, occupancy.VaryThreads, pts, 256)}, records: SweepRecords(occupancy.VaryThreads, pts, 256),
		view: SweepView{Target: tg, Kernel: k, Launch: l, Vary: occupancy.VaryThreads, Current: 256, Points: pts}})
	contains(t, out, "◀ 256", "Threads per block")
	if c := SweepChart(tg, occupancy.VaryThreads, pts, 256); c.CurrentLabel != "256" || len(c.Points) != len(pts) {
		t.Errorf("sweep chart %+v", c)
	}
	n, err := occupancy.SweepAround(tg.Arch, k, l)
	if err != nil {
		t.Fatal(err)
	}
	c := OccupancyChart(tg, k, l, n)
	if !strings.Contains(c.Title, "64 warps per SM (100.0%)") || len(c.Panels[2].Points) == 0 {
		t.Errorf("occupancy chart title %q: 256 threads of 32 registers fill the H100's 64 warps", c.Title)
	}
}
