package chart

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/occupancy"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sweep is one occupancy sweep: warps per SM against the varied
// quantity, the regions shaded by what limits them and the current
// configuration marked.
type Sweep struct {
	Target   occupancy.Target
	Quantity occupancy.Quantity
	Points   []occupancy.Point
	// Current is the current value of the varied quantity.
	Current int
	// Name names the quantity ("Registers per thread"), on the axis and
	// in the title; CurrentLabel is the current value as the legend
	// shows it ("64", "48 KiB"). The caller words them as its tables do.
	Name, CurrentLabel string
}

// Occupancy is the three graphs of NVIDIA's occupancy calculator side
// by side: warps per SM against block size, registers per thread and
// shared memory per block, each with the current configuration marked and
// each limit's region shaded.
type Occupancy struct {
	Title  string
	Panels [3]Sweep
}

// OccupancySize and SweepSize are the charts' default sizes.
var (
	OccupancySize = Size{27, 9}
	SweepSize     = Size{16, 9}
)

// defaultSize implements Chart.
func (c Occupancy) defaultSize() Size { return OccupancySize }

// defaultSize implements Chart.
func (c Sweep) defaultSize() Size { return SweepSize }

// draw implements Chart: a title, the three panels, one legend of limits.
func (c Occupancy) draw(dc draw.Canvas) error {
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 10), Handler: plot.New().TextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	title := wrap(c.Title, sty, dc.Max.X-dc.Min.X-vg.Points(4))
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(2)}, title)
	dc.Max.Y -= sty.Height(title) + vg.Points(6)
	used := occupancy.Limiter(0)
	for _, p := range c.Panels {
		for _, pt := range p.Points {
			used |= primaryLimit(pt.Limiters)
		}
	}
	// The limits' shades in one row under the panels.
	sty.Font.Size, sty.XAlign, sty.YAlign = vg.Points(8), draw.XLeft, draw.YCenter
	x, y := dc.Min.X+vg.Points(40), dc.Min.Y+vg.Points(6)
	for _, o := range limitOrder {
		if used&o == 0 {
			continue
		}
		dc.SetColor(faint(limitColors[o], 0x50))
		dc.Fill(vg.Rectangle{Min: vg.Point{X: x, Y: y - vg.Points(4)}, Max: vg.Point{X: x + vg.Points(12), Y: y + vg.Points(4)}}.Path())
		t := "limited by " + limitName(o)
		dc.FillText(sty, vg.Point{X: x + vg.Points(15), Y: y}, t)
		x += vg.Points(15) + sty.Width(t) + vg.Points(14)
	}
	sty.Color = color.Gray{Y: 0x50}
	dc.FillText(sty, vg.Point{X: x, Y: y}, "(where limits tie, the first listed)")
	dc.Min.Y += vg.Points(14)
	w := (dc.Max.X - dc.Min.X) / 3
	for i, p := range c.Panels {
		pl, _, err := p.plot(true)
		if err != nil {
			return err
		}
		pl.Title.Text = wrap(pl.Title.Text, pl.Title.TextStyle, w-vg.Points(8))
		x0 := dc.Min.X + vg.Length(i)*w
		pl.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: dc.Min.Y}, Max: vg.Point{X: x0 + w - vg.Points(4), Y: dc.Max.Y}}})
	}
	return nil
}

// draw implements Chart.
func (c Sweep) draw(dc draw.Canvas) error {
	p, _, err := c.plot(false)
	if err != nil {
		return err
	}
	drawTitled(dc, p)
	return nil
}

// limitOrder is the order in which a point's limits pick its shade where
// several bind at once.
var limitOrder = []occupancy.Limiter{occupancy.LimitRegisters, occupancy.LimitSharedMemory, occupancy.LimitBlocks, occupancy.LimitWarps, occupancy.LimitBarriers}

var limitColors = map[occupancy.Limiter]color.RGBA{
	occupancy.LimitRegisters:    {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	occupancy.LimitSharedMemory: {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	occupancy.LimitBlocks:       {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	occupancy.LimitWarps:        {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	occupancy.LimitBarriers:     {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// limitName names one limit: shared_memory → "shared memory".
func limitName(l occupancy.Limiter) string { return strings.ReplaceAll(l.String(), "_", " ") }

// percent formats a fraction as a percentage with one decimal: 0.5 → "50.0%".
func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func primaryLimit(l occupancy.Limiter) occupancy.Limiter {
	for _, o := range limitOrder {
		if l&o != 0 {
			return o
		}
	}
	return 0
}

// addLimits adds a shaded swatch per limit in used.
func addLimits(leg *legend, used occupancy.Limiter) {
	for _, o := range limitOrder {
		if used&o != 0 {
			b, _ := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}})
			b.Color, b.LineStyle.Width = faint(limitColors[o], 0x50), 0
			leg.add("limited by "+limitName(o), b)
		}
	}
}

// plot builds the sweep's plot and its legend; compact leaves the legend of
// limits to the figure.
func (c Sweep) plot(compact bool) (*plot.Plot, *legend, error) {
	pts := c.Points
	if len(pts) == 0 {
		return nil, nil, fmt.Errorf("occupancy chart: the %s sweep is empty", c.Quantity)
	}
	name := c.Name
	scale := 1.0
	xname := name
	if c.Quantity == occupancy.VarySmem {
		scale, xname = 1.0/1024, name+" (KiB)"
	}
	p := plot.New()
	if compact {
		p.Title.Text = name
	} else {
		where := c.Target.Arch.CC.SM()
		if c.Target.Device != "" {
			where = c.Target.Device + " (" + where + ")"
		}
		p.Title.Text = "Warps per SM against " + strings.ToLower(name) + ", " + where
	}
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = xname
	p.Y.Label.Text = "Warps per SM"
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(9)
		ax.Tick.Label.Font.Size = vg.Points(8)
	}
	maxW := float64(c.Target.Arch.MaxWarpsPerSM)
	if maxW <= 0 {
		return nil, nil, fmt.Errorf("occupancy chart: the architecture has no warps per SM")
	}
	hi := float64(pts[len(pts)-1].X) * scale
	step := niceStep(hi)
	p.X.Min, p.X.Max = 0, math.Ceil(hi/step)*step
	p.Y.Min, p.Y.Max = 0, maxW*1.08
	p.X.Tick.Marker = plot.ConstantTicks(ticks(0, p.X.Max, step))
	var yt []plot.Tick
	for q := 0; q <= 4; q++ {
		v := maxW * float64(q) / 4
		yt = append(yt, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64) + " (" + strconv.Itoa(25*q) + "%)"})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(yt)

	xy := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xy[i] = plotter.XY{X: float64(pt.X) * scale, Y: float64(pt.Warps)}
	}
	for _, r := range limitRuns(c) {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: r.lo * scale, Y: 0}, {X: r.hi * scale, Y: 0}, {X: r.hi * scale, Y: maxW}, {X: r.lo * scale, Y: maxW}})
		if err != nil {
			return nil, nil, err
		}
		poly.Color, poly.LineStyle.Width = faint(limitColors[r.limit], 0x50), 0
		p.Add(poly)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 0xd8}, color.Gray{Y: 0xd8}
	p.Add(grid)
	line, err := plotter.NewLine(xy)
	if err != nil {
		return nil, nil, err
	}
	switch c.Quantity {
	case occupancy.VaryRegs:
		line.StepStyle = plotter.PostStep
	default:
		line.StepStyle = plotter.PreStep
	}
	line.Color, line.Width = roofColor, vg.Points(1.4)
	p.Add(line)

	leg := &legend{Legend: p.Legend}
	cur := indexX(pts, c.Current)
	if cur >= 0 {
		x, y := float64(c.Current)*scale, float64(pts[cur].Warps)
		vl, _ := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: maxW}})
		vl.Color, vl.Width, vl.Dashes = groupColor(1), vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(2)}
		s, _ := plotter.NewScatter(plotter.XYs{{X: x, Y: y}})
		s.GlyphStyle = draw.GlyphStyle{Color: groupColor(1), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(vl, s)
		leg.add(fmt.Sprintf("current: %s, %d warps (%s)", c.CurrentLabel, pts[cur].Warps, percent(pts[cur].Occupancy)), s)
	}
	leg.Top = true
	leg.TextStyle.Font.Size = vg.Points(7.5)
	leg.YOffs = vg.Points(2)
	if !compact {
		used := occupancy.Limiter(0)
		for _, pt := range pts {
			used |= primaryLimit(pt.Limiters)
		}
		addLimits(leg, used)
	}
	p.Legend = leg.Legend
	return p, leg, nil
}

// limitRun is a range of the varied quantity with one limit.
type limitRun struct {
	lo, hi float64
	limit  occupancy.Limiter
}

// limitRuns groups the sweep's points by their (first) limit. A register
// count holds up to the next; a shared-memory point is the largest size of
// its allocation and a block size the largest of its warp count, so each
// holds back to the previous point.
func limitRuns(c Sweep) []limitRun {
	pts := c.Points
	span := func(i int) (lo, hi float64) {
		if c.Quantity == occupancy.VaryRegs {
			return float64(pts[i].X), float64(pts[i].X + 1)
		}
		if i > 0 {
			lo = float64(pts[i-1].X)
		}
		return lo, float64(pts[i].X)
	}
	var runs []limitRun
	for i := 0; i < len(pts); {
		lim := primaryLimit(pts[i].Limiters)
		j := i
		for j+1 < len(pts) && primaryLimit(pts[j+1].Limiters) == lim {
			j++
		}
		lo, _ := span(i)
		_, hi := span(j)
		if lim != 0 {
			runs = append(runs, limitRun{lo, hi, lim})
		}
		i = j + 1
	}
	return runs
}

func indexX(pts []occupancy.Point, x int) int {
	for i, p := range pts {
		if p.X == x {
			return i
		}
	}
	return -1
}
