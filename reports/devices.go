package reports

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/units"
)

// DeviceList is the catalog overview: one row per device. The tensor column
// is the dense BF16 rate, or FP16 on parts without BF16 (V100, T4).
func DeviceList(list []devices.Device) Table {
	t := Table{Header: []string{"Device", "Arch", "CC", "SMs", "Memory", "Bandwidth", "BF16/FP16 tensor", "FP32", "Ridge (FLOP/B)"},
		Optional: []string{"Ridge (FLOP/B)", "FP32", "Arch", "CC"}}
	for _, d := range list {
		tensor, fp32, ridge := "-", "-", "-"
		for _, dt := range []devices.DType{devices.BF16, devices.FP16} {
			if p, err := d.Peak(dt, devices.Tensor); err == nil {
				tensor = units.FormatFLOPS(p)
				if r, err := d.Ridge(dt, devices.Tensor); err == nil {
					ridge = strconv.FormatFloat(r, 'f', 0, 64)
				}
				break
			}
		}
		if p, err := d.Peak(devices.FP32, devices.CUDACores); err == nil {
			fp32 = units.FormatFLOPS(p)
		}
		cc := d.CC.String()
		if cc == "" {
			cc = "-"
		}
		t.Rows = append(t.Rows, []string{d.Name, d.Architecture, cc, strconv.Itoa(d.SMs),
			d.Memory.Type + " " + units.FormatSize(d.Memory.Bytes), units.FormatBandwidth(d.Memory.BytesPerSecond), tensor, fp32, ridge})
	}
	t.Notes = []string{
		"Peaks are dense (no 2:4 sparsity). Rates are decimal (1 TB/s = 1e12 B/s); memory sizes binary (GiB).",
		"Ridge = dense 16-bit tensor peak / DRAM bandwidth. 'gpucalc devices show NAME' lists every figure with its source.",
	}
	return t
}

// sourceList numbers the sources a table cites, in order of first use, so
// rows carry a short key ("[2]") and the full text is listed once below.
type sourceList struct {
	texts []string
	index map[string]int
}

func (s *sourceList) key(text string) string {
	if text == "" {
		return ""
	}
	if s.index == nil {
		s.index = map[string]int{}
	}
	i, ok := s.index[text]
	if !ok {
		s.texts = append(s.texts, text)
		i = len(s.texts)
		s.index[text] = i
	}
	return "[" + strconv.Itoa(i) + "]"
}

// table lists the sources cited, by key: provenance is a table of its own,
// not notes under the figures.
func (s *sourceList) table() Table {
	t := Table{Title: "Sources", Header: []string{"Key", "Source"}}
	for i, text := range s.texts {
		t.Rows = append(t.Rows, []string{"[" + strconv.Itoa(i+1) + "]", text})
	}
	return t
}

// DeviceDetail lists every figure of one device with a key to its source,
// then the sources (DeviceFigureRecords has the full text in each row).
func DeviceDetail(d devices.Device) []Table {
	t := Table{Title: d.Vendor + " " + d.Name, Header: []string{"Field", "Value", "Source"}}
	var src sourceList
	add := func(field, value, source string) {
		t.Rows = append(t.Rows, []string{field, value, src.key(d.Source(source))})
	}
	add("architecture", d.Architecture, "")
	if d.CC != (devices.CC{}) {
		add("compute capability", d.CC.String()+" ("+d.CC.SM()+")", "")
	}
	if len(d.Aliases) > 0 {
		add("aliases", strings.Join(d.Aliases, ", "), "")
	}
	add("SMs", strconv.Itoa(d.SMs), "sms")
	add("boost clock", units.FormatFrequency(d.BoostClockHz), "boost_clock")
	if _, ok := d.Sources["tensor_clock"]; ok {
		add("tensor clock", units.FormatFrequency(d.TensorClockHz), "tensor_clock")
	}
	add("memory", d.Memory.Type+" "+units.FormatSize(d.Memory.Bytes), "memory.size")
	add("memory bandwidth", units.FormatBandwidth(d.Memory.BytesPerSecond), "memory.bandwidth")
	if d.L2.Bytes > 0 {
		add("L2 size", units.FormatSize(d.L2.Bytes), "l2.size")
	}
	if d.L2.BytesPerSecond > 0 {
		add("L2 bandwidth (measured)", units.FormatBandwidth(d.L2.BytesPerSecond), "l2.bandwidth")
	}
	if d.HostLink.BytesPerSecond > 0 {
		add("host link (per direction)", d.HostLink.Type+", "+units.FormatBandwidth(d.HostLink.BytesPerSecond), "host_link.bandwidth")
	}
	if d.PeerLink.BytesPerSecond > 0 {
		add("peer link (per direction)", d.PeerLink.Type+", "+units.FormatBandwidth(d.PeerLink.BytesPerSecond), "peer_link.bandwidth")
	}
	if d.PeerLink.LatencySeconds > 0 {
		add("peer link latency", units.FormatDuration(d.PeerLink.LatencySeconds), "peer_link.latency")
	}
	if d.TDPWatts > 0 {
		add("TDP", strconv.FormatFloat(d.TDPWatts, 'f', -1, 64)+" W", "tdp")
	}
	for _, k := range d.PeakKeys() {
		p := d.Dense[k]
		v := devices.FormatPeak(k, p.PerSecond)
		if p.PerSMPerClock > 0 {
			v += " = " + strconv.FormatFloat(p.PerSMPerClock, 'f', -1, 64) + "/clk/SM at " + p.Clock + " clock"
		}
		add(k+" (dense)", v, "dense."+k)
	}
	for _, k := range d.PeakKeys() {
		if p, ok := d.Sparse[k]; ok {
			add(k+" (2:4 sparse)", devices.FormatPeak(k, p.PerSecond), "sparse."+k)
		}
	}
	for _, dt := range []devices.DType{devices.BF16, devices.FP16} {
		if r, err := d.Ridge(dt, devices.Tensor); err == nil {
			t.Rows = append(t.Rows, []string{"ridge, " + string(dt) + " tensor / DRAM", strconv.FormatFloat(r, 'f', 1, 64) + " FLOP/B", "derived"})
			break
		}
	}
	if m := d.Measured; m != nil {
		addRate := func(name string, v float64, field string) {
			if v > 0 {
				add("measured "+name, units.FormatBandwidth(v), "measured."+field)
			}
		}
		addRate("DRAM read", m.DRAMRead, "dram_read")
		addRate("DRAM write", m.DRAMWrite, "dram_write")
		addRate("DRAM copy", m.DRAMCopy, "dram_copy")
		addRate("L2", m.L2, "l2")
		addRate("shared memory", m.Smem, "smem")
		for _, k := range peakOrder(m.Peaks) {
			add("measured "+k, devices.FormatPeak(k, m.Peaks[k]), "measured.peaks."+k)
		}
		addRate("all-reduce bus bandwidth", m.AllReduceBusBandwidth, "allreduce_bus_bandwidth")
		if m.AllReduceLatency > 0 {
			add("measured all-reduce latency", units.FormatDuration(m.AllReduceLatency), "measured.allreduce_latency")
		}
		if m.LaunchOverhead > 0 {
			add("measured launch overhead", units.FormatDuration(m.LaunchOverhead), "measured.launch_overhead")
		}
		for _, k := range sortedKeys(m.LatencyCycles) {
			add("measured "+k+" latency", strconv.FormatFloat(m.LatencyCycles[k], 'f', -1, 64)+" cycles", "measured.latency_cycles."+k)
		}
		src.key("measured " + m.When + ": " + m.How)
	}
	t.Notes = []string{"Peaks: x/clk/SM is operations per clock per SM; rates are decimal (1 TFLOP/s = 1e12). Links: one direction."}
	return []Table{t, src.table()}
}

// peakOrder lists the keys of m in the catalog's peak order.
func peakOrder(m map[string]float64) []string {
	var d devices.Device
	d.Dense = map[string]devices.Peak{}
	for k := range m {
		d.Dense[k] = devices.Peak{}
	}
	return d.PeakKeys()
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ArchLimits lists the occupancy limits of a compute capability, then their
// sources.
func ArchLimits(a devices.Arch) []Table {
	t := Table{Title: "Occupancy limits, compute capability " + a.CC.String() + " (" + a.Family + "; " + a.Parts + ")", Header: []string{"Limit", "Value"}}
	add := func(k string, v int) { t.Rows = append(t.Rows, []string{k, strconv.Itoa(v)}) }
	add("warps per SM", a.MaxWarpsPerSM)
	add("threads per SM", a.MaxThreadsPerSM)
	add("blocks per SM", a.MaxBlocksPerSM)
	add("threads per block", a.MaxThreadsPerBlock)
	add("registers per SM", a.RegsPerSM)
	add("registers per block", a.RegsPerBlock)
	add("registers per thread", a.MaxRegsPerThread)
	add("register allocation unit (per warp)", a.RegAllocUnit)
	add("warp allocation granularity", a.WarpAllocGranularity)
	t.Rows = append(t.Rows,
		[]string{"shared memory per SM", units.FormatSize(int64(a.SmemPerSM))},
		[]string{"shared memory per block (opt-in)", units.FormatSize(int64(a.SmemPerBlockOptin))},
		[]string{"shared memory per block (default)", units.FormatSize(int64(a.SmemPerBlock))},
		[]string{"shared memory reserved per block", units.FormatSize(int64(a.SmemReservedPerBlock))},
		[]string{"shared memory allocation unit", units.FormatSize(int64(a.SmemAllocUnit))},
		[]string{"carveouts (KiB)", joinInts(a.CarveoutsKiB)})
	add("barriers per SM", a.BarriersPerSM)
	if a.MaxClusterSize > 0 {
		add("cluster size (portable)", a.MaxClusterSize)
		add("cluster size (non-portable opt-in)", a.MaxClusterSizeNonPortable)
	}
	var src sourceList
	for _, s := range a.Sources {
		src.key(s)
	}
	t.Notes = []string{"Sizes are binary (1 KiB = 1024 bytes), as CUDA reports them."}
	return []Table{t, src.table()}
}

// ArchList lists the occupancy limits of every compute capability, one row
// each, then their sources; ArchLimits has the rest (allocation units,
// carveouts, clusters).
func ArchList(archs []devices.Arch) []Table {
	t := Table{Header: []string{"CC", "Family", "Parts", "Warps/SM", "Threads/SM", "Blocks/SM", "Regs/SM", "Regs/block",
		"Smem/SM", "Smem/block opt-in", "Reserved/block", "Barriers/SM", "Source"}}
	var src sourceList
	for _, a := range archs {
		var keys []string
		for _, s := range a.Sources {
			keys = append(keys, src.key(s))
		}
		t.Rows = append(t.Rows, []string{a.CC.String(), a.Family, a.Parts, strconv.Itoa(a.MaxWarpsPerSM), strconv.Itoa(a.MaxThreadsPerSM),
			strconv.Itoa(a.MaxBlocksPerSM), strconv.Itoa(a.RegsPerSM), strconv.Itoa(a.RegsPerBlock),
			units.FormatSize(int64(a.SmemPerSM)), units.FormatSize(int64(a.SmemPerBlockOptin)), units.FormatSize(int64(a.SmemReservedPerBlock)),
			strconv.Itoa(a.BarriersPerSM), strings.Join(keys, "")})
	}
	t.Notes = []string{"Sizes are binary (1 KiB = 1024 bytes), as CUDA reports them. 'gpucalc devices archs CC' shows one in full."}
	return []Table{t, src.table()}
}

func joinInts(v []int) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(x)
	}
	return s
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

// DeviceView is 'gpucalc devices show NAME': the device and the occupancy
// limits of its compute capability.
type DeviceView struct {
	devices.Device
	Limits *ArchView `json:"limits,omitempty"`
}

// ArchView is the occupancy limits of a compute capability ('gpucalc
// devices archs'), with the carveouts in bytes.
type ArchView struct {
	devices.Arch
	Carveouts []int `json:"carveouts_bytes"`
}

// NewArchView converts the carveouts to bytes.
func NewArchView(a devices.Arch) ArchView {
	v := ArchView{Arch: a, Carveouts: make([]int, len(a.CarveoutsKiB))}
	for i, c := range a.CarveoutsKiB {
		v.Carveouts[i] = c << 10
	}
	return v
}
