package reports

import (
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

// chartLabel is a short label for an op: its name, else kind, shape and
// the variant ("attention 8x16x4096x128 causal").
func chartLabel(p roofline.Point) string {
	if p.Name != "" {
		return p.Name
	}
	shape := p.Op.Shape()
	if p.Op.Elems > 0 {
		shape = siCount(float64(p.Op.Elems))
		shape = strings.ReplaceAll(strings.TrimSpace(shape), " ", "")
	}
	s := string(p.Op.Kind) + " " + shape + " " + string(p.Op.DType)
	if p.Op.Causal {
		s += " causal"
	}
	if p.Op.Kind == ops.GELU && p.Op.Tanh {
		s += " tanh"
	}
	return s
}

// RooflineChartOf draws analysed ops: one device per slice of points
// (pts[d][i] is op i on device d), the compute ceilings the ops use, the
// memory slopes the model uses (DRAM, and L2 where the catalog has it,
// measured or datasheet), and each op at its expected rate, or at its
// measured rate where it has one, with the roof at its intensity.
func RooflineChartOf(title string, devs []devices.Device, pts [][]roofline.Point) chart.Roofline {
	c := chart.Roofline{Title: title}
	for d, dev := range devs {
		// The L2 slope only where an op runs from L2.
		cd := chart.Device{Name: dev.Name, DRAM: dev.Memory.BytesPerSecond}
		seen := map[string]bool{}
		for _, p := range pts[d] {
			if p.MemoryLevel == roofline.Link {
				continue // a GPU-to-GPU transfer is not on the chip's roofline
			}
			if !seen[p.PeakKey] {
				seen[p.PeakKey] = true
				cd.Ceilings = append(cd.Ceilings, chart.Ceiling{Name: ceilingName(p.PeakKey), FLOPS: p.ComputeCeiling})
			}
			// The slopes are the model's (measured where it has them), so
			// each roof mark lies on its line.
			switch p.MemoryLevel {
			case devices.DRAM:
				cd.DRAM = p.MemoryCeiling
			case devices.L2:
				cd.L2 = p.MemoryCeiling
				_, cd.L2Measured = l2Ceiling(dev)
			}
			c.Points = append(c.Points, opChartPoint(chartLabel(p), d, p))
		}
		c.Devices = append(c.Devices, cd)
	}
	return c
}

// opChartPoint places a roofline point at its measured rate where it has
// one, else at its expected rate, with the roof (its attainable rate).
func opChartPoint(label string, dev int, p roofline.Point) chart.Point {
	cp := chart.Point{Label: label, Group: opGroup(p.Op.Kind), Device: dev, FLOPs: p.FLOPs, Bytes: p.Bytes, Roof: p.Attainable}
	switch {
	case p.Measured > 0:
		cp.Rate, cp.Measured = p.FLOPs/p.Measured, true
	case p.Expected > 0:
		cp.Rate = p.FLOPs / p.Expected
	}
	return cp
}

// opGroup is an op's family on a chart, one colour each.
func opGroup(k ops.Kind) string {
	switch k {
	case ops.Matmul, ops.Linear, ops.Conv2D:
		return chart.GroupMatmul
	case ops.Attention:
		return chart.GroupAttention
	case ops.LayerNorm, ops.RMSNorm, ops.Softmax, ops.BatchNorm, ops.Reduce:
		return chart.GroupNorm
	case "":
		return ""
	}
	return chart.GroupElementwise
}

// l2Ceiling is the L2 bandwidth a chart draws: the measured figure where
// the catalog has one (the achievable rate, so no L2 point lies above it),
// else the datasheet's, else zero.
func l2Ceiling(d devices.Device) (bw float64, measured bool) {
	if d.Measured != nil && d.Measured.L2 > 0 {
		return d.Measured.L2, true
	}
	return d.L2.BytesPerSecond, false
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
