package chart

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legend is a chart's legend and how each entry's mark looks: a reader
// tells the entries apart by their marks alone, so no two may look alike
// (the test over every chart of the docs checks it).
type legend struct {
	plot.Legend
	names, looks []string
}

func (l *legend) add(name string, th ...plot.Thumbnailer) {
	l.Legend.Add(name, th...)
	l.names = append(l.names, name)
	l.looks = append(l.looks, look(th))
}

// look describes the marks of a legend entry: glyph shape and colour, line
// colour and dashes, fill colour.
func look(th []plot.Thumbnailer) string {
	var parts []string
	for _, t := range th {
		switch v := t.(type) {
		case *plotter.Scatter:
			parts = append(parts, fmt.Sprintf("glyph %T %s", v.GlyphStyle.Shape, rgba(v.GlyphStyle.Color)))
		case *plotter.Line:
			parts = append(parts, fmt.Sprintf("line %s %v", rgba(v.LineStyle.Color), v.LineStyle.Dashes))
		case *plotter.Polygon:
			parts = append(parts, "fill "+rgba(v.Color))
		default:
			parts = append(parts, fmt.Sprintf("%T", t))
		}
	}
	return strings.Join(parts, "; ")
}

func rgba(c color.Color) string {
	if c == nil {
		return "none"
	}
	r, g, b, a := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x%02x", r>>8, g>>8, b>>8, a>>8)
}

// wrap breaks s into lines no wider than width in style sty, at ", ",
// "; " or spaces, so that a long title stays inside the canvas; a word
// wider than width keeps its own line.
func wrap(s string, sty text.Style, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for sty.Width(line) > width {
			cut := -1
			for i := len(line) - 1; i > 0; i-- {
				if line[i] == ' ' && sty.Width(strings.TrimRight(line[:i], " ")) <= width {
					cut = i
					break
				}
			}
			if cut < 0 {
				break
			}
			out = append(out, strings.TrimRight(line[:cut], " "))
			line = strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// drawTitled draws a single plot on dc with its title wrapped to the
// canvas, as every one-plot chart does.
func drawTitled(dc draw.Canvas, p *plot.Plot) {
	p.Title.Text = wrap(p.Title.Text, p.Title.TextStyle, dc.Max.X-dc.Min.X-vg.Points(4))
	p.Draw(dc)
}
