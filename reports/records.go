package reports

import (
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/sim"
)

// The record sets: what --format csv writes, one Table per section, keyed
// by the section's name. Every header is snake_case; every cell one plain
// value: numbers in base units (bytes, seconds, hertz, FLOP/s, bytes per
// second) with the unit in the column's name, fractions as 0..1, an empty
// cell where there is no value. docs/output.md states the conventions.

// integer writes a count.
func integer(n int) string { return strconv.Itoa(n) }

// optInt writes a count, empty for zero (a figure that is not known).
func optInt(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// optNum writes a rate or size, empty for zero (not known).
func optNum(v float64) string {
	if v == 0 {
		return ""
	}
	return num(v)
}

// boolean writes true or false.
func boolean(b bool) string { return strconv.FormatBool(b) }

// limitCount writes a per-limit block count, empty when the limit does not
// bind.
func limitCount(n int) string {
	if n == occupancy.Unlimited {
		return ""
	}
	return strconv.Itoa(n)
}

// DeviceRecords is 'gpucalc devices': one row per device.
func DeviceRecords(list []devices.Device) []Table {
	t := Table{Key: "devices", Header: []string{"name", "vendor", "architecture", "compute_capability", "sms", "boost_clock_hz",
		"memory_type", "memory_bytes", "memory_bandwidth_bytes_per_second", "l2_bytes",
		"bf16_tensor_flops_per_second", "fp16_tensor_flops_per_second", "fp32_flops_per_second", "ridge_flops_per_byte"}}
	for _, d := range list {
		peak := func(dt devices.DType, p devices.Path) string {
			v, err := d.Peak(dt, p)
			if err != nil {
				return ""
			}
			return optNum(v)
		}
		ridge := ""
		for _, dt := range []devices.DType{devices.BF16, devices.FP16} {
			if r, err := d.Ridge(dt, devices.Tensor); err == nil {
				ridge = num(r)
				break
			}
		}
		t.Rows = append(t.Rows, []string{d.Name, d.Vendor, d.Architecture, d.CC.String(), optInt(d.SMs), optNum(d.BoostClockHz),
			d.Memory.Type, optNum(float64(d.Memory.Bytes)), optNum(d.Memory.BytesPerSecond), optNum(float64(d.L2.Bytes)),
			peak(devices.BF16, devices.Tensor), peak(devices.FP16, devices.Tensor), peak(devices.FP32, devices.CUDACores), ridge})
	}
	return []Table{t}
}

// DeviceFigureRecords is 'gpucalc devices show NAME': the figures, one per
// row with its unit and source, then the architecture's limits.
func DeviceFigureRecords(d devices.Device, lim *devices.Arch) []Table {
	t := Table{Key: "figures", Header: []string{"field", "value", "unit", "source"}}
	add := func(field, value, unit, source string) {
		t.Rows = append(t.Rows, []string{field, value, unit, d.Source(source)})
	}
	add("architecture", d.Architecture, "", "")
	if d.CC != (devices.CC{}) {
		add("compute_capability", d.CC.String(), "", "")
	}
	for _, a := range d.Aliases {
		add("alias", a, "", "")
	}
	add("sms", integer(d.SMs), "", "sms")
	add("boost_clock", num(d.BoostClockHz), "hz", "boost_clock")
	if _, ok := d.Sources["tensor_clock"]; ok {
		add("tensor_clock", num(d.TensorClockHz), "hz", "tensor_clock")
	}
	add("memory_type", d.Memory.Type, "", "memory.size")
	add("memory_size", num(float64(d.Memory.Bytes)), "bytes", "memory.size")
	add("memory_bandwidth", num(d.Memory.BytesPerSecond), "bytes_per_second", "memory.bandwidth")
	if d.L2.Bytes > 0 {
		add("l2_size", num(float64(d.L2.Bytes)), "bytes", "l2.size")
	}
	if d.L2.BytesPerSecond > 0 {
		add("l2_bandwidth", num(d.L2.BytesPerSecond), "bytes_per_second", "l2.bandwidth")
	}
	if d.HostLink.BytesPerSecond > 0 {
		add("host_link_type", d.HostLink.Type, "", "host_link.bandwidth")
		add("host_link_bandwidth", num(d.HostLink.BytesPerSecond), "bytes_per_second", "host_link.bandwidth")
	}
	if d.TDPWatts > 0 {
		add("tdp", num(d.TDPWatts), "watts", "tdp")
	}
	for _, k := range d.PeakKeys() {
		p := d.Dense[k]
		add("dense_"+k, num(p.PerSecond), opsUnit(k)+"_per_second", "dense."+k)
		if p.PerSMPerClock > 0 {
			add("dense_"+k+"_per_sm_per_clock", num(p.PerSMPerClock), opsUnit(k)+"_per_sm_per_clock", "dense."+k)
			add("dense_"+k+"_clock", p.Clock, "", "dense."+k)
		}
	}
	for _, k := range d.PeakKeys() {
		if p, ok := d.Sparse[k]; ok {
			add("sparse_"+k, num(p.PerSecond), opsUnit(k)+"_per_second", "sparse."+k)
		}
	}
	for _, dt := range []devices.DType{devices.BF16, devices.FP16} {
		if r, err := d.Ridge(dt, devices.Tensor); err == nil {
			t.Rows = append(t.Rows, []string{"ridge_" + string(dt) + "_tensor_dram", num(r), "flops_per_byte", "derived"})
			break
		}
	}
	if m := d.Measured; m != nil {
		rate := func(name string, v float64, field string) {
			if v > 0 {
				add("measured_"+name, num(v), "bytes_per_second", "measured."+field)
			}
		}
		rate("dram_read", m.DRAMRead, "dram_read")
		rate("dram_write", m.DRAMWrite, "dram_write")
		rate("dram_copy", m.DRAMCopy, "dram_copy")
		rate("l2", m.L2, "l2")
		rate("smem", m.Smem, "smem")
		for _, k := range peakOrder(m.Peaks) {
			add("measured_"+k, num(m.Peaks[k]), opsUnit(k)+"_per_second", "measured.peaks."+k)
		}
		if m.LaunchOverhead > 0 {
			add("measured_launch_overhead", num(m.LaunchOverhead), "seconds", "measured.launch_overhead")
		}
		for _, k := range sortedKeys(m.LatencyCycles) {
			add("measured_"+k+"_latency", num(m.LatencyCycles[k]), "cycles", "measured.latency_cycles."+k)
		}
	}
	out := []Table{t}
	if lim != nil {
		out = append(out, ArchRecords([]devices.Arch{*lim})...)
	}
	return out
}

// opsUnit is the unit of a peak key: flops, or ops for integer types.
func opsUnit(k string) string {
	if strings.HasPrefix(k, "int") {
		return "ops"
	}
	return "flops"
}

// ArchRecords is the occupancy limits of compute capabilities: one row per
// architecture (limits), its carveouts and its sources.
func ArchRecords(archs []devices.Arch) []Table {
	lim := Table{Key: "limits", Header: []string{"compute_capability", "family", "parts", "warp_size", "max_threads_per_block",
		"max_threads_per_sm", "max_warps_per_sm", "max_blocks_per_sm", "regs_per_sm", "regs_per_block", "max_regs_per_thread",
		"reg_alloc_unit", "warp_alloc_granularity", "smem_per_sm_bytes", "smem_per_block_bytes", "smem_per_block_optin_bytes",
		"smem_reserved_per_block_bytes", "smem_alloc_unit_bytes", "barriers_per_sm", "max_cluster_size", "max_cluster_size_nonportable"}}
	carve := Table{Key: "carveouts", Header: []string{"compute_capability", "carveout_bytes"}}
	src := Table{Key: "sources", Header: []string{"compute_capability", "source"}}
	for _, a := range archs {
		cc := a.CC.String()
		lim.Rows = append(lim.Rows, []string{cc, a.Family, a.Parts, integer(a.WarpSize), integer(a.MaxThreadsPerBlock),
			integer(a.MaxThreadsPerSM), integer(a.MaxWarpsPerSM), integer(a.MaxBlocksPerSM), integer(a.RegsPerSM), integer(a.RegsPerBlock),
			integer(a.MaxRegsPerThread), integer(a.RegAllocUnit), integer(a.WarpAllocGranularity), integer(a.SmemPerSM), integer(a.SmemPerBlock),
			integer(a.SmemPerBlockOptin), integer(a.SmemReservedPerBlock), integer(a.SmemAllocUnit), integer(a.BarriersPerSM),
			optInt(a.MaxClusterSize), optInt(a.MaxClusterSizeNonPortable)})
		for _, c := range a.CarveoutsKiB {
			carve.Rows = append(carve.Rows, []string{cc, integer(c << 10)})
		}
		for _, s := range a.Sources {
			src.Rows = append(src.Rows, []string{cc, s})
		}
	}
	return []Table{lim, carve, src}
}

// targetHeader is the device columns an occupancy summary starts with;
// targetCells their values (device and sms empty for an architecture).
var targetHeader = []string{"device", "compute_capability", "sms"}

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

// AvailSmemRecords is 'gpucalc occupancy avail-smem'.
func AvailSmemRecords(t occupancy.Target, k occupancy.Kernel, blocks, threads int, s occupancy.AvailSmem) []Table {
	return []Table{{Key: "avail_smem", Header: append(append([]string{}, targetHeader...), "blocks_per_sm", "threads_per_block", "regs_per_thread",
		"static_smem_bytes", "runtime_bytes", "runtime_blocks_per_sm", "fits_bytes"),
		Rows: [][]string{append(targetCells(t), integer(blocks), integer(threads), integer(k.Regs), integer(k.StaticSmem),
			integer(s.Runtime), integer(s.RuntimeBlocks), integer(s.Fits))}}}
}

// sweepColumn names the varied quantity in record headers.
func sweepColumn(q occupancy.Quantity) string {
	switch q {
	case occupancy.VaryThreads:
		return "threads_per_block"
	case occupancy.VaryRegs:
		return "regs_per_thread"
	}
	return "smem_per_block_bytes"
}

// SweepRecords is 'gpucalc occupancy sweep': the rows of SweepTable, each
// range as from and to, the current value in the row that holds it.
func SweepRecords(q occupancy.Quantity, pts []occupancy.Point, current int) []Table {
	n := sweepColumn(q)
	t := Table{Key: "sweep", Header: []string{"from_" + n, "to_" + n, "blocks_per_sm", "warps_per_sm", "occupancy", "limiters", "current_" + n}}
	for _, g := range sweepGroups(q, pts) {
		cur := ""
		if current >= g.from && current <= g.to {
			cur = integer(current)
		}
		p := g.first
		t.Rows = append(t.Rows, []string{integer(g.from), integer(g.to), integer(p.Blocks), integer(p.Warps), num(p.Occupancy), p.Limiters.String(), cur})
	}
	return []Table{t}
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

// RooflineRecords is 'gpucalc roofline': every op on every device
// (points), and each device's totals (summary).
func RooflineRecords(views []RooflineView) []Table {
	pts := Table{Key: "points", Header: []string{"device", "name", "op", "count", "flops", "matrix_flops", "transcendentals", "bytes",
		"ai_flops_per_byte", "peak", "compute_ceiling_flops_per_second", "memory_level", "memory_ceiling_bytes_per_second",
		"ridge_flops_per_byte", "attainable_flops_per_second", "bound", "lower_bound_seconds", "expected_seconds", "expected_bound"}}
	sum := Table{Key: "summary", Header: []string{"device", "ops", "flops", "bytes", "lower_bound_seconds", "expected_seconds", "memory_bound_share"}}
	for _, v := range views {
		if v.NotAvailable != "" {
			continue // JSON says why
		}
		for _, p := range v.Points {
			pts.Rows = append(pts.Rows, []string{v.Device, p.Name, p.Op.String(), integer(p.Count), num(p.FLOPs), num(p.MatrixFLOPs),
				num(p.Transcendentals), num(p.Bytes), num(p.AI), p.PeakKey, num(p.ComputeCeiling), string(p.MemoryLevel), num(p.MemoryCeiling),
				num(p.Ridge), num(p.Attainable), string(p.Bound), num(p.LowerBound), num(p.Expected), p.ExpectedBound})
		}
		s := v.totals
		sum.Rows = append(sum.Rows, []string{v.Device, integer(s.Ops), num(s.FLOPs), num(s.Bytes), num(s.LowerBound), num(s.Expected), num(s.MemoryBoundShare)})
	}
	return []Table{pts, sum}
}

// SimulationRecords is 'gpucalc simulate': one row per resident warp count.
func SimulationRecords(pts []sim.Point) []Table {
	t := Table{Key: "points", Header: []string{"warps_per_sm", "achieved_bytes_per_second", "achieved_flops_per_second", "bound_bytes_per_second",
		"bound_flops_per_second", "ipc", "mean_load_latency_cycles", "cycles", "warp_instructions"}}
	for _, v := range SimPoints(pts) {
		t.Rows = append(t.Rows, []string{integer(v.Warps), num(v.AchievedBytes), num(v.AchievedFLOPs), num(v.BoundBytes), num(v.BoundFLOPs),
			num(v.IPC), num(v.MeanLoadLatency), num(float64(v.Cycles)), num(float64(v.Instructions))})
	}
	return []Table{t}
}

// NCURecords is 'gpucalc ncu': kernels, compute, memory and occupancy, one
// row per kernel (or per kernel and precision or level), keyed by ncu's ID.
func NCURecords(as []ncu.Analysis, device string) []Table {
	k := Table{Key: "kernels", Header: []string{"id", "name", "full_name", "device", "compute_capability", "block_x", "block_y", "block_z",
		"grid_x", "grid_y", "grid_z", "duration_seconds", "flops", "flops_per_second", "bound", "bound_share", "implausible"}}
	c := Table{Key: "compute", Header: []string{"id", "dtype", "path", "flops", "flops_per_second", "peak_flops_per_second", "share_of_peak"}}
	m := Table{Key: "memory", Header: []string{"id", "level", "bytes", "bytes_per_second", "ceiling_bytes_per_second", "share_of_ceiling", "flops_per_byte"}}
	o := Table{Key: "occupancy", Header: []string{"id", "registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes", "smem_config_bytes",
		"theoretical_pct", "ncu_theoretical_pct", "match", "achieved_pct", "blocks_per_sm", "limiters", "error"}}
	pctCell := func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	}
	for _, a := range as {
		id := integer(a.ID)
		dur, rate := "", ""
		if a.Duration > 0 {
			dur, rate = num(a.Duration), num(a.FLOPs/a.Duration)
		}
		share := ""
		if a.Bound != "" {
			share = num(a.BoundShare)
		}
		k.Rows = append(k.Rows, []string{id, a.Name, a.FullName, device, a.CC.String(), integer(a.Block.X), integer(a.Block.Y), integer(a.Block.Z),
			integer(a.Grid.X), integer(a.Grid.Y), integer(a.Grid.Z), dur, num(a.FLOPs), rate, a.Bound, share, strings.Join(a.Implausible, "; ")})
		for _, r := range a.Compute {
			rate, share := "", ""
			if a.Duration > 0 {
				rate = num(r.PerSecond)
				if r.Peak > 0 {
					share = num(r.Share)
				}
			}
			c.Rows = append(c.Rows, []string{id, string(r.DType), string(r.Path), num(r.FLOPs), rate, optNum(r.Peak), share})
		}
		for _, l := range a.Memory {
			rate, share, ai := "", "", ""
			if a.Duration > 0 {
				rate = num(l.PerSecond)
				if l.Ceiling > 0 {
					share = num(l.Share)
				}
			}
			if l.Bytes > 0 {
				ai = num(l.Intensity)
			}
			m.Rows = append(m.Rows, []string{id, string(l.Level), num(l.Bytes), rate, optNum(l.Ceiling), share, ai})
		}
		regs, static, dyn, config := "", "", "", ""
		if l := a.Launch; l != nil {
			regs, static, dyn, config = integer(l.RegistersPerThread), integer(l.StaticSmem), integer(l.DynamicSmem), optInt(l.SmemConfig)
		}
		occ := a.Occupancy
		ours, blocks, lim, match := "", "", "", ""
		if occ.Error == "" {
			ours, blocks, lim = num(occ.Theoretical), integer(occ.BlocksPerSM), occ.Limiters.String()
			if a.Kernel.Occupancy.Theoretical != nil {
				match = boolean(occ.Match)
			}
		}
		o.Rows = append(o.Rows, []string{id, regs, static, dyn, config, ours, pctCell(a.Kernel.Occupancy.Theoretical), match,
			pctCell(a.Kernel.Occupancy.Achieved), blocks, lim, occ.Error})
	}
	return []Table{k, c, m, o}
}

// ReviewRecords is 'gpucalc check': one summary row per device, the ops
// and the findings of every device.
func ReviewRecords(rv Review) []Table {
	sum := Table{Key: "summary", Header: []string{"device", "workload", "ops", "flops", "bytes", "lower_bound_seconds", "expected_seconds",
		"transfer_seconds", "speedup_vs_first", "errors", "warnings", "infos"}}
	ops := Table{Key: "ops", Header: []string{"device", "name", "op", "count", "bound", "expected_bound", "lower_bound_seconds", "expected_seconds",
		"share", "peak_fraction", "bandwidth_fraction", "kernel_penalty_seconds"}}
	fs := Table{Key: "findings", Header: []string{"device", "number", "severity", "check", "op", "saves_seconds", "share_of_expected", "message", "fix"}}
	for _, r := range rv.Reports {
		speedup := ""
		if r.Expected > 0 {
			speedup = num(rv.Reports[0].Expected / r.Expected)
		}
		sum.Rows = append(sum.Rows, []string{r.Device, r.Workload, integer(len(r.Ops)), num(r.FLOPs), num(r.Bytes), num(r.LowerBound), num(r.Expected),
			num(r.Transfer), speedup, integer(r.Count(review.Error)), integer(r.Count(review.Warning)), integer(r.Count(review.Info))})
		for _, o := range r.Ops {
			ops.Rows = append(ops.Rows, []string{r.Device, o.Name, o.Spec, integer(o.Count), string(o.Point.Bound), o.Point.ExpectedBound,
				num(o.LowerBound), num(o.Expected), num(o.Share), num(o.PeakFraction), num(o.BandwidthFraction), num(o.KernelPenalty)})
		}
		for i, f := range r.Findings {
			saves, share := "", ""
			if f.Saves > 0 {
				saves, share = num(f.Saves), num(f.Saves/r.Expected)
			}
			fs.Rows = append(fs.Rows, []string{r.Device, integer(i + 1), string(f.Severity), f.Check, f.Op, saves, share, f.Message, f.Fix})
		}
	}
	return []Table{sum, ops, fs}
}
