package reports

import (
	"fmt"
	"strconv"

	"github.com/gpucalc/gpucalc/occupancy"
)

// Suggestion renders `gpucalc occupancy suggest`.
func Suggestion(t occupancy.Target, k occupancy.Kernel, o occupancy.SuggestOptions, s occupancy.Suggestion) []Table {
	sum := Table{Title: "Suggested block size on " + t.String(), Header: []string{"Quantity", "Value"}}
	add := func(k, v string) { sum.Rows = append(sum.Rows, []string{k, v}) }
	add("block size", strconv.Itoa(s.BlockSize))
	add("blocks per SM", strconv.Itoa(s.Result.Blocks))
	add("occupancy", pct(s.Result.Occupancy()))
	if t.SMs > 0 {
		add("minimum grid size", fmt.Sprintf("%d (%s per SM × %d SMs)", s.MinGridSize, plural(s.Result.Blocks, "block"), t.SMs))
	} else {
		add("minimum grid size", "unknown for an architecture; give --device for the SM count")
	}
	add("registers per thread", strconv.Itoa(k.Regs))
	dyn := size(o.DynamicSmem)
	if o.SmemPerThread > 0 {
		dyn += fmt.Sprintf(" + %d B per thread", o.SmemPerThread)
	}
	add("shared memory per block", size(k.StaticSmem)+" static + "+dyn+" dynamic")
	cand := Table{Title: "Candidates (tried largest first, as the runtime does)", Header: []string{"Threads", "Dynamic smem", "Blocks per SM", "Active threads", "Occupancy", "Limited by", "Chosen"}}
	for _, c := range s.Candidates {
		mark := ""
		if c.Threads == s.BlockSize {
			mark = "yes"
		}
		cand.Rows = append(cand.Rows, []string{strconv.Itoa(c.Threads), size(c.DynamicSmem), strconv.Itoa(c.Blocks), strconv.Itoa(c.ActiveThreads), pct(c.Occupancy), c.Limiters.String(), mark})
	}
	cand.Notes = []string{
		"cudaOccupancyMaxPotentialBlockSize maximises active threads per SM (threads × blocks); a tie keeps the larger block, and the search stops at the first block size that fills the SM.",
	}
	return []Table{sum, cand}
}

// SuggestionRecords is 'gpucalc occupancy suggest': the suggestion and the
// candidates tried.
func SuggestionRecords(t occupancy.Target, k occupancy.Kernel, o occupancy.SuggestOptions, s occupancy.Suggestion) []Table {
	sum := Table{Key: "summary", Header: append(append([]string{}, targetHeader...), "block_size", "blocks_per_sm", "occupancy", "min_grid_size",
		"regs_per_thread", "static_smem_bytes", "dynamic_smem_bytes", "smem_per_thread_bytes", "block_size_limit")}
	grid := ""
	if t.SMs > 0 {
		grid = integer(s.MinGridSize)
	}
	sum.Rows = [][]string{append(targetCells(t), integer(s.BlockSize), integer(s.Result.Blocks), num(s.Result.Occupancy()), grid,
		integer(k.Regs), integer(k.StaticSmem), integer(o.DynamicSmem), integer(o.SmemPerThread), optInt(o.BlockSizeLimit))}
	cand := Table{Key: "candidates", Header: []string{"threads_per_block", "dynamic_smem_bytes", "blocks_per_sm", "active_threads_per_sm", "occupancy", "limiters", "chosen"}}
	for _, c := range s.Candidates {
		cand.Rows = append(cand.Rows, []string{integer(c.Threads), integer(c.DynamicSmem), integer(c.Blocks), integer(c.ActiveThreads),
			num(c.Occupancy), c.Limiters.String(), boolean(c.Threads == s.BlockSize)})
	}
	return []Table{sum, cand}
}

// SuggestView is 'gpucalc occupancy suggest'.
type SuggestView struct {
	Target     occupancy.Target     `json:"target"`
	Kernel     occupancy.Kernel     `json:"kernel"`
	Options    SuggestOptionsView   `json:"options"`
	Suggestion occupancy.Suggestion `json:"suggestion"`
}

// SuggestOptionsView is the search a suggestion answers.
type SuggestOptionsView struct {
	DynamicSmem    int                `json:"dynamic_smem_bytes"`
	SmemPerThread  int                `json:"smem_per_thread_bytes"`
	BlockSizeLimit int                `json:"block_size_limit"`
	Carveout       occupancy.Carveout `json:"carveout"`
}
