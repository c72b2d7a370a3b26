package devices

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpucalc/gpucalc/units"
	"go.yaml.in/yaml/v3"
)

// The checks that make an entry whole and consistent, once a device file
// has been applied to it: a contradiction in a user file is an error, never
// a wrong answer.

// invalid is a validation failure; fields name what it concerns, so that
// the error can point at the line of a file that gave one of them.
type invalid struct {
	fields []string
	msg    string
}

func (e *invalid) Error() string { return e.msg }

func invalidf(fields []string, format string, args ...any) error {
	return &invalid{fields, fmt.Sprintf(format, args...)}
}

// validate checks that an entry is complete and consistent: the checks that
// make a contradiction in a user file an error rather than a wrong answer.
func (d *Device) validate() error {
	var missing []string
	need := func(ok bool, field string) {
		if !ok {
			missing = append(missing, field)
		}
	}
	need(d.Vendor != "", "vendor")
	need(d.Architecture != "", "architecture")
	need(d.SMs > 0, "sms")
	need(d.BoostClockHz > 0, "boost_clock")
	need(d.Memory.BytesPerSecond > 0, "memory.bandwidth")
	need(d.Memory.Bytes > 0, "memory.size")
	need(len(d.Dense) > 0, "dense")
	if d.Vendor == "NVIDIA" {
		need(d.CC != (CC{}), "compute_capability")
	}
	if len(missing) > 0 {
		return invalidf(nil, "missing %s", strings.Join(missing, ", "))
	}
	if d.TensorClockHz == 0 {
		d.TensorClockHz = d.BoostClockHz
	}
	if len(d.ClusterGPCs) > 0 {
		n := 0
		for _, g := range d.ClusterGPCs {
			n += g
		}
		if n != d.SMs {
			return invalidf([]string{"cluster_gpcs", "sms"}, "cluster_gpcs add up to %d SMs, but sms is %d", n, d.SMs)
		}
	}
	if d.TensorClockHz > d.BoostClockHz*1.0001 {
		return invalidf([]string{"tensor_clock", "boost_clock"}, "tensor_clock %s is above boost_clock %s", units.FormatFrequency(d.TensorClockHz), units.FormatFrequency(d.BoostClockHz))
	}
	if d.L2.BytesPerSecond > 0 && d.L2.BytesPerSecond < d.Memory.BytesPerSecond {
		return invalidf([]string{"l2.bandwidth", "memory.bandwidth"}, "l2.bandwidth %s is below memory.bandwidth %s; L2 is faster than DRAM on every GPU", units.FormatBandwidth(d.L2.BytesPerSecond), units.FormatBandwidth(d.Memory.BytesPerSecond))
	}
	if d.Vendor == "NVIDIA" {
		a, err := ArchFor(d.CC)
		if err != nil {
			return invalidf([]string{"compute_capability"}, "%v", err)
		}
		if a.Family != d.Architecture {
			return invalidf([]string{"architecture", "compute_capability"}, "architecture %q contradicts compute capability %s, which is %s", d.Architecture, d.CC, a.Family)
		}
	}
	for _, k := range peakOrder {
		sp, ok := d.Sparse[k]
		if !ok {
			continue
		}
		dn, ok := d.Dense[k]
		if !ok {
			return invalidf([]string{"sparse." + k}, "sparse.%s has no dense counterpart; give the dense rate too", k)
		}
		// 3%: datasheets round (L40S prints 362.05 dense, 733 sparse).
		if r := sp.PerSecond / dn.PerSecond; math.Abs(r/2-1) > 0.03 {
			return invalidf([]string{"sparse." + k, "dense." + k}, "sparse.%s is %.2f× dense.%s; 2:4 sparsity doubles the dense rate, so one of them is wrong (datasheets often print sparse rates as if dense)", k, r, k)
		}
	}
	return d.validateMeasured()
}

// validateMeasured refuses a measured figure above the ceiling it was
// measured against: a measurement cannot beat the hardware, so one that does
// counted work that never happened, or the ceiling is wrong. Either way the
// model would expect an op to run faster than its lower bound. (If the part
// really is faster, at a higher clock say, give the ceiling too.)
func (d *Device) validateMeasured() error {
	m := d.Measured
	if m == nil {
		return nil
	}
	type ceiling struct {
		measured, field string
		v               float64
		limit           string
		ceiling         float64
		format          func(float64) string
	}
	checks := []ceiling{
		{"measured.dram_read", "memory.bandwidth", m.DRAMRead, "memory.bandwidth", d.Memory.BytesPerSecond, units.FormatBandwidth},
		{"measured.dram_write", "memory.bandwidth", m.DRAMWrite, "memory.bandwidth", d.Memory.BytesPerSecond, units.FormatBandwidth},
		{"measured.dram_copy", "memory.bandwidth", m.DRAMCopy, "memory.bandwidth", d.Memory.BytesPerSecond, units.FormatBandwidth},
		{"measured.l2", "l2.bandwidth", m.L2, "l2.bandwidth", d.L2.BytesPerSecond, units.FormatBandwidth},
		{"measured.allreduce_bus_bandwidth", "peer_link.bandwidth", m.AllReduceBusBandwidth, "the peer link's bandwidth", d.Peer().BytesPerSecond, units.FormatBandwidth},
	}
	if d.Vendor == "NVIDIA" {
		// 32 banks of 4 bytes per clock per SM (CUDA Programming Guide,
		// shared memory), at the boost clock.
		checks = append(checks, ceiling{"measured.smem", "sms", m.Smem, "sms × 128 B × boost_clock", float64(d.SMs) * 128 * d.BoostClockHz, units.FormatBandwidth})
	}
	for _, k := range peakOrder {
		if v, ok := m.Peaks[k]; ok {
			checks = append(checks, ceiling{"measured.peaks." + k, "dense." + k, v, "dense." + k, d.Dense[k].PerSecond, units.FormatFLOPS})
		}
	}
	for _, c := range checks {
		if c.v > 0 && c.ceiling > 0 && c.v > c.ceiling {
			return invalidf([]string{c.measured, c.field}, "%s %s is above %s %s; a measured ceiling cannot beat the hardware's: check what the measurement counted or, if the part really runs faster (at a higher clock, say), raise %s in the same file", c.measured, c.format(c.v), c.limit, c.format(c.ceiling), c.field)
		}
	}
	return nil
}

// dropStale removes measured figures that a datasheet figure of this file
// makes stale: a file that changes a ceiling (memory.bandwidth, a dense
// peak, l2.bandwidth, peer_link.bandwidth) without restating the figures
// measured against it drops them, so that the model falls back to the
// new ceiling and its achievable fraction rather than mixing a measurement
// of one part with the ceiling of another (expected faster than the bound).
func dropStale(d *Device, f *deviceFile) {
	m := d.Measured
	if m == nil {
		return
	}
	mf := f.Measured
	if mf == nil {
		mf = &measuredFile{}
	}
	drop := func(field string, v *float64) {
		*v = 0
		delete(d.Sources, field)
	}
	for _, s := range []struct {
		ceiling  quantity
		measured map[string]quantity
		dst      map[string]*float64
	}{
		{f.Memory.Bandwidth, map[string]quantity{"dram_read": mf.DRAMRead, "dram_write": mf.DRAMWrite, "dram_copy": mf.DRAMCopy},
			map[string]*float64{"dram_read": &m.DRAMRead, "dram_write": &m.DRAMWrite, "dram_copy": &m.DRAMCopy}},
		{f.L2.Bandwidth, map[string]quantity{"l2": mf.L2}, map[string]*float64{"l2": &m.L2}},
		{f.PeerLink.Bandwidth, map[string]quantity{"allreduce_bus_bandwidth": mf.AllReduceBusBandwidth, "allreduce_latency": mf.AllReduceLatency},
			map[string]*float64{"allreduce_bus_bandwidth": &m.AllReduceBusBandwidth, "allreduce_latency": &m.AllReduceLatency}},
	} {
		if !s.ceiling.given() {
			continue
		}
		for k, q := range s.measured {
			if !q.given() {
				drop("measured."+k, s.dst[k])
			}
		}
	}
	if f.Dense.given() && f.Dense.n.Kind == yaml.MappingNode {
		restated := map[string]bool{}
		if mf.Peaks.given() && mf.Peaks.n.Kind == yaml.MappingNode {
			for i := 0; i < len(mf.Peaks.n.Content); i += 2 {
				restated[mf.Peaks.n.Content[i].Value] = true
			}
		}
		for i := 0; i < len(f.Dense.n.Content); i += 2 {
			if k := f.Dense.n.Content[i].Value; !restated[k] && m.Peaks != nil {
				delete(m.Peaks, k)
				delete(d.Sources, "measured.peaks."+k)
			}
		}
	}
}
