package reports

import (
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// NewRooflineViews are the views of a workload priced on several devices
// (roofline.Compare); origins[i] says where ps[i]'s device came from when
// it was not named. A workload of several ops gets its totals.
func NewRooflineViews(ps []roofline.Priced, origins []string) []RooflineView {
	views := make([]RooflineView, len(ps))
	for i, p := range ps {
		v := RooflineView{Device: p.Model.Device().Name, Origin: origins[i], Points: p.Points, totals: p.Summary}
		switch {
		case p.Unsupported != nil:
			v.NotAvailable, v.Error = p.Unsupported.Reason(), p.Err.Error()
		default:
			v.Efficiency, v.Notes = p.Model.Efficiency(), p.Model.Notes
			if len(p.Points) > 1 {
				s := p.Summary
				v.Summary = &s
			}
		}
		views[i] = v
	}
	return views
}

// answered are the views with points: the devices that can run the
// workload, and theirs (devs[i] is views[i]'s device).
func answered(devs []devices.Device, views []RooflineView) ([]devices.Device, []RooflineView) {
	var ds []devices.Device
	var vs []RooflineView
	for i, v := range views {
		if v.NotAvailable == "" {
			ds, vs = append(ds, devs[i]), append(vs, v)
		}
	}
	return ds, vs
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
		var devs, na []string
		var pts [][]roofline.Point
		for _, v := range views {
			devs, pts, na = append(devs, v.Device), append(pts, v.Points), append(na, v.NotAvailable)
		}
		t := RooflineCompare(devs, pts, na)
		for _, v := range views {
			if v.Error != "" {
				t.Notes = append(t.Notes, v.Error+".")
			}
		}
		tables = append(tables, t)
	}
	for i, v := range views {
		if v.NotAvailable != "" {
			continue
		}
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
	devs, views = answered(devs, views)
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
