package chart

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// labeller draws a roofline chart's points, their roof marks and gaps, and
// places the labels. A label goes only where it is clean: inside the chart,
// clear of other labels, of every mark but its own point's, and of every
// line, and nearer its own point than any other. layout reports whether all
// point labels found such a place; if not, the chart numbers the points
// instead, and a number with no clean place is left off (the key says so).
type labeller struct {
	style  text.Style
	lines  [][2]plotter.XY // roof segments, data coordinates
	named  []namedRoof     // every roof the chart names, drawn or not
	gaps   []gapLine
	marks  []chartMark
	points []labelPoint
	roofs  []roofLabel

	// What layout placed, in canvas coordinates.
	placed    []placedLabel
	markBoxes []ownedRect
	segs      [][2]vg.Point
	sites     []site
	pointAt   []vg.Point // each point's place
	area      rect
	numbered  bool
	unplaced  map[string]bool // keys left off the chart
	roofClean bool            // every roof label found a clean place

	unlabelled map[string]bool // marks of points past maxLabelledPoints
}

// namedRoof is a roof the chart names, on the plot or in the legend, and
// the segment that draws it.
type namedRoof struct {
	name string
	seg  [2]plotter.XY
}

type gapLine struct {
	x, y0, y1 float64
	style     draw.LineStyle
}

type chartMark struct {
	x, y  float64
	glyph draw.GlyphStyle
	owner int // the point it marks, or -1
}

type labelPoint struct {
	label, key string
	x, y       float64
}

type roofLabel struct {
	text  string
	x, y  float64
	ridge float64 // a ceiling's ridge (its label stays right of it); 0 for a slope
	color color.Color
}

// placedLabel is a label as drawn: its text, box and the site it names (-1
// for a roof label).
type placedLabel struct {
	text  string
	box   rect
	color color.Color
	site  int
}

type ownedRect struct {
	rect
	owner int
}

// site is the points one label names: points whose marks overlap, and
// the same op's points close together (one per device).
type site struct {
	at  []vg.Point
	pts []int
}

// dist is the distance from box r to the nearest of the site's points.
func (s site) dist(r rect) float64 {
	d := math.Inf(1)
	for _, p := range s.at {
		d = min(d, r.dist(p))
	}
	return d
}

// addRoof labels a roof; a second device with the same ceiling shares
// the first one's label.
func (l *labeller) addRoof(txt string, x, y, ridge float64, col color.Color) {
	for _, r := range l.roofs {
		if r.text == txt && r.y == y {
			return
		}
	}
	l.roofs = append(l.roofs, roofLabel{txt, x, y, ridge, col})
}

func (l *labeller) gap(x, y0, y1 float64, ls draw.LineStyle) {
	l.gaps = append(l.gaps, gapLine{x, y0, y1, ls})
}

func (l *labeller) mark(x, y float64, g draw.GlyphStyle, owner int) {
	l.marks = append(l.marks, chartMark{x, y, g, owner})
}

// maxLabelledPoints bounds the points that get a label: placing them costs
// the square of their number, and a chart with more is unreadable anyway.
// Points past it are drawn without a label.
const maxLabelledPoints = 200

func (l *labeller) point(p Point, x, y float64, g draw.GlyphStyle) {
	if len(l.points) >= maxLabelledPoints {
		// Unlabelled: one mark per place and glyph is enough.
		k := fmt.Sprintf("%g %g %v %v %T", x, y, g.Radius, g.Color, g.Shape)
		if !l.unlabelled[k] {
			if l.unlabelled == nil {
				l.unlabelled = map[string]bool{}
			}
			l.unlabelled[k] = true
			l.mark(x, y, g, -1)
		}
		return
	}
	l.mark(x, y, g, len(l.points))
	l.points = append(l.points, labelPoint{label: p.Label, key: p.Key, x: x, y: y})
}

type rect struct{ x0, y0, x1, y1 vg.Length }

func (a rect) overlaps(b rect) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

func (a rect) grow(d vg.Length) rect { return rect{a.x0 - d, a.y0 - d, a.x1 + d, a.y1 + d} }

// dist is the distance from p to the nearest point of r.
func (a rect) dist(p vg.Point) float64 {
	dx := max(float64(a.x0-p.X), 0, float64(p.X-a.x1))
	dy := max(float64(a.y0-p.Y), 0, float64(p.Y-a.y1))
	return math.Hypot(dx, dy)
}

// crosses reports whether segment p→q passes through r (Liang–Barsky).
func (a rect) crosses(p, q vg.Point) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(q.X-p.X), float64(q.Y-p.Y)
	for _, e := range [][2]float64{
		{-dx, float64(p.X - a.x0)}, {dx, float64(a.x1 - p.X)},
		{-dy, float64(p.Y - a.y0)}, {dy, float64(a.y1 - p.Y)},
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

// labelPad keeps neighbouring labels apart.
var labelPad = vg.Points(1)

// keys numbers the points: a point's own Key, else its label's place among
// the distinct labels.
func (l *labeller) keys() []string {
	num := map[string]string{}
	out := make([]string, len(l.points))
	for i, p := range l.points {
		switch {
		case p.label == "":
		case p.key != "":
			out[i] = p.key
		default:
			if _, ok := num[p.label]; !ok {
				num[p.label] = strconv.Itoa(len(num) + 1)
			}
			out[i] = num[p.label]
		}
	}
	return out
}

// keyEntry is one line of the key under a numbered chart.
type keyEntry struct{ key, label string }

func (l *labeller) keyEntries() []keyEntry {
	var out []keyEntry
	seen := map[string]bool{}
	for i, k := range l.keys() {
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, keyEntry{k, l.points[i].label})
		}
	}
	return out
}

// layout places the labels on canvas c: the points' names, or with
// numbered their keys. It reports whether every point label found a clean
// place.
func (l *labeller) layout(c draw.Canvas, plt *plot.Plot, numbered bool) bool {
	trX, trY := plt.Transforms(&c)
	pt := func(x, y float64) vg.Point { return vg.Point{X: trX(x), Y: trY(y)} }
	l.placed, l.markBoxes, l.segs, l.sites = nil, nil, nil, nil
	l.numbered, l.unplaced, l.roofClean = numbered, map[string]bool{}, true
	l.area = rect{c.Min.X, c.Min.Y, c.Max.X, c.Max.Y}
	for _, m := range l.marks {
		q := pt(m.x, m.y)
		r := m.glyph.Radius + vg.Points(0.5)
		l.markBoxes = append(l.markBoxes, ownedRect{rect{q.X - r, q.Y - r, q.X + r, q.Y + r}, m.owner})
	}
	for _, s := range l.lines {
		l.segs = append(l.segs, [2]vg.Point{pt(s[0].X, s[0].Y), pt(s[1].X, s[1].Y)})
	}
	marks := newMarkGrid(l.markBoxes)
	// The gaps are drawn faint and dotted; labels may cross them.
	l.sites = l.group(pt, numbered)

	// cost weighs what a label at r would overlap (0 is a clean place):
	// leaving the chart is worst, then a label, a mark, a line. own holds
	// the points whose marks the label may touch.
	cost := func(r rect, own map[int]bool) int {
		n := 0
		if r.x0 < l.area.x0 || r.x1 > l.area.x1 || r.y0 < l.area.y0 || r.y1 > l.area.y1 {
			n += 10000
		}
		for _, t := range l.placed {
			if r.overlaps(t.box.grow(labelPad)) {
				n += 1000
			}
		}
		for _, i := range marks.near(r) {
			if m := l.markBoxes[i]; r.overlaps(m.rect) && !own[m.owner] {
				n += 100
			}
		}
		for _, s := range l.segs {
			if r.grow(roofClearance).crosses(s[0], s[1]) {
				n += 10
			}
		}
		return n
	}
	sty := l.style
	h := sty.Height("M")
	g := vg.Points(2)

	// Roof labels first: ceilings along their line from the right edge
	// back to the ridge, above then below; slopes around their anchor.
	for _, rl := range l.roofs {
		w := sty.Width(rl.text)
		a := pt(rl.x, rl.y)
		var cands []rect
		if rl.ridge > 0 {
			left := max(trX(rl.ridge), c.Min.X)
			for _, off := range []vg.Length{g, g + vg.Points(4), g + vg.Points(8)} {
				for x1 := c.Max.X - vg.Points(2); x1-w >= left || len(cands) == 0; x1 -= w / 4 {
					cands = append(cands, rect{x1 - w, a.Y + off, x1, a.Y + off + h}, rect{x1 - w, a.Y - off - h, x1, a.Y - off})
				}
			}
		} else {
			// Along the slope from a third of its visible part, either way.
			for _, f := range []float64{1, 0.6, 1.6, 0.35, 2.5, 0.2, 4, 6, 0.12} {
				x := rl.x * f
				q := pt(x, rl.y*f)
				if q.X < c.Min.X || q.X > c.Max.X {
					continue
				}
				cands = append(cands, around(q, w, h, []vg.Length{g + vg.Points(1), vg.Points(6), vg.Points(10)})...)
			}
			if len(cands) == 0 {
				cands = around(a, w, h, []vg.Length{g})
			}
		}
		best, bestCost := pick(cands, func(r rect) int { return cost(r, nil) })
		l.roofClean = l.roofClean && bestCost == 0
		l.placed = append(l.placed, placedLabel{rl.text, cands[best], rl.color, -1})
	}

	// Point labels, the most crowded sites first.
	keys := l.keys()
	texts := make([]string, len(l.sites))
	for k, s := range l.sites {
		var parts []string
		for _, i := range s.pts {
			t := l.points[i].label
			if numbered {
				t = keys[i]
			}
			if t != "" && !containsString(parts, t) {
				parts = append(parts, t)
			}
		}
		sep := ", "
		if numbered {
			sep = ","
		}
		texts[k] = strings.Join(parts, sep)
	}
	crowd := make([]int, len(l.sites))
	for k, s := range l.sites {
		for _, o := range l.sites {
			if math.Hypot(float64(s.at[0].X-o.at[0].X), float64(s.at[0].Y-o.at[0].Y)) < 40 {
				crowd[k]++
			}
		}
	}
	order := make([]int, len(l.sites))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return crowd[order[a]] > crowd[order[b]] })
	steps := []vg.Length{g + vg.Points(1), vg.Points(4), vg.Points(6), vg.Points(8), vg.Points(10), vg.Points(13), vg.Points(17), vg.Points(22), vg.Points(28), vg.Points(36)}
	clean := true
	shown := map[string]bool{}
	for _, k := range order {
		s := l.sites[k]
		if texts[k] == "" {
			continue
		}
		w := sty.Width(texts[k])
		var cands []rect
		for _, a := range s.at {
			cands = append(cands, around(a, w, h, steps)...)
		}
		sort.SliceStable(cands, func(i, j int) bool { return s.dist(cands[i]) < s.dist(cands[j]) })
		placed := false
		own := map[int]bool{}
		for _, i := range s.pts {
			own[i] = true
		}
		for _, r := range cands {
			if cost(r, own) == 0 && l.nearest(r, k) {
				l.placed = append(l.placed, placedLabel{texts[k], r, color.Black, k})
				placed = true
				break
			}
		}
		if !placed && !numbered {
			return false
		}
		clean = clean && placed
		for _, i := range s.pts {
			if keys[i] != "" {
				shown[keys[i]] = shown[keys[i]] || placed
			}
		}
	}
	// The key marks the numbers that appear nowhere on the chart.
	for k, ok := range shown {
		if !ok {
			l.unplaced[k] = true
		}
	}
	return clean
}

// nearest reports whether box r is nearer site k than any other site.
func (l *labeller) nearest(r rect, k int) bool {
	d := l.sites[k].dist(r)
	for j, s := range l.sites {
		if j != k && s.dist(r) <= d {
			return false
		}
	}
	return true
}

// group gathers the points into sites: points whose marks overlap, and
// points of one label (or key) within a few marks of each other, such as
// one op on several devices.
func (l *labeller) group(pt func(x, y float64) vg.Point, numbered bool) []site {
	keys := l.keys()
	n := len(l.points)
	at := make([]vg.Point, n)
	parent := make([]int, n)
	for i, p := range l.points {
		at[i], parent[i] = pt(p.x, p.y), i
	}
	l.pointAt = at
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := math.Hypot(float64(at[i].X-at[j].X), float64(at[i].Y-at[j].Y))
			same := l.points[i].label != "" && l.points[i].label == l.points[j].label
			if numbered {
				same = keys[i] != "" && keys[i] == keys[j]
			}
			if d < float64(vg.Points(2)) || same && d < float64(vg.Points(14)) {
				parent[find(i)] = find(j)
			}
		}
	}
	var sites []site
	index := map[int]int{}
	for i := 0; i < n; i++ {
		r := find(i)
		k, ok := index[r]
		if !ok {
			k = len(sites)
			index[r] = k
			sites = append(sites, site{})
		}
		if !slices.Contains(sites[k].at, at[i]) { // one place once
			sites[k].at = append(sites[k].at, at[i])
		}
		sites[k].pts = append(sites[k].pts, i)
	}
	return sites
}

// around lists boxes of w×h around a at each distance, in sixteen
// directions: the box's nearest edge or corner at that distance from a.
func around(a vg.Point, w, h vg.Length, steps []vg.Length) []rect {
	var out []rect
	for _, d := range steps {
		for k := 0; k < 16; k++ {
			// Right first, then alternately above and below it.
			ang := float64((k+1)/2) * math.Pi / 8
			if k%2 == 0 {
				ang = -ang
			}
			dx, dy := vg.Length(math.Cos(ang))*d, vg.Length(math.Sin(ang))*d
			var x0, y0 vg.Length
			switch {
			case math.Abs(float64(dx)) < 1e-9:
				x0 = a.X - w/2
			case dx > 0:
				x0 = a.X + dx
			default:
				x0 = a.X + dx - w
			}
			switch {
			case math.Abs(float64(dy)) < 1e-9:
				y0 = a.Y - h/2
			case dy > 0:
				y0 = a.Y + dy
			default:
				y0 = a.Y + dy - h
			}
			out = append(out, rect{x0, y0, x0 + w, y0 + h})
		}
	}
	return out
}

// pick returns the first candidate of cost 0, else the cheapest.
func pick(cands []rect, cost func(rect) int) (best, bestCost int) {
	bestCost = -1
	for k, r := range cands {
		n := cost(r)
		if bestCost < 0 || n < bestCost {
			best, bestCost = k, n
		}
		if n == 0 {
			break
		}
	}
	return best, bestCost
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Plot implements plot.Plotter: gaps, marks, then the placed labels.
func (l *labeller) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, g := range l.gaps {
		c.StrokeLine2(g.style, trX(g.x), trY(g.y0), trX(g.x), trY(g.y1))
	}
	for _, m := range l.marks {
		c.DrawGlyph(m.glyph, vg.Point{X: trX(m.x), Y: trY(m.y)})
	}
	sty := l.style
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	for _, p := range l.placed {
		s := sty
		s.Color = p.color
		// Text is drawn from its baseline; the box's bottom is the
		// descent below it.
		c.FillText(s, vg.Point{X: p.box.x0, Y: p.box.y0}, p.text)
	}
}

// keyLayout sizes the key under a numbered chart: its height, rows,
// columns and column width. It takes at most 40% of the chart's height;
// entries beyond are summed up in the last cell.
func keyLayout(keys []keyEntry, sty text.Style, area draw.Canvas) (height vg.Length, rows, cols int, colW vg.Length) {
	for _, k := range keys {
		colW = max(colW, sty.Width(k.key+"  "+k.label+" *"))
	}
	colW += vg.Points(8)
	width := area.Max.X - area.Min.X - vg.Points(8)
	cols = max(1, int(width/colW))
	rows = (len(keys) + cols - 1) / cols
	line := sty.Height("M") * 1.3
	maxRows := max(1, int(0.4*float64(area.Max.Y-area.Min.Y)/float64(line))-1)
	rows = min(rows, maxRows)
	return vg.Length(rows+1)*line + vg.Points(4), rows, cols, colW
}

// drawKey writes the key in columns, the last line noting the numbers left
// off a crowded chart.
func drawKey(c draw.Canvas, keys []keyEntry, sty text.Style, rows, cols int, colW vg.Length, unplaced map[string]bool) {
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	line := sty.Height("M") * 1.3
	n := len(keys)
	if n > rows*cols {
		n = rows*cols - 1
	}
	x0, y0 := c.Min.X+vg.Points(8), c.Max.Y-vg.Points(2)
	for i := 0; i < n; i++ {
		t := keys[i].key + "  " + keys[i].label
		if unplaced[keys[i].key] {
			t += " *"
		}
		c.FillText(sty, vg.Point{X: x0 + vg.Length(i/rows)*colW, Y: y0 - vg.Length(i%rows)*line}, t)
	}
	if n < len(keys) {
		i := rows*cols - 1
		c.FillText(sty, vg.Point{X: x0 + vg.Length(i/rows)*colW, Y: y0 - vg.Length(i%rows)*line}, "… and "+strconv.Itoa(len(keys)-n)+" more")
	}
	if len(unplaced) > 0 {
		sty.Color = color.Gray{Y: 0x50}
		c.FillText(sty, vg.Point{X: x0, Y: y0 - vg.Length(rows)*line}, "* too crowded to number on the chart")
	}
}

// markGrid buckets mark boxes by cell, so that a label's cost looks only at
// the marks near it: a chart of thousands of points stays quick to lay out.
type markGrid struct {
	cells map[[2]int][]int
	seen  []int // the query that last returned each mark
	query int
	out   []int
}

const markCell = vg.Length(16) // points

func cellOf(v vg.Length) int { return int(math.Floor(float64(v / markCell))) }

func newMarkGrid(boxes []ownedRect) *markGrid {
	g := &markGrid{cells: map[[2]int][]int{}, seen: make([]int, len(boxes))}
	for i, b := range boxes {
		for x := cellOf(b.x0); x <= cellOf(b.x1); x++ {
			for y := cellOf(b.y0); y <= cellOf(b.y1); y++ {
				g.cells[[2]int{x, y}] = append(g.cells[[2]int{x, y}], i)
			}
		}
	}
	return g
}

// near returns each mark whose cells r touches, once (valid until the next
// call).
func (g *markGrid) near(r rect) []int {
	g.query++
	g.out = g.out[:0]
	for x := cellOf(r.x0); x <= cellOf(r.x1); x++ {
		for y := cellOf(r.y0); y <= cellOf(r.y1); y++ {
			for _, i := range g.cells[[2]int{x, y}] {
				if g.seen[i] != g.query {
					g.seen[i] = g.query
					g.out = append(g.out, i)
				}
			}
		}
	}
	return g.out
}

// roofClearance keeps labels off the roof lines, which are drawn 1.1 points
// wide: a label whose box only grazes a line's centre still covers the ink.
var roofClearance = vg.Points(1)
