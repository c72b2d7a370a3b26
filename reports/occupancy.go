package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/occupancy"
)

// Occupancy is the answer of `gpucalc occupancy`, ready to render.
type Occupancy struct {
	Target occupancy.Target `json:"target"`
	Kernel occupancy.Kernel `json:"kernel"`
	Launch occupancy.Launch `json:"launch"`
	// Defaults names the inputs that were not given and took their default.
	Defaults  []string         `json:"defaults,omitempty"`
	Result    occupancy.Result `json:"result"`
	Occupancy float64          `json:"occupancy"`
	// Reason says why no block is resident, when none is.
	Reason string           `json:"reason,omitempty"`
	Waves  *occupancy.Waves `json:"waves,omitempty"`
	// Cliffs are the nearest register counts and shared-memory sizes that
	// change resident blocks.
	Cliffs *occupancy.Cliffs `json:"cliffs,omitempty"`
	// Clusters is set with --cluster.
	Clusters *occupancy.Clusters `json:"clusters,omitempty"`
	Notes    []string            `json:"notes"`
}

// NewOccupancy assembles the report and its notes.
func NewOccupancy(t occupancy.Target, k occupancy.Kernel, l occupancy.Launch, defaults []string, r occupancy.Result, w *occupancy.Waves, cliffs *occupancy.Cliffs, c *occupancy.Clusters) Occupancy {
	o := Occupancy{Target: t, Kernel: k, Launch: l, Defaults: defaults, Result: r, Occupancy: r.Occupancy(), Waves: w, Cliffs: cliffs, Clusters: c}
	if r.Reason != nil {
		o.Reason = r.Reason.Error()
	}
	// Empty, not nil: JSON writes [] when there is nothing to note.
	o.Notes = append([]string{}, occupancyNotes(o)...)
	return o
}

func (o Occupancy) isDefault(name string) bool {
	for _, d := range o.Defaults {
		if d == name {
			return true
		}
	}
	return false
}

// Tables renders the summary, the limits and, with a grid, the waves.
func (o Occupancy) Tables() []Table {
	r, a := o.Result, o.Target.Arch
	smem := o.Kernel.StaticSmem + o.Launch.DynamicSmem
	threads := strconv.Itoa(o.Launch.Threads)
	if o.isDefault("threads") {
		threads += " (default; set --threads)"
	}
	regs := strconv.Itoa(o.Kernel.Regs)
	if o.isDefault("regs") {
		regs += " (default; set --regs)"
	}
	summary := Table{Title: "Occupancy on " + o.Target.String(), Header: []string{"Quantity", "Value"}}
	add := func(k, v string) { summary.Rows = append(summary.Rows, []string{k, v}) }
	add("threads per block", threads)
	add("registers per thread", regs)
	add("shared memory per block", size(smem)+" ("+size(o.Kernel.StaticSmem)+" static + "+size(o.Launch.DynamicSmem)+" dynamic)")
	if o.Kernel.MaxThreads > 0 {
		add("launch bounds (max threads per block)", strconv.Itoa(o.Kernel.MaxThreads))
	}
	add("named barriers per block", strconv.Itoa(max(o.Kernel.Barriers, 1)))
	add("blocks per SM", strconv.Itoa(r.Blocks))
	add("warps per SM", fmt.Sprintf("%d of %d", r.Warps, r.MaxWarps))
	add("threads per SM", fmt.Sprintf("%d of %d", r.Threads, a.MaxThreadsPerSM))
	add("occupancy", pct(o.Occupancy))
	if o.Reason != "" {
		add("cannot launch", o.Reason)
	} else {
		add("limited by", limiterText(r.Limiters))
	}
	add("registers per warp (allocated)", fmt.Sprintf("%d (%d × 32 rounded up to %d)", r.RegsPerWarp, o.Kernel.Regs, a.RegAllocUnit))
	add("registers per block (allocated)", fmt.Sprintf("%d (%d warps)", r.RegsPerBlock, r.WarpsPerBlock))
	add("shared memory per block (allocated)", fmt.Sprintf("%s (with %s reserved, rounded up to %d B)", size(r.SmemPerBlock), size(r.SmemReserved), a.SmemAllocUnit))
	pref := o.Launch.Carveout.String()
	if b, ok := o.Launch.Carveout.Size(); ok {
		pref = size(b)
	}
	carve := "preference " + pref + " → " + size(r.CarveoutPreferred)
	if r.Carveout != r.CarveoutPreferred && r.Carveout > 0 {
		carve += ", raised to " + size(r.Carveout) + " so that one block fits"
	}
	add("shared memory carveout per SM", carve)

	limits := Table{Title: "Limits (blocks per SM each allows)", Header: []string{"Limit", "Blocks per SM", "Per block", "Per SM", "Limiting"}}
	row := func(l occupancy.Limiter, perBlock, perSM string) {
		mark := ""
		if r.Limiters&l != 0 {
			mark = "yes"
		}
		limits.Rows = append(limits.Rows, []string{strings.ReplaceAll(l.String(), "_", " "), count(r.By(l)), perBlock, perSM, mark})
	}
	row(occupancy.LimitWarps, fmt.Sprintf("%d warps", r.WarpsPerBlock), fmt.Sprintf("%d warps", a.MaxWarpsPerSM))
	row(occupancy.LimitRegisters, fmt.Sprintf("%d registers", r.RegsPerBlock), fmt.Sprintf("%d registers", a.RegsPerSM))
	perSM := size(r.Carveout) + " carveout"
	if r.Carveout == 0 {
		perSM = size(a.SmemPerSM) + " largest carveout"
	}
	row(occupancy.LimitSharedMemory, size(r.SmemPerBlock), perSM)
	row(occupancy.LimitBlocks, "1 block", fmt.Sprintf("%d blocks", a.MaxBlocksPerSM))
	if a.CC.Major >= 9 {
		row(occupancy.LimitBarriers, plural(max(o.Kernel.Barriers, 1), "barrier"), plural(a.BarriersPerSM, "barrier"))
	}
	limits.Notes = o.Notes
	tables := []Table{summary, limits}
	if w := o.Waves; w != nil {
		tables = append(tables, Table{Title: "Waves", Header: []string{"Grid (blocks)", "Blocks per wave", "Waves", "Blocks in last wave", "Last wave fill"},
			Rows:  [][]string{{strconv.Itoa(w.Grid), strconv.Itoa(w.PerWave), strconv.Itoa(w.Waves), strconv.Itoa(w.LastWaveBlocks), pct(w.LastWaveFill)}},
			Notes: []string{fmt.Sprintf("Blocks per wave = %d blocks per SM × %d SMs.", r.Blocks, o.Target.SMs)}})
	}
	if c := o.Cliffs; c != nil {
		tables = append(tables, cliffTable(*c, o.Kernel, o.Launch))
	}
	if c := o.Clusters; c != nil {
		tables = append(tables, clusterTable(*c, o.Target))
	}
	return tables
}

func limiterText(l occupancy.Limiter) string {
	return strings.ReplaceAll(strings.ReplaceAll(l.String(), "|", ", "), "_", " ")
}

func cliffTable(c occupancy.Cliffs, k occupancy.Kernel, l occupancy.Launch) Table {
	tab := Table{Title: "Cliffs: the nearest values that change resident blocks", Header: []string{"Nearest change", "Value", "Blocks per SM"}}
	add := func(what string, cl *occupancy.Cliff, f func(int) string) {
		if cl == nil {
			tab.Rows = append(tab.Rows, []string{what, "none", "-"})
			return
		}
		tab.Rows = append(tab.Rows, []string{what, f(cl.Value), fmt.Sprintf("%d (now %d)", cl.Blocks, c.Blocks)})
	}
	add("fewer registers", c.RegsDown, strconv.Itoa)
	add("more registers", c.RegsUp, strconv.Itoa)
	add("less shared memory", c.SmemDown, size)
	add("more shared memory", c.SmemUp, size)
	return tab
}

func joinGPCs(g []int) string {
	s := make([]string, len(g))
	for i, n := range g {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func clusterTable(c occupancy.Clusters, t occupancy.Target) Table {
	tab := Table{Title: fmt.Sprintf("Clusters of %d blocks on the whole GPU (model)", c.Size), Header: []string{"Quantity", "Value"}}
	add := func(k, v string) { tab.Rows = append(tab.Rows, []string{k, v}) }
	add("active clusters", strconv.Itoa(c.Active))
	add("active blocks", strconv.Itoa(c.Blocks))
	add("blocks per SM under cluster launch", fmt.Sprintf("%d (plain calculation %d, capped at 8)", c.SlotsPerSM, c.BlocksPerSM))
	add("naive bound (slots × SMs / size)", strconv.Itoa(c.Naive))
	g := joinGPCs(c.GPCs)
	if c.Estimated {
		g += " (estimate: CUTLASS's 18 SMs per GPC)"
	}
	add("SMs per GPC", g)
	add("largest cluster size with a cluster active", strconv.Itoa(c.MaxSize))
	// The model itself is described in --help and docs/occupancy.md.
	if !c.Estimated {
		tab.Notes = []string{"A model (NVIDIA publishes no formula) that reproduces all 2,400 cudaOccupancyMaxActiveClusters answers measured on an H100 SXM."}
	} else {
		tab.Notes = []string{"This device's GPC layout is not in the catalog; on the H100 the 18-SM estimate is off by up to 9%. Check with cudaOccupancyMaxActiveClusters."}
	}
	if c.NonPortable {
		tab.Notes = append(tab.Notes, fmt.Sprintf("Cluster sizes above %d are non-portable: set cudaFuncAttributeNonPortableClusterSizeAllowed to 1 on the kernel first, or the launch fails (cudaErrorInvalidClusterSize).", t.Arch.MaxClusterSize))
	}
	return tab
}

// occupancyNotes are at most two lines: the defaults used, then what the
// user must know to launch this configuration at all. The 1 KiB CUDA
// reserves is in the allocation row; the conventions are in --help.
func occupancyNotes(o Occupancy) []string {
	var n, warn []string
	a, r := o.Target.Arch, o.Result
	if len(o.Defaults) > 0 {
		n = append(n, "Defaults used: "+strings.Join(o.Defaults, ", ")+".")
	}

	smem := o.Kernel.StaticSmem + o.Launch.DynamicSmem
	if smem > a.SmemPerBlock {
		warn = append(warn, fmt.Sprintf("More than %s of shared memory per block must be dynamic and needs cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, %d) before the launch; without it the launch fails. The results assume it.", size(a.SmemPerBlock), o.Launch.DynamicSmem))
	}
	if r.Reason == occupancy.ErrRegsPerBlock && r.RegsPerBlock <= a.RegsPerBlock {
		w := (r.WarpsPerBlock + a.WarpAllocGranularity - 1) / a.WarpAllocGranularity * a.WarpAllocGranularity
		warn = append(warn, fmt.Sprintf("The block's %d registers would fit, but the hardware checks registers as if the block's %d warps were spread over all %d sub-partitions: %d warps × %d = %d > %d. Use a block of a multiple of %d warps, or fewer registers.",
			r.RegsPerBlock, r.WarpsPerBlock, a.WarpAllocGranularity, w, r.RegsPerWarp, w*r.RegsPerWarp, a.RegsPerBlock, a.WarpAllocGranularity))
	}
	if r.Reason == occupancy.ErrLaunchBounds {
		warn = append(warn, fmt.Sprintf("Without its launch bounds the kernel would have %d blocks per SM; cudaOccupancyMaxActiveBlocksPerMultiprocessor reports that number, but the launch fails.",
			min(r.ByWarps, r.ByRegisters, r.BySharedMemory, r.ByBlocks, r.ByBarriers)))
	}
	if len(warn) > 0 {
		n = append(n, strings.Join(warn, " "))
	}
	return n
}

// BatchColumns are the result columns `gpucalc occupancy batch` appends.
var BatchColumns = []string{"blocks_per_sm", "warps_per_sm", "occupancy", "limiters", "blocks_by_warps", "blocks_by_regs", "blocks_by_smem", "blocks_by_blocks", "regs_per_block", "smem_per_block", "error"}

// limitCount writes a per-limit block count, empty when the limit does not
// bind.
func limitCount(n int) string {
	if n == occupancy.Unlimited {
		return ""
	}
	return strconv.Itoa(n)
}

func targetCells(t occupancy.Target) []string {
	return []string{t.Device, t.CC.String(), optInt(t.SMs)}
}

// carveoutCells writes a carveout preference as a percentage or a size,
// both empty for the default.
func carveoutCells(c occupancy.Carveout) []string {
	if b, ok := c.Size(); ok {
		return []string{"", integer(b)}
	}
	if c.IsDefault() {
		return []string{"", ""}
	}
	return []string{strings.TrimSuffix(c.String(), "%"), ""}
}

// Records is 'gpucalc occupancy': summary (one row), limits, cliffs and,
// when asked for, waves and clusters.
func (o Occupancy) Records() []Table {
	r, a, k, l := o.Result, o.Target.Arch, o.Kernel, o.Launch
	sum := Table{Key: "summary", Header: append(append([]string{}, targetHeader...),
		"threads_per_block", "regs_per_thread", "smem_per_block_bytes", "static_smem_bytes", "dynamic_smem_bytes", "max_threads_per_block",
		"barriers_per_block", "blocks_per_sm", "warps_per_sm", "max_warps_per_sm", "threads_per_sm", "max_threads_per_sm", "occupancy",
		"limiters", "reason", "warps_per_block", "regs_per_warp", "regs_per_block", "smem_allocated_per_block_bytes",
		"smem_reserved_per_block_bytes", "carveout_preference_percent", "carveout_preference_bytes", "carveout_preferred_bytes", "carveout_bytes")}
	row := append(targetCells(o.Target),
		integer(l.Threads), integer(k.Regs), integer(k.StaticSmem+l.DynamicSmem), integer(k.StaticSmem), integer(l.DynamicSmem), optInt(k.MaxThreads),
		integer(max(k.Barriers, 1)), integer(r.Blocks), integer(r.Warps), integer(r.MaxWarps), integer(r.Threads), integer(a.MaxThreadsPerSM), num(o.Occupancy),
		r.Limiters.String(), o.Reason, integer(r.WarpsPerBlock), integer(r.RegsPerWarp), integer(r.RegsPerBlock), integer(r.SmemPerBlock),
		integer(r.SmemReserved))
	row = append(row, carveoutCells(l.Carveout)...)
	sum.Rows = [][]string{append(row, integer(r.CarveoutPreferred), integer(r.Carveout))}

	lim := Table{Key: "limits", Header: []string{"limit", "blocks_per_sm", "per_block", "per_sm", "unit", "limiting"}}
	add := func(li occupancy.Limiter, perBlock, perSM int, unit string) {
		lim.Rows = append(lim.Rows, []string{li.String(), limitCount(r.By(li)), integer(perBlock), integer(perSM), unit, boolean(r.Limiters&li != 0)})
	}
	add(occupancy.LimitWarps, r.WarpsPerBlock, a.MaxWarpsPerSM, "warps")
	add(occupancy.LimitRegisters, r.RegsPerBlock, a.RegsPerSM, "registers")
	smemSM := r.Carveout
	if smemSM == 0 {
		smemSM = a.SmemPerSM
	}
	add(occupancy.LimitSharedMemory, r.SmemPerBlock, smemSM, "bytes")
	add(occupancy.LimitBlocks, 1, a.MaxBlocksPerSM, "blocks")
	if a.CC.Major >= 9 {
		add(occupancy.LimitBarriers, max(k.Barriers, 1), a.BarriersPerSM, "barriers")
	}
	out := []Table{sum, lim}
	if c := o.Cliffs; c != nil {
		t := Table{Key: "cliffs", Header: []string{"change", "value", "unit", "blocks_per_sm", "current_value", "current_blocks_per_sm"}}
		add := func(name string, cl *occupancy.Cliff, cur int, unit string) {
			v, b := "", ""
			if cl != nil {
				v, b = integer(cl.Value), integer(cl.Blocks)
			}
			t.Rows = append(t.Rows, []string{name, v, unit, b, integer(cur), integer(c.Blocks)})
		}
		add("regs_down", c.RegsDown, k.Regs, "registers")
		add("regs_up", c.RegsUp, k.Regs, "registers")
		add("smem_down", c.SmemDown, k.StaticSmem+l.DynamicSmem, "bytes")
		add("smem_up", c.SmemUp, k.StaticSmem+l.DynamicSmem, "bytes")
		out = append(out, t)
	}
	if w := o.Waves; w != nil {
		out = append(out, Table{Key: "waves", Header: []string{"grid_blocks", "blocks_per_wave", "waves", "last_wave_blocks", "last_wave_fill"},
			Rows: [][]string{{integer(w.Grid), integer(w.PerWave), integer(w.Waves), integer(w.LastWaveBlocks), num(w.LastWaveFill)}}})
	}
	if c := o.Clusters; c != nil {
		out = append(out, Table{Key: "clusters", Header: []string{"cluster_size", "active_clusters", "active_blocks", "slots_per_sm",
			"blocks_per_sm", "naive_bound", "gpcs", "gpcs_estimated", "max_potential_cluster_size", "non_portable"},
			Rows: [][]string{{integer(c.Size), integer(c.Active), integer(c.Blocks), integer(c.SlotsPerSM), integer(c.BlocksPerSM),
				integer(c.Naive), integer(len(c.GPCs)), boolean(c.Estimated), integer(c.MaxSize), boolean(c.NonPortable)}}})
	}
	return out
}

// targetHeader is the device columns an occupancy summary starts with;
// targetCells their values (device and sms empty for an architecture).
var targetHeader = []string{"device", "compute_capability", "sms"}
