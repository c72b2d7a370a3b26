package chart

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
)

// The register panel of 256 threads, 64 registers and 48 KiB on an H100:
// below 49 registers (1536 per warp, 5 blocks) shared memory limits alone,
// from 49 registers the registers do.
func TestLimitRuns(t *testing.T) {
	a, err := devices.ArchFor(devices.CC{Major: 9})
	if err != nil {
		t.Fatal(err)
	}
	pts, err := occupancy.Sweep(a, occupancy.Kernel{Regs: 64}, occupancy.Launch{Threads: 256, DynamicSmem: 48 << 10}, occupancy.VaryRegs)
	if err != nil {
		t.Fatal(err)
	}
	runs := limitRuns(Sweep{Quantity: occupancy.VaryRegs, Points: pts, Current: 64})
	if len(runs) < 2 || runs[0].limit != occupancy.LimitSharedMemory || runs[1].limit != occupancy.LimitRegisters || runs[1].lo != 49 {
		t.Errorf("register panel runs %+v", runs)
	}
}
