package project

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// Ceilings are the rates a projection scales by on one device: what a
// kernel reaches there, not the datasheet's peaks.
type Ceilings struct {
	Device string `json:"device"`
	// Measured is set when the device's DRAM, L2 and launch figures were
	// measured on a real part (tools/measure); otherwise they are datasheet
	// figures with the catalog's achievable fractions.
	Measured bool `json:"measured"`
	// DRAM is the streaming (copy) bandwidth, DRAMRead the read bandwidth
	// (the copy's where not measured), L2 the L2 read bandwidth (0:
	// unknown), in bytes per second; L2Bytes the L2's size.
	DRAM     float64 `json:"dram_bytes_per_second"`
	DRAMRead float64 `json:"dram_read_bytes_per_second"`
	L2       float64 `json:"l2_bytes_per_second"`
	L2Bytes  int64   `json:"l2_bytes"`
	SMs      int     `json:"sms"`
	// Clock is the maximum SM clock, Hz.
	Clock float64 `json:"clock_hz"`
	// Launch is the time of one kernel launch (back-to-back empty kernels),
	// seconds: what a kernel at the launch floor scales by.
	Launch float64 `json:"launch_overhead_seconds"`
	// Link is the GPU-to-GPU link (NVLink, else PCIe), LinkLatency and
	// LinkBus its NCCL collective curve (roofline's Collectives): what an
	// NCCL kernel scales by.
	Link        string  `json:"link"`
	LinkLatency float64 `json:"link_latency_seconds"`
	LinkBus     float64 `json:"link_bus_bytes_per_second"`
	// Sources say where each figure comes from.
	Sources []string `json:"sources"`

	dev  devices.Device
	eff  devices.Efficiency
	arch devices.Arch
	// hasArch is false for parts outside NVIDIA's occupancy rules: their
	// kernels are scaled without wave quantization.
	hasArch bool
	model   *roofline.Model
}

// CeilingsOf returns device d's ceilings; arch is the occupancy limits its
// kernels run under (ok false where none apply).
func CeilingsOf(d devices.Device, arch devices.Arch, ok bool) (Ceilings, error) {
	m, err := roofline.New(d)
	if err != nil {
		return Ceilings{}, err
	}
	e := m.Efficiency()
	link := m.Collectives()
	c := Ceilings{Device: d.Name, DRAM: m.Stream(), L2: d.L2.BytesPerSecond, L2Bytes: d.L2.Bytes, SMs: d.SMs, Clock: d.BoostClockHz,
		Launch: e.LaunchOverhead, Link: link.Link.Type, LinkLatency: link.Latency, LinkBus: link.BusBandwidth,
		dev: d, eff: e, arch: arch, hasArch: ok, model: m}
	if c.SMs <= 0 || c.Clock <= 0 {
		return Ceilings{}, fmt.Errorf("device %q has no SM count or clock in the catalog: its kernels cannot be scaled", d.Name)
	}
	me := d.Measured
	measured := 0
	c.DRAMRead = c.DRAM
	if me != nil && me.DRAMCopy > 0 {
		measured++
		c.Sources = append(c.Sources, fmt.Sprintf("DRAM %s: measured copy (%s)", units.FormatBandwidth(c.DRAM), me.When))
		if me.DRAMRead > 0 {
			c.DRAMRead = me.DRAMRead
			c.Sources = append(c.Sources, fmt.Sprintf("DRAM reads %s: measured (%s)", units.FormatBandwidth(c.DRAMRead), me.When))
		}
	} else {
		c.Sources = append(c.Sources, fmt.Sprintf("DRAM %s: datasheet %s × %.3g (%s streaming fraction)", units.FormatBandwidth(c.DRAM),
			units.FormatBandwidth(d.Memory.BytesPerSecond), e.Stream, d.Memory.Type))
	}
	switch {
	case me != nil && me.L2 > 0:
		measured++
		c.L2 = me.L2
		c.Sources = append(c.Sources, fmt.Sprintf("L2 %s: measured read rate (%s)", units.FormatBandwidth(c.L2), me.When))
	case c.L2 > 0:
		c.Sources = append(c.Sources, fmt.Sprintf("L2 %s: %s", units.FormatBandwidth(c.L2), d.Source("l2.bandwidth")))
	default:
		c.Sources = append(c.Sources, "L2 bandwidth unknown: kernels whose data fit in L2 scale by DRAM")
	}
	if me != nil && me.LaunchOverhead > 0 {
		measured++
		c.Launch = me.LaunchOverhead
		c.Sources = append(c.Sources, fmt.Sprintf("launch %s: measured back-to-back empty kernels (%s)", units.FormatDuration(c.Launch), me.When))
	} else {
		c.Sources = append(c.Sources, fmt.Sprintf("launch %s: the catalog's default (measured on an H100 SXM)", units.FormatDuration(c.Launch)))
	}
	how := "measured all-reduce"
	if !link.Measured {
		how = link.Note
	}
	c.Sources = append(c.Sources, fmt.Sprintf("link %s: NCCL bus %s after %s (%s)", link.Link.Type, units.FormatBandwidth(c.LinkBus), units.FormatDuration(c.LinkLatency), how))
	c.Measured = measured == 3
	compute := fmt.Sprintf("datasheet peaks × the %s family's achievable GEMM fractions", e.Family)
	if me != nil && len(me.Peaks) > 0 {
		compute = fmt.Sprintf("measured GEMM rates (%s), else datasheet peaks × the %s family's GEMM fractions", me.When, e.Family)
	}
	c.Sources = append(c.Sources, fmt.Sprintf("compute: %s; %d SMs at %s", compute, d.SMs, units.FormatFrequency(d.BoostClockHz)))
	return c, nil
}

// Spec is the catalog entry the ceilings are of.
func (c Ceilings) Spec() devices.Device { return c.dev }

// checked reports whether the device has measured ceilings and they are
// the catalog's own (no device file changed it): the figures the tests
// check projections against.
func (c Ceilings) checked() bool {
	if !c.Measured {
		return false
	}
	for _, o := range c.dev.Origin {
		if !strings.HasPrefix(o, "builtin:") {
			return false
		}
	}
	return true
}

// Compute is the achievable rate of the peak key (bf16_tensor, fp32) on
// the device, as the roofline uses it: the measured GEMM rate where the
// device has one, else the datasheet's dense peak times its family's GEMM
// fraction. ok is false when the device lacks the peak.
func (c Ceilings) Compute(key string) (float64, bool) { return c.model.Rate(key) }
