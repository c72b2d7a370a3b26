// Package access analyses how a warp's memory accesses map onto the memory
// system: global-memory coalescing (32-byte sectors, 128-byte cache lines) and
// shared-memory bank conflicts (32 banks of 4 bytes).
//
// The model is the one the CUDA C++ Best Practices Guide (§"Coalesced Access
// to Global Memory", §"Shared Memory and Memory Banks") and the Programming
// Guide (§"Shared Memory" for compute capability 5.x and later) describe for
// every architecture from cc 6.0 on: a warp's global request is served in
// 32-byte sectors; a shared-memory request is split into phases of at most
// 128 bytes, and within a phase each bank serves one distinct 4-byte word per
// cycle (threads reading the same word get it broadcast).
package access

import "fmt"

// Hardware constants of the model (cc >= 6.0).
const (
	WarpSize    = 32
	SectorBytes = 32  // global-memory access granularity
	LineBytes   = 128 // L1 cache line: four sectors
	Banks       = 32  // shared-memory banks
	BankBytes   = 4   // width of a bank
)

// Pattern is one warp-wide access: lane i touches the element at byte
// address Offset + i*Stride*ElemBytes. A stride of 1 is the ideal unit-stride
// access; 0 means every lane reads the same element.
type Pattern struct {
	ElemBytes int // 1, 2, 4, 8 or 16: the width of one thread's access
	Stride    int // in elements
	Offset    int // bytes from an aligned base (a misaligned start)
}

func (p Pattern) validate() error {
	switch p.ElemBytes {
	case 1, 2, 4, 8, 16:
	default:
		return fmt.Errorf("element size %d bytes: a thread accesses 1, 2, 4, 8 or 16 bytes at once", p.ElemBytes)
	}
	if p.Stride < 0 {
		return fmt.Errorf("stride %d: must be 0 or more elements", p.Stride)
	}
	if p.Offset < 0 {
		return fmt.Errorf("offset %d: must be 0 or more bytes", p.Offset)
	}
	return nil
}

func (p Pattern) addr(lane int) int { return p.Offset + lane*p.Stride*p.ElemBytes }

// Coalescing is the cost of one warp-wide global load or store.
type Coalescing struct {
	Pattern
	// Sectors and Lines are the 32-byte sectors and 128-byte lines one
	// request touches.
	Sectors int `json:"sectors_per_request"`
	Lines   int `json:"lines_per_request"`
	// IdealSectors is what the same useful bytes need when contiguous and
	// aligned.
	IdealSectors int `json:"ideal_sectors_per_request"`
	// UsefulBytes are the bytes the warp asked for (distinct addresses);
	// Efficiency = UsefulBytes / (Sectors*32), the share of DRAM traffic that
	// is used when the other bytes of each sector are not used by anyone.
	UsefulBytes int     `json:"useful_bytes"`
	Efficiency  float64 `json:"efficiency"`
}

// Coalesce computes the sectors and lines of a warp-wide access.
func Coalesce(p Pattern) (Coalescing, error) {
	if err := p.validate(); err != nil {
		return Coalescing{}, err
	}
	sectors := map[int]bool{}
	lines := map[int]bool{}
	bytes := map[int]bool{}
	for lane := 0; lane < WarpSize; lane++ {
		a := p.addr(lane)
		bytes[a] = true
		for b := a; b < a+p.ElemBytes; b += 1 {
			sectors[b/SectorBytes] = true
			lines[b/LineBytes] = true
		}
	}
	useful := len(bytes) * p.ElemBytes
	c := Coalescing{
		Pattern:      p,
		Sectors:      len(sectors),
		Lines:        len(lines),
		IdealSectors: (useful + SectorBytes - 1) / SectorBytes,
		UsefulBytes:  useful,
	}
	c.Efficiency = float64(useful) / float64(c.Sectors*SectorBytes)
	return c, nil
}

// Conflicts is the cost of one warp-wide shared-memory access.
type Conflicts struct {
	Pattern
	// Phases is how many 128-byte phases the request splits into; Wavefronts
	// the cycles the banks need; Way the worst bank's number of distinct
	// words in one phase (1 = conflict-free).
	Phases     int `json:"phases"`
	Wavefronts int `json:"wavefronts"`
	Way        int `json:"way"`
	// Slowdown = Wavefronts / Phases: the factor over a conflict-free access
	// of the same width.
	Slowdown float64 `json:"slowdown"`
}

// BankConflicts computes the bank conflicts of a warp-wide shared-memory
// access. Accesses wider than 4 bytes are split into phases of 128 bytes
// (16 lanes for 8-byte, 8 lanes for 16-byte accesses), each served
// separately.
func BankConflicts(p Pattern) (Conflicts, error) {
	if err := p.validate(); err != nil {
		return Conflicts{}, err
	}
	lanesPerPhase := WarpSize
	if p.ElemBytes > BankBytes {
		lanesPerPhase = Banks * BankBytes / p.ElemBytes
	}
	c := Conflicts{Pattern: p, Phases: WarpSize / lanesPerPhase, Way: 1}
	for first := 0; first < WarpSize; first += lanesPerPhase {
		words := [Banks]map[int]bool{}
		for lane := first; lane < first+lanesPerPhase; lane++ {
			a := p.addr(lane)
			for w := a / BankBytes; w <= (a+p.ElemBytes-1)/BankBytes; w++ {
				b := w % Banks
				if words[b] == nil {
					words[b] = map[int]bool{}
				}
				words[b][w] = true
			}
		}
		worst := 1
		for _, ws := range words {
			worst = max(worst, len(ws))
		}
		c.Wavefronts += worst
		c.Way = max(c.Way, worst)
	}
	c.Slowdown = float64(c.Wavefronts) / float64(c.Phases)
	return c, nil
}
