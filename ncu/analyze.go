package ncu

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
)

// Analysis is one measured kernel set against a device's ceilings.
type Analysis struct {
	Kernel
	// FLOPs is the work of every precision together.
	FLOPs float64 `json:"total_flops"`
	// Compute has one entry per precision in Kernel.Work, same order.
	Compute []Rate `json:"compute"`
	// Memory has one entry per level in Kernel.Traffic, same order.
	Memory []LevelRate `json:"memory"`
	// Bound is the ceiling the kernel comes closest to ("bf16_tensor",
	// "dram"), with Share its fraction reached; empty when the device has
	// none of the kernel's ceilings.
	Bound      string  `json:"bound"`
	BoundShare float64 `json:"bound_share"`
	// Occupancy is gpucalc's theoretical occupancy.
	Occupancy Occupancy `json:"occupancy"`
}

// Rate is the achieved rate of one precision.
type Rate struct {
	Work
	// PerSecond is FLOPs over the kernel's duration.
	PerSecond float64 `json:"flops_per_second"`
	// Peak is the device's dense peak for the precision (0: not in the
	// catalog) and Share PerSecond/Peak.
	Peak  float64 `json:"peak_flops_per_second,omitempty"`
	Share float64 `json:"share_of_peak,omitempty"`
}

// LevelRate is the traffic of one memory level.
type LevelRate struct {
	Traffic
	PerSecond float64 `json:"bytes_per_second"`
	// Intensity is the kernel's FLOPs per byte at this level (0 when no
	// bytes moved).
	Intensity float64 `json:"flops_per_byte"`
	// Ceiling is the device's bandwidth for the level (0: not in the
	// catalog) and Share PerSecond/Ceiling.
	Ceiling float64 `json:"ceiling_bytes_per_second,omitempty"`
	Share   float64 `json:"share_of_ceiling,omitempty"`
}

// Occupancy is gpucalc's theoretical occupancy of a launch, in percent of
// the SM's warp slots, to set beside Nsight Compute's (Kernel.Occupancy).
type Occupancy struct {
	// Theoretical is what gpucalc computes from the launch statistics
	// (occupancy.Calculate with the registers, block size, static and
	// dynamic shared memory, barriers and the carveout the driver chose),
	// with the resident blocks per SM and the limits that bind. Error says
	// why it could not be computed; the rest is then zero.
	Theoretical float64           `json:"theoretical_pct"`
	BlocksPerSM int               `json:"blocks_per_sm"`
	Limiters    occupancy.Limiter `json:"limiters"`
	// By holds the blocks each limit allows on its own, indexed like
	// occupancy.Limiters (occupancy.Unlimited where it does not bind).
	By    occupancy.PerLimit `json:"blocks_by_limit"`
	Error string             `json:"error,omitempty"`
	// Match says whether Theoretical equals Nsight Compute's
	// (Kernel.Occupancy.Theoretical) to the two decimals ncu prints; false
	// when either is missing.
	Match bool `json:"match"`
}

// Analyze sets a kernel against the ceilings of device d and computes its
// theoretical occupancy on the compute capability it ran on.
func Analyze(k Kernel, d devices.Device) Analysis {
	a := Analysis{Kernel: k, Occupancy: theoretical(k, d)}
	rates(&a, newCeilings(d), &buffers{})
	return a
}

// ceilings are a device's dense peaks by precision, each looked up once,
// and its bandwidths.
type ceilings struct {
	d     devices.Device
	peaks map[peakKey]peakOf
	dram  float64
	l2    float64
}

type peakKey struct {
	dt devices.DType
	p  devices.Path
}

// peakOf is a precision's dense peak (0: the device has none) and its key.
type peakOf struct {
	perSecond float64
	key       string
}

func newCeilings(d devices.Device) *ceilings {
	return &ceilings{d: d, peaks: map[peakKey]peakOf{}, dram: ceiling(d, DRAM), l2: ceiling(d, L2)}
}

// peak is the device's dense peak for w's precision.
func (c *ceilings) peak(w Work) peakOf {
	k := peakKey{w.DType, w.Path}
	p, ok := c.peaks[k]
	if !ok {
		p.perSecond, _ = c.d.Peak(w.DType, w.Path)
		p.key = w.Key()
		c.peaks[k] = p
	}
	return p
}

func (c *ceilings) level(l Level) float64 {
	switch l {
	case DRAM:
		return c.dram
	case L2:
		return c.l2
	}
	return 0
}

// rates sets a's kernel (a.Kernel) against the ceilings c: its FLOPs,
// rates and shares, the bound and the implausible rates. Compute and
// Memory are made in b's arrays where b reuses them.
func rates(a *Analysis, c *ceilings, b *buffers) {
	k := &a.Kernel
	a.FLOPs, a.Bound, a.BoundShare = 0, "", 0
	a.Compute, a.Memory = nil, nil
	if b.reuse {
		a.Compute, a.Memory = b.compute[:0], b.memory[:0]
	}
	a.Implausible = slices.Clip(a.Implausible) // appends below must not share the Kernel's array
	for _, w := range k.Work {
		a.FLOPs += w.FLOPs
	}
	consider := func(name string, share float64) {
		if share > a.BoundShare {
			a.Bound, a.BoundShare = name, share
		}
	}
	for _, w := range k.Work {
		r := Rate{Work: w, PerSecond: perSecond(w.FLOPs, k.Duration)}
		if p := c.peak(w); p.perSecond > 0 {
			r.Peak, r.Share = p.perSecond, r.PerSecond/p.perSecond
			consider(p.key, r.Share)
		}
		a.Compute = append(a.Compute, r)
	}
	for _, t := range k.Traffic {
		l := LevelRate{Traffic: t, PerSecond: perSecond(t.Bytes, k.Duration)}
		if t.Bytes > 0 {
			l.Intensity = a.FLOPs / t.Bytes
		}
		if ce := c.level(t.Level); ce > 0 {
			l.Ceiling, l.Share = ce, l.PerSecond/ce
			consider(string(t.Level), l.Share)
		}
		a.Memory = append(a.Memory, l)
	}
	for _, r := range a.Compute {
		if r.Share > maxShare {
			a.Implausible = append(a.Implausible, fmt.Sprintf("%s at %.3g times the device's peak", r.Key(), r.Share))
		}
	}
	for _, l := range a.Memory {
		if l.Share > maxShare {
			a.Implausible = append(a.Implausible, fmt.Sprintf("%s at %.3g times the device's bandwidth", l.Level, l.Share))
		}
	}
	if b.reuse {
		b.compute, b.memory = a.Compute, a.Memory
	}
	if len(a.Compute) == 0 {
		a.Compute = nil
	}
	if len(a.Memory) == 0 {
		a.Memory = nil
	}
}

// maxShare is the share of a ceiling past which a rate is implausible: a
// kernel reaches at most about its dense peak or bandwidth; far above,
// the export was edited, or is of another GPU than the device.
const maxShare = 1.5

// theoretical computes the launch's occupancy as the CUDA runtime does.
func theoretical(k Kernel, d devices.Device) Occupancy {
	var o Occupancy
	if k.Launch == nil || k.Block.Size() == 0 {
		o.Error = "the export lacks the launch statistics (registers, shared memory, block size): profile with --section LaunchStats (or --set full)"
		return o
	}
	arch, err := archOf(k, d)
	if err != nil {
		o.Error = err.Error()
		return o
	}
	l := occupancy.Launch{Threads: k.Block.Size(), DynamicSmem: k.Launch.DynamicSmem}
	if k.Launch.SmemConfig > 0 {
		l.Carveout = occupancy.CarveoutBytes(k.Launch.SmemConfig)
	}
	r := occupancy.Calculate(arch, occupancy.Kernel{
		Regs:       k.Launch.RegistersPerThread,
		StaticSmem: k.Launch.StaticSmem,
		Barriers:   k.Launch.Barriers,
	}, l)
	switch {
	case r.Err != nil:
		o.Error = r.Err.Error()
		return o
	case r.Reason != nil:
		o.Error = r.Reason.Error()
	}
	o.Theoretical = 100 * r.Occupancy()
	o.BlocksPerSM, o.Limiters = r.Blocks, r.Limiters
	for i, l := range occupancy.Limiters {
		o.By[i] = r.By(l)
	}
	o.Match = k.Occupancy.Theoretical != nil && math.Abs(o.Theoretical-*k.Occupancy.Theoretical) < 0.005
	return o
}

// archOf is the compute capability the kernel ran on (the export's), else
// the device's.
func archOf(k Kernel, d devices.Device) (devices.Arch, error) {
	if k.CC != (devices.CC{}) {
		return devices.ArchFor(k.CC)
	}
	return d.Limits()
}

func perSecond(n, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return n / seconds
}

// ceiling is the device's bandwidth at a level; the catalog has none for L1.
func ceiling(d devices.Device, l Level) float64 {
	switch l {
	case DRAM:
		return d.Bandwidth(devices.DRAM)
	case L2:
		return d.Bandwidth(devices.L2)
	}
	return 0
}

// DeviceNames lists the distinct device names of the kernels, in order of
// first appearance.
func DeviceNames(ks []Kernel) []string {
	var out []string
	for _, k := range ks {
		if n := strings.TrimSpace(k.Device); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ExportDevice looks up in the catalog the one GPU the kernels were
// profiled on, for exports read without a device named by the user. Its
// errors say why; the caller says how to name a device.
func ExportDevice(c *devices.Catalog, ks []Kernel) (devices.Device, error) {
	return exportDevice(c, DeviceNames(ks))
}

func exportDevice(c *devices.Catalog, names []string) (devices.Device, error) {
	if len(names) != 1 {
		return devices.Device{}, fmt.Errorf("the export spans several GPUs (%s)", strings.Join(names, ", "))
	}
	if names[0] == "" {
		return devices.Device{}, fmt.Errorf("the export has no device name (device__attribute_display_name)")
	}
	d, err := c.Lookup(names[0])
	if err != nil {
		return devices.Device{}, fmt.Errorf("the export's device: %w", err)
	}
	return d, nil
}
