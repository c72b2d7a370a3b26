package occupancy

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// TestSweepAndCliffsReference checks register sweeps and register cliffs
// against the reference grid: for every architecture and block size, the
// header's blocks for each register count 0..255 (occ_ref.csv.gz, grid R).
func TestSweepAndCliffsReference(t *testing.T) {
	type key struct {
		arch  string
		block int
	}
	grid := map[key][]int{}
	archs := map[string]devices.Arch{}
	eachRow(t, "occ_ref.csv.gz", func(r *row) {
		if r.str("grid") != "R" {
			return
		}
		k := key{r.str("arch"), r.int("block")}
		if _, ok := archs[k.arch]; !ok {
			archs[k.arch] = arch(t, r.str("cc"))
		}
		if regs := r.int("regs"); regs != len(grid[k]) {
			t.Fatalf("%v: registers out of order", r)
		}
		grid[k] = append(grid[k], r.int("blocks"))
	})
	checked := 0
	for k, blocks := range grid {
		a := archs[k.arch]
		l := Launch{Threads: k.block}
		pts, err := Sweep(a, Kernel{Regs: 100}, l, VaryRegs)
		if err != nil || len(pts) != len(blocks) {
			t.Fatalf("%v: %d points (%v), want %d", k, len(pts), err, len(blocks))
		}
		for regs, want := range blocks {
			if pts[regs].X != regs || pts[regs].Blocks != want {
				t.Errorf("%v regs %d: sweep %+v, reference %d blocks", k, regs, pts[regs], want)
			}
		}
		for _, regs := range []int{0, 24, 32, 37, 64, 65, 96, 128, 168, 200, 255} {
			c, err := FindCliffs(a, Kernel{Regs: regs}, l)
			if err != nil {
				t.Fatal(err)
			}
			var down, up *Cliff
			for r := regs - 1; r >= 0 && down == nil; r-- {
				if blocks[r] != blocks[regs] {
					down = &Cliff{r, blocks[r]}
				}
			}
			for r := regs + 1; r < len(blocks) && up == nil; r++ {
				if blocks[r] != blocks[regs] {
					up = &Cliff{r, blocks[r]}
				}
			}
			if !sameCliff(c.RegsDown, down) || !sameCliff(c.RegsUp, up) {
				t.Errorf("%v regs %d: cliffs %v %v, reference %v %v", k, regs, c.RegsDown, c.RegsUp, down, up)
			}
			checked++
		}
	}
	t.Logf("%d register sweeps, %d cliff pairs", len(grid), checked)
}

func sameCliff(a, b *Cliff) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// TestSmemCliffs: H100, 256 threads, 64 registers, 48 KiB (4 blocks, registers
// and shared memory tied; 50176 B allocated). Fewer bytes never give a 5th
// block (registers hold it at 4); a 4th block stops fitting in 228 KiB when
// the allocation passes 233472/4 = 58368 B: the smallest such block is
// 58496 − 127 − 1024 = 57345 B. Sweeping shared memory and threads must
// agree with Calculate at the current point.
func TestSmemCliffs(t *testing.T) {
	a := arch(t, "9.0")
	k, l := Kernel{Regs: 64}, Launch{Threads: 256, DynamicSmem: 48 * 1024}
	c, err := FindCliffs(a, k, l)
	if err != nil {
		t.Fatal(err)
	}
	if c.Blocks != 4 || c.SmemDown != nil || !sameCliff(c.SmemUp, &Cliff{57345, 3}) || c.RegsDown != nil || !sameCliff(c.RegsUp, &Cliff{65, 3}) {
		t.Errorf("got %+v, smem up %v, regs up %v", c, c.SmemUp, c.RegsUp)
	}
	for _, q := range []Quantity{VarySmem, VaryThreads} {
		pts, err := Sweep(a, k, l, q)
		if err != nil {
			t.Fatal(err)
		}
		cur := map[Quantity]int{VarySmem: l.DynamicSmem, VaryThreads: l.Threads}[q]
		found := false
		for i, p := range pts {
			if i > 0 && p.X <= pts[i-1].X {
				t.Fatalf("%s: not ascending at %d", q, p.X)
			}
			if p.X == cur {
				found = p.Blocks == 4
			}
		}
		if !found {
			t.Errorf("%s: current point missing or wrong", q)
		}
	}
}
