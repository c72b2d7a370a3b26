package roofline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// randomOps returns, for every op kind, specs of random sizes (log-uniform,
// from a handful of elements to GEMMs of 10^13 FLOPs) in several data types.
func randomOps(t *testing.T, rng *rand.Rand) []ops.Op {
	t.Helper()
	dim := func(lo, hi float64) int64 {
		return int64(math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo))))
	}
	dtypes := []string{"bf16", "fp16", "fp32", "fp64", "tf32", "fp8_e4m3", "int8"}
	var out []ops.Op
	for _, k := range ops.Kinds {
		for range 8 {
			var spec string
			switch k {
			case ops.Matmul:
				spec = fmt.Sprintf("matmul m=%d n=%d k=%d batch=%d", dim(1, 16384), dim(1, 16384), dim(1, 16384), dim(1, 8))
			case ops.Linear:
				spec = fmt.Sprintf("linear tokens=%d in=%d out=%d", dim(1, 16384), dim(8, 16384), dim(8, 16384))
			case ops.LayerNorm, ops.RMSNorm, ops.Softmax:
				spec = fmt.Sprintf("%s rows=%d cols=%d", k, dim(1, 65536), dim(1, 65536))
			case ops.Attention:
				causal := []string{"", " causal", " naive", " causal naive"}[rng.IntN(4)]
				spec = fmt.Sprintf("attention b=%d h=%d sq=%d sk=%d d=%d%s", dim(1, 16), dim(1, 64), dim(1, 8192), dim(1, 8192), []int{32, 64, 128, 256}[rng.IntN(4)], causal)
			case ops.Conv2D:
				spec = fmt.Sprintf("conv2d n=%d c=%d h=%d w=%d k=%d r=3 s=3 pad=1", dim(1, 64), dim(1, 512), dim(3, 256), dim(3, 256), dim(1, 512))
			default:
				spec = fmt.Sprintf("%s n=%d", k, dim(1, 1<<31))
			}
			spec += " dtype=" + dtypes[rng.IntN(len(dtypes))]
			o, err := ops.Parse(spec)
			if err != nil {
				continue // a type the op does not take (int8 softmax, ...)
			}
			out = append(out, o)
		}
	}
	return out
}

// randomOverride writes a device file that overrides some of d's ceilings
// and measured figures with random values, as a user's file might: scaled
// from 0.2× to 5× the catalog's, and some measured figures above their
// ceiling (which the loader must refuse).
func randomOverride(d devices.Device, rng *rand.Rand) string {
	scale := func(v float64) float64 { return v * math.Exp((rng.Float64()*2-1)*math.Log(5)) }
	var b strings.Builder
	fmt.Fprintf(&b, "name: %q\nsources: {r: \"random override\"}\n", d.Name)
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "memory:\n  bandwidth: {value: %gB/s, source: r}\n", scale(d.Memory.BytesPerSecond))
	}
	if rng.IntN(3) == 0 {
		fmt.Fprintf(&b, "l2:\n  bandwidth: {value: %gB/s, source: r}\n", scale(4*d.Memory.BytesPerSecond))
	}
	keys := d.PeakKeys()
	if rng.IntN(2) == 0 {
		k := keys[rng.IntN(len(keys))]
		v := scale(d.Dense[k].PerSecond)
		fmt.Fprintf(&b, "dense:\n  %s: {value: %g, source: r}\n", k, v)
		if _, ok := d.Sparse[k]; ok {
			fmt.Fprintf(&b, "sparse:\n  %s: {value: %g, source: r}\n", k, 2*v)
		}
	}
	if rng.IntN(3) == 0 && len(d.ClusterGPCs) == 0 {
		fmt.Fprintf(&b, "sms: {value: %d, source: r}\n", 1+rng.IntN(1024))
	}
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "measured:\n  how: random\n  when: today\n")
		fmt.Fprintf(&b, "  dram_copy: {value: %gB/s, source: r}\n", scale(d.Memory.BytesPerSecond))
		fmt.Fprintf(&b, "  launch_overhead: {value: %gus, source: r}\n", scale(3))
		k := keys[rng.IntN(len(keys))]
		fmt.Fprintf(&b, "  peaks:\n    %s: {value: %g, source: r}\n", k, scale(d.Dense[k].PerSecond))
	}
	return b.String()
}

// TestLowerBoundNeverAboveExpected is issue 18's property: nothing runs
// faster than its lower bound, so the expected time is never below it, for
// every op kind × every catalog device × measured or datasheet figures ×
// random device-file overrides (seeded, so a failure reproduces).
func TestLowerBoundNeverAboveExpected(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2026))
	base, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	checked, refused := 0, 0
	for _, d := range base.Devices() {
		type variant struct {
			name string
			d    devices.Device
		}
		variants := []variant{{"catalog", d}, {"datasheet", d.Datasheet()}}
		for i := range 8 {
			file := randomOverride(d, rng)
			c, err := base.With("random.yaml", []byte(file))
			if err != nil {
				refused++
				continue
			}
			v, err := c.Lookup(d.Name)
			if err != nil {
				t.Fatal(err)
			}
			variants = append(variants, variant{fmt.Sprintf("override %d", i), v}, variant{fmt.Sprintf("override %d, datasheet", i), v.Datasheet()})
		}
		for _, vr := range variants {
			name, v := vr.name, vr.d
			m, err := New(v)
			if err != nil {
				t.Fatalf("%s (%s): %v", d.Name, name, err)
			}
			for _, o := range randomOps(t, rng) {
				p, err := m.Analyze(o)
				if err != nil {
					continue // a data type the device lacks
				}
				checked++
				if !(p.LowerBound <= p.Expected) || math.IsNaN(p.Expected) {
					t.Errorf("%s (%s), %s: expected %.4g s is below the lower bound %.4g s", d.Name, name, o, p.Expected, p.LowerBound)
				}
			}
		}
	}
	t.Logf("%d ops checked; %d random device files refused", checked, refused)
	if checked < 10000 || refused == 0 {
		t.Errorf("%d ops checked and %d device files refused; the property needs both many checks and some refusals", checked, refused)
	}
}

// TestFlashNeverSlowerThanNaive: for the same attention, flash (its default
// schedule) is never expected slower than the naive three kernels, which
// move the score matrix through DRAM; over random shapes (decode and
// prefill, GQA, causal with the queries at the end of the keys, or full),
// every catalog device, measured or datasheet figures.
func TestFlashNeverSlowerThanNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2026))
	base, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dim := func(lo, hi float64) int64 {
		return int64(math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo))))
	}
	checked := 0
	for _, d := range base.Devices() {
		for _, v := range []devices.Device{d, d.Datasheet()} {
			m, err := New(v)
			if err != nil {
				t.Fatal(err)
			}
			for range 300 {
				kv := dim(1, 64)
				h := kv * []int64{1, 2, 4, 8, 16}[rng.IntN(5)]
				sq := dim(1, 8192)
				if rng.IntN(2) == 0 {
					sq = dim(1, 16)
				}
				sk, mask := dim(1, 131072), ""
				if rng.IntN(2) == 0 && sk >= sq {
					mask = " causal" // queries aligned to the end of the keys
				}
				spec := fmt.Sprintf("attention b=%d h=%d kv=%d sq=%d sk=%d d=%d%s dtype=%s", dim(1, 256), h, kv, sq, sk,
					[]int{64, 80, 128, 256}[rng.IntN(4)], mask, []string{"bf16", "fp16", "fp8"}[rng.IntN(3)])
				flash, err := ops.Parse(spec)
				if err != nil {
					continue // over 2^53 FLOPs
				}
				naive := flash
				naive.Naive = true
				pf, err := m.Analyze(flash)
				if err != nil {
					continue // a data type the device lacks
				}
				pn, err := m.Analyze(naive)
				if err != nil {
					t.Fatal(err)
				}
				checked++
				if pf.Expected > pn.Expected {
					t.Errorf("%s (%s): flash %.4g s, naive %.4g s", d.Name, spec, pf.Expected, pn.Expected)
				}
			}
		}
	}
	if checked < 5000 {
		t.Errorf("only %d shapes checked", checked)
	}
	t.Logf("%d shapes checked", checked)
}
