package main

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
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
