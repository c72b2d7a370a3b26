package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/synth"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/occupancy"
)

// encodedEntry is a list entry as encoding/json writes it in jsonList's
// place, less the newline.
func encodedEntry(t *testing.T, v any) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// TestNCUJSONAsEncodingJSON: the appender writes each of a generated
// export's kernels, and kernels with every field and odd value changed,
// byte for byte as encoding/json does; a value encoding/json refuses (NaN,
// infinity) is left to it.
func TestNCUJSONAsEncodingJSON(t *testing.T) {
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ncu.ReadLaunches(synth.NCUExport(3000), ncu.MaxKernels)
	if err != nil {
		t.Fatal(err)
	}
	as := l.Analyze(d).Slice()
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "plain", `q"uote\back`, "<b>&amp;</b>", "tab\tnew\nline\rcr\bbs\fff\x00\x01\x1f\x7f", "漢字…", "\u2028\u2029",
		"bad \xff\xfe utf8 \xc3", "é\u00e9\U0001F600"}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 1.5, 1e-6, 9.99e-7, 1e-7, 1.234e-300, 1e20, 1e21, 1.5e21, -2.5e-9, 123456789.123, 5e-324,
		math.MaxFloat64, 1.0 / 3}
	pick := func() float64 { return floats[rng.IntN(len(floats))] }
	text := func() string { return texts[rng.IntN(len(texts))] }
	for i := range 3000 {
		a := as[rng.IntN(len(as))]
		if i%2 == 1 {
			a.Name, a.FullName, a.Device, a.Bound, a.Occupancy.Error = text(), text(), text(), text(), text()
			a.Duration, a.FLOPs, a.BoundShare, a.Occupancy.Theoretical = pick(), pick(), pick(), pick()
			a.ID, a.Block.X, a.Grid.Z = rng.IntN(1<<40)-1<<39, rng.IntN(2000)-1, rng.IntN(3)
			a.CC = devices.CC{Major: rng.IntN(12), Minor: rng.IntN(3)}
			if rng.IntN(3) == 0 {
				a.CC = devices.CC{}
			}
			switch rng.IntN(3) {
			case 0:
				a.Launch = nil
			case 1:
				a.Launch = &ncu.Launch{RegistersPerThread: rng.IntN(256), StaticSmem: rng.IntN(1 << 17), DynamicSmem: rng.IntN(5), SmemConfig: rng.IntN(3) * 1024,
					ClusterSize: rng.IntN(3), Barriers: rng.IntN(2)}
			}
			for _, s := range []*[]string{&a.Missing, &a.Implausible} {
				switch rng.IntN(3) {
				case 0:
					*s = nil
				case 1:
					*s = []string{}
				default:
					*s = []string{text(), text()}
				}
			}
			a.Work, a.Traffic = append([]ncu.Work(nil), a.Work...), append([]ncu.Traffic(nil), a.Traffic...)
			a.Compute, a.Memory = append([]ncu.Rate(nil), a.Compute...), append([]ncu.LevelRate(nil), a.Memory...)
			for j := range a.Work {
				a.Work[j].FLOPs, a.Work[j].DType = pick(), devices.DType(text())
			}
			for j := range a.Compute {
				a.Compute[j].PerSecond, a.Compute[j].Peak, a.Compute[j].Share = pick(), pick(), pick()
			}
			for j := range a.Memory {
				a.Memory[j].Bytes, a.Memory[j].Ceiling, a.Memory[j].Share, a.Memory[j].Intensity = pick(), pick(), pick(), pick()
			}
			switch rng.IntN(4) {
			case 0:
				a.Work, a.Compute = nil, nil
			case 1:
				a.Traffic, a.Memory = []ncu.Traffic{}, []ncu.LevelRate{}
			}
			th, ach := pick(), pick()
			a.Kernel.Occupancy.Theoretical, a.Kernel.Occupancy.Achieved = &th, nil
			if rng.IntN(2) == 0 {
				a.Kernel.Occupancy.Theoretical, a.Kernel.Occupancy.Achieved = nil, &ach
			}
			a.Kernel.Occupancy.Limiters = occupancy.Limiter(rng.IntN(32))
			a.Occupancy.By[rng.IntN(5)] = occupancy.Unlimited
			a.Occupancy.Match = rng.IntN(2) == 0
		}
		want, err := encodedEntry(t, &a)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendEntry([]byte("x"), &a)
		if !ok || string(got[1:]) != string(want) {
			t.Fatalf("entry %d (%v):\n%s\nencoding/json:\n%s", i, ok, got, want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		a := as[0]
		a.BoundShare = bad
		if _, err := encodedEntry(t, &a); err == nil {
			t.Fatalf("encoding/json takes %g", bad)
		}
		if got, ok := appendEntry([]byte("x"), &a); ok || string(got) != "x" {
			t.Errorf("%g: appended %q, %v; want it left to encoding/json", bad, got, ok)
		}
	}
	if _, ok := appendEntry(nil, strings.NewReader("")); ok {
		t.Error("a type not written here was appended")
	}
}
