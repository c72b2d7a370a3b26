package reports

import (
	"bytes"
	"flag"
	"image/png"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden charts in testdata")

// testChart is ten ops of a transformer layer on two devices, with three
// measured points and one op (a copy) that has no FLOPs.
func testChart() RooflineChart {
	h100 := ChartDevice{Name: "H100 SXM", DRAM: 3.35e12, Ceilings: []ChartCeiling{{"BF16 tensor", 989.4e12}, {"FP32", 66.9e12}}}
	a100 := ChartDevice{Name: "A100 SXM4", DRAM: 2.039e12, L2: 5.4e12, Ceilings: []ChartCeiling{{"BF16 tensor", 312e12}, {"FP32", 19.5e12}}}
	c := RooflineChart{Title: "Roofline: H100 SXM vs A100 SXM4\nten ops", Devices: []ChartDevice{h100, a100}}
	ops := []struct {
		name         string
		flops, bytes float64
	}{
		{"q_proj", 137e9, 100e6}, {"k_proj", 34e9, 42e6}, {"attention", 554e9, 537e6}, {"o_proj", 137e9, 100e6},
		{"mlp_norm", 117e6, 67e6}, {"gate_proj", 481e9, 268e6}, {"silu", 176e6, 235e6}, {"gate_x_up", 59e6, 352e6},
		{"down_proj", 481e9, 268e6}, {"residual", 17e6, 100e6}, {"copy", 0, 8e6},
	}
	for d, dev := range c.Devices {
		for _, o := range ops {
			peak := dev.Ceilings[0].FLOPS
			if o.flops/o.bytes < 10 {
				peak = dev.Ceilings[1].FLOPS
			}
			label := ""
			if d == 0 {
				label = o.name
			}
			c.Points = append(c.Points, ChartPoint{Label: label, Device: d, FLOPs: o.flops, Bytes: o.bytes, Rate: math.Min(peak, o.flops/o.bytes*dev.DRAM)})
		}
	}
	for _, m := range []struct{ flops, bytes, s float64 }{{137e9, 100e6, 193.6e-6}, {554e9, 537e6, 1.035e-3}, {117e6, 67e6, 32e-6}} {
		c.Points = append(c.Points, ChartPoint{FLOPs: m.flops, Bytes: m.bytes, Rate: m.flops / m.s, Measured: true})
	}
	return c
}

func TestChartGolden(t *testing.T) {
	for _, format := range []string{"svg", "png"} {
		var buf bytes.Buffer
		if err := testChart().Write(&buf, format, DefaultChartSize, 96); err != nil {
			t.Fatal(err)
		}
		golden := "testdata/roofline." + format
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
		if d := differs(t, format, buf.Bytes(), want); d != "" {
			t.Errorf("%s differs from %s: %s; look at it and run go test ./reports -update if the change is right", format, golden, d)
		}
	}
}

func TestChartContents(t *testing.T) {
	var buf bytes.Buffer
	if err := testChart().Write(&buf, "svg", ChartSize{16, 10}, 96); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{"BF16 tensor 989 (ridge 295)", "BF16 tensor 312 (ridge 153)", "FP32 67 (ridge 20)", "DRAM 3.35 TB/s",
		"L2 5.4 TB/s", "H100 SXM", "A100 SXM4", "measured", "predicted (attainable)", "ridge point", "q_proj", "residual",
		">0.1<", ">1<", ">10<", ">100<", ">1k<", "ten ops"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Contains(svg, ">copy<") {
		t.Error("a 0-FLOP op was drawn")
	}
	if u := testChart().Unplaced(); len(u) != 1 || !strings.HasPrefix(u[0], "copy: 0 FLOPs") {
		t.Errorf("unplaced %v", u)
	}
}

// TestChartBadInput: nothing a caller passes makes the chart panic.
func TestChartBadInput(t *testing.T) {
	dev := ChartDevice{Name: "d", DRAM: 1e12, Ceilings: []ChartCeiling{{"FP32", 1e13}}}
	for _, c := range []RooflineChart{
		{},
		{Devices: []ChartDevice{{Name: "no bandwidth"}}},
		{Devices: []ChartDevice{dev}},
		{Devices: []ChartDevice{dev}, Points: []ChartPoint{{Label: "nan", FLOPs: math.NaN(), Bytes: 1, Rate: 1}, {Label: "inf", FLOPs: 1, Bytes: 0, Rate: math.Inf(1)}, {Label: "neg", FLOPs: -1, Bytes: 1, Rate: -1}}},
		{Devices: []ChartDevice{{Name: "no ceilings", DRAM: 1e12}}, Points: []ChartPoint{{Label: "x", FLOPs: 1, Bytes: 1, Rate: 1e12}}},
	} {
		var buf bytes.Buffer
		_ = c.Write(&buf, "png", ChartSize{8, 6}, 50)
	}
	if err := (RooflineChart{Devices: []ChartDevice{dev}}).Write(&bytes.Buffer{}, "gif", DefaultChartSize, 96); err == nil {
		t.Error("gif: no error")
	}
}

func TestParseChartSize(t *testing.T) {
	for s, want := range map[string]ChartSize{"16x10cm": {16, 10}, "160x100mm": {16, 10}, "6x4in": {15.24, 10.16}} {
		got, err := ParseChartSize(s)
		if err != nil || math.Abs(got.Width-want.Width) > 1e-9 || math.Abs(got.Height-want.Height) > 1e-9 {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	for _, s := range []string{"16x10", "16cm", "0x10cm", "axbcm", "1000x10cm"} {
		if _, err := ParseChartSize(s); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}

func TestDecadeTicks(t *testing.T) {
	var labels []string
	for _, tk := range decadeTicks(0.01, 1e4) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.01 0.1 1 10 100 1k 10k" {
		t.Errorf("labels %q", got)
	}
}

func BenchmarkChartPNG(b *testing.B) {
	c := testChart()
	for b.Loop() {
		if err := c.Write(&bytes.Buffer{}, "png", DefaultChartSize, DefaultDPI); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChartSVG(b *testing.B) {
	c := testChart()
	for b.Loop() {
		if err := c.Write(&bytes.Buffer{}, "svg", DefaultChartSize, DefaultDPI); err != nil {
			b.Fatal(err)
		}
	}
}

// differs compares a chart with its golden file: SVG byte for byte, PNG
// pixel by pixel allowing 0.5% of pixels to differ (anti-aliasing may vary
// with the floating-point unit).
func differs(t *testing.T, format string, got, want []byte) string {
	if format == "svg" {
		if !bytes.Equal(got, want) {
			return "bytes differ"
		}
		return ""
	}
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
