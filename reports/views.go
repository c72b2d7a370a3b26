package reports

import (
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// RooflineView is one device's answer of `gpucalc roofline`, as its JSON
// output prints it.
type RooflineView struct {
	Device     string             `json:"device"`
	Origin     string             `json:"device_origin,omitempty"`
	Efficiency devices.Efficiency `json:"efficiency"`
	Notes      []string           `json:"notes,omitempty"`
	Points     []roofline.Point   `json:"points"`
	// Summary is set for workloads of more than one op.
	Summary *roofline.Summary `json:"summary,omitempty"`

	workload   string
	modelNotes []string
}

// RooflineViews is the JSON answer for several devices (--devices).
type RooflineViews struct {
	Devices []RooflineView `json:"devices"`
}

// NewRooflineView prices the workload with the model; origin says where
// the device came from when it was not named.
func NewRooflineView(m *roofline.Model, origin string, w ops.Workload) (RooflineView, error) {
	pts, err := m.AnalyzeWorkload(w)
	if err != nil {
		return RooflineView{}, err
	}
	v := RooflineView{Device: m.Device().Name, Origin: origin, Efficiency: m.Efficiency(), Notes: m.Notes, Points: pts,
		workload: w.Name, modelNotes: append(RooflineModelNotes(m), m.Notes...)}
	if len(w.Entries) > 1 {
		s := roofline.Summarize(pts)
		v.Summary = &s
	}
	return v, nil
}

// RooflineTables renders the views of one workload as `gpucalc roofline`
// prints them: a comparison when there are several devices, then each
// device's ops and totals. CSV (plain) takes one table: the comparison, or
// the first device's ops.
func RooflineTables(views []RooflineView, plain bool) []Table {
	var tables []Table
	if len(views) > 1 {
		var devs []string
		var pts [][]roofline.Point
		for _, v := range views {
			devs, pts = append(devs, v.Device), append(pts, v.Points)
		}
		tables = append(tables, RooflineCompare(devs, pts, plain))
		if plain {
			return tables
		}
	}
	for _, v := range views {
		title := "Roofline on " + v.Device
		if v.Origin != "" {
			title += " (" + v.Origin + ")"
		}
		if v.workload != "ops" {
			title += ": " + v.workload
		}
		tables = append(tables, RooflinePoints(title, v.Points, v.modelNotes, plain))
		if plain {
			break
		}
		if v.Summary != nil {
			tables = append(tables, RooflineSummary("Totals on "+v.Device, *v.Summary, v.Points))
		}
	}
	return tables
}

// RooflineModelNotes states the figures behind a device's expected times.
func RooflineModelNotes(m *roofline.Model) []string {
	e := m.Efficiency()
	return []string{
		"Lower bound: datasheet dense peak and bandwidth. Expected: cold L2, fixed cost " + units.FormatDuration(m.FixedCost()) +
			" per op (launch + ramp), " + e.Family + " GEMM efficiency, streaming DRAM " + units.FormatBandwidth(m.Stream()) + " (devices/data/arch/efficiency.yaml).",
		"FLOPs count FMA as 2; transcendentals apart; see 'gpucalc roofline --help' for the per-op conventions.",
	}
}

// NCUView is the answer of `gpucalc ncu`, as its JSON output prints it.
type NCUView struct {
	Device       string         `json:"device"`
	DeviceOrigin string         `json:"device_origin"`
	Kernels      []ncu.Analysis `json:"kernels"`
}

// RooflineViewsChart is the roofline chart of `gpucalc roofline --plot`:
// the views' ops on their devices (devs[i] is views[i]'s device).
func RooflineViewsChart(devs []devices.Device, views []RooflineView) RooflineChart {
	var pts [][]roofline.Point
	var names []string
	for _, v := range views {
		pts, names = append(pts, v.Points), append(names, v.Device)
	}
	t := "Roofline: " + strings.Join(names, " vs ")
	if len(views) > 0 && views[0].workload != "ops" {
		t += "\n" + views[0].workload
	}
	return RooflineChartOf(t, devs, pts)
}
