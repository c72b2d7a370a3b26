package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/escape"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// ReviewHTML writes a review as one self-contained HTML page: inline CSS
// and inline SVG charts (gonum/plot), no scripts and nothing fetched from
// the network.
func ReviewHTML(w io.Writer, rv Review) error {
	if len(rv.Reports) == 0 {
		return fmt.Errorf("reports: no review to render")
	}
	page := htmlPage{Review: rv, Title: rv.Reports[0].Workload, Description: rv.Reports[0].Description}
	if len(rv.Reports) > 1 {
		page.Compare = ReviewTables(Review{Reports: rv.Reports})[0]
	}
	for _, r := range rv.Reports {
		s := htmlSection{Report: r, ID: anchor(r.Device), Summary: reviewSummary(r, rv.Origin), Ops: reviewOps(r)}
		if !noOps(r) {
			var err error
			if s.TimeChart, err = timeChart(r); err != nil {
				return err
			}
			if s.RooflineChart, err = rooflineChart(r); err != nil {
				return err
			}
		}
		page.Sections = append(page.Sections, s)
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("reports: rendering the page: %w", err)
	}
	// html/template escapes markup but not control characters, which HTML
	// forbids too and a terminal obeys: the template has none, so any are
	// the input's.
	_, err := io.WriteString(w, escape.XML(buf.String()))
	return err
}

type htmlPage struct {
	Review
	Title, Description string
	Compare            Table
	Sections           []htmlSection
}

type htmlSection struct {
	review.Report
	ID                       string
	Summary, Ops             Table
	TimeChart, RooflineChart template.HTML
}

func anchor(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, s)
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"anchor": anchor,
	"dur":    units.FormatDuration,
	"pct":    reviewPct,
	"count":  findingCounts,
	"share":  func(a, b float64) string { return reviewPct(a / b) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gpucalc check: {{.Title}}</title>
<style>
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2430; background: #f6f7f9; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 21px; margin: 36px 0 8px; padding-top: 12px; border-top: 2px solid #d8dde6; }
h3 { font-size: 16px; margin: 24px 0 8px; color: #3a4558; }
.sub { color: #5a6478; margin: 0 0 8px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.card { background: #fff; border: 1px solid #d8dde6; border-radius: 8px; padding: 10px 16px; min-width: 150px; }
.card .k { font-size: 12px; color: #5a6478; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 20px; font-weight: 600; }
table { border-collapse: collapse; background: #fff; width: 100%; font-size: 13.5px; }
th, td { border: 1px solid #d8dde6; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, monospace; }
.finding { background: #fff; border: 1px solid #d8dde6; border-left: 6px solid #8a94a6; border-radius: 6px; padding: 8px 14px; margin: 8px 0; }
.finding.error { border-left-color: #c62828; }
.finding.warning { border-left-color: #e09b00; }
.finding.info { border-left-color: #2f6fbf; }
.badge { display: inline-block; font-size: 12px; font-weight: 700; text-transform: uppercase; padding: 1px 8px; border-radius: 10px; color: #fff; background: #8a94a6; margin-right: 6px; }
.badge.error { background: #c62828; } .badge.warning { background: #b37a00; } .badge.info { background: #2f6fbf; }
.finding .head { font-weight: 600; }
.finding .fix { color: #24533a; margin-top: 4px; }
.chart { background: #fff; border: 1px solid #d8dde6; border-radius: 8px; padding: 8px; }
.chart svg { width: 100%; height: auto; display: block; }
ul.notes { color: #5a6478; font-size: 13px; }
footer { color: #8a94a6; font-size: 12px; margin-top: 40px; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{with .Description}}<p class="sub">{{.}}</p>{{end}}
<p class="sub">Design review by gpucalc check{{with .Origin}} · device: {{(index $.Reports 0).Device}} ({{.}}){{end}} · times per run of the workload; sizes binary (MiB), rates decimal (TB/s)</p>
{{if .Compare.Rows}}
<h2>Devices</h2>
<table><tr>{{range .Compare.Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Compare.Rows}}<tr>{{range $i, $c := .}}{{if $i}}<td class="num">{{$c}}</td>{{else}}<td><a href="#{{anchor $c}}">{{$c}}</a></td>{{end}}{{end}}</tr>
{{end}}</table>
{{end}}
{{range .Sections}}
<h2 id="{{.ID}}">{{.Device}}</h2>
<div class="cards">
<div class="card"><div class="k">Expected</div><div class="v">{{dur .Expected}}</div></div>
<div class="card"><div class="k">Lower bound</div><div class="v">{{dur .LowerBound}}</div></div>
{{if .Transfer}}<div class="card"><div class="k">Host transfers</div><div class="v">{{dur .Transfer}}</div></div>{{end}}
<div class="card"><div class="k">Findings</div><div class="v">{{count .Report}}</div></div>
</div>
<h3>Findings</h3>
{{$r := .Report}}
{{range $i, $f := .Findings}}
<div class="finding {{$f.Severity}}">
<div class="head"><span class="badge {{$f.Severity}}">{{$f.Severity}}</span>{{$f.Check}}{{with $f.Op}} · <code>{{.}}</code>{{end}}{{if $f.Saves}} · saves {{dur $f.Saves}} ({{share $f.Saves $r.Expected}}){{end}}</div>
<div>{{$f.Message}}</div>
<div class="fix"><b>Fix:</b> {{$f.Fix}}</div>
</div>
{{else}}<p>No findings.</p>
{{end}}
{{if .TimeChart}}<h3>Expected time per op</h3>
<div class="chart">{{.TimeChart}}</div>
<h3>Roofline</h3>
<div class="chart">{{.RooflineChart}}</div>
<h3>Ops</h3>
<table><tr>{{range .Ops.Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Ops.Rows}}<tr>{{range $i, $c := .}}{{if or (eq $i 0) (eq $i 1) (eq $i 3)}}<td>{{if eq $i 1}}<code>{{$c}}</code>{{else}}{{$c}}{{end}}</td>{{else}}<td class="num">{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</table>
<ul class="notes">{{range .Ops.Notes}}<li>{{.}}</li>{{end}}{{range .Summary.Notes}}<li>{{.}}</li>{{end}}</ul>
{{else}}<h3>Ops</h3>
<p>No ops and no times: {{.NoTime}}.</p>
<ul class="notes">{{range .Summary.Notes}}<li>{{.}}</li>{{end}}</ul>
{{end}}
{{end}}
<footer>gpucalc check · self-contained page: inline CSS and SVG, no scripts, no network.</footer>
</main>
</body>
</html>
`))

// inlineSVG drops the XML prologue of gonum/plot's SVG output so that it can
// stand inside the page. The SVG is gonum/plot's own, with text it escaped.
func inlineSVG(s string) template.HTML {
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s)
}

// timeChart is a bar chart of each op's expected time and lower bound.
func timeChart(r review.Report) (template.HTML, error) {
	c := chart.OpTimes{Title: "Expected time and lower bound per op (µs, all runs)"}
	for _, o := range r.Ops {
		c.Names = append(c.Names, o.Name)
		c.Expected, c.LowerBound = append(c.Expected, o.Expected), append(c.LowerBound, o.LowerBound)
	}
	svg, err := c.SVG()
	if err != nil {
		return "", err
	}
	return inlineSVG(svg), nil
}

// rooflineChart places each op with FLOPs at its arithmetic intensity and
// the throughput of its expected time, on the shared roofline chart with the
// device's DRAM (and L2) roofs and the ceilings the ops run on.
func rooflineChart(r review.Report) (template.HTML, error) {
	dev := chart.Device{Name: r.Device}
	seen := map[string]bool{}
	c := chart.Roofline{Title: "Roofline on " + r.Device}
	for _, o := range r.Ops {
		pt := o.Point
		if pt.MemoryLevel == roofline.Link || pt.PeakKey == "" {
			// A GPU-to-GPU transfer is not on the chip's roofline, nor is
			// a line with no op (a training step's optimizer passes).
			continue
		}
		switch pt.MemoryLevel {
		case devices.DRAM:
			dev.DRAM = pt.MemoryCeiling
		case devices.L2:
			dev.L2 = pt.MemoryCeiling
		}
		if !seen[pt.PeakKey] {
			seen[pt.PeakKey] = true
			dev.Ceilings = append(dev.Ceilings, chart.Ceiling{Name: ceilingName(pt.PeakKey), FLOPS: pt.ComputeCeiling})
		}
		if pt.FLOPs > 0 && pt.Bytes > 0 && pt.Expected > 0 {
			c.Points = append(c.Points, opChartPoint(o.Name, 0, pt))
		}
	}
	if len(c.Points) == 0 || dev.DRAM == 0 {
		return template.HTML("<p>No op with FLOPs to place on the roofline.</p>"), nil
	}
	c.Devices = []chart.Device{dev}
	var buf bytes.Buffer
	if err := chart.Write(&buf, c, chart.Options{Format: "svg", Size: chart.Size{Width: 19, Height: 11.5}}); err != nil {
		return "", err
	}
	return inlineSVG(buf.String()), nil
}
