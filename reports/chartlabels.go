package reports

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// labeller draws the chart's marks and places its labels so that they
// overlap neither each other nor the marks, the roof lines or the legend:
// each label tries positions around its anchor, nearest first, and takes the
// first free one (with a leader line when it had to move away).
type labeller struct {
	style  text.Style
	labels []placedLabel
	marks  []chartMark
	lines  [][2]plotter.XY // roof segments, data coordinates

	legend      int // legend entries
	legendWidth vg.Length
	legendStyle text.Style
}

// maxPointLabels is the most points that get a label.
const maxPointLabels = 200

type placedLabel struct {
	text    string
	x, y    float64
	x0      float64 // a ceiling's ridge: its label stays right of it
	color   color.Color
	point   bool // an op's label: may move away, with a leader line
	ceiling bool // right-aligned at the chart's edge
}

type chartMark struct {
	x, y  float64
	glyph draw.GlyphStyle
}

func (l *labeller) add(txt string, x, y float64, col color.Color, point bool) {
	l.labels = append(l.labels, placedLabel{text: txt, x: x, y: y, color: col, point: point})
}

func (l *labeller) addCeiling(txt string, ridge, x, y float64, col color.Color) {
	l.labels = append(l.labels, placedLabel{text: txt, x: x, y: y, x0: ridge, color: col, ceiling: true})
}

func (l *labeller) mark(x, y float64, g draw.GlyphStyle) {
	l.marks = append(l.marks, chartMark{x, y, g})
}

type rect struct{ x0, y0, x1, y1 vg.Length }

func (a rect) overlaps(b rect) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// crosses reports whether segment p→q passes through r (Liang–Barsky).
func (r rect) crosses(p, q vg.Point) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(q.X-p.X), float64(q.Y-p.Y)
	for _, e := range [][2]float64{
		{-dx, float64(p.X - r.x0)}, {dx, float64(r.x1 - p.X)},
		{-dy, float64(p.Y - r.y0)}, {dy, float64(r.y1 - p.Y)},
	} {
		if e[0] == 0 {
			if e[1] < 0 {
				return false
			}
			continue
		}
		t := e[1] / e[0]
		if e[0] < 0 {
			t0 = max(t0, t)
		} else {
			t1 = min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}

// Plot implements plot.Plotter.
func (l *labeller) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	pt := func(x, y float64) vg.Point { return vg.Point{X: trX(x), Y: trY(y)} }
	var taken, marks []rect // placed labels (and the legend); glyphs
	for _, m := range l.marks {
		q := pt(m.x, m.y)
		c.DrawGlyph(m.glyph, q)
		r := m.glyph.Radius + vg.Points(0.5)
		marks = append(marks, rect{q.X - r, q.Y - r, q.X + r, q.Y + r})
	}
	if l.legend > 0 {
		// The legend sits in the top-left corner (plot.Legend.Top, Left).
		h := vg.Length(l.legend) * (l.legendStyle.Height("M") + vg.Points(1))
		x0, y1 := c.Min.X+vg.Points(4), c.Max.Y-vg.Points(4)
		taken = append(taken, rect{x0, y1 - h - vg.Points(2), x0 + vg.Points(22) + l.legendWidth, y1})
	}
	var segs [][2]vg.Point
	for _, s := range l.lines {
		segs = append(segs, [2]vg.Point{pt(s[0].X, s[0].Y), pt(s[1].X, s[1].Y)})
	}
	// cost weighs what a label at r would overlap: 0 is a free place;
	// leaving the chart is worst, then covering a label, a mark, a line.
	cost := func(r rect) int {
		n := 0
		if r.x0 < c.Min.X || r.x1 > c.Max.X || r.y0 < c.Min.Y || r.y1 > c.Max.Y {
			n += 10000
		}
		pad := vg.Points(1.5) // keep neighbouring labels apart
		for _, t := range taken {
			if r.overlaps(rect{t.x0 - pad, t.y0 - pad, t.x1 + pad, t.y1 + pad}) {
				n += 1000
			}
		}
		for _, t := range marks {
			if r.overlaps(t) {
				n += 100
			}
		}
		for _, s := range segs {
			if r.crosses(s[0], s[1]) {
				n += 10
			}
		}
		return n
	}
	// leaderCost weighs the labels and marks a leader from a to r crosses,
	// other than the point's own mark.
	leaderCost := func(a vg.Point, r rect) int {
		to := vg.Point{X: clamp(a.X, r.x0, r.x1), Y: clamp(a.Y, r.y0, r.y1)}
		n := 0
		for _, t := range taken {
			if t.crosses(a, to) {
				n += 100
			}
		}
		for _, t := range marks {
			own := a.X >= t.x0 && a.X <= t.x1 && a.Y >= t.y0 && a.Y <= t.y1
			if !own && t.crosses(a, to) {
				n += 5
			}
		}
		for _, s := range segs {
			if crossAt(a, to, s[0], s[1]) > 0.05 {
				n += 20
			}
		}
		return n + 1 // a leader is itself a small cost
	}
	// Ceilings first (they hug the right edge), then slopes, then points.
	order := make([]int, 0, len(l.labels))
	for pass := 0; pass < 3; pass++ {
		for i, lb := range l.labels {
			if (pass == 0 && lb.ceiling) || (pass == 1 && !lb.ceiling && !lb.point) || (pass == 2 && lb.point) {
				order = append(order, i)
			}
		}
	}
	sty := l.style
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	points := 0
	for _, i := range order {
		lb := l.labels[i]
		if lb.point {
			// Placement costs grow with the square of the labels; beyond
			// maxPointLabels a chart is unreadable anyway, so the rest of
			// the points go unlabelled.
			if points++; points > maxPointLabels {
				continue
			}
		}
		w, h := sty.Width(lb.text), sty.Height(lb.text)
		a := pt(lb.x, lb.y)
		var cands []rect
		g := vg.Points(2.5)
		if lb.ceiling {
			// Along the ceiling, from the right edge back to its ridge
			// (lb.x0 holds the ridge), above the line, then below it.
			left := max(trX(lb.x0), c.Min.X)
			for x1 := c.Max.X - vg.Points(2); x1-w >= left || len(cands) == 0; x1 -= w / 4 {
				cands = append(cands, rect{x1 - w, a.Y + g, x1, a.Y + g + h}, rect{x1 - w, a.Y - g - h, x1, a.Y - g})
			}
		} else {
			steps := []vg.Length{g + vg.Points(1), vg.Points(9), vg.Points(16), vg.Points(26), vg.Points(38), vg.Points(52), vg.Points(70)}
			if !lb.point {
				steps = steps[:3] // a slope's label stays by its line
			}
			for _, d := range steps {
				cands = append(cands,
					rect{a.X + d, a.Y - h/2, a.X + d + w, a.Y + h/2},                 // right
					rect{a.X + d*0.7, a.Y + d*0.7, a.X + d*0.7 + w, a.Y + d*0.7 + h}, // upper right
					rect{a.X + d*0.7, a.Y - d*0.7 - h, a.X + d*0.7 + w, a.Y - d*0.7}, // lower right
					rect{a.X - d - w, a.Y - h/2, a.X - d, a.Y + h/2},                 // left
					rect{a.X - d*0.7 - w, a.Y + d*0.7, a.X - d*0.7, a.Y + d*0.7 + h}, // upper left
					rect{a.X - d*0.7 - w, a.Y - d*0.7 - h, a.X - d*0.7, a.Y - d*0.7}, // lower left
					rect{a.X - w/2, a.Y + d, a.X + w/2, a.Y + d + h},                 // above
					rect{a.X - w/2, a.Y - d - h, a.X + w/2, a.Y - d},                 // below
				)
			}
		}
		// The first free place, nearest first; if none, the least crowded.
		best, bestCost := 0, -1
		for k, r := range cands {
			n := cost(r)
			if lb.point && k >= 8 {
				n += leaderCost(a, r)
			}
			if bestCost < 0 || n < bestCost {
				best, bestCost = k, n
			}
			if n == 0 {
				break
			}
		}
		choice := cands[best]
		taken = append(taken, choice)
		if lb.point && best >= 8 {
			// A leader from the point to the label's nearest edge; later
			// labels avoid it.
			to := vg.Point{X: clamp(a.X, choice.x0, choice.x1), Y: clamp(a.Y, choice.y0, choice.y1)}
			c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 0x90}, Width: vg.Points(0.4)}, a.X, a.Y, to.X, to.Y)
			segs = append(segs, [2]vg.Point{a, to})
		}
		s := sty
		s.Color = lb.color
		c.FillText(s, vg.Point{X: choice.x0, Y: choice.y0}, lb.text)
	}
}

// crossAt returns where segment p→q crosses segment r→s, as a fraction of
// p→q, or −1 when they do not cross.
func crossAt(p, q, r, s vg.Point) float64 {
	dx, dy := float64(q.X-p.X), float64(q.Y-p.Y)
	ex, ey := float64(s.X-r.X), float64(s.Y-r.Y)
	den := dx*ey - dy*ex
	if den == 0 {
		return -1
	}
	fx, fy := float64(r.X-p.X), float64(r.Y-p.Y)
	t := (fx*ey - fy*ex) / den
	u := (fx*dy - fy*dx) / den
	if t < 0 || t > 1 || u < 0 || u > 1 {
		return -1
	}
	return t
}

func clamp(v, lo, hi vg.Length) vg.Length { return max(lo, min(hi, v)) }
