package sim

import (
	"fmt"
	"math"
)

// Kernel describes the loop every warp runs: per iteration, independent
// global loads, shared-memory loads, independent chains of dependent FP32
// FMAs, global stores and loop-control instructions.
type Kernel struct {
	// Loads is the number of independent global loads per thread per
	// iteration (loads in flight per warp, ILP), each LoadBytes wide.
	Loads     int `json:"loads"`
	LoadBytes int `json:"load_bytes"`
	// Chains independent FMA chains of ChainFMAs dependent FMAs each per
	// iteration. Without loads a chain continues across iterations; with
	// loads, chain c starts from load c mod Loads and its result is added
	// to an accumulator.
	Chains    int `json:"chains"`
	ChainFMAs int `json:"chain_fmas"`
	// Smem is the number of 4-byte shared-memory loads per thread per
	// iteration.
	Smem int `json:"smem_loads"`
	// Stores global stores of StoreBytes per thread per iteration; a store
	// waits for its data (a chain's result, else a load) and is not waited
	// for.
	Stores     int `json:"stores"`
	StoreBytes int `json:"store_bytes"`
	// Overhead is the number of loop-control instructions per iteration
	// (index update, compare, branch); the last is the branch.
	Overhead int `json:"overhead_instructions"`
	// Iterations is the trip count of each warp; with Shared it is the
	// trip count of the whole SM, split evenly among its warps as a
	// grid-stride loop over a fixed array is.
	Iterations int  `json:"iterations"`
	Shared     bool `json:"shared"`
}

// maxProgram bounds the instructions of one loop iteration (the program is
// kept in memory): Mixed's longest, 48 chains of 65536 FMAs, fits.
const maxProgram = 1 << 22

// lineBytes is the size of a global-memory request: a warp's access is
// split into 128-byte cache lines.
const lineBytes = 128

// warpSize is the number of threads of a warp.
const warpSize = 32

// Validate checks that the kernel can be simulated.
func (k Kernel) Validate() error {
	switch {
	case k.Loads < 0 || k.Chains < 0 || k.ChainFMAs < 0 || k.Smem < 0 || k.Stores < 0:
		return fmt.Errorf("kernel: counts must not be negative")
	case k.Loads > 0 && (k.LoadBytes <= 0 || k.LoadBytes > 16):
		return fmt.Errorf("kernel: load width %d bytes per thread; expected 1 to 16", k.LoadBytes)
	case k.Stores > 0 && (k.StoreBytes <= 0 || k.StoreBytes > 16):
		return fmt.Errorf("kernel: store width %d bytes per thread; expected 1 to 16", k.StoreBytes)
	case k.Chains > 0 && k.ChainFMAs <= 0:
		return fmt.Errorf("kernel: %d FMA chains need at least one FMA each", k.Chains)
	case k.Overhead < 1:
		return fmt.Errorf("kernel: a loop needs at least one overhead instruction (the branch)")
	case k.Iterations < 1:
		return fmt.Errorf("kernel: trip count %d; expected at least 1", k.Iterations)
	case k.Loads+k.Chains+k.Smem+k.Stores == 0:
		return fmt.Errorf("kernel: no loads, FMAs, shared-memory accesses or stores to simulate")
	case k.Loads+k.Smem+k.Chains > maxRegs:
		return fmt.Errorf("kernel: at most %d loads, shared-memory loads and chains together", maxRegs)
	case k.Overhead > maxProgram || k.ChainFMAs > maxProgram/max(k.Chains, 1) || k.Stores > maxProgram || k.LoadBytes > 16:
		return fmt.Errorf("kernel: more than %d instructions per iteration", maxProgram)
	}
	return nil
}

// FMAs returns the warp FMAs per iteration.
func (k Kernel) FMAs() int { return k.Chains * k.ChainFMAs }

// FLOPsPerByte is the kernel's arithmetic intensity: FP32 FLOPs per byte of
// global memory traffic (+Inf without traffic).
func (k Kernel) FLOPsPerByte() float64 {
	b := k.Loads*k.LoadBytes + k.Stores*k.StoreBytes
	if b == 0 {
		return math.Inf(1)
	}
	return 2 * float64(k.FMAs()) / float64(b)
}

// Stream is the streaming read kernel of the H100 measurements: ilp
// independent float4 loads per thread per iteration, each summed (four FADDs),
// in a grid-stride loop over a 2 GiB array shared by 132 SMs.
func Stream(ilp int) Kernel {
	return Kernel{Loads: ilp, LoadBytes: 16, Overhead: loopOverhead,
		Iterations: streamBytesPerSM / (ilp * 16 * warpSize), Shared: true}
}

// FMAChains is the FMA-chain kernel of the H100 measurements: chains
// independent dependent-FMA chains per thread. The measured kernel runs
// 65536 steps; the model runs fmaSteps, which changes no ratio, in loop
// iterations of fmaUnroll steps.
func FMAChains(chains int) Kernel {
	return Kernel{Chains: chains, ChainFMAs: fmaUnroll, Overhead: loopOverhead, Iterations: fmaSteps / fmaUnroll}
}

// Mixed is the arithmetic-intensity kernel of the H100 measurements: each
// thread loads ilp float4s per iteration and runs a chain of dependent FMAs
// on each of their components, 2·flopsPerByte FMAs per chain (F FMAs per
// 4-byte component is F/2 FLOP per byte), in a grid-stride loop;
// flopsPerByte must be a positive multiple of 0.5.
func Mixed(flopsPerByte float64, ilp int) (Kernel, error) {
	f := 2 * flopsPerByte
	if !(f >= 1) || f != math.Trunc(f) || f > 1<<16 {
		return Kernel{}, fmt.Errorf("flops per byte %g: expected a multiple of 0.5 from 0.5 to 32768 (each float4 component gets 2×that many FMAs)", flopsPerByte)
	}
	return Kernel{Loads: ilp, LoadBytes: 16, Chains: 4 * ilp, ChainFMAs: int(f), Overhead: loopOverhead,
		Iterations: mixedIterationsPerSM, Shared: true}, nil
}

const (
	// loopOverhead is index update, compare and branch.
	loopOverhead = 3
	// fmaUnroll FMA steps per loop iteration: the measured one-chain
	// plateau (77 % of peak at 64 warps/SM) implies 0.3 loop-control issue
	// slots per step, i.e. 3 instructions per 10 steps.
	fmaUnroll = 10
	fmaSteps  = 8200
	// streamBytesPerSM is the measured 2 GiB array's share of one of 132
	// SMs, rounded.
	streamBytesPerSM = 16 << 20
	// mixedIterationsPerSM is 32 iterations of each of 64 warps; enough to
	// make the start-up burst negligible, few enough for FMA-heavy points.
	mixedIterationsPerSM = 64 * 32
)
