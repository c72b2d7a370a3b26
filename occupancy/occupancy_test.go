package occupancy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestInvalidInput(t *testing.T) {
	a := arch(t, "9.0")
	for _, c := range []struct {
		name string
		k    Kernel
		l    Launch
		want error
	}{
		{"no threads", Kernel{}, Launch{Threads: 0}, ErrBlockSize},
		{"1025 threads", Kernel{}, Launch{Threads: 1025}, ErrBlockSize},
		{"256 regs", Kernel{Regs: 256}, Launch{Threads: 32}, ErrRegisters},
		{"negative smem", Kernel{}, Launch{Threads: 32, DynamicSmem: -1}, ErrNegative},
		{"static over 48K", Kernel{StaticSmem: 49153}, Launch{Threads: 32}, ErrStaticSmem},
		{"carveout 101%", Kernel{}, Launch{Threads: 32, Carveout: CarveoutPercent(101)}, ErrCarveout},
		{"carveout over SM", Kernel{}, Launch{Threads: 32, Carveout: CarveoutBytes(233473)}, ErrCarveout},
		{"17 barriers", Kernel{Barriers: 17}, Launch{Threads: 32}, ErrBarriers},
	} {
		r := Calculate(a, c.k, c.l)
		if !errors.Is(r.Err, c.want) || r.Blocks != 0 {
			t.Errorf("%s: got %d blocks, err %v; want %v", c.name, r.Blocks, r.Err, c.want)
		}
	}
}

// TestCases covers what the reference grid does not: carveouts given in
// bytes, named barriers, launch bounds and the reasons for 0 blocks. Expected
// values are from the algorithm of cuda_occupancy.h (CUDA 13
// and Nsight Compute's calculator).
func TestCases(t *testing.T) {
	for _, c := range []struct {
		name      string
		cc        string
		k         Kernel
		l         Launch
		blocks    int
		limiters  Limiter
		carveout  int
		reason    error
		smemAlloc int
	}{
		// cc 8.6, 37 regs, 128 threads, 8 KB: 11 blocks, smem-limited (§1.2).
		{"sm86 worked example", "8.6", Kernel{Regs: 37}, Launch{Threads: 128, DynamicSmem: 8192}, 11, LimitSharedMemory, 102400, nil, 9216},
		// An 8 KiB carveout with a 31 KiB block is raised to 32 KiB (§6).
		{"carveout raised", "9.0", Kernel{Regs: 32}, Launch{Threads: 128, DynamicSmem: 31*1024 - 1024, Carveout: CarveoutBytes(8 * 1024)}, 1, LimitSharedMemory, 32 * 1024, nil, 31 * 1024},
		// 64 KiB asked for in bytes: 3 blocks of 17 KiB.
		{"carveout bytes", "9.0", Kernel{Regs: 32}, Launch{Threads: 128, DynamicSmem: 16 * 1024, Carveout: CarveoutBytes(60 * 1024)}, 3, LimitSharedMemory, 64 * 1024, nil, 17 * 1024},
		// NCU: 12.0, 32 threads, 2 barriers: 12 blocks; 3 barriers: 8; 9.0 with 3: 21.
		{"2 barriers sm120", "12.0", Kernel{Regs: 16, Barriers: 2}, Launch{Threads: 32}, 12, LimitBarriers, 102400, nil, 1024},
		{"3 barriers sm120", "12.0", Kernel{Regs: 16, Barriers: 3}, Launch{Threads: 32}, 8, LimitBarriers, 102400, nil, 1024},
		{"3 barriers sm90", "9.0", Kernel{Regs: 16, Barriers: 3}, Launch{Threads: 32}, 21, LimitBarriers, 233472, nil, 1024},
		// Barriers do not count before cc 9.0.
		{"barriers sm86", "8.6", Kernel{Regs: 16, Barriers: 3}, Launch{Threads: 32}, 16, LimitBlocks, 102400, nil, 1024},
		// 288 threads × 200 regs: 0 only through the 4-warp hardware check (§6).
		{"hardware check", "9.0", Kernel{Regs: 200}, Launch{Threads: 288}, 0, LimitRegisters, 233472, ErrRegsPerBlock, 1024},
		// 99 KB dynamic fits on 8.6, 100 KB does not (§6).
		{"99K on sm86", "8.6", Kernel{Regs: 32}, Launch{Threads: 128, DynamicSmem: 99 * 1024}, 1, LimitSharedMemory, 102400, nil, 100 * 1024},
		{"100K on sm86", "8.6", Kernel{Regs: 32}, Launch{Threads: 128, DynamicSmem: 100 * 1024}, 0, LimitSharedMemory, 0, ErrSmemPerBlock, 101 * 1024},
		{"launch bounds", "9.0", Kernel{Regs: 32, MaxThreads: 256}, Launch{Threads: 512}, 0, 0, 233472, ErrLaunchBounds, 1024},
	} {
		r := Calculate(arch(t, c.cc), c.k, c.l)
		if r.Err != nil || r.Blocks != c.blocks || r.Limiters != c.limiters || r.Carveout != c.carveout || r.Reason != c.reason || r.SmemPerBlock != c.smemAlloc {
			t.Errorf("%s: got %d blocks, %v, carveout %d, smem %d, reason %v, err %v; want %d, %v, %d, %d, %v",
				c.name, r.Blocks, r.Limiters, r.Carveout, r.SmemPerBlock, r.Reason, r.Err, c.blocks, c.limiters, c.carveout, c.smemAlloc, c.reason)
		}
	}
}

func TestStrings(t *testing.T) {
	if s := (LimitWarps | LimitRegisters | LimitBarriers).String(); s != "warps|registers|barriers" {
		t.Errorf("limiters %q", s)
	}
	for c, want := range map[Carveout]string{{}: "default", CarveoutPercent(50): "50%", CarveoutBytes(65536): "65536B"} {
		if c.String() != want {
			t.Errorf("carveout %q, want %q", c.String(), want)
		}
	}
}

var sink Result

// BenchmarkCalculate measures one calculation (target: at most 100 ns).
func BenchmarkCalculate(b *testing.B) {
	a := arch(&testing.T{}, "9.0")
	k := Kernel{Regs: 64, StaticSmem: 4096}
	l := Launch{Threads: 256, DynamicSmem: 40000, Carveout: CarveoutPercent(50)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		l.Threads = 1 + i&1023
		sink = Calculate(a, k, l)
	}
}

// TestResultJSON: a limit that does not bind is null in JSON, not the
// header's INT_MAX (barriers before cc 9.0, registers at 0, shared memory
// at 0); one that binds is its count. The A100 example: 64 registers, 256
// threads, 48 KiB: 8 by warps, 4 by registers, 3 by shared memory (164 KiB
// / 49 KiB), 32 by blocks.
func TestResultJSON(t *testing.T) {
	for _, c := range []struct {
		cc   string
		k    Kernel
		l    Launch
		want string
	}{
		{"8.0", Kernel{Regs: 64}, Launch{Threads: 256, DynamicSmem: 48 << 10},
			`"blocks_by_warps":8,"blocks_by_regs":4,"blocks_by_smem":3,"blocks_by_blocks":32,"blocks_by_barriers":null`},
		{"9.0", Kernel{}, Launch{Threads: 32}, `"blocks_by_warps":64,"blocks_by_regs":null,"blocks_by_smem":`},
		{"9.0", Kernel{Regs: 16, Barriers: 3}, Launch{Threads: 32}, `"blocks_by_barriers":21`},
	} {
		r := Calculate(arch(t, c.cc), c.k, c.l)
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), c.want) || strings.Contains(string(data), "2147483647") {
			t.Errorf("cc %s %+v %+v: %s; want %s and no INT_MAX", c.cc, c.k, c.l, data, c.want)
		}
		var p PerLimit
		for i, l := range Limiters {
			p[i] = r.By(l)
		}
		data, _ = json.Marshal(p)
		if strings.Contains(string(data), "2147483647") {
			t.Errorf("PerLimit %v: %s has INT_MAX", p, data)
		}
	}
}
