// Package review runs the design-review checks of a workload on a device:
// what dominates its time, what is wasteful, and what is wrong in its
// assumptions, each finding with a severity, the numbers behind it and the
// fix.
//
// Times come from the roofline model (roofline.Model): the lower bound from
// datasheet peaks and the expected time of a library kernel. A finding's
// Saves is the expected time its fix would save per run of the workload; it
// orders findings of one severity. Everything is pure and deterministic.
package review

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// Severity says how much a finding matters.
type Severity string

// Severities, most severe first.
const (
	// Error: the workload cannot run as described, or a number it relies
	// on is wrong.
	Error Severity = "error"
	// Warning: the fix saves at least Material of the expected time, or a
	// kernel misses its hardware's limits.
	Warning Severity = "warning"
	// Info: worth knowing, small in time.
	Info Severity = "info"
)

func (s Severity) rank() int { return slices.Index([]Severity{Error, Warning, Info}, s) }

// Thresholds of the checks.
const (
	// Material is the share of the workload's expected time above which a
	// fix's saving makes its finding a warning rather than information.
	Material = 0.01
	// LowUtilization is the fraction of the compute peak below which an op
	// counts as running far from peak.
	LowUtilization = 0.10
	// WaveIdle is the share of a GEMM's tile slots left idle (partial
	// tiles, last wave) from which quantization is reported.
	WaveIdle = 0.10
)

// Finding is one result of a check.
type Finding struct {
	Severity Severity `json:"severity"`
	// Check names the check: fusion, gemm_alignment, wave_quantization,
	// launch_overhead, low_utilization, memory_capacity, host_transfer,
	// device_peaks, occupancy, spills, low_occupancy, coalescing,
	// bank_conflicts.
	Check string `json:"check"`
	// Op is the op the finding is about; empty for the whole workload or
	// the device.
	Op string `json:"op,omitempty"`
	// Message states the finding with the numbers behind it.
	Message string `json:"message"`
	Fix     string `json:"fix"`
	// Saves is the expected time the fix saves per run, seconds (0 when
	// the finding is not about time).
	Saves float64 `json:"saves_seconds,omitempty"`
	// Numbers are the figures behind the message, in SI units (seconds,
	// bytes, bytes per second, FLOP/s) or plain ratios, by snake_case name.
	Numbers map[string]float64 `json:"numbers"`
}

// Op is one op of the workload on the device.
type Op struct {
	Name  string `json:"name"`
	Spec  string `json:"op"`
	Count int    `json:"count"`
	// Point is the op's place on the roofline (one run of it).
	Point roofline.Point `json:"roofline"`
	// Expected and LowerBound are for all Count runs, seconds. Expected
	// includes KernelPenalty.
	Expected   float64 `json:"expected_seconds"`
	LowerBound float64 `json:"lower_bound_seconds"`
	// KernelPenalty is the time the workload's own kernel for the op takes
	// over a library kernel's (too few bytes in flight, uncoalesced
	// access), for all runs, seconds; 0 without a kernel.
	KernelPenalty float64 `json:"kernel_penalty_seconds,omitempty"`
	// Share is the op's share of the workload's expected time.
	Share float64 `json:"share"`
	// PeakFraction is the share of the compute ceiling the op reaches in
	// its expected time; BandwidthFraction the share of DRAM bandwidth.
	PeakFraction      float64 `json:"peak_fraction"`
	BandwidthFraction float64 `json:"bandwidth_fraction"`
}

// Report is the review of one workload on one device.
type Report struct {
	Workload    string `json:"workload"`
	Description string `json:"description,omitempty"`
	Device      string `json:"device"`
	Ops         []Op   `json:"ops"`
	// Expected and LowerBound are the workload's totals, seconds; FLOPs
	// and Bytes its totals (counts included).
	Expected   float64 `json:"expected_seconds"`
	LowerBound float64 `json:"lower_bound_seconds"`
	FLOPs      float64 `json:"flops"`
	Bytes      float64 `json:"bytes"`
	// Transfer is the host-link time of the workload's transfers, seconds,
	// not included in Expected.
	Transfer float64   `json:"transfer_seconds,omitempty"`
	Findings []Finding `json:"findings"`
	// Notes are the model's assumptions on this device.
	Notes []string `json:"notes,omitempty"`
	// NoTime says why the workload has no time (a training step that does
	// not fit): Expected and LowerBound are then no figures, and JSON
	// writes them as null.
	NoTime string `json:"no_time,omitempty"`
}

// MarshalJSON writes the report, its times null when it has none.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	if r.NoTime == "" {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		Expected   *float64 `json:"expected_seconds"`
		LowerBound *float64 `json:"lower_bound_seconds"`
	}{plain: plain(r)})
}

// Count returns the number of findings of severity s.
func (r Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Check reviews workload w on device d. reference is the catalog the device
// check compares per-SM rates with (the built-in catalog); it may be nil.
func Check(w ops.Workload, d devices.Device, reference []devices.Device) (Report, error) {
	m, err := roofline.New(d)
	if err != nil {
		return Report{}, fmt.Errorf("device %q: %w", d.Name, err)
	}
	// Findings empty, not nil: JSON writes [] for a workload without any.
	r := Report{Workload: w.Name, Description: w.Description, Device: d.Name, Notes: m.Notes, Findings: []Finding{}}
	for _, e := range w.Entries {
		p, err := m.Analyze(e.Op)
		if err != nil {
			return Report{}, fmt.Errorf("op %s: %w", e.Name, err)
		}
		p.Name, p.Count = e.Name, e.Count
		n := float64(e.Count)
		o := Op{Name: e.Name, Spec: e.Op.String(), Count: e.Count, Point: p, Expected: n * p.Expected, LowerBound: n * p.LowerBound}
		if p.Expected > 0 && p.ComputeCeiling > 0 { // an all-reduce has no compute ceiling
			o.PeakFraction = p.FLOPs / p.Expected / p.ComputeCeiling
			o.BandwidthFraction = p.Bytes / p.Expected / d.Memory.BytesPerSecond
		}
		r.Ops = append(r.Ops, o)
		r.Expected += o.Expected
		r.LowerBound += o.LowerBound
		r.FLOPs += n * p.FLOPs
		r.Bytes += n * p.Bytes
	}
	c := &checker{w: w, d: d, m: m, r: &r}
	models, err := c.kernelModels()
	if err != nil {
		return Report{}, err
	}
	for i, km := range models {
		if km != nil && km.penalty > 0 {
			o := &r.Ops[i]
			o.KernelPenalty = float64(o.Count) * km.penalty
			o.Expected += o.KernelPenalty
			r.Expected += o.KernelPenalty
			if o.Point.ComputeCeiling > 0 {
				o.PeakFraction = o.Point.FLOPs * float64(o.Count) / o.Expected / o.Point.ComputeCeiling
			}
			o.BandwidthFraction = o.Point.Bytes * float64(o.Count) / o.Expected / d.Memory.BytesPerSecond
		}
	}
	for i := range r.Ops {
		r.Ops[i].Share = r.Ops[i].Expected / r.Expected
	}
	c.fusion()
	for i := range w.Entries {
		c.gemm(i)
	}
	c.launch()
	c.utilization()
	c.capacity()
	c.transfers()
	c.peaks(reference)
	if err := c.kernels(models); err != nil {
		return Report{}, err
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Severity.rank(), b.Severity.rank()), cmp.Compare(b.Saves, a.Saves))
	})
	return r, nil
}

// checker holds what the checks share.
type checker struct {
	w ops.Workload
	d devices.Device
	m *roofline.Model
	r *Report
}

// add records a finding; severity by saving is Warning when the saving is
// material, Info otherwise.
func (c *checker) add(f Finding) {
	if f.Severity == "" {
		f.Severity = Info
		if f.Saves >= Material*c.r.Expected {
			f.Severity = Warning
		}
	}
	c.r.Findings = append(c.r.Findings, f)
}

// share formats a time as a share of the workload's expected time.
func (c *checker) share(t float64) string { return pct(t / c.r.Expected) }

func pct(x float64) string {
	switch {
	case x >= 0.1:
		return fmt.Sprintf("%.0f%%", 100*x)
	case x >= 0.001:
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return fmt.Sprintf("%.2g%%", 100*x)
}

// plural writes "1 wave", "2 waves".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Units: sizes of memory (capacity, shared memory, bytes in flight) are
// binary, as CUDA reports them; traffic (bytes an op or a copy moves) is
// decimal, as the rates it is divided by are (100.7 MB / 3.35 TB/s), and as
// roofline prints it.
func dur(s float64) string     { return units.FormatDuration(s) }
func size(b float64) string    { return units.FormatSize(int64(b)) }
func traffic(b float64) string { return units.FormatDecimal(b, "B") }
func bw(v float64) string      { return units.FormatBandwidth(v) }
