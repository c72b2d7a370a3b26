// Package occupancy computes how many thread blocks of a kernel are resident
// on one streaming multiprocessor, exactly as the CUDA runtime's
// cudaOccupancyMaxActiveBlocksPerMultiprocessor does (the algorithm of
// cuda_occupancy.h from CUDA 13.0), and the related runtime calls:
// cudaOccupancyMaxPotentialBlockSize (Suggest) and
// cudaOccupancyAvailableDynamicSMemPerBlock (AvailableSmem).
//
// All arithmetic is integer, as in the header; Calculate does not allocate.
// The per-architecture limits come from devices.Arch.
package occupancy

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
)

// Unlimited is the block count of a limit that does not bind (the header's
// INT_MAX).
const Unlimited = math.MaxInt32

// Kernel is what the compiler decided about a kernel, as
// cudaFuncGetAttributes reports it.
type Kernel struct {
	// Regs is registers per thread.
	Regs int `json:"regs"`
	// StaticSmem is static shared memory per block, bytes.
	StaticSmem int `json:"static_smem_bytes"`
	// MaxThreads is the largest block the kernel can launch with
	// (__launch_bounds__, or what the register count allows); 0 means the
	// architecture's maximum.
	MaxThreads int `json:"max_threads,omitempty"`
	// Barriers is the number of named barriers a block uses; 0 is taken as
	// 1, the barrier every kernel has and the one the runtime assumes.
	Barriers int `json:"barriers,omitempty"`
}

// Launch is how the kernel is launched.
type Launch struct {
	// Threads per block.
	Threads int `json:"threads"`
	// DynamicSmem is dynamic shared memory per block, bytes. More than
	// 48 KiB needs cudaFuncAttributeMaxDynamicSharedMemorySize; Calculate
	// assumes the kernel opted in to the architecture's maximum, as the
	// ground truth did.
	DynamicSmem int `json:"dynamic_smem_bytes"`
	// Carveout is the shared-memory carveout preference.
	Carveout Carveout `json:"carveout"`
}

// Carveout is a shared-memory carveout preference
// (cudaFuncAttributePreferredSharedMemoryCarveout). The zero value is the
// driver's default, the largest capacity.
type Carveout struct {
	kind  uint8
	value int
}

const (
	carveoutDefault uint8 = iota
	carveoutPercent
	carveoutBytes
)

// CarveoutPercent is a preference in percent of the largest capacity,
// 0 to 100, as the CUDA attribute takes it.
func CarveoutPercent(p int) Carveout { return Carveout{carveoutPercent, p} }

// CarveoutBytes is a preference for at least that many bytes of shared memory
// per SM.
func CarveoutBytes(b int) Carveout { return Carveout{carveoutBytes, b} }

// Size returns the preference in bytes if it was given as a size.
func (c Carveout) Size() (int, bool) { return c.value, c.kind == carveoutBytes }

// IsDefault reports whether c is the driver's default.
func (c Carveout) IsDefault() bool { return c.kind == carveoutDefault }

// String writes "default", "50%" or "65536B".
func (c Carveout) String() string {
	switch c.kind {
	case carveoutPercent:
		return strconv.Itoa(c.value) + "%"
	case carveoutBytes:
		return strconv.Itoa(c.value) + "B"
	}
	return "default"
}

// MarshalJSON writes the preference as an object: {"kind": "default"},
// {"kind": "percent", "percent": 50} or {"kind": "bytes", "bytes": 65536}.
func (c Carveout) MarshalJSON() ([]byte, error) {
	switch c.kind {
	case carveoutPercent:
		return []byte(`{"kind": "percent", "percent": ` + strconv.Itoa(c.value) + `}`), nil
	case carveoutBytes:
		return []byte(`{"kind": "bytes", "bytes": ` + strconv.Itoa(c.value) + `}`), nil
	}
	return []byte(`{"kind": "default"}`), nil
}

// Limiter is a set of occupancy limits, the header's bit mask.
type Limiter uint8

// The limits, with the header's bit values.
const (
	LimitWarps        Limiter = 1 << iota // warps (threads) per SM
	LimitRegisters                        // registers per SM
	LimitSharedMemory                     // shared memory per SM
	LimitBlocks                           // blocks per SM
	LimitBarriers                         // named barriers per SM (cc 9.0 and newer)
)

var limiterNames = [...]string{"warps", "registers", "shared_memory", "blocks", "barriers"}

// Limiters lists the single limits in bit order.
var Limiters = []Limiter{LimitWarps, LimitRegisters, LimitSharedMemory, LimitBlocks, LimitBarriers}

// PerLimit holds a block count per limit, indexed like Limiters;
// Unlimited where a limit does not bind (null in JSON).
type PerLimit [5]int

// MarshalJSON writes Unlimited as null.
func (p PerLimit) MarshalJSON() ([]byte, error) {
	var out [5]*int
	for i := range p {
		if p[i] != Unlimited {
			out[i] = &p[i]
		}
	}
	return json.Marshal(out)
}

// String joins the names of the limits in l with "|" in bit order, e.g.
// "warps|registers".
func (l Limiter) String() string {
	if int(l) < len(limiterStrings) {
		return limiterStrings[l]
	}
	return limiterString(l)
}

// limiterStrings holds every combination's name, so that String does not
// allocate (batch writes a million of them).
var limiterStrings = func() (s [1 << 5]string) {
	for i := range s {
		s[i] = limiterString(Limiter(i))
	}
	return s
}()

func limiterString(l Limiter) string {
	var b strings.Builder
	for i, n := range limiterNames {
		if l&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(n)
		}
	}
	return b.String()
}

// MarshalText writes the String form.
func (l Limiter) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Errors that mean the input is invalid: Result.Err; nothing was computed.
var (
	ErrBlockSize   = errors.New("a block has 1 to the architecture's maximum threads per block (1024)")
	ErrRegisters   = errors.New("registers per thread must be 0 to the architecture's maximum (255)")
	ErrNegative    = errors.New("shared memory sizes must not be negative")
	ErrStaticSmem  = errors.New("static shared memory is limited to 48 KiB per block; use dynamic shared memory for more")
	ErrCarveout    = errors.New("carveout must be the default, a percentage 0 to 100, or a size up to the shared memory per SM")
	ErrBarriers    = errors.New("named barriers per block must be 0 to 16")
	ErrMaxThreads  = errors.New("launch bounds must not be negative")
	ErrNumBlocks   = errors.New("the number of blocks must be at least 1")
	ErrUnreachable = errors.New("that many blocks of this kernel cannot be resident on one SM")
)

// Reasons a valid launch cannot run: Result.Reason, with Blocks = 0.
var (
	ErrLaunchBounds = errors.New("the block is larger than the kernel's launch bounds (maximum threads per block); the launch fails, although cudaOccupancyMaxActiveBlocksPerMultiprocessor does not check this")
	ErrRegsPerBlock = errors.New("the block needs more registers than a block may have (too many resources requested for launch)")
	ErrSmemPerBlock = errors.New("the block needs more shared memory than the opt-in maximum per block")
)

// Result is the occupancy of one kernel launch on one SM.
type Result struct {
	// Blocks is resident blocks per SM; 0 means the launch cannot run.
	Blocks int `json:"blocks_per_sm"`
	// WarpsPerBlock is the block's threads rounded up to whole warps.
	WarpsPerBlock int `json:"warps_per_block"`
	// Warps and Threads are resident per SM.
	Warps   int `json:"warps_per_sm"`
	Threads int `json:"threads_per_sm"`
	// MaxWarps is the architecture's warps per SM.
	MaxWarps int `json:"max_warps_per_sm"`
	// Limiters holds every limit whose block count equals Blocks (ties
	// included).
	Limiters Limiter `json:"limiters"`
	// Blocks each limit allows on its own; Unlimited where it does not bind
	// (null in JSON).
	ByWarps        int `json:"blocks_by_warps"`
	ByRegisters    int `json:"blocks_by_regs"`
	BySharedMemory int `json:"blocks_by_smem"`
	ByBlocks       int `json:"blocks_by_blocks"`
	ByBarriers     int `json:"blocks_by_barriers"`
	// RegsPerWarp is registers allocated per warp (regs × 32 rounded up to
	// the allocation unit); RegsPerBlock = RegsPerWarp × WarpsPerBlock.
	RegsPerWarp  int `json:"regs_per_warp"`
	RegsPerBlock int `json:"regs_per_block"`
	// SmemPerBlock is shared memory allocated per block: static + dynamic +
	// SmemReserved, rounded up to the allocation unit.
	SmemPerBlock int `json:"smem_per_block_bytes"`
	SmemReserved int `json:"smem_reserved_per_block_bytes"`
	// SmemLimit is the most a block may allocate (opt-in maximum, plus the
	// reserved 1 KiB from cc 8.0 on).
	SmemLimit int `json:"smem_limit_per_block_bytes"`
	// CarveoutPreferred is the capacity the preference maps to; Carveout the
	// capacity per SM used (raised when one block would not fit), bytes.
	CarveoutPreferred int `json:"carveout_preferred_bytes"`
	Carveout          int `json:"carveout_bytes"`
	// Reason says why Blocks is 0 for a valid input.
	Reason error `json:"-"`
	// Err is set when the input is invalid; nothing else is.
	Err error `json:"-"`
}

// MarshalJSON writes the block count of a limit that does not bind
// (Unlimited: no registers, no shared memory, no barrier limit before cc
// 9.0) as null rather than the header's INT_MAX.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	limit := func(n int) *int {
		if n == Unlimited {
			return nil
		}
		return &n
	}
	// The outer fields shadow the embedded ones of the same JSON name.
	return json.Marshal(struct {
		plain
		ByWarps        *int `json:"blocks_by_warps"`
		ByRegisters    *int `json:"blocks_by_regs"`
		BySharedMemory *int `json:"blocks_by_smem"`
		ByBlocks       *int `json:"blocks_by_blocks"`
		ByBarriers     *int `json:"blocks_by_barriers"`
	}{plain(r), limit(r.ByWarps), limit(r.ByRegisters), limit(r.BySharedMemory), limit(r.ByBlocks), limit(r.ByBarriers)})
}

// Occupancy is resident warps over the SM's maximum, 0 to 1.
func (r Result) Occupancy() float64 {
	if r.MaxWarps == 0 {
		return 0
	}
	return float64(r.Warps) / float64(r.MaxWarps)
}

// By returns the block count limit l allows on its own (l a single limit).
func (r Result) By(l Limiter) int {
	switch l {
	case LimitWarps:
		return r.ByWarps
	case LimitRegisters:
		return r.ByRegisters
	case LimitSharedMemory:
		return r.BySharedMemory
	case LimitBlocks:
		return r.ByBlocks
	case LimitBarriers:
		return r.ByBarriers
	}
	return Unlimited
}

// maxBarriers is the most named barriers a block can use (PTX bar.sync 0..15).
const maxBarriers = 16

// udiv divides non-negative ints below 2^32 in 32 bits, which is several
// times faster than 64-bit division on many x86 cores; Calculate's inputs
// are validated to that range first.
func udiv(a, b int) int { return int(uint32(a) / uint32(b)) }

func roundUp(x, m int) int { return udiv(x+m-1, m) * m }

// carveoutCapacity returns the smallest supported shared-memory capacity of
// the architecture that holds b bytes, or -1 if none does.
func carveoutCapacity(a *devices.Arch, b int) int {
	for _, kib := range a.CarveoutsKiB {
		if kib*1024 >= b {
			return kib * 1024
		}
	}
	return -1
}

// preferredCarveout maps a preference to a capacity in bytes (the header's
// cudaOccSMemPreferenceVoltaPlus): percentages are of the largest capacity
// and round up to the next supported one. It returns -1 for a bad
// preference.
func preferredCarveout(a *devices.Arch, c Carveout) int {
	b := a.SmemPerSM
	switch c.kind {
	case carveoutPercent:
		if c.value < 0 || c.value > 100 {
			return -1
		}
		b = udiv(a.SmemPerSM*c.value, 100)
	case carveoutBytes:
		if c.value < 0 || c.value > a.SmemPerSM {
			return -1
		}
		b = c.value
	}
	return carveoutCapacity(a, b)
}

// smemLimit is the most shared memory a block may be allocated: the opt-in
// maximum (the kernel is taken to have opted in), plus the reserved
// allocation from cc 8.0 on, where the driver adds it to the limit.
func smemLimit(a *devices.Arch) int {
	l := a.SmemPerBlockOptin
	if a.CC.Major >= 8 {
		l += a.SmemReservedPerBlock
	}
	return l
}

// Calculate returns the resident blocks per SM of kernel k launched as l on
// architecture a, with every limit, as cuda_occupancy.h (CUDA 13.0)
// computes it.
func Calculate(a devices.Arch, k Kernel, l Launch) Result {
	return calculate(&a, &k, &l)
}

func calculate(a *devices.Arch, k *Kernel, l *Launch) Result {
	r := Result{MaxWarps: a.MaxWarpsPerSM}
	switch {
	case l.Threads < 1 || l.Threads > a.MaxThreadsPerBlock:
		r.Err = ErrBlockSize
	case k.Regs < 0 || k.Regs > a.MaxRegsPerThread:
		r.Err = ErrRegisters
	case k.StaticSmem < 0 || l.DynamicSmem < 0:
		r.Err = ErrNegative
	case k.StaticSmem > a.SmemPerBlock:
		r.Err = ErrStaticSmem
	case k.Barriers < 0 || k.Barriers > maxBarriers:
		r.Err = ErrBarriers
	case k.MaxThreads < 0:
		r.Err = ErrMaxThreads
	}
	pref := preferredCarveout(a, l.Carveout)
	if pref < 0 && r.Err == nil {
		r.Err = ErrCarveout
	}
	if r.Err != nil {
		return r
	}
	r.CarveoutPreferred = pref
	warps := udiv(l.Threads+a.WarpSize-1, a.WarpSize)
	r.WarpsPerBlock = warps

	// Warps.
	r.ByWarps = udiv(a.MaxWarpsPerSM, warps)

	// Registers, allocated per warp from the sub-partitions' register files.
	// The hardware checks the block's registers as if its warps were spread
	// over all sub-partitions (warps rounded up to their number).
	r.RegsPerWarp = roundUp(k.Regs*a.WarpSize, a.RegAllocUnit)
	r.RegsPerBlock = r.RegsPerWarp * warps
	parts := a.WarpAllocGranularity
	switch {
	case r.RegsPerWarp*roundUp(warps, parts) > a.RegsPerBlock || r.RegsPerBlock > a.RegsPerBlock:
		r.ByRegisters = 0
		r.Reason = ErrRegsPerBlock
	case r.RegsPerWarp == 0:
		r.ByRegisters = Unlimited
	default:
		r.ByRegisters = udiv(udiv(udiv(a.RegsPerSM, parts), r.RegsPerWarp)*parts, warps)
	}

	// Shared memory. The reserved allocation is inside each block's
	// allocation; the carveout preference holds unless one block does not
	// fit, in which case the driver raises it to the next capacity.
	r.SmemReserved = a.SmemReservedPerBlock
	r.SmemLimit = smemLimit(a)
	maxDynamic := a.SmemPerBlockOptin - k.StaticSmem
	if l.DynamicSmem > maxDynamic {
		// Too large for 32-bit arithmetic, possibly, and no block fits:
		// 64-bit, saturating at the largest int rather than wrapping.
		u, base := a.SmemAllocUnit, k.StaticSmem+a.SmemReservedPerBlock
		r.SmemPerBlock = math.MaxInt
		if l.DynamicSmem <= math.MaxInt-base-u {
			r.SmemPerBlock = (base + l.DynamicSmem + u - 1) / u * u
		}
	} else {
		r.SmemPerBlock = roundUp(k.StaticSmem+a.SmemReservedPerBlock+l.DynamicSmem, a.SmemAllocUnit)
	}
	switch {
	case l.DynamicSmem > maxDynamic || r.SmemPerBlock > r.SmemLimit:
		r.BySharedMemory = 0
		if r.Reason == nil {
			r.Reason = ErrSmemPerBlock
		}
	default:
		r.Carveout = pref
		if pref < r.SmemPerBlock {
			r.Carveout = carveoutCapacity(a, r.SmemPerBlock)
		}
		r.BySharedMemory = Unlimited
		if r.SmemPerBlock > 0 {
			r.BySharedMemory = udiv(r.Carveout, r.SmemPerBlock)
		}
	}

	// Blocks.
	r.ByBlocks = a.MaxBlocksPerSM

	// Named barriers, counted from cc 9.0 on.
	r.ByBarriers = Unlimited
	if a.CC.Major >= 9 {
		n := max(k.Barriers, 1)
		r.ByBarriers = udiv(a.BarriersPerSM, n)
	}

	b := min(r.ByWarps, r.ByRegisters, r.BySharedMemory, r.ByBlocks, r.ByBarriers)
	for _, lim := range Limiters {
		if r.By(lim) == b {
			r.Limiters |= lim
		}
	}
	if k.MaxThreads > 0 && l.Threads > k.MaxThreads {
		// The runtime's occupancy call answers as if the block could
		// launch; the launch itself fails.
		b = 0
		r.Limiters = 0
		r.Reason = ErrLaunchBounds
	}
	r.Blocks = b
	r.Warps = b * warps
	r.Threads = b * l.Threads
	return r
}
