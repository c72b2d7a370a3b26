package trace

import (
	"cmp"
	"math"
	"slices"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/rows"
)

// What the GPU did over the step, apart from the ops: each kernel launch
// configuration with its theoretical occupancy, each stream's busy and idle
// time, and the copies and sets.

// KernelRow is one distinct kernel launch configuration.
type KernelRow struct {
	Name         string  `json:"name"`
	Grid         [3]int  `json:"grid"`
	Block        [3]int  `json:"block"`
	Registers    int     `json:"registers_per_thread"`
	SharedMemory int     `json:"shared_memory_bytes"`
	Launches     int     `json:"launches"`
	Time         float64 `json:"time_seconds"`
	// Occupancy is gpucalc's theoretical occupancy, percent of the SM's
	// warps, with the resident blocks and the limits that bind; Error
	// says why it could not be computed.
	Occupancy   float64           `json:"theoretical_occupancy_pct"`
	BlocksPerSM int               `json:"blocks_per_sm"`
	Limiters    occupancy.Limiter `json:"limiters"`
	Error       string            `json:"occupancy_error,omitempty"`
	// TraceEstimate is the trace's "est. achieved occupancy %" of the
	// first launch (nil when absent); Disagrees is set when it differs
	// from Occupancy by more than half a percentage point.
	TraceEstimate *float64 `json:"trace_estimate_pct"`
	Disagrees     bool     `json:"trace_disagrees"`
}

// Stream is one CUDA stream's use of the GPU over the trace's GPU window.
type Stream struct {
	Stream int `json:"stream"`
	// Busy is the union of its kernels', copies' and sets' intervals; Idle
	// the rest of the window.
	Busy float64 `json:"busy_seconds"`
	Idle float64 `json:"idle_seconds"`
	// Activities counts its kernels, copies and sets.
	Activities int `json:"activities"`
}

// TransferRow totals the memcpy or memset events of one name.
type TransferRow struct {
	Kind  string  `json:"kind"`
	Name  string  `json:"name"`
	Count int     `json:"count"`
	Bytes int64   `json:"bytes"`
	Time  float64 `json:"time_seconds"`
}

// kernelRows groups kernels by launch configuration and computes each
// one's theoretical occupancy.
func kernelRows(ks *rows.Blocks[Kernel], arch devices.Arch) []KernelRow {
	type key struct {
		name        string
		grid, block [3]int
		regs, smem  int
	}
	idx := map[key]int{}
	var out []KernelRow
	for k := range ks.Pointers {
		kk := key{k.Name, k.Grid, k.Block, k.Registers, k.SharedMemory}
		i, ok := idx[kk]
		if !ok {
			i = len(out)
			idx[kk] = i
			out = append(out, occupancyRow(*k, arch))
		}
		out[i].Launches++
		out[i].Time += k.Dur * usec
	}
	slices.SortStableFunc(out, func(x, y KernelRow) int { return cmp.Compare(y.Time, x.Time) })
	return out
}

func occupancyRow(k Kernel, arch devices.Arch) KernelRow {
	r := KernelRow{Name: k.Name, Grid: k.Grid, Block: k.Block, Registers: k.Registers, SharedMemory: k.SharedMemory, TraceEstimate: k.EstOccupancy}
	threads := k.Block[0] * k.Block[1] * k.Block[2]
	// The trace gives one shared-memory figure, static and dynamic
	// together; as dynamic it is not held to the 48 KiB static limit.
	res := occupancy.Calculate(arch, occupancy.Kernel{Regs: k.Registers}, occupancy.Launch{Threads: threads, DynamicSmem: k.SharedMemory})
	switch {
	case res.Err != nil:
		r.Error = res.Err.Error()
	case res.Reason != nil:
		r.Error = res.Reason.Error()
	}
	if res.Err == nil {
		r.Occupancy = 100 * res.Occupancy()
		r.BlocksPerSM, r.Limiters = res.Blocks, res.Limiters
	}
	r.Disagrees = r.TraceEstimate != nil && math.Abs(*r.TraceEstimate-r.Occupancy) > 0.5
	return r
}

// streams measures each stream's busy time (the union of its activities'
// intervals) over the GPU window.
func streams(t *Trace) ([]Stream, float64) {
	type span struct{ s, e float64 }
	// Each stream's spans are counted first and given their array at once:
	// grown a span at a time, millions of them are copied again and again.
	count := map[int]int{}
	for i := range t.Kernels.Len() {
		count[t.Kernels.At(i).Stream]++
	}
	for i := range t.Transfers.Len() {
		count[t.Transfers.At(i).Stream]++
	}
	by := make(map[int][]span, len(count))
	for id, n := range count {
		by[id] = make([]span, 0, n)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	add := func(stream int, start, dur float64) {
		by[stream] = append(by[stream], span{start, start + dur})
		lo, hi = math.Min(lo, start), math.Max(hi, start+dur)
	}
	for i := range t.Kernels.Len() {
		k := t.Kernels.At(i)
		add(k.Stream, k.Start, k.Dur)
	}
	for i := range t.Transfers.Len() {
		x := t.Transfers.At(i)
		add(x.Stream, x.Start, x.Dur)
	}
	if len(by) == 0 {
		return nil, 0
	}
	window := (hi - lo) * usec
	var out []Stream
	for id, sp := range by {
		slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.s, b.s) })
		busy, end := 0.0, math.Inf(-1)
		for _, x := range sp {
			if x.s > end {
				busy += x.e - x.s
				end = x.e
			} else if x.e > end {
				busy += x.e - end
				end = x.e
			}
		}
		out = append(out, Stream{Stream: id, Busy: busy * usec, Idle: window - busy*usec, Activities: len(sp)})
	}
	slices.SortFunc(out, func(a, b Stream) int { return cmp.Compare(a.Stream, b.Stream) })
	return out, window
}

func transferRows(ts *rows.Blocks[Transfer]) []TransferRow {
	idx := map[string]int{}
	var out []TransferRow
	for x := range ts.Pointers {
		i, ok := idx[x.Name]
		if !ok {
			i = len(out)
			idx[x.Name] = i
			out = append(out, TransferRow{Kind: x.Kind, Name: x.Name})
		}
		out[i].Count++
		out[i].Bytes += x.Bytes
		out[i].Time += x.Dur * usec
	}
	slices.SortStableFunc(out, func(a, b TransferRow) int { return cmp.Compare(b.Time, a.Time) })
	return out
}
