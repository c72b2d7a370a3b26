package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/rows"
	"github.com/gpucalc/gpucalc/sim"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Simulation draws a simulated sweep's achieved throughput against its
// bound over warps per SM, in the roofline charts' style: the bound is the
// roof, the simulation filled points, a measured curve (if any) hollow
// points. It plots GFLOP/s when the sweep does FLOPs, else GB/s.
type Simulation struct {
	Title  string
	Points []sim.Point
	// Measured is a measured curve to overlay; nil draws none.
	Measured *MeasuredCurve
}

// MeasuredCurve is a measured throughput at each number of resident warps
// per SM: GB/s, or GFLOP/s with FLOPs set.
type MeasuredCurve struct {
	Label  string
	Warps  []int
	Values []float64
	FLOPs  bool
}

// measuredKinds maps the simulator's kernels to the kind column of the
// latency-hiding CSV (kind,ilp,block,blocks_per_sm,warps_per_sm,...).
var measuredKinds = map[string]string{"stream": "read", "fma": "fma"}

// ReadMeasuredCurve reads the rows of a latency-hiding CSV (the format of
// sim/testdata/lat_hide.csv: kind, ilp, block, warps_per_sm, gbps, gflops
// among its columns; a row starting "kind" starts a new header) that match
// the simulated kernel, loads per thread (ilp) and block size. name is the
// file's name for messages.
func ReadMeasuredCurve(r io.Reader, name, kernel string, ilp, block int) (*MeasuredCurve, error) {
	kind, ok := measuredKinds[kernel]
	if !ok {
		return nil, fmt.Errorf("%s: no measured curve for the %s kernel; the file holds stream (read) and fma sweeps", name, kernel)
	}
	cr := rows.NewCSV(rows.Limit(r, 64<<20)) // an error past it, not a silent cut
	var col map[string]int
	c := &MeasuredCurve{Label: fmt.Sprintf("measured (%s)", filepath.Base(name)), FLOPs: kernel == "fma"}
	have := map[string]bool{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var re *rows.Error
			var rr *rows.RowError
			switch {
			case errors.As(err, &re):
				return nil, fmt.Errorf("%s:%d: %v", name, re.Line, re.Err)
			case errors.As(err, &rr):
				return nil, fmt.Errorf("%s:%d: %v", name, rr.Line, rr.Err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line := cr.Line()
		if rec[0] == "kind" {
			col = map[string]int{}
			for i, h := range rec {
				col[h] = i
			}
			continue
		}
		if col == nil {
			return nil, fmt.Errorf("%s:%d: expected a header starting kind,ilp,block", name, line)
		}
		get := func(k string) (string, bool) {
			i, ok := col[k]
			if !ok || i >= len(rec) {
				return "", false
			}
			return rec[i], true
		}
		num := func(k string) (float64, error) {
			s, _ := get(k)
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return 0, fmt.Errorf("%s:%d: column %s: %s is not a non-negative number", name, line, k, rows.Quote(s))
			}
			return v, nil
		}
		k, _ := get("kind")
		is, okI := get("ilp")
		bs, okB := get("block")
		if !okI || !okB {
			continue // another sweep's section (no ilp or block column)
		}
		have[k+" ilp "+is+" block "+bs] = true
		if k != kind || is != strconv.Itoa(ilp) || bs != strconv.Itoa(block) {
			continue
		}
		w, err := num("warps_per_sm")
		if err != nil {
			return nil, err
		}
		v, err := num(map[bool]string{true: "gflops", false: "gbps"}[c.FLOPs])
		if err != nil {
			return nil, err
		}
		c.Warps, c.Values = append(c.Warps, int(w)), append(c.Values, v)
	}
	if len(c.Warps) == 0 {
		var h []string
		for k := range have {
			h = append(h, k)
		}
		sort.Strings(h)
		return nil, fmt.Errorf("%s: no rows for %s ilp %d block %d; it has %s", name, kind, ilp, block, strings.Join(h, ", "))
	}
	return c, nil
}

// defaultSize implements Chart.
func (c Simulation) defaultSize() Size { return DefaultSize }

// draw implements Chart.
func (c Simulation) draw(dc draw.Canvas) error {
	p, _, err := c.plot()
	if err != nil {
		return err
	}
	drawTitled(dc, p)
	return nil
}

// plot builds the chart and its legend.
func (c Simulation) plot() (*plot.Plot, *legend, error) {
	if len(c.Points) == 0 {
		return nil, nil, fmt.Errorf("simulation chart: no points")
	}
	flops := false
	for _, p := range c.Points {
		flops = flops || p.AchievedGFLOPs > 0
	}
	achieved, bound := make(plotter.XYs, len(c.Points)), make(plotter.XYs, len(c.Points))
	top := 0.0
	for i, p := range c.Points {
		achieved[i].X, bound[i].X = float64(p.Warps), float64(p.Warps)
		if flops {
			achieved[i].Y, bound[i].Y = p.AchievedGFLOPs, p.BoundGFLOPs
		} else {
			achieved[i].Y, bound[i].Y = p.AchievedGBps, p.BoundGBps
		}
		top = max(top, bound[i].Y, achieved[i].Y)
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = "Resident warps per SM"
	p.Y.Label.Text = "GB/s"
	if flops {
		p.Y.Label.Text = "GFLOP/s"
	}
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(10), vg.Points(10)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(9), vg.Points(9)
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 0xe4}, color.Gray{Y: 0xe4}
	p.Add(grid)
	bl, err := plotter.NewLine(bound)
	if err != nil {
		return nil, nil, err
	}
	bl.Color, bl.Width = roofColor, vg.Points(1.2)
	al, ap, err := plotter.NewLinePoints(achieved)
	if err != nil {
		return nil, nil, err
	}
	al.Color, al.Width = groupColor(0), vg.Points(1.4)
	ap.GlyphStyle = pointGlyph(groupColor(0), 0, false)
	p.Add(bl, al, ap)
	leg := &legend{Legend: p.Legend}
	leg.add("bound (roofline, Little's law)", bl)
	leg.add("simulated", al, ap)
	if m := c.Measured; m != nil {
		if m.FLOPs != flops {
			return nil, nil, fmt.Errorf("simulation chart: the measured curve is in %s, the simulation in %s", unitName(m.FLOPs), unitName(flops))
		}
		xy := make(plotter.XYs, len(m.Warps))
		for i := range m.Warps {
			xy[i] = plotter.XY{X: float64(m.Warps[i]), Y: m.Values[i]}
			top = max(top, m.Values[i])
		}
		ml, mp, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, nil, err
		}
		ml.Color, ml.Width, ml.Dashes = groupColor(1), vg.Points(0.9), []vg.Length{vg.Points(3), vg.Points(2)}
		mp.GlyphStyle = pointGlyph(groupColor(1), 0, true)
		p.Add(ml, mp)
		leg.add(m.Label, ml, mp)
	}
	last := achieved[len(achieved)-1].X
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, last*1.04, 0, 1.1*top
	step := niceStep(last)
	p.X.Tick.Marker = plot.ConstantTicks(ticks(0, last, step))
	p.Y.Tick.Marker = wholeTicks{}
	// Bottom right, inside the data area: the marks at the ends of the
	// thumbnails stay within the canvas.
	leg.Top, leg.Left = false, false
	leg.TextStyle.Font.Size = vg.Points(chartFont + 1)
	leg.XOffs, leg.YOffs = -vg.Points(8), vg.Points(10)
	p.Legend = leg.Legend
	return p, leg, nil
}

func unitName(flops bool) string {
	if flops {
		return "GFLOP/s"
	}
	return "GB/s"
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
