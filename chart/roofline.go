package chart

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"github.com/gpucalc/gpucalc/units"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Roofline is a roofline chart: the roofs of one or more devices and
// ops placed against them, each at its expected rate (or achieved, where
// measured) with a faint mark on the roof at the same intensity, so the gap
// to the roof shows. Colour is the op's group, shape its device. Where
// labels cannot sit cleanly beside their points, the points are numbered
// and a key is printed under the chart.
type Roofline struct {
	Title   string
	Devices []Device
	Points  []Point
	// Filled names the filled points in the legend ("expected" when
	// empty): a projection's are projected.
	Filled string
}

// Device is one device's roofs.
type Device struct {
	Name     string
	Ceilings []Ceiling
	// DRAM and L2 are bandwidths in bytes per second; L2 is zero when
	// unknown (no slope drawn).
	DRAM, L2 float64
	// L2Measured says the L2 figure was measured, not from a datasheet;
	// the slope's label says so.
	L2Measured bool
}

// Ceiling is a compute ceiling: "BF16 tensor" at 989.4e12 FLOP/s.
type Ceiling struct {
	Name  string
	FLOPS float64
}

// Point is an op or kernel: its FLOPs and bytes give the arithmetic
// intensity, Rate (FLOP/s) its height.
type Point struct {
	// Label names the point beside it or in the key.
	Label string
	// Key is the point's number in the key ("6" for ncu launch 6); empty
	// numbers points by their labels' order.
	Key string
	// Group sets the colour (an op family, a memory level); Device indexes
	// Devices and sets the shape.
	Group              string
	Device             int
	FLOPs, Bytes, Rate float64
	// Roof is the roof's rate at the point's intensity; zero draws no roof
	// mark.
	Roof float64
	// Measured draws an achieved (hollow) rather than an expected (filled)
	// point.
	Measured bool
}

func (p Point) ai() float64 { return p.FLOPs / p.Bytes }

// Unplaced lists the points a log-log chart cannot show, each labelled one
// with the reason (no FLOPs: AI 0; no bytes: infinite AI; no rate; a value
// beyond what the axes span), and the unlabelled ones counted by reason.
func (c Roofline) Unplaced() []string {
	var out []string
	seen := map[string]bool{}
	unlabelled := map[string]int{}
	var reasons []string
	for _, p := range c.Points {
		r := unplaceable(p)
		switch {
		case r == "":
		case p.Label == "":
			if unlabelled[r] == 0 {
				reasons = append(reasons, r)
			}
			unlabelled[r]++
		case !seen[p.Label]:
			seen[p.Label] = true
			out = append(out, p.Label+": "+r)
		}
	}
	for _, r := range reasons {
		out = append(out, fmt.Sprintf("%d unlabelled points: %s", unlabelled[r], r))
	}
	return out
}

// The span a log axis shows: a figure beyond it (1e300 bytes, a rate of
// 1e-300) is no op gpucalc prices, and gonum/plot cannot scale it.
const minPlotted, maxPlotted = 1e-30, 1e30

func unplaceable(p Point) string {
	bad := func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }
	out := func(v float64) bool { return v < minPlotted || v > maxPlotted }
	switch {
	case bad(p.FLOPs):
		return "0 FLOPs, so arithmetic intensity 0, which a log axis cannot show"
	case bad(p.Bytes):
		return "0 bytes, so infinite arithmetic intensity"
	case bad(p.Rate):
		return "no FLOP rate"
	case out(p.ai()) || out(p.Rate) || p.Roof > 0 && out(p.Roof):
		return fmt.Sprintf("beyond the %g to %g a chart's axes span", minPlotted, maxPlotted)
	}
	return ""
}

// hidden is the chart's note of the points it leaves out, for its title:
// "2 ops not shown: 0 FLOPs" (the command lists them).
func (c Roofline) hidden() string {
	n := 0
	zero := true
	for _, p := range c.Points {
		if r := unplaceable(p); r != "" {
			n++
			zero = zero && !(p.FLOPs > 0)
		}
	}
	switch {
	case n == 0:
		return ""
	case zero:
		return fmt.Sprintf("(%d with 0 FLOPs not shown: no place on a log axis)", n)
	}
	return fmt.Sprintf("(%d not shown: 0 FLOPs, 0 bytes, no rate or off the axes)", n)
}

// The groups whose colour is fixed, the same in every chart: the op
// categories and the memory levels of measured kernels.
const (
	GroupMatmul      = "matmul, conv"
	GroupAttention   = "attention"
	GroupNorm        = "norm, softmax"
	GroupElementwise = "elementwise"
	GroupDRAM        = "DRAM bytes"
	GroupL2          = "L2 bytes"
	GroupL1          = "L1 bytes"
)

// groupColors are the groups' colours (Tableau 10, which stays apart for
// colour-blind readers): the fixed groups' first, in fixedGroups' order,
// then the rest in the order a chart meets them.
var groupColors = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, {R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, {R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
}

var fixedGroups = []string{GroupMatmul, GroupAttention, GroupNorm, GroupElementwise, GroupDRAM, GroupL2, GroupL1}

func groupColor(i int) color.RGBA { return groupColors[i%len(groupColors)] }

// groupPalette hands out the groups' colours: a fixed group always gets its
// own, another group the next colour no fixed group holds.
type groupPalette struct {
	other map[string]int
}

func (g *groupPalette) color(name string) color.RGBA {
	for i, f := range fixedGroups {
		if f == name {
			return groupColor(i)
		}
	}
	if g.other == nil {
		g.other = map[string]int{}
	}
	i, ok := g.other[name]
	if !ok {
		i = len(fixedGroups) + len(g.other)
		g.other[name] = i
	}
	return groupColor(i)
}

func faint(c color.RGBA, a uint8) color.NRGBA { return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a} }

// deviceShapes are the devices' point shapes, filled (expected) and hollow
// (achieved).
var deviceShapes = []struct{ filled, hollow draw.GlyphDrawer }{
	{draw.CircleGlyph{}, draw.RingGlyph{}},
	{draw.BoxGlyph{}, draw.SquareGlyph{}},
	{draw.PyramidGlyph{}, draw.TriangleGlyph{}},
}

// deviceDashes tell the devices' roofs apart.
var deviceDashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(2)}, {vg.Points(1.5), vg.Points(1.5)}}

func pointGlyph(col color.Color, dev int, hollow bool) draw.GlyphStyle {
	s := deviceShapes[dev%len(deviceShapes)]
	g := draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: s.filled}
	if hollow {
		g.Shape = s.hollow
	}
	return g
}

var roofColor = color.Gray{Y: 0x30}

// defaultSize implements Chart.
func (c Roofline) defaultSize() Size { return DefaultSize }

// draw implements Chart.
func (c Roofline) draw(dc draw.Canvas) error {
	_, err := c.render(dc)
	return err
}

// render draws the chart and returns its labeller, whose placed boxes the
// tests check.
func (c Roofline) render(dc draw.Canvas) (*labeller, error) {
	if len(c.Devices) == 0 {
		return nil, fmt.Errorf("roofline chart: no device")
	}
	p, lab, leg, err := c.plot(1)
	if err != nil {
		return nil, err
	}
	// The legend takes a column on the right.
	legW := legendWidth(leg.Legend)
	area := draw.Crop(dc, 0, -legW, 0, 0)
	legC := draw.Crop(dc, dc.Max.X-dc.Min.X-legW, 0, 0, 0)
	legC.Max.Y -= p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	leg.Draw(legC)

	plotC := draw.Crop(area, 0, -vg.Points(8), 0, 0) // room for the last tick label
	title := wrap(p.Title.Text, p.Title.TextStyle, plotC.Max.X-plotC.Min.X)
	p.Title.Text = title
	ok := lab.layout(p.DataCanvas(plotC), p, false)
	if !lab.roofClean {
		// A decade more on the right gives the ceilings' labels room.
		if p, lab, _, err = c.plot(10); err != nil {
			return nil, err
		}
		p.Title.Text = title
		ok = lab.layout(p.DataCanvas(plotC), p, false)
	}
	if !ok {
		// Numbers and a key under the chart.
		// Numbers and a key under the chart, across its whole width.
		keys := lab.keyEntries()
		kh, rows, cols, colW := keyLayout(keys, lab.style, dc)
		plotC = draw.Crop(plotC, 0, 0, kh, 0)
		lab.layout(p.DataCanvas(plotC), p, true)
		drawKey(draw.Crop(dc, 0, 0, 0, -(dc.Max.Y-dc.Min.Y-kh)), keys, lab.style, rows, cols, colW, lab.unplaced)
	}
	drawRoofline(p, plotC)
	return lab, nil
}

// legendWidth is the room the legend column needs.
func legendWidth(l plot.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: 1000, Y: 1000}}})
	return r.Max.X - r.Min.X + vg.Points(6)
}

// drawRoofline draws the plot and its axis labels, centred on the data area.
func drawRoofline(p *plot.Plot, dc draw.Canvas) {
	p.Draw(dc)
	da := p.DataCanvas(dc)
	sty := p.X.Label.TextStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	dc.FillText(sty, vg.Point{X: da.Center().X, Y: dc.Min.Y + vg.Points(1)}, "Arithmetic intensity (FLOP/byte)")
	sty = p.Y.Label.TextStyle
	sty.XAlign, sty.YAlign, sty.Rotation = draw.XCenter, draw.YTop, math.Pi/2
	dc.FillText(sty, vg.Point{X: dc.Min.X + vg.Points(1), Y: da.Center().Y}, "Performance (TFLOP/s)")
}

// bounds returns the decade-snapped axis ranges.
// widen multiplies the right end before it snaps to a decade.
func (c Roofline) bounds(widen float64) (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	grow := func(x, y float64) {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
	}
	for _, d := range c.Devices {
		for _, cl := range d.Ceilings {
			// Room right of the ridge for the ceiling's label.
			grow(cl.FLOPS/d.DRAM*8, cl.FLOPS)
		}
	}
	for _, p := range c.Points {
		if unplaceable(p) == "" {
			grow(p.ai(), p.Rate)
			if p.Roof > 0 {
				grow(p.ai(), p.Roof)
			}
		}
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax, ymin, ymax = 1, 100, 1e12, 1e14
	}
	// Room for labels: half a decade right of the last ridge or point, and
	// every slope (DRAM, L2) runs at least a decade before it meets the top
	// roof, so a chart of compute-bound ops still shows the memory roofs it
	// names.
	xmax = math.Pow(10, math.Ceil(math.Log10(xmax*3*widen)))
	ymax = math.Pow(10, math.Ceil(math.Log10(ymax*1.05)))
	for _, d := range c.Devices {
		// The slopes end at the highest ceiling, or the top of the axis.
		top := ymax
		if len(d.Ceilings) > 0 {
			top = 0
			for _, cl := range d.Ceilings {
				top = math.Max(top, cl.FLOPS)
			}
		}
		for _, bw := range []float64{d.DRAM, d.L2} {
			if bw > 0 {
				xmin = math.Min(xmin, top/bw/10)
			}
		}
	}
	xmin = math.Pow(10, math.Floor(math.Log10(xmin)))
	for _, d := range c.Devices {
		ymin = math.Min(ymin, d.DRAM*xmin)
	}
	ymin = math.Pow(10, math.Floor(math.Log10(ymin*0.9)))
	return xmin, xmax, ymin / 1e12, ymax / 1e12
}

// decadeTicks labels whole decades (0.1, 1, 10, 100, 1k, 10k) and marks the
// steps between them.
func decadeTicks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		v := math.Pow(10, e)
		if v >= min*0.999 && v <= max*1.001 {
			ticks = append(ticks, plot.Tick{Value: v, Label: decadeLabel(e)})
		}
		for k := 2.0; k < 10; k++ {
			if m := k * v; m > min && m < max {
				ticks = append(ticks, plot.Tick{Value: m})
			}
		}
	}
	return ticks
}

func decadeLabel(e float64) string {
	switch {
	case e >= 6:
		return strconv.FormatFloat(math.Pow(10, e-6), 'f', 0, 64) + "M"
	case e >= 3:
		return strconv.FormatFloat(math.Pow(10, e-3), 'f', 0, 64) + "k"
	case e >= 0:
		return strconv.FormatFloat(math.Pow(10, e), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Pow(10, e), 'f', int(-e), 64)
}

// ceilingValue formats a ceiling for its label: 989.4e12 → "989".
func ceilingValue(v float64) string {
	t := v / 1e12
	if t >= 10 {
		return strconv.FormatFloat(t, 'f', 0, 64)
	}
	return strconv.FormatFloat(t, 'f', 1, 64)
}

// chartFont is the size of labels, keys and legends.
const chartFont = 6.5

// check refuses roofs a log axis cannot draw: a device without DRAM
// bandwidth, a ceiling without a FLOP rate.
func (c Roofline) check() error {
	bad := func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }
	for _, d := range c.Devices {
		if bad(d.DRAM) {
			return fmt.Errorf("roofline chart: device %q has no DRAM bandwidth", d.Name)
		}
		for _, cl := range d.Ceilings {
			if bad(cl.FLOPS) {
				return fmt.Errorf("roofline chart: device %q's ceiling %q has no FLOP rate", d.Name, cl.Name)
			}
		}
	}
	return nil
}

func (c Roofline) plot(widen float64) (*plot.Plot, *labeller, *legend, error) {
	if err := c.check(); err != nil {
		return nil, nil, &legend{Legend: plot.NewLegend()}, err
	}
	xmin, xmax, ymin, ymax := c.bounds(widen)
	p := plot.New()
	p.Title.Text = c.Title
	if h := c.hidden(); h != "" {
		p.Title.Text += "\n" + h
	}
	// gonum/plot reserves room for a centred axis label at the linear
	// midpoint, which a log axis puts near its end, squeezing the chart: the
	// labels are blanks here, drawn by drawRoofline instead.
	p.X.Label.Text, p.Y.Label.Text = " ", " "
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(10), vg.Points(10)
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(9), vg.Points(9)
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.TickerFunc(decadeTicks), plot.TickerFunc(decadeTicks)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax

	leg := &legend{Legend: plot.NewLegend()}
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(chartFont)
	leg.Padding = vg.Points(1.5)
	leg.ThumbnailWidth = vg.Points(14)

	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 0xe4}, color.Gray{Y: 0xe4}
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.4), vg.Points(0.4)
	p.Add(grid)

	multi := len(c.Devices) > 1
	lab := &labeller{style: text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, chartFont), Handler: p.TextHandler}}
	for i, d := range c.Devices {
		ceil := append([]Ceiling(nil), d.Ceilings...)
		sort.Slice(ceil, func(a, b int) bool { return ceil[a].FLOPS > ceil[b].FLOPS })
		top := ymax * 1e12
		if len(ceil) > 0 {
			top = ceil[0].FLOPS
		}
		solid := draw.LineStyle{Color: roofColor, Width: vg.Points(1.1), Dashes: deviceDashes[i%len(deviceDashes)]}
		type slope struct {
			name string
			bw   float64
			ls   draw.LineStyle
		}
		slopes := []slope{{"DRAM " + units.FormatBandwidth(d.DRAM), d.DRAM, solid}}
		if d.L2 > 0 {
			l2 := solid
			l2.Color, l2.Width = color.Gray{Y: 0x90}, vg.Points(0.9)
			name := "L2 " + units.FormatBandwidth(d.L2)
			if d.L2Measured {
				name += " measured"
			}
			slopes = append(slopes, slope{name, d.L2, l2})
		}
		for _, s := range slopes {
			x0 := math.Max(xmin, ymin*1e12/s.bw)
			line := plotter.XYs{{X: x0, Y: s.bw * x0 / 1e12}, {X: top / s.bw, Y: top / 1e12}}
			if err := addRoofLine(p, s.name, line, s.ls, lab); err != nil {
				return nil, nil, leg, err
			}
			// Label the slope a third of the way along its visible part;
			// with several devices the legend names the slopes, as
			// parallel slopes leave no room between them.
			if multi {
				l, _ := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}})
				l.LineStyle = s.ls
				leg.add(d.Name+" "+s.name, l)
				continue
			}
			xl := math.Sqrt(x0 * math.Sqrt(x0*top/s.bw))
			lab.addRoof(s.name, xl, s.bw*xl/1e12, 0, s.ls.Color)
		}
		for _, cl := range ceil {
			r := cl.FLOPS / d.DRAM
			line := plotter.XYs{{X: r, Y: cl.FLOPS / 1e12}, {X: xmax, Y: cl.FLOPS / 1e12}}
			if err := addRoofLine(p, cl.Name, line, solid, lab); err != nil {
				return nil, nil, leg, err
			}
			// With several devices, the line's dashes name the device and
			// equal ceilings share a label.
			name := cl.Name + " " + ceilingValue(cl.FLOPS)
			if !multi {
				name += " (ridge " + strconv.FormatFloat(r, 'f', 0, 64) + ")"
			}
			lab.addRoof(name, xmax, cl.FLOPS/1e12, r, roofColor)
		}
	}

	seen := map[string]bool{}
	var groupNames []string
	var palette groupPalette
	var havePred, haveMeas, haveRoof bool
	for _, pt := range c.Points {
		if unplaceable(pt) != "" {
			continue
		}
		if !seen[pt.Group] {
			seen[pt.Group] = true
			groupNames = append(groupNames, pt.Group)
		}
		col := palette.color(pt.Group)
		x, y := pt.ai(), pt.Rate/1e12
		if pt.Roof > 0 && math.Abs(math.Log(pt.Roof/pt.Rate)) > 0.01 {
			haveRoof = true
			lab.gap(x, y, pt.Roof/1e12, draw.LineStyle{Color: faint(col, 0x90), Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(1), vg.Points(1.2)}})
			rg := pointGlyph(faint(col, 0x70), pt.Device, true)
			lab.mark(x, pt.Roof/1e12, rg, -1)
		}
		havePred = havePred || !pt.Measured
		haveMeas = haveMeas || pt.Measured
		lab.point(pt, x, y, pointGlyph(col, pt.Device, pt.Measured))
	}

	// The legend: groups by colour, devices by shape and roof, then what
	// filled, hollow and faint marks mean.
	gray := color.Gray{Y: 0x50}
	glyph := func(g draw.GlyphStyle) plot.Thumbnailer {
		s, _ := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
		s.GlyphStyle = g
		return s
	}
	if len(groupNames) > 1 || groupNames != nil && groupNames[0] != "" {
		for _, g := range groupNames {
			col := palette.color(g)
			if g == "" {
				g = "other"
			}
			leg.add(g, glyph(draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}))
		}
	}
	if multi {
		// A device is its shape on its roof's dashes, apart from the
		// plain shapes that say what filled and hollow mean.
		for i, d := range c.Devices {
			l, _ := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}})
			l.LineStyle = draw.LineStyle{Color: gray, Width: vg.Points(0.8), Dashes: deviceDashes[i%len(deviceDashes)]}
			leg.add(d.Name, l, glyph(pointGlyph(gray, i, false)))
		}
	}
	if havePred {
		filled := c.Filled
		if filled == "" {
			filled = "expected"
		}
		leg.add(filled, glyph(pointGlyph(gray, 0, false)))
	}
	if haveMeas {
		leg.add("achieved (measured)", glyph(pointGlyph(gray, 0, true)))
	}
	if haveRoof {
		leg.add("roof at its intensity", glyph(pointGlyph(color.NRGBA{R: 0x50, G: 0x50, B: 0x50, A: 0x70}, 0, true)))
	}
	p.Add(lab)
	return p, lab, leg, nil
}

func addRoofLine(p *plot.Plot, name string, xy plotter.XYs, ls draw.LineStyle, lab *labeller) error {
	lab.named = append(lab.named, namedRoof{name, [2]plotter.XY{xy[0], xy[1]}})
	if xy[1].X <= xy[0].X {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.LineStyle = ls
	p.Add(l)
	lab.lines = append(lab.lines, [2]plotter.XY{xy[0], xy[1]})
	return nil
}
