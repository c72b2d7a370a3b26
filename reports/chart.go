package reports

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/units"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// RooflineChart is a roofline chart: the ceilings of one or more devices and
// ops placed against them, predicted or measured. Build one and call Write;
// commands that import measured kernels fill Points with Measured set.
type RooflineChart struct {
	Title   string
	Devices []ChartDevice
	Points  []ChartPoint
	// Predicted is the legend text of the predicted points; empty means
	// "predicted (attainable)", the roofline's own height.
	Predicted string
}

func (c RooflineChart) predictedLegend() string {
	if c.Predicted != "" {
		return c.Predicted
	}
	return "predicted (attainable)"
}

// ChartDevice is one device's roofs.
type ChartDevice struct {
	Name     string
	Ceilings []ChartCeiling
	// DRAM and L2 are bandwidths in bytes per second; L2 is zero when
	// unknown (no slope drawn).
	DRAM, L2 float64
}

// ChartCeiling is a compute ceiling: "BF16 tensor" at 989.4e12 FLOP/s.
type ChartCeiling struct {
	Name  string
	FLOPS float64
}

// ChartPoint is an op or kernel: its FLOPs and bytes give the arithmetic
// intensity, Rate (FLOP/s) its height. Device indexes Devices (colour).
type ChartPoint struct {
	Label    string
	Device   int
	FLOPs    float64
	Bytes    float64
	Rate     float64
	Measured bool
	// Level is, for a measured point of a hierarchical roofline, the memory
	// level its bytes were counted at: "dram", "l2" or "l1", each drawn with
	// its own glyph. Empty draws the plain measured glyph.
	Level string
}

// levelGlyphs are the glyphs of measured points by memory level, with their
// legend text; "" is a measured point without a level.
var levelGlyphs = []struct {
	level, legend string
	shape         draw.GlyphDrawer
}{
	{"", "measured", draw.PyramidGlyph{}},
	{"dram", "measured, DRAM bytes", draw.PyramidGlyph{}},
	{"l2", "measured, L2 bytes", draw.BoxGlyph{}},
	{"l1", "measured, L1 bytes", draw.CrossGlyph{}},
}

func measuredGlyph(level string) (draw.GlyphStyle, int) {
	for i, g := range levelGlyphs {
		if g.level == level {
			return draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2.8), Shape: g.shape}, i
		}
	}
	return measuredGlyph("")
}

// ChartSize is a chart's size in centimetres.
type ChartSize struct{ Width, Height float64 }

// DefaultChartSize and DefaultDPI are the chart defaults (--size, --dpi).
var DefaultChartSize = ChartSize{16, 10}

// DefaultDPI is the PNG resolution when none is given.
const DefaultDPI = 200

// ParseChartSize parses WIDTHxHEIGHT with a unit: 16x10cm, 160x100mm, 6x4in.
func ParseChartSize(s string) (ChartSize, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	scale := 0.0
	for _, u := range []struct {
		suffix string
		cm     float64
	}{{"cm", 1}, {"mm", 0.1}, {"in", 2.54}} {
		if strings.HasSuffix(t, u.suffix) {
			t, scale = strings.TrimSuffix(t, u.suffix), u.cm
			break
		}
	}
	w, h, ok := strings.Cut(t, "x")
	if scale == 0 || !ok {
		return ChartSize{}, fmt.Errorf("size %q: expected WIDTHxHEIGHT with cm, mm or in, such as 16x10cm", s)
	}
	wv, err1 := strconv.ParseFloat(w, 64)
	hv, err2 := strconv.ParseFloat(h, 64)
	if err1 != nil || err2 != nil || !(wv*scale >= 4 && wv*scale <= 200 && hv*scale >= 3 && hv*scale <= 200) {
		return ChartSize{}, fmt.Errorf("size %q: width 4-200 cm and height 3-200 cm expected, such as 16x10cm", s)
	}
	return ChartSize{wv * scale, hv * scale}, nil
}

// Unplaced lists the labelled points a log-log chart cannot show, each
// with the reason: no FLOPs (AI 0), no bytes (infinite AI) or no rate.
func (c RooflineChart) Unplaced() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range c.Points {
		if r := unplaceable(p); r != "" && p.Label != "" && !seen[p.Label] {
			seen[p.Label] = true
			out = append(out, p.Label+": "+r)
		}
	}
	return out
}

func unplaceable(p ChartPoint) string {
	bad := func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }
	switch {
	case bad(p.FLOPs):
		return "0 FLOPs, so arithmetic intensity 0, which a log axis cannot show"
	case bad(p.Bytes):
		return "0 bytes, so infinite arithmetic intensity"
	case bad(p.Rate):
		return "no FLOP rate"
	}
	return ""
}

// deviceColors distinguish devices; measured points are drawn in black.
var deviceColors = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

func deviceColor(i int) color.Color { return deviceColors[i%len(deviceColors)] }

// Write draws the chart as format "png" or "svg" at size (dpi for PNG).
// gonum/plot panics on bad input; Write returns those panics as errors.
func (c RooflineChart) Write(w io.Writer, format string, size ChartSize, dpi int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reports: drawing roofline chart: %v", r)
		}
	}()
	if len(c.Devices) == 0 {
		return fmt.Errorf("roofline chart: no device")
	}
	if dpi <= 0 || dpi > 1200 {
		return fmt.Errorf("roofline chart: dpi %d: expected 1 to 1200", dpi)
	}
	p, err := c.plot()
	if err != nil {
		return err
	}
	wd, ht := vg.Length(size.Width)*vg.Centimeter, vg.Length(size.Height)*vg.Centimeter
	switch strings.ToLower(format) {
	case "png":
		cv := vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(dpi))
		drawChart(p, draw.New(cv))
		_, err = vgimg.PngCanvas{Canvas: cv}.WriteTo(w)
	case "svg":
		cv := vgsvg.New(wd, ht)
		drawChart(p, draw.New(cv))
		_, err = cv.WriteTo(w)
	default:
		return fmt.Errorf("roofline chart: format %q: expected png or svg", format)
	}
	return err
}

// drawChart draws the plot and its axis labels, centred on the data area.
func drawChart(p *plot.Plot, dc draw.Canvas) {
	dc = draw.Crop(dc, 0, -vg.Points(10), 0, 0) // room for the last tick label
	p.Draw(dc)
	da := p.DataCanvas(dc)
	sty := p.X.Label.TextStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	dc.FillText(sty, vg.Point{X: da.Center().X, Y: dc.Min.Y + vg.Points(1)}, "Arithmetic intensity (FLOP/byte)")
	sty = p.Y.Label.TextStyle
	sty.XAlign, sty.YAlign, sty.Rotation = draw.XCenter, draw.YTop, math.Pi/2
	dc.FillText(sty, vg.Point{X: dc.Min.X + vg.Points(1), Y: da.Center().Y}, "Performance (TFLOP/s)")
}

// ChartFormat returns the chart format a file name asks for (.png, .svg).
func ChartFormat(file string) (string, error) {
	switch i := strings.LastIndexByte(file, '.'); {
	case i >= 0 && strings.EqualFold(file[i:], ".png"):
		return "png", nil
	case i >= 0 && strings.EqualFold(file[i:], ".svg"):
		return "svg", nil
	}
	return "", fmt.Errorf("chart file %q: the name must end in .png or .svg", file)
}

// bounds returns the decade-snapped axis ranges.
func (c RooflineChart) bounds() (xmin, xmax, ymin, ymax float64) {
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
			grow(p.FLOPs/p.Bytes, p.Rate)
		}
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax, ymin, ymax = 1, 100, 1e12, 1e14
	}
	// Room for labels: half a decade right of the last ridge or point, and
	// the slopes start at least a decade below the first ridge.
	xmin = math.Pow(10, math.Floor(math.Log10(xmin)))
	xmax = math.Pow(10, math.Ceil(math.Log10(xmax*3)))
	ymax = math.Pow(10, math.Ceil(math.Log10(ymax*1.05)))
	for _, d := range c.Devices {
		ymin = math.Min(ymin, d.DRAM*xmin)
	}
	ymin = math.Pow(10, math.Floor(math.Log10(ymin)))
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

func (c RooflineChart) plot() (*plot.Plot, error) {
	xmin, xmax, ymin, ymax := c.bounds()
	p := plot.New()
	p.Title.Text = c.Title
	// gonum/plot reserves room for a centred axis label at the linear
	// midpoint, which a log axis puts near its end, squeezing the chart: the
	// labels are blanks here, drawn by drawAxisLabels instead.
	p.X.Label.Text, p.Y.Label.Text = " ", " "
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(10), vg.Points(10)
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(9), vg.Points(9)
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.TickerFunc(decadeTicks), plot.TickerFunc(decadeTicks)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(4), -vg.Points(4)
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	p.Legend.Padding = vg.Points(1)
	p.Legend.ThumbnailWidth = vg.Points(14)

	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 0xe4}, color.Gray{Y: 0xe4}
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.4), vg.Points(0.4)
	p.Add(grid)

	lab := &labeller{style: text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 6.5), Handler: p.TextHandler}}
	for i, d := range c.Devices {
		if d.DRAM <= 0 {
			return nil, fmt.Errorf("roofline chart: device %q has no DRAM bandwidth", d.Name)
		}
		col := deviceColor(i)
		ceil := append([]ChartCeiling(nil), d.Ceilings...)
		sort.Slice(ceil, func(a, b int) bool { return ceil[a].FLOPS > ceil[b].FLOPS })
		top := ymax * 1e12
		if len(ceil) > 0 {
			top = ceil[0].FLOPS
		}
		solid := draw.LineStyle{Color: col, Width: vg.Points(1.2)}
		slopes := []struct {
			name string
			bw   float64
			ls   draw.LineStyle
		}{{"DRAM", d.DRAM, solid}}
		if d.L2 > 0 {
			dashed := solid
			dashed.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			slopes = append(slopes, struct {
				name string
				bw   float64
				ls   draw.LineStyle
			}{"L2", d.L2, dashed})
		}
		for _, s := range slopes {
			x0 := math.Max(xmin, ymin*1e12/s.bw)
			line := plotter.XYs{{X: x0, Y: s.bw * x0 / 1e12}, {X: top / s.bw, Y: top / 1e12}}
			if err := c.addLine(p, line, s.ls, lab); err != nil {
				return nil, err
			}
			// With several devices, colour (and the legend) names the device.
			name := s.name + " " + units.FormatBandwidth(s.bw)
			// Label the slope a third of the way along its visible part.
			xl := math.Sqrt(x0 * math.Sqrt(x0*top/s.bw))
			lab.add(name, xl, s.bw*xl/1e12, col, false)
		}
		for _, cl := range ceil {
			r := cl.FLOPS / d.DRAM
			line := plotter.XYs{{X: r, Y: cl.FLOPS / 1e12}, {X: xmax, Y: cl.FLOPS / 1e12}}
			if err := c.addLine(p, line, solid, lab); err != nil {
				return nil, err
			}
			name := cl.Name + " " + ceilingValue(cl.FLOPS) + " (ridge " + strconv.FormatFloat(r, 'f', 0, 64) + ")"
			lab.addCeiling(name, r, xmax, cl.FLOPS/1e12, col)
			// The ridge: where the ceiling meets the DRAM slope.
			lab.mark(r, cl.FLOPS/1e12, ridgeGlyph(col))
		}
		if len(c.Devices) > 1 {
			l, _ := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}})
			l.LineStyle = solid
			p.Legend.Add(d.Name, l)
		}
	}
	var havePred bool
	haveMeas := make([]bool, len(levelGlyphs))
	predicted := func(col color.Color) draw.GlyphStyle {
		return draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}
	}
	for _, pt := range c.Points {
		if unplaceable(pt) != "" {
			continue
		}
		x, y := pt.FLOPs/pt.Bytes, pt.Rate/1e12
		gs := predicted(deviceColor(pt.Device))
		if pt.Measured {
			var i int
			gs, i = measuredGlyph(pt.Level)
			haveMeas[i] = true
		} else {
			havePred = true
		}
		lab.mark(x, y, gs)
		if pt.Label != "" {
			lab.add(pt.Label, x, y, color.Black, true)
		}
	}
	{
		s, _ := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
		s.GlyphStyle = ridgeGlyph(color.Gray{Y: 0x50})
		p.Legend.Add("ridge point", s)
	}
	if havePred {
		s, _ := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
		s.GlyphStyle = predicted(color.Gray{Y: 0x50})
		p.Legend.Add(c.predictedLegend(), s)
	}
	for i, g := range levelGlyphs {
		if haveMeas[i] {
			s, _ := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
			s.GlyphStyle, _ = measuredGlyph(g.level)
			p.Legend.Add(g.legend, s)
		}
	}
	names := legendNames(c, havePred, haveMeas)
	lab.legend = len(names)
	lab.legendStyle = p.Legend.TextStyle
	for _, e := range names {
		lab.legendWidth = max(lab.legendWidth, p.Legend.TextStyle.Width(e))
	}
	p.Add(lab)
	return p, nil
}

// legendNames are the legend's texts, to reserve its box from labels.
func legendNames(c RooflineChart, pred bool, meas []bool) []string {
	var out []string
	if len(c.Devices) > 1 {
		for _, d := range c.Devices {
			out = append(out, d.Name)
		}
	}
	out = append(out, "ridge point")
	if pred {
		out = append(out, c.predictedLegend())
	}
	for i, g := range levelGlyphs {
		if meas[i] {
			out = append(out, g.legend)
		}
	}
	return out
}

// ridgeGlyph marks where a compute ceiling meets the DRAM slope.
func ridgeGlyph(col color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: draw.RingGlyph{}}
}

func (c RooflineChart) addLine(p *plot.Plot, xy plotter.XYs, ls draw.LineStyle, lab *labeller) error {
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
