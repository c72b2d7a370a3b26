package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// OpTimes is the review page's bar chart: each op's expected time and
// lower bound, in seconds, drawn in microseconds with the first op at the
// top.
type OpTimes struct {
	Title                string
	Names                []string
	Expected, LowerBound []float64
}

// Colours of the bars.
var (
	colorExpected = color.RGBA{R: 0x2f, G: 0x6f, B: 0xbf, A: 0xff}
	colorLower    = color.RGBA{R: 0xa9, G: 0xc4, B: 0xe8, A: 0xff}
)

// SVG draws the chart as an SVG document 7.5 inches wide and as tall as
// its rows need, turning gonum/plot's panics into errors.
func (c OpTimes) SVG() (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing chart %q: %v", c.Title, r)
		}
	}()
	p, err := c.plot()
	if err != nil {
		return "", err
	}
	cv := xmlText{vgsvg.New(7.5*vg.Inch, vg.Length(1.2+0.28*float64(len(c.Names)))*vg.Inch)}
	p.Draw(draw.New(cv))
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// plot builds the horizontal bars, two per op.
func (c OpTimes) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title
	n := len(c.Names)
	exp, low := make(plotter.Values, n), make(plotter.Values, n)
	names := make([]string, n)
	for i, name := range c.Names {
		j := n - 1 - i
		exp[j], low[j], names[j] = c.Expected[i]*1e6, c.LowerBound[i]*1e6, name
	}
	const bar = 7
	be, err := plotter.NewBarChart(exp, vg.Points(bar))
	if err != nil {
		return nil, err
	}
	bl, err := plotter.NewBarChart(low, vg.Points(bar))
	if err != nil {
		return nil, err
	}
	for _, b := range []*plotter.BarChart{be, bl} {
		b.Horizontal = true
		b.LineStyle.Width = 0
	}
	be.Color, bl.Color = colorExpected, colorLower
	be.Offset, bl.Offset = vg.Points(bar/2), -vg.Points(bar/2)
	p.Add(be, bl)
	p.Legend.Add("expected", be)
	p.Legend.Add("lower bound", bl)
	p.Legend.Top = true
	p.NominalY(names...)
	p.X.Label.Text = "µs"
	p.X.Min = 0
	// Room on the right for the legend.
	p.X.Max = 1.3 * max(slices.Max(exp), slices.Max(low))
	return p, nil
}
