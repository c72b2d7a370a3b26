package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/units"
)

// The simulate question's defaults: the one definition the CLI's flags
// start from.
const (
	DefaultKernel       = "stream"
	DefaultILP          = 1
	MaxILP              = 12
	DefaultFlopsPerByte = 8
	DefaultThreads      = 128
	DefaultRegs         = 32
	DefaultSmem         = "0"
	DefaultSeed         = 1
)

// Kernels are the kernels the simulation runs, by name.
var Kernels = []string{"stream", "fma", "mixed"}

// Query is the simulate question (`gpucalc simulate`): a kernel by name
// and its ILP, the block whose occupancy limits the resident warps, the
// warps per SM to simulate and the memory model's seed.
type Query struct {
	Device devices.Choice // --device

	Kernel       string  // --kernel: stream, fma or mixed
	ILP          int     // --ilp
	FlopsPerByte float64 // --flops-per-byte (mixed only)
	// FlopsGiven says --flops-per-byte was given, which only mixed takes.
	FlopsGiven bool
	Threads    int    // --threads
	Regs       int    // --regs
	Smem       string // --smem
	Warps      string // --warps-per-sm: comma-separated ("": every count occupancy allows)
	Seed       uint64 // --seed

	// Catalog is where devices are looked up (nil: the built-in one);
	// Datasheet looks them up as --datasheet does.
	Catalog   *devices.Catalog
	Datasheet bool
}

// NewQuery returns the query with every field at its default.
func NewQuery() Query {
	return Query{Kernel: DefaultKernel, ILP: DefaultILP, FlopsPerByte: DefaultFlopsPerByte, Threads: DefaultThreads,
		Regs: DefaultRegs, Smem: DefaultSmem, Seed: DefaultSeed}
}

// Plan is a validated simulate question, ready to run: the device, the
// kernel and its description, the block's occupancy, the warps per SM to
// simulate and the device's model.
type Plan struct {
	Device    devices.Chosen
	Kernel    Kernel
	Desc      string
	Occupancy occupancy.Result
	Warps     []int
	Setup     Setup
}

// Plan validates the query and plans the run. Every flag's mistake is a
// field error; a block that fits on no SM is an error of its own.
func (q Query) Plan() (Plan, error) {
	var p Plan
	fe := func(field, value, allowed string, args ...any) error {
		return &query.FieldError{Field: field, Value: value, Allowed: fmt.Sprintf(allowed, args...)}
	}
	if q.FlopsGiven && q.Kernel != "mixed" {
		return p, fe("flops-per-byte", strconv.FormatFloat(q.FlopsPerByte, 'g', -1, 64), "applies to --kernel mixed only")
	}
	ds, err := q.Device.Resolve(q.Catalog, q.Datasheet)
	if err != nil {
		return p, err
	}
	p.Device = ds[0]
	if q.ILP < 1 || q.ILP > MaxILP {
		return p, fe("ilp", strconv.Itoa(q.ILP), "expected 1 to %d", MaxILP)
	}
	switch q.Kernel {
	case "stream":
		p.Kernel = Stream(q.ILP)
		p.Desc = fmt.Sprintf("stream: %d float4 load(s) per thread per iteration, summed, grid-stride over a %d MiB share per SM", q.ILP, p.Kernel.Iterations*q.ILP*16*32>>20)
	case "fma":
		p.Kernel = FMAChains(q.ILP)
		p.Desc = fmt.Sprintf("fma: %d independent chain(s) of dependent FP32 FMAs per thread, %d steps in loop iterations of %d", q.ILP, p.Kernel.Iterations*p.Kernel.ChainFMAs, p.Kernel.ChainFMAs)
	case "mixed":
		if p.Kernel, err = Mixed(q.FlopsPerByte, q.ILP); err != nil {
			return p, fe("flops-per-byte", strconv.FormatFloat(q.FlopsPerByte, 'g', -1, 64), "%v", err)
		}
		p.Desc = fmt.Sprintf("mixed: %d float4 load(s) per thread per iteration, %d dependent FMAs on each component (%g FLOP/byte), grid-stride", q.ILP, p.Kernel.ChainFMAs, p.Kernel.FLOPsPerByte())
	default:
		return p, fe("kernel", q.Kernel, "expected stream, fma or mixed")
	}
	lim, err := p.Device.Limits()
	if err != nil {
		return p, fe("device", p.Device.Name, "%v", err)
	}
	smem, err := units.ParseSize(q.Smem)
	if err != nil {
		return p, fe("smem", q.Smem, "%v", err)
	}
	if smem > math.MaxInt32 {
		return p, fe("smem", q.Smem, "far larger than any GPU's shared memory")
	}
	if q.Threads < 1 || q.Threads > lim.MaxThreadsPerBlock {
		return p, fe("threads", strconv.Itoa(q.Threads), "expected 1 to %d", lim.MaxThreadsPerBlock)
	}
	if q.Regs < 0 || q.Regs > lim.MaxRegsPerThread {
		return p, fe("regs", strconv.Itoa(q.Regs), "expected 0 to %d", lim.MaxRegsPerThread)
	}
	p.Occupancy = occupancy.Calculate(lim, occupancy.Kernel{Regs: q.Regs}, occupancy.Launch{Threads: q.Threads, DynamicSmem: int(smem)})
	if p.Occupancy.Blocks == 0 {
		return p, fmt.Errorf("no block of %d threads with %d registers and %s of shared memory fits on an SM (limited by %s); see 'gpucalc occupancy'", q.Threads, q.Regs, units.FormatSize(smem), p.Occupancy.Limiters)
	}
	if p.Warps, err = residentWarps(p.Occupancy, q.Warps); err != nil {
		return p, err
	}
	p.Setup, err = ForDevice(p.Device.Device, q.Seed)
	return p, err
}

// residentWarps returns the warps per SM to simulate: those listed (each a
// whole number of blocks that occupancy allows) or, with an empty list, one
// block, two blocks, ... up to what occupancy allows.
func residentWarps(occ occupancy.Result, list string) ([]int, error) {
	perBlock := occ.WarpsPerBlock
	maxBlocks := min(occ.Blocks, MaxWarps/perBlock)
	if list == "" {
		var out []int
		for b := 1; b <= maxBlocks; b++ {
			out = append(out, b*perBlock)
		}
		return out, nil
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, &query.FieldError{Field: "warps-per-sm", Value: list, Allowed: fmt.Sprintf("%q is not a positive whole number", f)}
		}
		if n%perBlock != 0 || n/perBlock > maxBlocks {
			return nil, &query.FieldError{Field: "warps-per-sm", Value: strconv.Itoa(n), Allowed: fmt.Sprintf("with %d warps per block and %d blocks per SM resident (occupancy, limited by %s), resident warps are multiples of %d up to %d", perBlock, occ.Blocks, occ.Limiters, perBlock, maxBlocks*perBlock)}
		}
		out = append(out, n)
	}
	return out, nil
}

// Validate returns the query's field errors, and any other error that
// stops it.
func (q Query) Validate() error {
	_, err := q.Plan()
	return err
}

// Answer plans the run and simulates each warp count, reporting the share
// done to progress (nil: none).
func (q Query) Answer(progress func(fraction float64)) (Plan, []Point, error) {
	p, err := q.Plan()
	if err != nil {
		return p, nil, err
	}
	if progress == nil {
		progress = func(float64) {}
	}
	pts, err := p.Setup.Sweep(p.Kernel, p.Warps, progress)
	return p, pts, err
}

// Args is the command line that asks the query.
func (q Query) Args() query.Args {
	var a query.Args
	a.Word("simulate")
	q.Device.Args(&a)
	if q.Kernel != DefaultKernel {
		a.Add("kernel", q.Kernel)
	}
	if q.ILP != DefaultILP {
		a.Add("ilp", strconv.Itoa(q.ILP))
	}
	if q.FlopsGiven {
		a.Add("flops-per-byte", strconv.FormatFloat(q.FlopsPerByte, 'g', -1, 64))
	}
	query.Changed(&a, "threads", q.Threads, DefaultThreads)
	query.Changed(&a, "regs", q.Regs, DefaultRegs)
	if q.Smem != DefaultSmem {
		a.Add("smem", q.Smem)
	}
	if q.Warps != "" {
		a.Add("warps-per-sm", q.Warps)
	}
	if q.Seed != DefaultSeed {
		a.Add("seed", strconv.FormatUint(q.Seed, 10))
	}
	a.Bool("datasheet", q.Datasheet)
	return a
}
