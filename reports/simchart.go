package reports

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SimulationChart draws a sweep's achieved throughput against its bound
// over warps per SM into file, whose extension (png, svg, pdf) sets the
// format. It plots GFLOP/s when the sweep does FLOPs, else GB/s.
func SimulationChart(file string, s Simulation) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reports: drawing %s: %v", file, r)
		}
	}()
	switch strings.ToLower(filepath.Ext(file)) {
	case ".png", ".svg", ".pdf":
	default:
		return fmt.Errorf("plot file %q: expected a .png, .svg or .pdf name", file)
	}
	flops := false
	for _, p := range s.Points {
		flops = flops || p.AchievedGFLOPs > 0
	}
	achieved, bound := make(plotter.XYs, len(s.Points)), make(plotter.XYs, len(s.Points))
	for i, p := range s.Points {
		achieved[i].X, bound[i].X = float64(p.Warps), float64(p.Warps)
		if flops {
			achieved[i].Y, bound[i].Y = p.AchievedGFLOPs, p.BoundGFLOPs
		} else {
			achieved[i].Y, bound[i].Y = p.AchievedGBps, p.BoundGBps
		}
	}
	p := plot.New()
	p.Title.Text = s.Title
	p.X.Label.Text = "resident warps per SM"
	p.Y.Label.Text = "GB/s"
	if flops {
		p.Y.Label.Text = "GFLOP/s"
	}
	top := 0.0
	for i := range bound {
		top = max(top, bound[i].Y, achieved[i].Y)
	}
	p.X.Min, p.Y.Min, p.Y.Max = 0, 0, 1.1*top
	p.Y.Tick.Marker = wholeTicks{}
	p.Add(plotter.NewGrid())
	bl, err := plotter.NewLine(bound)
	if err != nil {
		return err
	}
	bl.Color, bl.Width, bl.Dashes = color.RGBA{R: 200, A: 255}, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
	al, ap, err := plotter.NewLinePoints(achieved)
	if err != nil {
		return err
	}
	al.Color, al.Width = color.RGBA{B: 180, A: 255}, vg.Points(2)
	ap.Color, ap.Shape = al.Color, draw.CircleGlyph{}
	p.Add(bl, al, ap)
	p.Legend.Add("bound (roofline, Little's law)", bl)
	p.Legend.Add("simulated", al, ap)
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(10)
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, file); err != nil {
		return fmt.Errorf("plot file %q: %w", file, err)
	}
	return nil
}

// wholeTicks labels gonum's default ticks as whole numbers.
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', 0, 64)
		}
	}
	return ts
}
