package reports

import (
	"strconv"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/units"
)

// DeviceList is the catalog overview: one row per device.
func DeviceList(list []devices.Device) Table {
	t := Table{Header: []string{"Device", "Arch", "CC", "SMs", "Memory", "Bandwidth", "BF16 tensor", "FP32", "Ridge (FLOP/B)"}}
	for _, d := range list {
		bf16, fp32, ridge := "-", "-", "-"
		if p, err := d.Peak(devices.BF16, devices.Tensor); err == nil {
			bf16 = units.FormatFLOPS(p)
			if r, err := d.Ridge(devices.BF16, devices.Tensor); err == nil {
				ridge = strconv.FormatFloat(r, 'f', 0, 64)
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
			d.Memory.Type + " " + units.FormatSize(d.Memory.Bytes), units.FormatBandwidth(d.Memory.BytesPerSecond), bf16, fp32, ridge})
	}
	t.Notes = []string{"Peaks are dense (no 2:4 sparsity). Rates are decimal (1 TB/s = 1e12 B/s); memory sizes binary (GiB)."}
	return t
}

// DeviceDetail lists every figure of one device with its source.
func DeviceDetail(d devices.Device) Table {
	t := Table{Title: d.Vendor + " " + d.Name, Header: []string{"Field", "Value", "Source"}}
	add := func(field, value, src string) {
		t.Rows = append(t.Rows, []string{field, value, d.Source(src)})
	}
	add("architecture", d.Architecture, "")
	if d.CC != (devices.CC{}) {
		add("compute capability", d.CC.String()+" ("+d.CC.SM()+")", "")
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
		add("L2 bandwidth", units.FormatBandwidth(d.L2.BytesPerSecond), "l2.bandwidth")
	}
	if d.HostLink.BytesPerSecond > 0 {
		add("host link", d.HostLink.Type+", "+units.FormatBandwidth(d.HostLink.BytesPerSecond), "host_link.bandwidth")
	}
	if d.TDPWatts > 0 {
		add("TDP", strconv.FormatFloat(d.TDPWatts, 'f', -1, 64)+" W", "tdp")
	}
	for _, k := range d.PeakKeys() {
		p := d.Dense[k]
		add(k+" (dense)", units.FormatFLOPS(p.PerSecond), "dense."+k)
	}
	for _, k := range d.PeakKeys() {
		if p, ok := d.Sparse[k]; ok {
			add(k+" (2:4 sparse)", units.FormatFLOPS(p.PerSecond), "sparse."+k)
		}
	}
	if r, err := d.Ridge(devices.BF16, devices.Tensor); err == nil {
		t.Rows = append(t.Rows, []string{"ridge, bf16 tensor / DRAM", strconv.FormatFloat(r, 'f', 1, 64) + " FLOP/B", "derived"})
	}
	t.Notes = append(t.Notes, "Integer rates are operations per second (OP/s), shown in the FLOP/s column's units.")
	return t
}

// ArchLimits lists the occupancy limits of a compute capability.
func ArchLimits(a devices.Arch) Table {
	t := Table{Title: "Occupancy limits, compute capability " + a.CC.String() + " (" + a.Family + ")", Header: []string{"Limit", "Value"}}
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
	t.Notes = a.Sources
	return t
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
