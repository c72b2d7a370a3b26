package occupancy

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/devices"
)

// SuggestOptions are the inputs of Suggest besides the kernel.
type SuggestOptions struct {
	// DynamicSmem is dynamic shared memory per block, bytes, whatever the
	// block size.
	DynamicSmem int
	// SmemPerThread adds that many bytes of dynamic shared memory per
	// thread of the block (the runtime's VariableSMem form).
	SmemPerThread int
	// BlockSizeLimit caps the block size; 0 means no cap beyond the
	// kernel's and the architecture's.
	BlockSizeLimit int
	Carveout       Carveout
	// SMs is the device's SM count, for the minimum grid size; 0 if unknown.
	SMs int
}

// Candidate is one block size Suggest tried.
type Candidate struct {
	Threads     int `json:"threads"`
	DynamicSmem int `json:"dynamic_smem_bytes"`
	Blocks      int `json:"blocks_per_sm"`
	// ActiveThreads is Threads × Blocks, what Suggest maximises.
	ActiveThreads int `json:"active_threads_per_sm"`
	// Occupancy is resident warps over the SM's maximum at this size.
	Occupancy float64 `json:"occupancy"`
	Limiters  Limiter `json:"limiters"`
}

// Suggestion is the block size cudaOccupancyMaxPotentialBlockSize returns.
type Suggestion struct {
	BlockSize int `json:"block_size"`
	// MinGridSize is blocks per SM × SMs: the smallest grid that fills the
	// GPU (0 when the SM count is unknown).
	MinGridSize int `json:"min_grid_size"`
	// Result is the occupancy at BlockSize.
	Result Result `json:"result"`
	// Candidates are the block sizes tried, largest first, as the runtime
	// tries them: multiples of the warp size from the limit down, stopping
	// at the first that fills the SM.
	Candidates []Candidate `json:"candidates"`
}

// Suggest returns the block size that maximises resident threads per SM, as
// cudaOccupancyMaxPotentialBlockSize(VariableSMem) does: sizes are tried from
// the largest allowed down in steps of the warp size, a larger block wins a
// tie, and the search stops at full occupancy.
func Suggest(a devices.Arch, k Kernel, o SuggestOptions) (Suggestion, error) {
	var s Suggestion
	limit := a.MaxThreadsPerBlock
	if k.MaxThreads > 0 {
		limit = min(limit, k.MaxThreads)
	}
	if o.BlockSizeLimit < 0 || o.DynamicSmem < 0 || o.SmemPerThread < 0 || o.SMs < 0 {
		return s, ErrNegative
	}
	if o.BlockSizeLimit > 0 {
		limit = min(limit, o.BlockSizeLimit)
	}
	best, bestBlocks := 0, 0
	var bestResult Result
	for aligned := roundUp(limit, a.WarpSize); aligned > 0; aligned -= a.WarpSize {
		threads := min(limit, aligned)
		l := Launch{Threads: threads, DynamicSmem: o.DynamicSmem + threads*o.SmemPerThread, Carveout: o.Carveout}
		r := calculate(&a, &k, &l)
		if r.Err != nil {
			return s, r.Err
		}
		active := threads * r.Blocks
		s.Candidates = append(s.Candidates, Candidate{Threads: threads, DynamicSmem: l.DynamicSmem, Blocks: r.Blocks, ActiveThreads: active, Occupancy: r.Occupancy(), Limiters: r.Limiters})
		if active > best {
			best, bestBlocks, bestResult = active, r.Blocks, r
			s.BlockSize = threads
		}
		if best == a.MaxThreadsPerSM {
			break
		}
	}
	s.MinGridSize = bestBlocks * o.SMs
	s.Result = bestResult
	return s, nil
}

// AvailSmem is the dynamic shared memory per block that leaves room for a
// number of blocks per SM.
type AvailSmem struct {
	// Runtime is what cudaOccupancyAvailableDynamicSMemPerBlock returns. From
	// cc 8.0 on, for two or more blocks it does not subtract the 1 KiB each
	// block reserves, so it can be up to 1 KiB too large: with it, fewer
	// blocks fit than asked for.
	Runtime int `json:"runtime_bytes"`
	// Fits is the largest dynamic shared memory with which the blocks do fit.
	Fits int `json:"fits_bytes"`
	// RuntimeBlocks is the blocks per SM with Runtime bytes.
	RuntimeBlocks int `json:"runtime_blocks_per_sm"`
}

// AvailableSmem returns the dynamic shared memory per block with which
// blocks blocks of threads threads can be resident on one SM, both as the
// runtime computes it and as it really fits. It fails when that many blocks
// cannot be resident even without dynamic shared memory.
func AvailableSmem(a devices.Arch, k Kernel, blocks, threads int, c Carveout) (AvailSmem, error) {
	var s AvailSmem
	if blocks < 1 {
		return s, ErrNumBlocks
	}
	l := Launch{Threads: threads, Carveout: c}
	r := calculate(&a, &k, &l)
	if r.Err != nil {
		return s, r.Err
	}
	if r.Reason == ErrLaunchBounds {
		return s, ErrLaunchBounds
	}
	if r.Blocks < blocks {
		return s, ErrUnreachable
	}
	// The runtime's arithmetic (cuda_occupancy.h cudaOccAvailableDynamicSMemPerBlock).
	limit := smemLimit(&a)
	perSM := limit
	if blocks > 1 {
		perSM = r.CarveoutPreferred
		if perSM == 0 {
			perSM = carveoutCapacity(&a, 1)
		}
	}
	avail := min(perSM/blocks/a.SmemAllocUnit*a.SmemAllocUnit, limit) - k.StaticSmem
	s.Runtime = min(avail, a.SmemPerBlockOptin-k.StaticSmem)
	l.DynamicSmem = s.Runtime
	s.RuntimeBlocks = calculate(&a, &k, &l).Blocks

	// What fits: the allocation only changes at multiples of the allocation
	// unit, so try the largest dynamic size of each, from the top.
	base := k.StaticSmem + a.SmemReservedPerBlock
	for alloc := limit / a.SmemAllocUnit * a.SmemAllocUnit; alloc >= base; alloc -= a.SmemAllocUnit {
		l.DynamicSmem = min(alloc-base, a.SmemPerBlockOptin-k.StaticSmem)
		if calculate(&a, &k, &l).Blocks >= blocks {
			s.Fits = l.DynamicSmem
			break
		}
	}
	return s, nil
}

// Waves describes how a grid runs on the whole GPU.
type Waves struct {
	Grid int `json:"grid"`
	// PerWave is blocks resident on the GPU at once: blocks per SM × SMs.
	PerWave int `json:"blocks_per_wave"`
	// Waves is the number of waves, the last possibly partial.
	Waves int `json:"waves"`
	// LastWaveBlocks is the blocks in the last wave; LastWaveFill that over
	// PerWave, 0 to 1.
	LastWaveBlocks int     `json:"last_wave_blocks"`
	LastWaveFill   float64 `json:"last_wave_fill"`
}

// GridWaves returns the waves a grid of grid blocks takes with blocksPerSM
// resident blocks on each of sms SMs. It fails when nothing is resident.
func GridWaves(grid, blocksPerSM, sms int) (Waves, error) {
	w := Waves{Grid: grid}
	if grid < 1 {
		return w, errors.New("the grid must have at least 1 block")
	}
	if blocksPerSM < 1 || sms < 1 {
		return w, errors.New("no block is resident, so the grid never runs")
	}
	if blocksPerSM > math.MaxInt/sms {
		return w, fmt.Errorf("%d blocks per SM on %d SMs is more blocks than can be counted", blocksPerSM, sms)
	}
	w.PerWave = blocksPerSM * sms
	// (grid-1)/PerWave + 1 rounds up without overflowing near the largest int.
	w.Waves = (grid-1)/w.PerWave + 1
	w.LastWaveBlocks = grid - (w.Waves-1)*w.PerWave
	w.LastWaveFill = float64(w.LastWaveBlocks) / float64(w.PerWave)
	return w, nil
}
