package occupancy

import (
	"math"
	"math/big"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// TestGridWavesLarge: waves stay positive and exact up to the largest grid;
// the expected figures are computed with big integers.
func TestGridWavesLarge(t *testing.T) {
	for _, tt := range []struct{ grid, perSM, sms int }{
		{math.MaxInt, 16, 132},
		{math.MaxInt, 1, 1},
		{math.MaxInt - 1, 32, 1024},
		{1 << 62, 3, 7},
		{1, 32, 132},
		{2112, 16, 132},
		{2113, 16, 132},
	} {
		w, err := GridWaves(tt.grid, tt.perSM, tt.sms)
		if err != nil {
			t.Errorf("%+v: %v", tt, err)
			continue
		}
		per := big.NewInt(int64(tt.perSM * tt.sms))
		g := big.NewInt(int64(tt.grid))
		waves := new(big.Int).Add(g, new(big.Int).Sub(per, big.NewInt(1)))
		waves.Div(waves, per)
		last := new(big.Int).Sub(g, new(big.Int).Mul(new(big.Int).Sub(waves, big.NewInt(1)), per))
		if int64(w.Waves) != waves.Int64() || int64(w.LastWaveBlocks) != last.Int64() || w.LastWaveFill <= 0 || w.LastWaveFill > 1 {
			t.Errorf("%+v: %+v, want %v waves, %v in the last", tt, w, waves, last)
		}
	}
	for _, tt := range []struct{ grid, perSM, sms int }{
		{0, 1, 1}, {-1, 1, 1}, {1, 0, 132}, {1, 1, 0}, {1, math.MaxInt / 2, 3},
	} {
		if w, err := GridWaves(tt.grid, tt.perSM, tt.sms); err == nil {
			t.Errorf("%+v: %+v, want an error", tt, w)
		}
	}
}

// TestHugeDynamicSmem: a block asking for more shared memory than 32 bits
// count reports what it asked for (rounded up to the allocation unit), not a
// clamped figure, and fits nowhere.
func TestHugeDynamicSmem(t *testing.T) {
	a, err := devices.ArchFor(devices.CC{Major: 9, Minor: 0})
	if err != nil {
		t.Fatal(err)
	}
	u := a.SmemAllocUnit
	for _, dyn := range []int{1 << 31, 1<<31 + 5, 1 << 40, 1<<62 + 3, math.MaxInt - 2048} {
		r := Calculate(a, Kernel{Regs: 32}, Launch{Threads: 128, DynamicSmem: dyn})
		want := (dyn + a.SmemReservedPerBlock + u - 1) / u * u
		if r.Err != nil || r.Blocks != 0 || r.SmemPerBlock != want {
			t.Errorf("dynamic %d: blocks %d, smem per block %d (%v), want 0 blocks, %d", dyn, r.Blocks, r.SmemPerBlock, r.Err, want)
		}
	}
	r := Calculate(a, Kernel{Regs: 32, StaticSmem: 100}, Launch{Threads: 128, DynamicSmem: math.MaxInt})
	if r.SmemPerBlock != math.MaxInt || r.Blocks != 0 {
		t.Errorf("dynamic MaxInt: smem per block %d, blocks %d; want saturated at %d, 0", r.SmemPerBlock, r.Blocks, math.MaxInt)
	}
}

// TestClustersSMs: an SM count beyond any GPU is refused, not listed GPC by
// GPC; the largest accepted one is modelled.
func TestClustersSMs(t *testing.T) {
	a, err := devices.ArchFor(devices.CC{Major: 9, Minor: 0})
	if err != nil {
		t.Fatal(err)
	}
	r := Calculate(a, Kernel{Regs: 32}, Launch{Threads: 128})
	for _, sms := range []int{maxSMs + 1, 1e12, math.MaxInt} {
		if _, err := ActiveClusters(a, r, 2, sms, nil); err == nil {
			t.Errorf("%d SMs: no error", sms)
		}
	}
	c, err := ActiveClusters(a, r, 2, maxSMs, nil)
	// 1024 SMs in GPCs of 18 (CUTLASS): 56 full GPCs and one of 16, each
	// SM with min(16, 8) = 8 cluster slots: 56·(18·8/2) + 16·8/2 clusters.
	if err != nil || c.Active != 56*72+64 {
		t.Errorf("%d SMs: %d clusters (%v), want %d", maxSMs, c.Active, err, 56*72+64)
	}
}
