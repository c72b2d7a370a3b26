package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Pareto draws deployments' throughput per GPU against each user's token
// rate, one series per device: every deployment tried as a hollow point,
// the Pareto front (none better on both) as a line through filled points.
type Pareto struct {
	Title  string
	Series []ParetoSeries
}

// ParetoSeries is one device's deployments.
type ParetoSeries struct {
	Name string
	// All are every deployment tried; Front the ones on the front, by
	// tokens/s per user.
	All, Front []ParetoPoint
}

// ParetoPoint is a deployment: tokens/s per user (x) and per GPU (y).
type ParetoPoint struct {
	PerUser, PerGPU float64
}

// defaultSize implements Chart.
func (c Pareto) defaultSize() Size { return DefaultSize }

// draw implements Chart.
func (c Pareto) draw(dc draw.Canvas) error {
	p, _, err := c.plot()
	if err != nil {
		return err
	}
	drawTitled(dc, p)
	return nil
}

func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

func (c Pareto) plot() (*plot.Plot, *legend, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = "tokens/s per user"
	p.Y.Label.Text = "tokens/s per GPU"
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(10), vg.Points(10)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(9), vg.Points(9)
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 0xe4}, color.Gray{Y: 0xe4}
	p.Add(grid)
	leg := &legend{Legend: p.Legend}
	var topX, topY float64
	n := 0
	for i, s := range c.Series {
		xy := func(pts []ParetoPoint) plotter.XYs {
			var out plotter.XYs
			for _, q := range pts {
				if finitePositive(q.PerUser) && finitePositive(q.PerGPU) {
					out = append(out, plotter.XY{X: q.PerUser, Y: q.PerGPU})
					topX, topY = max(topX, q.PerUser), max(topY, q.PerGPU)
				}
			}
			return out
		}
		all, front := xy(s.All), xy(s.Front)
		if len(front) == 0 {
			continue
		}
		n++
		col := groupColor(i)
		if len(all) > 0 {
			sc, err := plotter.NewScatter(all)
			if err != nil {
				return nil, nil, err
			}
			sc.GlyphStyle = pointGlyph(col, i, true)
			sc.GlyphStyle.Radius = vg.Points(2)
			p.Add(sc)
		}
		l, pts, err := plotter.NewLinePoints(front)
		if err != nil {
			return nil, nil, err
		}
		l.Color, l.Width = col, vg.Points(1.4)
		pts.GlyphStyle = pointGlyph(col, i, false)
		p.Add(l, pts)
		leg.add(s.Name, l, pts)
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("pareto chart: no deployment with a positive throughput")
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1.05*topX, 0, 1.1*topY
	p.Y.Tick.Marker = wholeTicks{}
	leg.Top, leg.Left = true, false
	leg.TextStyle.Font.Size = vg.Points(chartFont + 1)
	leg.XOffs, leg.YOffs = -vg.Points(8), -vg.Points(4)
	p.Legend = leg.Legend
	return p, leg, nil
}
