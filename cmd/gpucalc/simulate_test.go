package main

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// FuzzResidentWarps: no --warps-per-sm list or block size may panic, and
// every accepted count is a whole number of blocks within the SM's limits.
func FuzzResidentWarps(f *testing.F) {
	lim, err := devices.ArchFor(devices.CC{Major: 9})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "4,8,64", "6", " 4 , 8", "-4", "4,,8", "99999999999999999999"} {
		f.Add(128, s)
	}
	f.Add(32, "1,2,3")
	f.Add(1024, "32,64")
	f.Fuzz(func(t *testing.T, threads int, list string) {
		warps, err := residentWarps(lim, threads, list)
		if err != nil {
			return
		}
		per := (threads + 31) / 32
		for _, n := range warps {
			if n < per || n%per != 0 || n > lim.MaxWarpsPerSM || n/per > lim.MaxBlocksPerSM {
				t.Errorf("threads %d, list %q: accepted %d warps", threads, list, n)
			}
		}
	})
}
