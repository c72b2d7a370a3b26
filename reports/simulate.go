package reports

import (
	"strconv"

	"github.com/gpucalc/gpucalc/sim"
)

// Simulation is a simulated occupancy sweep to render.
type Simulation struct {
	Title  string
	Points []sim.Point
	Notes  []string
}

// SimulationTable has one row per point: warps per SM, then the achieved
// and bound GB/s and GFLOP/s.
func SimulationTable(s Simulation) Table {
	t := Table{Title: s.Title, Header: []string{"warps_per_sm", "achieved_gbps", "achieved_gflops", "bound_gbps", "bound_gflops"}, Notes: s.Notes}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }
	for _, p := range s.Points {
		t.Rows = append(t.Rows, []string{strconv.Itoa(p.Warps), f(p.AchievedGBps), f(p.AchievedGFLOPs), f(p.BoundGBps), f(p.BoundGFLOPs)})
	}
	return t
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
