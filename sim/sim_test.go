package sim

import (
	"math"
	"strings"
	"testing"
)

// simple is a memory model without queueing noise, so that cycle counts can
// be derived by hand.
func simple() Params {
	return Params{Schedulers: 4, FMALatency: 4, FMAInterval: 1, BranchBubble: 7, SmemLatency: 23,
		SmemBytesPerCycle: 128, DRAMLatency: 700, DRAMBytesPerCycle: 12.8, Channels: 1, Seed: 1}
}

func run(t *testing.T, p Params, k Kernel, warps int) Result {
	t.Helper()
	r, err := Run(p, k, warps)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// One warp streaming float4 loads: each iteration is the load's round trip
// (four 128-byte lines served back to back, then the DRAM latency) plus the
// four FADDs that read it, two loop instructions and the branch bubble.
func TestStreamOneWarp(t *testing.T) {
	p := simple()
	k := Kernel{Loads: 1, LoadBytes: 16, Overhead: 3, Iterations: 200}
	r := run(t, p, k, 1)
	perIter := math.Ceil(4*128/p.DRAMBytesPerCycle+p.DRAMLatency) + 4 + 2 + p.BranchBubble
	if got := float64(r.Cycles) / 200; !near(got, perIter, 0.002) {
		t.Errorf("cycles per iteration %.2f, want %.0f", got, perIter)
	}
	if r.Bytes != 200*512 {
		t.Errorf("bytes %g, want %d", r.Bytes, 200*512)
	}
}

// Enough warps saturate the SM's DRAM share (within 3 %, AT-3 of
// simulation.md), whatever the queue's shape.
func TestStreamSaturates(t *testing.T) {
	for _, ch := range []int{1, 8} {
		p := simple()
		p.Channels, p.Jitter = ch, 35
		k := Kernel{Loads: 2, LoadBytes: 16, Overhead: 3, Iterations: 8192, Shared: true}
		r := run(t, p, k, 64)
		if got := r.BytesPerCycle(); got > p.DRAMBytesPerCycle || !near(got, p.DRAMBytesPerCycle, 0.03) {
			t.Errorf("%d channels: %.2f B/cycle, want just under %.2f", ch, got, p.DRAMBytesPerCycle)
		}
	}
}

// One dependent chain per warp, one warp per scheduler: an iteration of 10
// FMAs takes 9 FMA latencies, then the two loop instructions, the branch and
// its bubble before the next FMA (which waited 4 cycles anyway).
func TestFMALatencyBound(t *testing.T) {
	p := simple()
	k := Kernel{Chains: 1, ChainFMAs: 10, Overhead: 3, Iterations: 500}
	r := run(t, p, k, 4)
	perIter := 9*p.FMALatency + max(p.FMALatency, 3+p.BranchBubble)
	want := 4 * 10 * 64 / perIter
	if got := r.FLOPsPerCycle(); !near(got, want, 0.002) {
		t.Errorf("%.2f FLOP/cycle, want %.2f", got, want)
	}
}

// With many warps and chains the FMA pipes are the limit: each scheduler
// issues an FMA per interval, less the loop's issue slots.
func TestFMAPipeBound(t *testing.T) {
	for _, interval := range []float64{1, 2} {
		p := simple()
		p.FMAInterval = interval
		k := Kernel{Chains: 8, ChainFMAs: 10, Overhead: 3, Iterations: 100}
		r := run(t, p, k, 64)
		// Per iteration a scheduler needs 80 FMA slots of interval cycles;
		// the 3 loop instructions fit between FMAs only when interval > 1.
		cycles := 80 * interval
		if interval == 1 {
			cycles += 3
		}
		want := 4 * 80 * 64 / cycles
		if got := r.FLOPsPerCycle(); got > want*1.001 || !near(got, want, 0.03) {
			t.Errorf("interval %g: %.1f FLOP/cycle, want %.1f", interval, got, want)
		}
	}
}

// Shared-memory loads queue at the SM's shared-memory bandwidth: four
// 128-byte loads per iteration at 128 B/cycle bound a warp iteration of 11
// instructions to 4 cycles.
func TestSmemBandwidth(t *testing.T) {
	p := simple()
	k := Kernel{Smem: 4, Overhead: 3, Iterations: 16384, Shared: true}
	r := run(t, p, k, 64)
	if got := r.IPC(); !near(got, 11.0/4, 0.03) {
		t.Errorf("IPC %.3f, want %.3f", got, 11.0/4)
	}
}

func TestDeterministic(t *testing.T) {
	s := h100(t)
	k := Stream(1)
	a, b := run(t, s.Params, k, 24), run(t, s.Params, k, 24)
	if a != b {
		t.Errorf("same seed, different results: %+v, %+v", a, b)
	}
	p := s.Params
	p.Seed = 2
	c := run(t, p, k, 24)
	if c == a || !near(c.BytesPerCycle(), a.BytesPerCycle(), 0.03) {
		t.Errorf("seed 2: %.3f B/cycle against %.3f for seed 1; want a small difference", c.BytesPerCycle(), a.BytesPerCycle())
	}
}

func TestBounds(t *testing.T) {
	s := h100(t)
	pts, err := s.Sweep(Stream(1), []int{4, 16, 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if p.AchievedGBps > p.BoundGBps || p.BoundGFLOPs != 0 {
			t.Errorf("stream, %d warps: achieved %.0f GB/s, bounds %.0f GB/s %.0f GFLOP/s", p.Warps, p.AchievedGBps, p.BoundGBps, p.BoundGFLOPs)
		}
	}
	// Little's law at 4 warps: 4 × 512 B per DRAM latency (678 cycles,
	// measured on the H100 by tools/measure); roofline at 64.
	perSec := 132 * 1.98e9 / 1e9
	if want := 4 * 512.0 / 678 * perSec; !near(pts[0].BoundGBps, want, 1e-9) {
		t.Errorf("bound at 4 warps %.1f GB/s, want %.1f", pts[0].BoundGBps, want)
	}
	if !near(pts[2].BoundGBps, 3350, 1e-9) {
		t.Errorf("bound at 64 warps %.1f GB/s, want the datasheet 3350", pts[2].BoundGBps)
	}
	k, err := Mixed(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	gbps, gflops := s.Bound(k, 64)
	if !near(gbps, 3350, 1e-9) || !near(gflops, 4*3350, 1e-9) {
		t.Errorf("mixed AI 4 at 64 warps: bounds %.0f GB/s %.0f GFLOP/s, want 3350 and 13400", gbps, gflops)
	}
	gbps, gflops = s.Bound(FMAChains(1), 64)
	if gbps != 0 || !near(gflops, 66900, 1e-9) {
		t.Errorf("fma at 64 warps: bounds %.0f GB/s %.0f GFLOP/s, want 0 and the 66900 peak", gbps, gflops)
	}
}

func TestInvalid(t *testing.T) {
	good := simple()
	k := Stream(1)
	for _, c := range []struct {
		name  string
		edit  func(*Params, *Kernel)
		warps int
		want  string
	}{
		{"no schedulers", func(p *Params, _ *Kernel) { p.Schedulers = 0 }, 4, "scheduler"},
		{"no bandwidth", func(p *Params, _ *Kernel) { p.DRAMBytesPerCycle = 0 }, 4, "bandwidth"},
		{"NaN bandwidth", func(p *Params, _ *Kernel) { p.DRAMBytesPerCycle = math.NaN() }, 4, "bandwidth"},
		{"jitter", func(p *Params, _ *Kernel) { p.Jitter = 800 }, 4, "jitter"},
		{"warps", func(*Params, *Kernel) {}, 65, "65 warps"},
		{"zero warps", func(*Params, *Kernel) {}, 0, "0 warps"},
		{"wide load", func(_ *Params, k *Kernel) { k.LoadBytes = 32 }, 4, "load width"},
		{"empty", func(_ *Params, k *Kernel) { *k = Kernel{Overhead: 1, Iterations: 1} }, 4, "no loads"},
		{"no branch", func(_ *Params, k *Kernel) { k.Overhead = 0 }, 4, "branch"},
		{"chains without FMAs", func(_ *Params, k *Kernel) { k.Chains = 2 }, 4, "FMA"},
		{"too many", func(_ *Params, k *Kernel) { k.Loads = 100 }, 4, "at most"},
	} {
		p, kk := good, k
		c.edit(&p, &kk)
		_, err := Run(p, kk, c.warps)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	for _, ai := range []float64{0, 0.3, -1, math.NaN(), math.Inf(1), 1e9} {
		if _, err := Mixed(ai, 1); err == nil {
			t.Errorf("Mixed(%g): no error", ai)
		}
	}
}

// FuzzRun: no kernel or parameter set may panic or hang; valid runs move
// the bytes and FLOPs the kernel describes.
func FuzzRun(f *testing.F) {
	f.Add(1, 16, 0, 0, 0, 0, 4, 3, 10, false, 8, 4, uint64(1))
	f.Add(0, 0, 4, 10, 0, 0, 0, 3, 20, false, 1, 64, uint64(2))
	f.Add(2, 8, 8, 3, 2, 1, 4, 1, 64, true, 3, 17, uint64(3))
	f.Fuzz(func(t *testing.T, loads, loadBytes, chains, fmas, smem, stores, storeBytes, overhead, iters int, shared bool, channels, warps int, seed uint64) {
		if iters > 200 || fmas > 200 || overhead > 100 {
			return // keep each run short
		}
		p := simple()
		p.Channels, p.Seed = channels, seed
		k := Kernel{Loads: loads, LoadBytes: loadBytes, Chains: chains, ChainFMAs: fmas, Smem: smem,
			Stores: stores, StoreBytes: storeBytes, Overhead: overhead, Iterations: iters, Shared: shared}
		r, err := Run(p, k, warps)
		if err != nil {
			return
		}
		n := float64(warps * iters)
		if shared {
			n = float64(iters)
		}
		if want := n * float64(warpSize*(loads*loadBytes+stores*storeBytes)); r.Bytes != want {
			t.Errorf("bytes %g, want %g", r.Bytes, want)
		}
		if want := n * float64(chains*fmas*warpSize*2); r.FLOPs != want {
			t.Errorf("FLOPs %g, want %g", r.FLOPs, want)
		}
	})
}

// TestAchievedWithinBound: whatever the kernel, occupancy and seed, the
// achieved rates do not exceed the analytic bounds Sweep reports with them.
func TestAchievedWithinBound(t *testing.T) {
	s := h100(t)
	var kernels []Kernel
	for _, ilp := range []int{1, 2, 4, 8} {
		kernels = append(kernels, Stream(ilp), FMAChains(ilp))
	}
	for _, fpb := range []float64{0.5, 2, 8, 64, 1024} { // 1024: longer than the budget
		k, err := Mixed(fpb, 2)
		if err != nil {
			t.Fatal(err)
		}
		kernels = append(kernels, k)
	}
	for _, seed := range []uint64{1, 7} {
		s.Params.Seed = seed
		for _, k := range kernels {
			pts, err := s.Sweep(k, []int{1, 2, 8, 32, 64}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pts {
				if p.AchievedGBps > p.BoundGBps*(1+1e-12) || p.AchievedGFLOPs > p.BoundGFLOPs*(1+1e-12) {
					t.Errorf("%+v at %d warps, seed %d: achieved %g GB/s %g GFLOP/s above the bounds %g, %g",
						k, p.Warps, seed, p.AchievedGBps, p.AchievedGFLOPs, p.BoundGBps, p.BoundGFLOPs)
				}
			}
		}
	}
}

// TestBudget: a run longer than the budget stops there, says so, and gives
// the rates of the whole run within 1 %; the slowest legal mixed kernel is
// bounded too.
func TestBudget(t *testing.T) {
	s := h100(t)
	k, err := Mixed(512, 4) // 16 chains of 1024 FMAs per iteration
	if err != nil {
		t.Fatal(err)
	}
	for _, warps := range []int{4, 64} {
		full := newMachine(s.Params, k, warps)
		full.budget = math.MaxInt64
		full.run()
		want := full.result()
		if want.Instructions <= MaxInstructions || want.Scaled != 0 {
			t.Fatalf("%d warps: the whole run has %d instructions; the test needs more than %d", warps, want.Instructions, MaxInstructions)
		}
		var calls int
		got, err := RunProgress(s.Params, k, warps, func(f float64) {
			if f <= 0 || f > 1 {
				t.Errorf("progress %g", f)
			}
			calls++
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Scaled <= 1 || calls == 0 || !near(float64(got.Instructions), float64(want.Instructions), 1e-9) {
			t.Errorf("%d warps: scaled %g, %d progress calls, %d instructions (want %d)", warps, got.Scaled, calls, got.Instructions, want.Instructions)
		}
		if !near(got.FLOPsPerCycle(), want.FLOPsPerCycle(), 0.01) || !near(got.BytesPerCycle(), want.BytesPerCycle(), 0.01) {
			t.Errorf("%d warps: budgeted %g FLOP/cycle %g B/cycle, whole run %g, %g", warps, got.FLOPsPerCycle(), got.BytesPerCycle(), want.FLOPsPerCycle(), want.BytesPerCycle())
		}
	}
	slow, err := Mixed(32768, 12)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s.Params, slow, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scaled == 0 || r.FLOPs != float64(slow.FMAs())*warpSize*2*mixedIterationsPerSM {
		t.Errorf("mixed 32768 FLOP/B, ilp 12: %+v; want a scaled run with every FLOP of the kernel", r)
	}
}
