package occupancy

import (
	"fmt"

	"github.com/gpucalc/gpucalc/devices"
)

// Quantity is what a sweep varies.
type Quantity string

// The quantities a sweep can vary.
const (
	VaryThreads Quantity = "threads"
	VaryRegs    Quantity = "regs"
	VarySmem    Quantity = "smem"
)

// ParseQuantity parses threads, regs or smem.
func ParseQuantity(s string) (Quantity, error) {
	switch q := Quantity(s); q {
	case VaryThreads, VaryRegs, VarySmem:
		return q, nil
	}
	return "", fmt.Errorf("cannot vary %q; expected threads, regs or smem", s)
}

// Value is q's value in the configuration k, l: threads per block,
// registers per thread, or shared memory per block (static + dynamic).
func (q Quantity) Value(k Kernel, l Launch) int {
	switch q {
	case VaryThreads:
		return l.Threads
	case VaryRegs:
		return k.Regs
	case VarySmem:
		return k.StaticSmem + l.DynamicSmem
	}
	return 0
}

// Point is one configuration of a sweep.
type Point struct {
	// X is threads per block, registers per thread, or shared memory per
	// block (static + dynamic, bytes).
	X         int     `json:"x"`
	Blocks    int     `json:"blocks_per_sm"`
	Warps     int     `json:"warps_per_sm"`
	Occupancy float64 `json:"occupancy"`
	Limiters  Limiter `json:"limiters"`
}

// Sweep varies one quantity of the configuration over its whole range, as
// the "impact of varying block size / register count / shared memory"
// graphs of NVIDIA's calculator do: block sizes in steps of a warp,
// every register count, and shared memory at every allocation boundary. The
// current value is always included. Invalid inputs give Result.Err's error.
func Sweep(a devices.Arch, k Kernel, l Launch, q Quantity) ([]Point, error) {
	if r := calculate(&a, &k, &l); r.Err != nil {
		return nil, r.Err
	}
	var xs []int
	switch q {
	case VaryThreads:
		for t := a.WarpSize; t <= a.MaxThreadsPerBlock; t += a.WarpSize {
			xs = appendWith(xs, t, l.Threads)
		}
	case VaryRegs:
		for r := 0; r <= a.MaxRegsPerThread; r++ {
			xs = append(xs, r)
		}
	case VarySmem:
		base := k.StaticSmem + a.SmemReservedPerBlock
		for alloc := roundUp(base, a.SmemAllocUnit); alloc <= smemLimit(&a); alloc += a.SmemAllocUnit {
			dyn := min(alloc-base, a.SmemPerBlockOptin-k.StaticSmem)
			xs = appendWith(xs, k.StaticSmem+dyn, k.StaticSmem+l.DynamicSmem)
		}
	default:
		return nil, fmt.Errorf("cannot vary %q; expected threads, regs or smem", q)
	}
	pts := make([]Point, 0, len(xs))
	for _, x := range xs {
		kk, ll := k, l
		switch q {
		case VaryThreads:
			ll.Threads = x
		case VaryRegs:
			kk.Regs = x
		case VarySmem:
			ll.DynamicSmem = x - k.StaticSmem
		}
		r := calculate(&a, &kk, &ll)
		pts = append(pts, Point{X: x, Blocks: r.Blocks, Warps: r.Warps, Occupancy: r.Occupancy(), Limiters: r.Limiters})
	}
	return pts, nil
}

// appendWith appends x to an ascending list, first inserting cur if it lies
// between the last element and x.
func appendWith(xs []int, x, cur int) []int {
	if cur < x && (len(xs) == 0 || cur > xs[len(xs)-1]) {
		xs = append(xs, cur)
	}
	return append(xs, x)
}

// Cliff is the nearest value at which resident blocks change.
type Cliff struct {
	// Value is registers per thread, or shared memory per block (static +
	// dynamic, bytes).
	Value  int `json:"value"`
	Blocks int `json:"blocks_per_sm"`
}

// Cliffs holds the nearest register counts and shared-memory sizes, below
// and above the current configuration, at which resident blocks per SM
// change; nil where there is none.
type Cliffs struct {
	Blocks   int    `json:"blocks_per_sm"`
	RegsDown *Cliff `json:"regs_down,omitempty"`
	RegsUp   *Cliff `json:"regs_up,omitempty"`
	SmemDown *Cliff `json:"smem_down,omitempty"`
	SmemUp   *Cliff `json:"smem_up,omitempty"`
}

// FindCliffs returns the cliffs around a valid configuration ("with 56
// registers instead of 64: 5 blocks instead of 4").
func FindCliffs(a devices.Arch, k Kernel, l Launch) (Cliffs, error) {
	r := calculate(&a, &k, &l)
	if r.Err != nil {
		return Cliffs{}, r.Err
	}
	c := Cliffs{Blocks: r.Blocks}
	blocksWith := func(regs, dyn int) int {
		kk, ll := k, l
		kk.Regs, ll.DynamicSmem = regs, dyn
		return calculate(&a, &kk, &ll).Blocks
	}
	for regs := k.Regs - 1; regs >= 0 && c.RegsDown == nil; regs-- {
		if b := blocksWith(regs, l.DynamicSmem); b != r.Blocks {
			c.RegsDown = &Cliff{regs, b}
		}
	}
	for regs := k.Regs + 1; regs <= a.MaxRegsPerThread && c.RegsUp == nil; regs++ {
		if b := blocksWith(regs, l.DynamicSmem); b != r.Blocks {
			c.RegsUp = &Cliff{regs, b}
		}
	}
	// Shared memory changes the allocation only at multiples of the unit:
	// below, try the largest size of each smaller allocation; above, the
	// smallest size of each larger one.
	base := k.StaticSmem + a.SmemReservedPerBlock
	maxDyn := a.SmemPerBlockOptin - k.StaticSmem
	for alloc := r.SmemPerBlock - a.SmemAllocUnit; alloc >= base && c.SmemDown == nil; alloc -= a.SmemAllocUnit {
		dyn := min(alloc-base, maxDyn)
		if b := blocksWith(k.Regs, dyn); b != r.Blocks {
			c.SmemDown = &Cliff{k.StaticSmem + dyn, b}
		}
	}
	for alloc := r.SmemPerBlock + a.SmemAllocUnit; alloc-a.SmemAllocUnit+1-base <= maxDyn && c.SmemUp == nil; alloc += a.SmemAllocUnit {
		dyn := max(alloc-a.SmemAllocUnit+1-base, 0)
		if b := blocksWith(k.Regs, dyn); b != r.Blocks {
			c.SmemUp = &Cliff{k.StaticSmem + dyn, b}
		}
	}
	return c, nil
}

// Quantities are the three quantities a sweep can vary, in the order of
// the panels of 'gpucalc occupancy --plot'.
var Quantities = [3]Quantity{VaryThreads, VaryRegs, VarySmem}

// Neighbourhood is a configuration's result and the three sweeps around it,
// each varying one of Quantities with the other two held.
type Neighbourhood struct {
	Result Result
	Sweeps [3][]Point
}

// SweepAround calculates k, l on a and sweeps each quantity around it.
func SweepAround(a devices.Arch, k Kernel, l Launch) (Neighbourhood, error) {
	n := Neighbourhood{Result: Calculate(a, k, l)}
	for i, q := range Quantities {
		pts, err := Sweep(a, k, l, q)
		if err != nil {
			return n, err
		}
		n.Sweeps[i] = pts
	}
	return n, nil
}
