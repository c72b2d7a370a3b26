package chart

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// visibleDecades is how far, in decades along x, a roof segment runs inside
// the plot's axes (a horizontal ceiling inside the y range counts by its x
// extent; a slope by the part of it between the axes' corners).
func visibleDecades(seg [2][2]float64, xmin, xmax, ymin, ymax float64) float64 {
	x0, y0, x1, y1 := seg[0][0], seg[0][1], seg[1][0], seg[1][1]
	if !(x1 > x0) {
		return 0
	}
	lx0, lx1 := math.Log10(x0), math.Log10(x1)
	ly0, ly1 := math.Log10(y0), math.Log10(y1)
	lo, hi := math.Max(lx0, math.Log10(xmin)), math.Min(lx1, math.Log10(xmax))
	// The y range clips the segment too, on a log-log line y is linear in x.
	if ly1 != ly0 {
		at := func(ly float64) float64 { return lx0 + (ly-ly0)*(lx1-lx0)/(ly1-ly0) }
		a, b := at(math.Log10(ymin)), at(math.Log10(ymax))
		lo, hi = math.Max(lo, math.Min(a, b)), math.Min(hi, math.Max(a, b))
	} else if y0 < ymin || y0 > ymax {
		return 0
	}
	return hi - lo
}

// hiddenRoofs lists the roofs c names that its axes do not show for at
// least a fifth of a decade.
func hiddenRoofs(c Roofline) ([]string, error) {
	var out []string
	for _, widen := range []float64{1, 10} {
		p, lab, _, err := c.plot(widen)
		if err != nil {
			return nil, err
		}
		for _, r := range lab.named {
			seg := [2][2]float64{{r.seg[0].X, r.seg[0].Y}, {r.seg[1].X, r.seg[1].Y}}
			if d := visibleDecades(seg, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max); d < 0.2 {
				out = append(out, fmt.Sprintf("%s (%.2f decades visible, widen %g)", r.name, d, widen))
			}
		}
	}
	return out, nil
}

// TestRoofsShown: the chart shows every roof it names, on any set of ops.
// (With every op compute-bound, the axes began right of the ridge and the
// "DRAM 3.35 TB/s" label floated with no slope: the README's own op, a 4096³
// bf16 matmul.)
func TestRoofsShown(t *testing.T) {
	h100 := Device{Name: "H100 SXM", DRAM: 3.35e12, L2: 10e12, Ceilings: []Ceiling{{"BF16 tensor", 989.4e12}, {"FP32", 66.9e12}}}
	matmul := Point{Label: "matmul 4096³ bf16", FLOPs: 2 * 4096 * 4096 * 4096, Bytes: 3 * 4096 * 4096 * 2}
	matmul.Roof = 989.4e12
	matmul.Rate = 0.8 * matmul.Roof
	cases := map[string]Roofline{"README's matmul": {Devices: []Device{h100}, Points: []Point{matmul}}}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		var devs []Device
		for d := 0; d <= r.Intn(3); d++ {
			dev := Device{Name: fmt.Sprintf("gpu%d", d), DRAM: math.Pow(10, 11+r.Float64()*2)}
			if r.Intn(2) == 0 {
				dev.L2 = dev.DRAM * (1.5 + 3*r.Float64())
			}
			for k := 0; k < r.Intn(4); k++ {
				dev.Ceilings = append(dev.Ceilings, Ceiling{fmt.Sprintf("c%d", k), math.Pow(10, 12+r.Float64()*3.5)})
			}
			devs = append(devs, dev)
		}
		c := Roofline{Devices: devs}
		// Ops anywhere from deeply memory-bound to far past every ridge.
		lo := -2 + r.Float64()*6
		for k := 0; k < 1+r.Intn(12); k++ {
			ai := math.Pow(10, lo+r.Float64()*r.Float64()*3)
			d := devs[r.Intn(len(devs))]
			roof := d.DRAM * ai
			for _, cl := range d.Ceilings {
				roof = math.Min(roof, cl.FLOPS)
			}
			c.Points = append(c.Points, Point{Label: fmt.Sprint("op", k), FLOPs: ai * 1e9, Bytes: 1e9,
				Rate: roof * (0.05 + 0.95*r.Float64()), Roof: roof})
		}
		cases[fmt.Sprint("random ", i)] = c
	}
	for name, c := range cases {
		hidden, err := hiddenRoofs(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(hidden) > 0 {
			t.Errorf("%s: roofs named but not shown: %v", name, hidden)
		}
	}
}

// TestGroupColoursFixed: a group has one colour in every chart, whatever
// the other groups and their order. (Colours went by order of appearance:
// matmuls were blue in a prefill chart and red in a decode chart that began
// with a norm.)
func TestGroupColoursFixed(t *testing.T) {
	h100 := Device{Name: "H100 SXM", DRAM: 3.35e12, Ceilings: []Ceiling{{"BF16 tensor", 989.4e12}}}
	orders := [][]string{
		{GroupMatmul, GroupAttention, GroupNorm, GroupElementwise},
		{GroupNorm, GroupMatmul},
		{GroupElementwise, GroupAttention, "custom"},
		{"custom", GroupElementwise},
		{GroupL1, GroupL2, GroupDRAM},
		{GroupDRAM, "", GroupL1},
	}
	colour := map[string]string{}
	owner := map[string]string{}
	for _, groups := range orders {
		c := Roofline{Devices: []Device{h100}}
		for i, g := range groups {
			c.Points = append(c.Points, Point{Label: fmt.Sprint("op", i), Group: g, FLOPs: 1e9 * float64(i+1), Bytes: 1e8, Rate: 1e12})
		}
		_, _, leg, err := c.plot(1)
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range leg.names {
			look := leg.looks[i]
			if !strings.HasPrefix(look, "glyph") {
				continue
			}
			if prev, ok := colour[name]; ok && prev != look {
				t.Errorf("%v: %q is %s, elsewhere %s", groups, name, look, prev)
			}
			colour[name] = look
			if o, ok := owner[look]; ok && o != name && slicesContains(fixedGroups, name) && slicesContains(fixedGroups, o) {
				t.Errorf("%q and %q share %s", name, o, look)
			}
			owner[look] = name
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
