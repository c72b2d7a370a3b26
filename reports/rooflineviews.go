package reports

import (
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// NewRooflineView prices the workload with the model; origin says where
// the device came from when it was not named.
func NewRooflineView(m *roofline.Model, origin string, w ops.Workload) (RooflineView, error) {
	pts, err := m.AnalyzeWorkload(w)
	if err != nil {
		return RooflineView{}, err
	}
	v := RooflineView{Device: m.Device().Name, Origin: origin, Efficiency: m.Efficiency(), Notes: m.Notes, Points: pts}
	if len(w.Entries) > 1 {
		s := roofline.Summarize(pts)
		v.Summary = &s
	}
	return v, nil
}

// RooflineModelNotes states the figures behind a device's expected times;
// verbose adds the model's notes on where each figure comes from.
func RooflineModelNotes(m *roofline.Model, verbose bool) []string {
	e := m.Efficiency()
	basis := "datasheet figures"
	if m.Device().Measured != nil {
		basis = "measured ceilings"
	}
	notes := []string{
		"Lower bound: datasheet peaks. Expected: " + basis + ", cold L2, " + units.FormatDuration(m.FixedCost()) + " fixed cost per op, " +
			e.Family + " GEMM efficiency, DRAM stream " + units.FormatBandwidth(m.Stream()) + ".",
		"FMA = 2 FLOPs, transcendentals apart ('gpucalc roofline --help'); -v for sources.",
	}
	if verbose {
		notes = append(notes, m.Notes...)
	}
	return notes
}

// RooflineTables renders the views of one workload as 'gpucalc roofline'
// prints them: a comparison when there are several devices, then each
// device's ops (with notes[i] under views[i]) and totals.
func RooflineTables(workload string, views []RooflineView, notes [][]string) []Table {
	var tables []Table
	if len(views) > 1 {
		var devs []string
		var pts [][]roofline.Point
		for _, v := range views {
			devs, pts = append(devs, v.Device), append(pts, v.Points)
		}
		tables = append(tables, RooflineCompare(devs, pts))
	}
	for i, v := range views {
		title := "Roofline on " + v.Device
		if v.Origin != "" {
			title += " (" + v.Origin + ")"
		}
		if workload != "ops" {
			title += ": " + workload
		}
		tables = append(tables, RooflinePoints(title, v.Points, notes[i]))
		if v.Summary != nil {
			tables = append(tables, RooflineSummary("Totals on "+v.Device, *v.Summary, v.Points))
		}
	}
	return tables
}

// RooflineViewsChart is the chart of 'gpucalc roofline --plot': the views'
// ops on their devices (devs[i] is views[i]'s device).
func RooflineViewsChart(workload string, devs []devices.Device, views []RooflineView) chart.Roofline {
	var pts [][]roofline.Point
	var names []string
	for _, v := range views {
		pts, names = append(pts, v.Points), append(names, v.Device)
	}
	t := "Roofline: " + strings.Join(names, " vs ")
	if workload != "ops" {
		t += "\n" + workload
	}
	return RooflineChartOf(t, devs, pts)
}
