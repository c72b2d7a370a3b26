package reports

import (
	"fmt"
	"strconv"

	"github.com/gpucalc/gpucalc/occupancy"
)

// AvailSmem renders `gpucalc occupancy avail-smem`.
func AvailSmem(t occupancy.Target, k occupancy.Kernel, blocks, threads int, s occupancy.AvailSmem) Table {
	tab := Table{Title: "Dynamic shared memory per block for " + strconv.Itoa(blocks) + " blocks of " + strconv.Itoa(threads) + " threads on " + t.String(), Header: []string{"Quantity", "Bytes", "Size"}}
	tab.Rows = [][]string{
		{"cudaOccupancyAvailableDynamicSMemPerBlock", strconv.Itoa(s.Runtime), size(s.Runtime)},
		{"largest that really fits", strconv.Itoa(s.Fits), size(s.Fits)},
	}
	if s.RuntimeBlocks < blocks {
		tab.Notes = append(tab.Notes, fmt.Sprintf("With the runtime's answer only %s fit: it does not subtract the %s CUDA reserves per block (documented behaviour of cuda_occupancy.h, measured on an H100). Use the second figure.", plural(s.RuntimeBlocks, "block"), size(t.Arch.SmemReservedPerBlock)))
	}
	tab.Notes = append(tab.Notes, fmt.Sprintf("Registers per thread: %d; static shared memory: %s. Sizes are binary.", k.Regs, size(k.StaticSmem)))
	return tab
}

// AvailSmemRecords is 'gpucalc occupancy avail-smem'.
func AvailSmemRecords(t occupancy.Target, k occupancy.Kernel, blocks, threads int, s occupancy.AvailSmem) []Table {
	return []Table{{Key: "avail_smem", Header: append(append([]string{}, targetHeader...), "blocks_per_sm", "threads_per_block", "regs_per_thread",
		"static_smem_bytes", "runtime_bytes", "runtime_blocks_per_sm", "fits_bytes"),
		Rows: [][]string{append(targetCells(t), integer(blocks), integer(threads), integer(k.Regs), integer(k.StaticSmem),
			integer(s.Runtime), integer(s.RuntimeBlocks), integer(s.Fits))}}}
}

// AvailSmemView is 'gpucalc occupancy avail-smem'.
type AvailSmemView struct {
	Target  occupancy.Target `json:"target"`
	Kernel  occupancy.Kernel `json:"kernel"`
	Blocks  int              `json:"blocks"`
	Threads int              `json:"threads"`
	occupancy.AvailSmem
}
