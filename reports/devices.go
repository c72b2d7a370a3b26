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
