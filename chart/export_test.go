package chart

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Geometry is what a chart draws, as boxes in points on its canvas: every
// string and every stroked or filled path, so that a test can check that
// the title, the legend and the labels stay inside.
type Geometry struct {
	Canvas vg.Rectangle
	Texts  []TextBox
	Paths  []vg.Rectangle
}

// TextBox is a string and the box it takes.
type TextBox struct {
	Text string
	Box  vg.Rectangle
}

// Layout draws c at its default size on a canvas that records geometry.
func Layout(c Chart) (Geometry, error) {
	s := c.defaultSize()
	w, h := vg.Length(s.Width/2.54)*vg.Inch, vg.Length(s.Height/2.54)*vg.Inch
	rc := &recorder{}
	dc := draw.Canvas{Canvas: rc, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}}
	if err := safeDraw(c, dc); err != nil {
		return Geometry{}, err
	}
	rc.g.Canvas = dc.Rectangle
	return rc.g, nil
}

// safeDraw draws as Write does, turning gonum/plot's panics into errors.
func safeDraw(c Chart, dc draw.Canvas) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing the chart: %v", r)
		}
	}()
	return c.draw(dc)
}

// LegendLooks are the looks of a chart's legend entries, one list per
// legend (the occupancy figure has one per panel and its row of limits).
func LegendLooks(c Chart) ([][]string, error) {
	switch v := c.(type) {
	case Roofline:
		_, _, leg, err := v.plot(1)
		if err != nil {
			return nil, err
		}
		return [][]string{leg.looks}, nil
	case Pareto:
		_, leg, err := v.plot()
		if err != nil {
			return nil, err
		}
		return [][]string{leg.looks}, nil
	case Simulation:
		_, leg, err := v.plot()
		if err != nil {
			return nil, err
		}
		return [][]string{leg.looks}, nil
	case Sweep:
		_, leg, err := v.plot(false)
		if err != nil {
			return nil, err
		}
		return [][]string{leg.looks}, nil
	case Occupancy:
		var out [][]string
		for _, p := range v.Panels {
			_, leg, err := p.plot(true)
			if err != nil {
				return nil, err
			}
			out = append(out, leg.looks)
		}
		var limits []string
		for _, o := range limitOrder {
			limits = append(limits, rgba(limitColors[o]))
		}
		return append(out, limits), nil
	}
	return nil, fmt.Errorf("no legend for %T", c)
}

// recorder is a vg.Canvas that keeps the boxes of what is drawn.
type recorder struct {
	g     Geometry
	stack []matrix
	m     matrix
	width vg.Length
}

// matrix is an affine transform: x' = a·x + c·y + e, y' = b·x + d·y + f.
type matrix struct{ a, b, c, d, e, f float64 }

func (r *recorder) cur() matrix {
	if r.m == (matrix{}) {
		r.m = matrix{a: 1, d: 1}
	}
	return r.m
}

func (m matrix) mul(n matrix) matrix {
	return matrix{m.a*n.a + m.c*n.b, m.b*n.a + m.d*n.b, m.a*n.c + m.c*n.d, m.b*n.c + m.d*n.d, m.a*n.e + m.c*n.f + m.e, m.b*n.e + m.d*n.f + m.f}
}

func (r *recorder) pt(p vg.Point) vg.Point {
	m := r.cur()
	x, y := float64(p.X), float64(p.Y)
	return vg.Point{X: vg.Length(m.a*x + m.c*y + m.e), Y: vg.Length(m.b*x + m.d*y + m.f)}
}

func (r *recorder) SetLineWidth(w vg.Length)           { r.width = w }
func (r *recorder) SetLineDash([]vg.Length, vg.Length) {}
func (r *recorder) SetColor(color.Color)               {}
func (r *recorder) Rotate(t float64) {
	r.m = r.cur().mul(matrix{math.Cos(t), math.Sin(t), -math.Sin(t), math.Cos(t), 0, 0})
}
func (r *recorder) Translate(p vg.Point) {
	r.m = r.cur().mul(matrix{1, 0, 0, 1, float64(p.X), float64(p.Y)})
}
func (r *recorder) Scale(x, y float64)                  { r.m = r.cur().mul(matrix{x, 0, 0, y, 0, 0}) }
func (r *recorder) Push()                               { r.stack = append(r.stack, r.cur()) }
func (r *recorder) Pop()                                { r.m, r.stack = r.stack[len(r.stack)-1], r.stack[:len(r.stack)-1] }
func (r *recorder) DrawImage(vg.Rectangle, image.Image) {}
func (r *recorder) Stroke(p vg.Path)                    { r.path(p, r.width/2) }
func (r *recorder) Fill(p vg.Path)                      { r.path(p, 0) }
func (r *recorder) FillString(f font.Face, at vg.Point, s string) {
	e := f.Extents()
	b := newBox()
	for _, q := range []vg.Point{{X: at.X, Y: at.Y - e.Descent}, {X: at.X + f.Width(s), Y: at.Y - e.Descent}, {X: at.X, Y: at.Y + e.Ascent}, {X: at.X + f.Width(s), Y: at.Y + e.Ascent}} {
		b.grow(r.pt(q), 0)
	}
	r.g.Texts = append(r.g.Texts, TextBox{s, b.Rectangle})
}

type box struct{ vg.Rectangle }

func newBox() *box {
	inf := vg.Length(math.Inf(1))
	return &box{vg.Rectangle{Min: vg.Point{X: inf, Y: inf}, Max: vg.Point{X: -inf, Y: -inf}}}
}

func (b *box) grow(q vg.Point, rad vg.Length) {
	b.Min.X, b.Min.Y = min(b.Min.X, q.X-rad), min(b.Min.Y, q.Y-rad)
	b.Max.X, b.Max.Y = max(b.Max.X, q.X+rad), max(b.Max.Y, q.Y+rad)
}

func (r *recorder) path(p vg.Path, pad vg.Length) {
	b := newBox()
	for _, c := range p {
		switch c.Type {
		case vg.ArcComp:
			b.grow(r.pt(c.Pos), c.Radius+pad)
		case vg.MoveComp, vg.LineComp, vg.CurveComp:
			b.grow(r.pt(c.Pos), pad)
		}
	}
	if !math.IsInf(float64(b.Min.X), 0) {
		r.g.Paths = append(r.g.Paths, b.Rectangle)
	}
}

// LabelCollisions draws a roofline chart and lists the labels that cross a
// roof line or cover another point's mark.
func LabelCollisions(c Roofline) ([]string, error) {
	s := c.defaultSize()
	w, h := vg.Length(s.Width/2.54)*vg.Inch, vg.Length(s.Height/2.54)*vg.Inch
	lab, err := c.render(draw.Canvas{Canvas: &recorder{}, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range lab.placed {
		for _, sg := range lab.segs {
			if p.box.grow(roofClearance).crosses(sg[0], sg[1]) {
				out = append(out, fmt.Sprintf("%q crosses a roof line", p.text))
				break
			}
		}
		own := map[int]bool{}
		if p.site >= 0 {
			for _, i := range lab.sites[p.site].pts {
				own[i] = true
			}
		}
		for _, m := range lab.markBoxes {
			if p.box.overlaps(m.rect) && !own[m.owner] {
				out = append(out, fmt.Sprintf("%q covers a mark", p.text))
				break
			}
		}
	}
	return out, nil
}
