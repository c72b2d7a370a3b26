package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/occupancy"
)

// BuildRow is one kernel of a build log with its occupancy.
type BuildRow struct {
	Kernel occupancy.BuildKernel `json:"kernel"`
	// Threads is the block size used; ThreadsFrom says whether it came from
	// --launch or the default.
	Threads     int              `json:"threads"`
	ThreadsFrom string           `json:"threads_from"`
	Result      occupancy.Result `json:"result"`
	Occupancy   float64          `json:"occupancy"`
	// MaxThreads is the largest block the registers allow.
	MaxThreads int      `json:"max_threads_by_regs"`
	Flags      []string `json:"flags,omitempty"`
	// Error says why the kernel could not be calculated; the figures are
	// then empty.
	Error string `json:"error,omitempty"`
}

// NewBuildRow fills the derived fields of a row.
func NewBuildRow(k occupancy.BuildKernel, threads int, from string, r occupancy.Result, maxThreads int) BuildRow {
	row := BuildRow{Kernel: k, Threads: threads, ThreadsFrom: from, Result: r, Occupancy: r.Occupancy(), MaxThreads: maxThreads}
	if k.Spills() {
		row.Flags = append(row.Flags, fmt.Sprintf("spills (%d B stores, %d B loads)", k.SpillStores, k.SpillLoads))
	}
	if k.Stack > 0 {
		row.Flags = append(row.Flags, fmt.Sprintf("local memory: %d B stack per thread", k.Stack))
	}
	if threads > maxThreads {
		row.Flags = append(row.Flags, fmt.Sprintf("%d threads need more registers than a block has", threads))
	}
	if r.Reason != nil && threads <= maxThreads {
		row.Flags = append(row.Flags, r.Reason.Error())
	}
	return row
}

// SortBuildRows orders rows by occupancy, lowest first, then by name.
func SortBuildRows(rows []BuildRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Occupancy != rows[j].Occupancy {
			return rows[i].Occupancy < rows[j].Occupancy
		}
		return rows[i].Kernel.Short < rows[j].Kernel.Short
	})
}

// BuildTable renders `gpucalc occupancy from-build`.
func BuildTable(rows []BuildRow, notes []string) Table {
	t := Table{Title: "Occupancy of the kernels in the build log (lowest first)",
		Header:   []string{"Kernel", "Arch", "Regs", "Static smem", "Threads", "Blocks per SM", "Occupancy", "Limited by", "Max threads (regs)", "Flags"},
		Optional: []string{"Max threads (regs)", "Arch", "Static smem"}}
	for _, r := range rows {
		if r.Error != "" {
			t.Rows = append(t.Rows, []string{r.Kernel.Short, r.Kernel.CC.SM(), "-", "-", strconv.Itoa(r.Threads), "-", "-", "-", "-", "error: " + r.Error})
			continue
		}
		lim := limiterText(r.Result.Limiters)
		if r.Result.Blocks == 0 {
			lim = "cannot launch"
		}
		t.Rows = append(t.Rows, []string{r.Kernel.Short, r.Kernel.CC.SM(), strconv.Itoa(r.Kernel.Regs), size(r.Kernel.StaticSmem),
			strconv.Itoa(r.Threads), strconv.Itoa(r.Result.Blocks), pct(r.Occupancy), lim, strconv.Itoa(r.MaxThreads), strings.Join(r.Flags, "; ")})
	}
	t.Notes = notes
	return t
}

// BuildRecords is 'gpucalc occupancy from-build': one row per kernel.
func BuildRecords(rows []BuildRow) []Table {
	t := Table{Key: "kernels", Header: []string{"kernel", "mangled_name", "compute_capability", "regs_per_thread", "static_smem_bytes",
		"stack_bytes_per_thread", "spill_store_bytes", "spill_load_bytes", "barriers", "threads_per_block", "threads_from", "blocks_per_sm",
		"warps_per_sm", "occupancy", "limiters", "max_threads_by_regs", "flags", "error"}}
	for _, r := range rows {
		k := r.Kernel
		if r.Error != "" {
			// The log's figures are not to be trusted: only the names.
			t.Rows = append(t.Rows, []string{k.Short, k.Name, k.CC.String(), "", "", "", "", "", "", integer(r.Threads), r.ThreadsFrom,
				"", "", "", "", "", "", r.Error})
			continue
		}
		t.Rows = append(t.Rows, []string{k.Short, k.Name, k.CC.String(), integer(k.Regs), integer(k.StaticSmem), integer(k.Stack),
			integer(k.SpillStores), integer(k.SpillLoads), integer(k.Barriers), integer(r.Threads), r.ThreadsFrom, integer(r.Result.Blocks),
			integer(r.Result.Warps), num(r.Occupancy), r.Result.Limiters.String(), integer(r.MaxThreads), strings.Join(r.Flags, "; "), ""})
	}
	return []Table{t}
}
