package reports

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/project"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/sim"
	"github.com/gpucalc/gpucalc/trace"
)

// The JSON views: what each command's --format json writes, one named type
// per command, so the keys are stable and documented in one place. Keys are
// snake_case; numbers are plain, in base units named in the key.

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

// RooflineView is one device's result of 'gpucalc roofline'.
type RooflineView struct {
	Device     string             `json:"device"`
	Origin     string             `json:"device_origin,omitempty"`
	Efficiency devices.Efficiency `json:"efficiency"`
	Notes      []string           `json:"notes,omitempty"`
	Points     []roofline.Point   `json:"points"`
	Summary    *roofline.Summary  `json:"summary,omitempty"`
	// NotAvailable is why the device cannot run the workload ("no fp8
	// tensor cores"), in a side-by-side answer whose other devices can;
	// Error the whole message. Such a view has no points.
	NotAvailable string `json:"not_available,omitempty"`
	Error        string `json:"error,omitempty"`
	// totals are the points' totals, which JSON shows (as Summary) only
	// for a workload of several ops and CSV always.
	totals roofline.Summary
}

// RooflineComparison is 'gpucalc roofline --devices': one view per device.
type RooflineComparison struct {
	Devices []RooflineView `json:"devices"`
}

// NCUView is 'gpucalc ncu': the device measured against and every kernel.
type NCUView struct {
	Device       string         `json:"device"`
	DeviceOrigin string         `json:"device_origin"`
	Kernels      []ncu.Analysis `json:"kernels"`
}

// TraceView is 'gpucalc trace': the device and the trace's analysis, and
// with --on its projection to other devices.
type TraceView struct {
	DeviceOrigin string `json:"device_origin"`
	trace.Analysis
	Projection *project.Result `json:"projection,omitempty"`
}

// SuggestView is 'gpucalc occupancy suggest'.
type SuggestView struct {
	Target     occupancy.Target     `json:"target"`
	Kernel     occupancy.Kernel     `json:"kernel"`
	Options    SuggestOptionsView   `json:"options"`
	Suggestion occupancy.Suggestion `json:"suggestion"`
}

// SuggestOptionsView is the search a suggestion answers.
type SuggestOptionsView struct {
	DynamicSmem    int                `json:"dynamic_smem_bytes"`
	SmemPerThread  int                `json:"smem_per_thread_bytes"`
	BlockSizeLimit int                `json:"block_size_limit"`
	Carveout       occupancy.Carveout `json:"carveout"`
}

// AvailSmemView is 'gpucalc occupancy avail-smem'.
type AvailSmemView struct {
	Target  occupancy.Target `json:"target"`
	Kernel  occupancy.Kernel `json:"kernel"`
	Blocks  int              `json:"blocks"`
	Threads int              `json:"threads"`
	occupancy.AvailSmem
}

// SweepView is 'gpucalc occupancy sweep'.
type SweepView struct {
	Target  occupancy.Target   `json:"target"`
	Kernel  occupancy.Kernel   `json:"kernel"`
	Launch  occupancy.Launch   `json:"launch"`
	Vary    occupancy.Quantity `json:"vary"`
	Current int                `json:"current"`
	Points  []occupancy.Point  `json:"points"`
}

// SimulationView is 'gpucalc simulate'.
type SimulationView struct {
	Device  string         `json:"device"`
	Origin  string         `json:"device_origin,omitempty"`
	Kernel  string         `json:"kernel"`
	Desc    string         `json:"description"`
	Threads int            `json:"threads_per_block"`
	Model   sim.Kernel     `json:"model_kernel"`
	Setup   sim.Setup      `json:"setup"`
	Points  []SimPointView `json:"points"`
}

// SimPointView is one simulated point in base units: bytes and FLOPs per
// second for the whole GPU.
type SimPointView struct {
	Warps           int     `json:"warps_per_sm"`
	AchievedBytes   float64 `json:"achieved_bytes_per_second"`
	AchievedFLOPs   float64 `json:"achieved_flops_per_second"`
	BoundBytes      float64 `json:"bound_bytes_per_second"`
	BoundFLOPs      float64 `json:"bound_flops_per_second"`
	IPC             float64 `json:"ipc"`
	MeanLoadLatency float64 `json:"mean_load_latency_cycles"`
	Cycles          int64   `json:"cycles"`
	Instructions    int64   `json:"warp_instructions"`
}

// SimPoints converts the simulator's points (GB/s, GFLOP/s) to base units.
func SimPoints(pts []sim.Point) []SimPointView {
	out := make([]SimPointView, len(pts))
	for i, p := range pts {
		out[i] = SimPointView{Warps: p.Warps, AchievedBytes: p.AchievedGBps * 1e9, AchievedFLOPs: p.AchievedGFLOPs * 1e9,
			BoundBytes: p.BoundGBps * 1e9, BoundFLOPs: p.BoundGFLOPs * 1e9, IPC: p.IPC, MeanLoadLatency: p.MeanLoadLatency,
			Cycles: p.Cycles, Instructions: p.Instructions}
	}
	return out
}
