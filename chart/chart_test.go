package chart_test

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/sim"
)

// goldenCharts are the charts kept as PNGs in testdata: look at them after
// -update.
func goldenCharts(t testing.TB) map[string]chart.Chart {
	nc, _ := ncuChart(t)
	return map[string]chart.Chart{
		"roofline-decode-h100":   exampleChart(t, "../examples/llama3-8b-decode.yaml", "h100"),
		"roofline-prefill-3gpus": exampleChart(t, "../examples/llama3-8b-prefill.yaml", "h100", "a100", "h200"),
		"roofline-ncu-h100":      nc,
		"roofline-dense-50":      chart.DenseChart(50, 1),
		"occupancy-h100":         occupancyChart(t),
		"sweep-regs-h100":        occupancyChart(t).Panels[1],
		"simulate-stream-h100":   simulationChart(t),
		"pareto":                 paretoChart(),
	}
}

// paretoChart is two devices' deployments, each with its front: fixed
// figures, the chart's own test (gpucalc deploy draws it from a search).
func paretoChart() chart.Pareto {
	a := []chart.ParetoPoint{{PerUser: 120, PerGPU: 300}, {PerUser: 90, PerGPU: 700}, {PerUser: 60, PerGPU: 1100}, {PerUser: 35, PerGPU: 1500}}
	b := []chart.ParetoPoint{{PerUser: 150, PerGPU: 600}, {PerUser: 100, PerGPU: 1500}, {PerUser: 55, PerGPU: 2600}, {PerUser: 30, PerGPU: 3200}}
	return chart.Pareto{Title: "llama-3.1-70b at 1024/1024 tokens: tokens/s per GPU against per user",
		Series: []chart.ParetoSeries{{Name: "H100 SXM", All: append(a, chart.ParetoPoint{PerUser: 70, PerGPU: 500}), Front: a},
			{Name: "B200", All: append(b, chart.ParetoPoint{PerUser: 80, PerGPU: 900}), Front: b}}}
}

func h100Target(t testing.TB) occupancy.Target {
	a, err := devices.ArchFor(devices.CC{Major: 9})
	if err != nil {
		t.Fatal(err)
	}
	return occupancy.Target{Device: "H100 SXM", Arch: a, CC: a.CC, SMs: 132}
}

// occupancyChart is 256 threads, 64 registers and 48 KiB on the H100.
func occupancyChart(t testing.TB) chart.Occupancy {
	tg, k, l := h100Target(t), occupancy.Kernel{Regs: 64}, occupancy.Launch{Threads: 256, DynamicSmem: 48 << 10}
	n, err := occupancy.SweepAround(tg.Arch, k, l)
	if err != nil {
		t.Fatal(err)
	}
	return reports.OccupancyChart(tg, k, l, n)
}

// simulationChart is the stream kernel simulated on the H100 at 4 to 64
// warps, with the measured curve of sim/testdata/lat_hide.csv.
func simulationChart(t testing.TB) chart.Simulation {
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.ForDevice(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := s.Sweep(sim.Stream(1), []int{4, 16, 32, 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../sim/testdata/lat_hide.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := chart.ReadMeasuredCurve(f, "lat_hide.csv", "stream", 1, 128)
	if err != nil {
		t.Fatal(err)
	}
	return chart.Simulation{Title: "Simulated stream kernel on H100 SXM, 128-thread blocks", Points: pts, Measured: m}
}

func TestChartGolden(t *testing.T) {
	for name, c := range goldenCharts(t) {
		var buf bytes.Buffer
		if err := chart.Write(&buf, c, chart.Options{Format: "png", DPI: 100}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		golden := filepath.Join("testdata", name+".png")
		if *update {
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if d := differs(t, buf.Bytes(), want); d != "" {
			t.Errorf("%s differs from %s: %s; look at it and run go test ./chart -update if the change is right", name, golden, d)
		}
	}
}

// The points sit at their expected rate (or measured), the roof marks at
// the attainable rate of the model, and no point lies above its roof.
func TestRooflinePoints(t *testing.T) {
	c := exampleChart(t, "../examples/llama3-8b-prefill.yaml", "h100")
	d, _ := devices.Lookup("h100")
	for _, p := range c.Points {
		if p.Roof <= 0 || p.Rate > p.Roof*(1+1e-9) {
			t.Errorf("%s: rate %g above its roof %g", p.Label, p.Rate, p.Roof)
		}
		// The roof is min(peak, bandwidth × intensity) with the ceilings
		// the chart draws.
		var peak float64
		for _, cl := range c.Devices[0].Ceilings {
			if math.Abs(cl.FLOPS-p.Roof) < 1e-6*cl.FLOPS || cl.FLOPS > peak && cl.FLOPS < p.Roof*1.0001 {
				peak = max(peak, cl.FLOPS)
			}
		}
		if slope := c.Devices[0].DRAM * p.FLOPs / p.Bytes; math.Abs(p.Roof-slope) > 1e-6*slope && math.Abs(p.Roof-peak) > 1e-6*peak {
			t.Errorf("%s: roof %g is neither the DRAM slope %g nor a ceiling", p.Label, p.Roof, slope)
		}
	}
	// The H100's measured DRAM bandwidth draws the slope the model uses.
	if got := c.Devices[0].DRAM; d.Measured == nil || got != d.Measured.DRAMCopy && got != d.Memory.BytesPerSecond {
		t.Logf("DRAM slope %g", got)
	}

	// The ncu export: each DRAM and L2 point at or below its own roof.
	nc, notes := ncuChart(t)
	n2 := 0
	// ncu counts L2 reads and writes, the catalog's L2 figure is reads:
	// a point above its roof must be named in the notes.
	for _, p := range nc.Points {
		if p.Roof > 0 && p.Rate > p.Roof*(1+1e-9) && !strings.Contains(strings.Join(notes, "\n"), "ID "+p.Key+"'s L2 point lies above its roof") {
			t.Errorf("ncu %s (%s): %g above its roof %g, and no note says so", p.Key, p.Group, p.Rate, p.Roof)
		}
		if p.Group == "L2 bytes" {
			n2++
		}
	}
	if n2 == 0 || !nc.Devices[0].L2Measured {
		t.Errorf("%d L2 points, measured L2 %v; notes %q", n2, nc.Devices[0].L2Measured, notes)
	}
}

// The three panels: 256 threads, 64 registers and 48 KiB on an H100 give 4
// blocks (65536 / (64 × 256) registers, 228 KiB / (48 + 1) KiB shared
// memory), 32 warps; below 49 registers (1536 per warp, 5 blocks) shared
// memory limits alone.
func TestOccupancyChart(t *testing.T) {
	c := occupancyChart(t)
	for i, q := range []occupancy.Quantity{occupancy.VaryThreads, occupancy.VaryRegs, occupancy.VarySmem} {
		p := c.Panels[i]
		k := slices.IndexFunc(p.Points, func(pt occupancy.Point) bool { return pt.X == p.Current })
		if p.Quantity != q || k < 0 || p.Points[k].Warps != 32 {
			t.Errorf("panel %d (%s): current %d not at 32 warps", i, p.Quantity, p.Current)
		}
	}
	if !strings.Contains(c.Title, "32 warps per SM (50.0%)") {
		t.Errorf("title %q", c.Title)
	}
	var svg bytes.Buffer
	if err := chart.Write(&svg, c, chart.Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Threads per block", "Registers per thread", "Shared memory per block (KiB)", "limited by registers", "limited by shared memory", "current: 64, 32 warps (50.0%)"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

// The measured curve is the file's rows for the kernel, ilp and block.
func TestReadMeasuredCurve(t *testing.T) {
	m := simulationChart(t).Measured
	if len(m.Warps) != 16 || m.Warps[0] != 4 || m.Values[0] != 659.7 || m.FLOPs {
		t.Errorf("curve %+v", m)
	}
	for _, tc := range []struct{ in, kernel, want string }{
		{"kind,ilp,block,warps_per_sm,gbps,gflops\nread,1,128,4,x,0\n", "stream", "f.csv:2: column gbps: \"x\" is not a non-negative number"},
		{"kind,ilp,block,warps_per_sm,gbps,gflops\nread,1,128,4,NaN,0\n", "stream", "not a non-negative number"},
		{"kind,ilp,block,warps_per_sm,gbps,gflops\nread,2,128,4,1,0\n", "stream", "no rows for read ilp 1 block 128; it has read ilp 2 block 128"},
		{"read,1,128,4,1,0\n", "stream", "f.csv:1: expected a header"},
		{"kind,ilp\n\"read,1\n", "stream", "f.csv:2: "},
		{"", "mixed", "no measured curve for the mixed kernel"},
	} {
		_, err := chart.ReadMeasuredCurve(strings.NewReader(tc.in), "f.csv", tc.kernel, 1, 128)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzReadMeasuredCurve(f *testing.F) {
	f.Add("kind,ilp,block,warps_per_sm,gbps,gflops\nread,1,128,4,659.7,0\n")
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = chart.ReadMeasuredCurve(strings.NewReader(in), "f.csv", "stream", 1, 128)
	})
}

// Options: formats, sizes, dpi and the pixel cap are refused before
// drawing; a failed write leaves an existing file as it was.
func TestChartOptions(t *testing.T) {
	c := exampleChart(t, "../examples/resnet50-bottleneck.yaml", "h100")
	for _, tc := range []struct {
		opt  chart.Options
		want string
	}{
		{chart.Options{Format: "gif"}, `chart format "gif": expected png, svg or pdf`},
		{chart.Options{Format: "png", Size: chart.Size{Width: 200, Height: 200}, DPI: 1200}, "94489x94489 pixels, 8928 megapixels; the limit is 100"},
		{chart.Options{Format: "png", DPI: 5}, "dpi 5: expected 10 to 1200"},
		{chart.Options{Format: "svg", Size: chart.Size{Width: 1, Height: 1}}, "width 4-200 cm"},
	} {
		if err := chart.Write(&bytes.Buffer{}, c, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opt, err, tc.want)
		}
	}
	// 100 megapixels exactly is allowed: 10000 px square at 254 dpi.
	if err := (chart.Options{Format: "png", Size: chart.Size{Width: 100, Height: 100}, DPI: 254}).Check(); err != nil {
		t.Errorf("100 megapixels: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "chart.png")
	if err := chart.WriteFile(file, c, chart.Options{DPI: 50}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	if err := chart.WriteFile(file, c, chart.Options{Size: chart.Size{Width: 200, Height: 200}, DPI: 1200}); err == nil {
		t.Error("no error over the pixel cap")
	}
	if err := chart.WriteFile(file, chart.Roofline{}, chart.Options{DPI: 50}); err == nil {
		t.Error("no error for a chart without a device")
	}
	after, _ := os.ReadFile(file)
	ents, _ := os.ReadDir(dir)
	if !bytes.Equal(before, after) || len(ents) != 1 {
		t.Errorf("the existing chart changed (%d files in the directory)", len(ents))
	}
	for _, f := range []string{"c.png", "c.svg", "c.pdf"} {
		if err := chart.WriteFile(filepath.Join(dir, f), c, chart.Options{DPI: 30}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A chart written over an existing file keeps its permissions (a private
// file once became world-readable); a directory is refused with a message
// that says so, not a rename's.
func TestWriteFileTarget(t *testing.T) {
	c := exampleChart(t, "../examples/resnet50-bottleneck.yaml", "h100")
	dir := t.TempDir()
	private := filepath.Join(dir, "private.svg")
	if err := os.WriteFile(private, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := chart.WriteFile(private, c, chart.Options{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(private); err != nil || st.Mode().Perm() != 0o600 || st.Size() < 1000 {
		t.Errorf("private chart: %v, mode %v; want the chart, 0600", err, st.Mode())
	}
	fresh := filepath.Join(dir, "new.svg")
	if err := chart.WriteFile(fresh, c, chart.Options{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("new chart mode %v, want 0644", st.Mode())
	}
	sub := filepath.Join(dir, "plots.png")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	err := chart.WriteFile(sub, c, chart.Options{DPI: 30})
	if err == nil || !strings.Contains(err.Error(), "is a directory: give a file name, such as "+filepath.Join(sub, "chart.png")) {
		t.Errorf("directory: %v", err)
	}
}

// The review page's bars: an SVG element per op and the legend; no ops is
// an error, not a panic.
func TestOpTimes(t *testing.T) {
	svg, err := chart.OpTimes{Title: "t", Names: []string{"matmul", "gelu"}, Expected: []float64{2e-6, 1e-6}, LowerBound: []float64{1e-6, 0.5e-6}}.SVG()
	if err != nil || !strings.Contains(svg, "<svg") || !strings.Contains(svg, "lower bound") || !strings.Contains(svg, "matmul") {
		t.Errorf("svg %.200q, error %v", svg, err)
	}
	if _, err := (chart.OpTimes{}).SVG(); err == nil {
		t.Error("no error for no ops")
	}
}

// TestChartBadInput: nothing a caller passes makes a chart panic.
func TestChartBadInput(t *testing.T) {
	dev := chart.Device{Name: "d", DRAM: 1e12, Ceilings: []chart.Ceiling{{Name: "FP32", FLOPS: 1e13}}}
	for _, c := range []chart.Chart{
		chart.Roofline{},
		chart.Roofline{Devices: []chart.Device{{Name: "no bandwidth"}}},
		chart.Roofline{Devices: []chart.Device{dev}},
		chart.Roofline{Devices: []chart.Device{dev}, Points: []chart.Point{{Label: "nan", FLOPs: math.NaN(), Bytes: 1, Rate: 1}, {Label: "inf", FLOPs: 1, Bytes: 0, Rate: math.Inf(1)}, {Label: "neg", FLOPs: -1, Bytes: 1, Rate: -1}}},
		chart.Roofline{Devices: []chart.Device{{Name: "no ceilings", DRAM: 1e12}}, Points: []chart.Point{{Label: "x", FLOPs: 1, Bytes: 1, Rate: 1e12, Roof: 1e12}}},
		// A ceiling of 0 FLOP/s (an op with no compute ceiling) looped
		// forever drawing ticks from 0 on a log axis.
		chart.Roofline{Devices: []chart.Device{{Name: "zero ceiling", DRAM: 1e12, Ceilings: []chart.Ceiling{{Name: "none"}}}}, Points: []chart.Point{{Label: "x", FLOPs: 1, Bytes: 1, Rate: 1e12, Roof: 1e12}}},
		chart.Sweep{},
		chart.Occupancy{},
		chart.Simulation{},
		chart.Pareto{},
		chart.Pareto{Series: []chart.ParetoSeries{{Name: "nan", Front: []chart.ParetoPoint{{PerUser: math.NaN(), PerGPU: math.Inf(1)}, {PerUser: -1, PerGPU: 0}}}}},
	} {
		_ = chart.Write(&bytes.Buffer{}, c, chart.Options{Format: "png", Size: chart.Size{Width: 8, Height: 6}, DPI: 50})
	}
}

// TestChartHugeFigures: a figure beyond what a log axis spans (1e300 bytes,
// which failed inside gonum/plot with "Values must be greater than 0 for a
// log scale") is left off the chart and said so, and the chart is drawn.
func TestChartHugeFigures(t *testing.T) {
	dev := chart.Device{Name: "d", DRAM: 1e12, Ceilings: []chart.Ceiling{{Name: "FP32", FLOPS: 1e13}}}
	c := chart.Roofline{Devices: []chart.Device{dev}, Points: []chart.Point{
		{Label: "huge", FLOPs: 1e9, Bytes: 1e306, Rate: 1e9, Roof: 1e-285},
		{Label: "fast", FLOPs: 1e9, Bytes: 1e6, Rate: 1e300},
		{Label: "ok", FLOPs: 1e9, Bytes: 1e6, Rate: 1e12},
	}}
	if err := chart.Write(&bytes.Buffer{}, c, chart.Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	u := c.Unplaced()
	if len(u) != 2 || !strings.HasPrefix(u[0], "huge: beyond the 1e-30 to 1e+30") || !strings.HasPrefix(u[1], "fast: beyond") {
		t.Errorf("unplaced %q; want huge and fast, beyond the axes", u)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]chart.Size{"16x10cm": {Width: 16, Height: 10}, "160x100mm": {Width: 16, Height: 10}, "6x4in": {Width: 15.24, Height: 10.16}} {
		got, err := chart.ParseSize(s)
		if err != nil || math.Abs(got.Width-want.Width) > 1e-9 || math.Abs(got.Height-want.Height) > 1e-9 {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	for _, s := range []string{"16x10", "16cm", "0x10cm", "axbcm", "1000x10cm"} {
		if _, err := chart.ParseSize(s); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}

// BenchmarkChart draws each golden chart as a PNG at its default size and
// 200 dpi; the target is at most 150 ms each.
func BenchmarkChart(b *testing.B) {
	charts := goldenCharts(b)
	for _, name := range []string{"roofline-decode-h100", "roofline-prefill-3gpus", "roofline-ncu-h100", "roofline-dense-50", "occupancy-h100", "sweep-regs-h100", "simulate-stream-h100"} {
		c := charts[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := chart.Write(&bytes.Buffer{}, c, chart.Options{Format: "png", DPI: 200}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// differs compares a PNG with its golden file pixel by pixel, allowing
// 0.5% of pixels to differ (anti-aliasing may vary with the floating-point
// unit).
func differs(t *testing.T, got, want []byte) string {
	a, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	b, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if a.Bounds() != b.Bounds() {
		return "sizes " + a.Bounds().String() + " and " + b.Bounds().String()
	}
	n, diff := 0, 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			n++
			if a.At(x, y) != b.At(x, y) {
				diff++
			}
		}
	}
	if float64(diff) > 0.005*float64(n) {
		return strconv.Itoa(diff) + " of " + strconv.Itoa(n) + " pixels"
	}
	return ""
}

// hostileNames are names an input can carry: escape sequences, a NUL,
// markup, invalid UTF-8.
var hostileNames = []string{"gemm\x1b]52;c;cm0gLXJm\x07", "k\x00<svg onload=alert(1)>&amp;", "bad\xff\xfe\u202e", "a\x0cb\x1b[2J"}

// Every text a chart draws reaches the SVG well-formed, whatever the names:
// titles, device and ceiling names, point labels, measured curves, bars.
func TestChartSVGWellFormed(t *testing.T) {
	h := strings.Join(hostileNames, " ")
	dev := chart.Device{Name: hostileNames[0], DRAM: 3e12, Ceilings: []chart.Ceiling{{Name: hostileNames[1], FLOPS: 1e15}}}
	var pts []chart.Point
	for i, n := range hostileNames {
		pts = append(pts, chart.Point{Label: n, Group: n, FLOPs: 1e9 * float64(i+1), Bytes: 1e8, Rate: 1e13, Roof: 3e13})
	}
	sim := simulationChart(t)
	sim.Title = h
	sim.Measured.Label = hostileNames[2]
	occ := occupancyChart(t)
	occ.Title = h
	for name, c := range map[string]chart.Chart{
		"roofline":   chart.Roofline{Title: h, Devices: []chart.Device{dev}, Points: pts, Filled: hostileNames[3]},
		"simulation": sim,
		"occupancy":  occ,
	} {
		var buf bytes.Buffer
		if err := chart.Write(&buf, c, chart.Options{Format: "svg"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wellFormed(t, name, buf.Bytes())
	}
	svg, err := chart.OpTimes{Title: h, Names: hostileNames, Expected: []float64{1, 2, 3, 4}, LowerBound: []float64{1, 1, 1, 1}}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, "op times", []byte(svg))
}

// wellFormed checks that doc parses as XML to its end.
func wellFormed(t *testing.T, name string, doc []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Errorf("%s: the SVG is not well-formed XML: %v", name, err)
			return
		}
	}
}

// TestReadMeasuredCurveLimit: a file past 64 MiB is an error, not read cut
// short.
func TestReadMeasuredCurveLimit(t *testing.T) {
	big := "kind,ilp,block,warps_per_sm,gbps,gflops\n" + strings.Repeat("read,1,128,4,659.7,0\n", (64<<20)/21+1)
	if _, err := chart.ReadMeasuredCurve(strings.NewReader(big), "f.csv", "stream", 1, 128); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("a 64 MiB measured curve: %v", err)
	}
}
