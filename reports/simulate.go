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
