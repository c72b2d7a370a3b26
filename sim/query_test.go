package sim

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/query"
)

// FuzzResidentWarps: no --warps-per-sm list or launch may panic, and every
// accepted count is a whole number of blocks that occupancy allows.
func FuzzResidentWarps(f *testing.F) {
	lim, err := devices.ArchFor(devices.CC{Major: 9})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "4,8,64", "6", " 4 , 8", "-4", "4,,8", "99999999999999999999"} {
		f.Add(128, 32, 0, s)
	}
	f.Add(32, 32, 0, "1,2,3")
	f.Add(1024, 32, 0, "32,64")
	f.Add(128, 32, 115840, "4,8")
	f.Fuzz(func(t *testing.T, threads, regs, smem int, list string) {
		if threads < 1 || threads > lim.MaxThreadsPerBlock || regs < 0 || regs > lim.MaxRegsPerThread || smem < 0 || smem > lim.SmemPerBlockOptin {
			return // the command rejects these before residentWarps
		}
		occ := occupancy.Calculate(lim, occupancy.Kernel{Regs: regs}, occupancy.Launch{Threads: threads, DynamicSmem: smem})
		if occ.Blocks == 0 {
			return
		}
		warps, err := residentWarps(occ, list)
		if err != nil {
			return
		}
		per := (threads + 31) / 32
		for _, n := range warps {
			if n < per || n%per != 0 || n > occ.Warps {
				t.Errorf("threads %d, regs %d, smem %d, list %q: accepted %d warps of %d resident", threads, regs, smem, list, n, occ.Warps)
			}
		}
	})
}

// TestQueryPlan: the simulate question's mistakes are field errors in the
// flags' words, and a valid one plans every warp count occupancy allows
// (H100: 128-thread blocks of 32 registers, 16 blocks, capped at 64 warps).
func TestQueryPlan(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Query)
		want string
	}{
		{func(q *Query) { q.ILP = 13 }, "--ilp 13: expected 1 to 12"},
		{func(q *Query) { q.Kernel = "gemm" }, "--kernel gemm: expected stream, fma or mixed"},
		{func(q *Query) { q.FlopsGiven = true }, "--flops-per-byte 8: applies to --kernel mixed only"},
		{func(q *Query) { q.Threads = 2048 }, "--threads 2048: expected 1 to 1024"},
		{func(q *Query) { q.Regs = 256 }, "--regs 256: expected 0 to 255"},
		{func(q *Query) { q.Smem = "48Q" }, "--smem 48Q: "},
		{func(q *Query) { q.Warps = "6" }, "--warps-per-sm 6: with 4 warps per block"},
		{func(q *Query) { q.Device = devices.Choice{Device: "h900", DeviceGiven: true} }, "--device h900: unknown device"},
	} {
		q := NewQuery()
		tc.mod(&q)
		err := q.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || query.Fields(err) == nil {
			t.Errorf("Validate() = %v, want a field error starting %q", err, tc.want)
		}
	}
	p, err := NewQuery().Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Device.Name != devices.Default || p.Occupancy.Blocks != 16 || len(p.Warps) != 16 || p.Warps[15] != 64 {
		t.Errorf("plan on %s: %d blocks, warps %v; want H100 SXM, 16 blocks, 4 to 64 warps", p.Device.Name, p.Occupancy.Blocks, p.Warps)
	}
	q := NewQuery()
	q.Kernel, q.FlopsPerByte, q.FlopsGiven, q.Warps = "mixed", 16, true, "8,16"
	if got, want := q.Args().String(), "gpucalc simulate --kernel mixed --flops-per-byte 16 --warps-per-sm 8,16"; got != want {
		t.Errorf("Args() = %q, want %q", got, want)
	}
}
