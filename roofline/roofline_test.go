package roofline

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

func device(t testing.TB, name string, files ...string) devices.Device {
	t.Helper()
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if c, err = c.With(f, data); err != nil {
			t.Fatal(err)
		}
	}
	d, err := c.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func analyze(t *testing.T, d devices.Device, spec string) Point {
	t.Helper()
	o, err := ops.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Analyze(d, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }

// TestCeilings checks ceilings, ridge, bound and lower bound against hand
// calculations from the H100 SXM datasheet (989.4 TFLOP/s dense BF16,
// 66.9 TFLOP/s FP32, 3.35 TB/s).
func TestCeilings(t *testing.T) {
	h := device(t, "h100").Datasheet()
	p := analyze(t, h, "matmul m=4096 n=4096 k=4096 dtype=bf16")
	flops, bytes := 2*math.Pow(4096, 3), 3*4096*4096*2.0
	if p.PeakKey != "bf16_tensor" || !near(p.ComputeCeiling, 989.4e12) || !near(p.Ridge, 989.4e12/3.35e12) {
		t.Errorf("bf16 matmul: %s %g ridge %g", p.PeakKey, p.ComputeCeiling, p.Ridge)
	}
	if p.Bound != ComputeBound || !near(p.AI, flops/bytes) || !near(p.LowerBound, flops/989.4e12) || !near(p.Attainable, 989.4e12) {
		t.Errorf("bf16 matmul: %s AI %g lower %g attainable %g", p.Bound, p.AI, p.LowerBound, p.Attainable)
	}
	if p.MemoryLevel != devices.DRAM || !strings.Contains(strings.Join(mustNew(t, h).Notes, " "), "no datasheet L2 bandwidth") {
		t.Errorf("H100 without an L2 figure should use DRAM and say so: %s %v", p.MemoryLevel, mustNew(t, h).Notes)
	}
	p = analyze(t, h, "copy n=1073741824 dtype=fp32")
	if p.Bound != MemoryBound || p.PeakKey != "fp32" || !near(p.LowerBound, 8*1073741824/3.35e12) || p.Attainable != 0 {
		t.Errorf("copy: %s %s lower %g attainable %g", p.Bound, p.PeakKey, p.LowerBound, p.Attainable)
	}
	// A layernorm in bf16 computes in fp32 on CUDA cores: AI = 7/4 per element.
	p = analyze(t, h, "layernorm rows=4096 cols=4096 dtype=bf16")
	if p.PeakKey != "fp32" || p.Bound != MemoryBound || !near(p.Attainable, p.AI*3.35e12) {
		t.Errorf("layernorm: %s %s %g", p.PeakKey, p.Bound, p.Attainable)
	}
	// fp32 matmuls run on CUDA cores (no TF32 unless asked).
	if p := analyze(t, h, "matmul m=4096 n=4096 k=4096 dtype=fp32"); p.PeakKey != "fp32" || !near(p.ComputeCeiling, 66.9e12) {
		t.Errorf("fp32 matmul: %s %g", p.PeakKey, p.ComputeCeiling)
	}
	if p := analyze(t, h, "matmul m=4096 n=4096 k=4096 dtype=fp64"); p.PeakKey != "fp64_tensor" {
		t.Errorf("fp64 matmul: %s", p.PeakKey)
	}
}

func mustNew(t *testing.T, d devices.Device) *Model {
	m, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestL2Ceiling: the one rule on every GPU. Under a cold L2 (the default)
// every op is placed against DRAM, even on a device whose catalog gives an
// L2 bandwidth; under a warm L2 an op whose working set fits in L2 is
// placed against L2, a larger one against DRAM.
func TestL2Ceiling(t *testing.T) {
	a := device(t, "a100", "a100.yaml")
	for _, c := range []struct {
		cond  Conditions
		op    string
		level devices.Level
		bw    float64
	}{
		{Conditions{}, "add n=1048576 dtype=fp32", devices.DRAM, 2039e9}, // 12 MiB < 40 MiB
		{Conditions{L2: L2Warm}, "add n=1048576 dtype=fp32", devices.L2, 5.4e12},
		{Conditions{L2: L2Warm}, "add n=67108864 dtype=fp32", devices.DRAM, 2039e9}, // 768 MiB
	} {
		o, err := ops.Parse(c.op)
		if err != nil {
			t.Fatal(err)
		}
		p, err := mustNew(t, a).Under(c.cond).Analyze(o)
		if err != nil {
			t.Fatal(err)
		}
		if p.MemoryLevel != c.level || !near(p.MemoryCeiling, c.bw) {
			t.Errorf("%s under %s: %s at %g B/s, want %s at %g", c.op, c.cond, p.MemoryLevel, p.MemoryCeiling, c.level, c.bw)
		}
		if c.cond == (Conditions{}) && p.Expected < p.LowerBound {
			t.Errorf("%s: expected %g below the lower bound %g", c.op, p.Expected, p.LowerBound)
		}
	}
}

// TestMeasured: a device's measured figures replace the catalog fractions
// in the expected time, and the model says so.
func TestMeasured(t *testing.T) {
	plain := device(t, "h100").Datasheet()
	meas := device(t, "h100", "h100-measured.yaml")
	meas.Measured.Peaks = map[string]float64{"bf16_tensor": 700e12, "fp32": 1e12}
	m := mustNew(t, meas)
	if !strings.Contains(strings.Join(m.Notes, " "), "measured figures") {
		t.Errorf("notes %v do not mention measured figures", m.Notes)
	}
	const n = 1 << 30
	want := 5e-6 + mustNew(t, plain).Efficiency().Ramp + 8.0*n/3.0e12
	if p := analyze(t, meas, "copy n=1073741824 dtype=fp32"); !near(p.Expected, want) {
		t.Errorf("copy with measured 3.0 TB/s and 5 us: %g, want %g", p.Expected, want)
	}
	a, b := analyze(t, plain, "matmul m=8192 n=8192 k=8192 dtype=bf16"), analyze(t, meas, "matmul m=8192 n=8192 k=8192 dtype=bf16")
	if r := a.Expected / b.Expected; math.Abs(r-700.0/(0.74*989.4)) > 0.02 {
		t.Errorf("measured 700 TFLOP/s vs catalog 0.74×989.4: time ratio %g", r)
	}
	if a.LowerBound != b.LowerBound {
		t.Error("measured figures must not change the datasheet lower bound")
	}
	// A measured CUDA-core peak is an FMA-loop rate, not an SGEMM rate.
	a, b = analyze(t, plain, "matmul m=4096 n=4096 k=4096 dtype=fp32"), analyze(t, meas, "matmul m=4096 n=4096 k=4096 dtype=fp32")
	if math.Abs((a.Expected-mustNew(t, plain).FixedCost())-(b.Expected-m.FixedCost())) > 1e-12 {
		t.Errorf("fp32 GEMM moved with the measured FMA peak: %g vs %g", a.Expected, b.Expected)
	}
}

// TestOtherGPUs: the same model holds elsewhere; an H200 (HBM3e, 4.8 TB/s)
// runs a memory-bound op faster than an H100 by its bandwidth ratio times
// the streaming fractions, and a compute-bound GEMM at the same speed.
func TestOtherGPUs(t *testing.T) {
	h100, h200, a100 := device(t, "h100").Datasheet(), device(t, "h200").Datasheet(), device(t, "a100 sxm4 80gb").Datasheet()
	copy100 := analyze(t, h100, "copy n=1073741824 dtype=fp32")
	copy200 := analyze(t, h200, "copy n=1073741824 dtype=fp32")
	fixed := mustNew(t, h100).FixedCost()
	want := (4.8e12 * 0.84) / (3.35e12 * 0.905)
	got := (copy100.Expected - fixed) / (copy200.Expected - fixed)
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("H200/H100 copy speed-up %g, want %g", got, want)
	}
	g100 := analyze(t, h100, "matmul m=8192 n=8192 k=8192 dtype=bf16")
	g200 := analyze(t, h200, "matmul m=8192 n=8192 k=8192 dtype=bf16")
	if g100.Expected != g200.Expected {
		t.Errorf("compute-bound GEMM: H100 %g H200 %g", g100.Expected, g200.Expected)
	}
	// A100 large GEMM: Ampere's 0.80 of 312 TFLOP/s.
	ga := analyze(t, a100, "matmul m=8192 n=8192 k=8192 dtype=bf16")
	if tf := ga.FLOPs / (ga.Expected - fixed) / 1e12; tf < 230 || tf > 250 {
		t.Errorf("A100 8192³ bf16 at %.0f TFLOP/s; want about 0.80×312 less wave losses", tf)
	}
	// No fp8 tensor cores on the A100: CUDA cores cannot run fp8 either.
	o, _ := ops.Parse("matmul m=64 n=64 k=64 dtype=fp8")
	if _, err := Analyze(a100, o); err == nil {
		t.Error("fp8 on an A100: no error")
	}
}

func TestSummarize(t *testing.T) {
	h := device(t, "h100")
	data, err := os.ReadFile("../examples/llama3-8b-decode.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, err := ops.ParseWorkload("decode", data)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := mustNew(t, h).AnalyzeWorkload(w)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(pts)
	var sum float64
	for _, p := range pts {
		sum += p.Expected
		if p.Bound != MemoryBound {
			t.Errorf("decode op %s is %s-bound", p.Name, p.Bound)
		}
	}
	if !near(s.Expected, sum) || s.MemoryBoundShare != 1 || len(s.Top) != 5 {
		t.Errorf("summary %+v, sum %g", s, sum)
	}
	// Decode streams the layer's weights (218,103,808 bf16 parameters): the
	// MLP projections (117 MB each) take the most time. Split-KV attention
	// reads the 16.8 MB cache once for all 32 query heads, less than the
	// 33.5 MB of q_proj and of o_proj, which come next.
	for _, i := range s.Top[:3] {
		if name := pts[i].Name; name != "gate_proj" && name != "up_proj" && name != "down_proj" {
			t.Errorf("op %s among the top 3, want the MLP projections", name)
		}
	}
	for _, i := range s.Top[3:5] {
		if name := pts[i].Name; name != "q_proj" && name != "o_proj" {
			t.Errorf("op %s 4th or 5th, want q_proj and o_proj", name)
		}
	}
}

func BenchmarkAnalyze10k(b *testing.B) {
	h := device(b, "h100")
	m, err := New(h)
	if err != nil {
		b.Fatal(err)
	}
	var list []ops.Op
	for _, r := range readRoofBench(b) {
		o, err := ops.ParseBench(r.op, r.dtype, r.shape, r.note)
		if err != nil {
			b.Fatal(err)
		}
		list = append(list, o)
	}
	b.ResetTimer()
	for b.Loop() {
		for i := range 10000 {
			if _, err := m.Analyze(list[i%len(list)]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestUnsupported: an op whose type a device has no rate for is an
// UnsupportedError that names the gap in the device's terms, and bf16 on a
// part older than Ampere points at fp16, which its tensor cores run.
func TestUnsupported(t *testing.T) {
	for _, tc := range []struct {
		dev, spec, reason string
		suggest           devices.DType
	}{
		{"a100", "matmul m=64 n=64 k=64 dtype=fp8", "no fp8 tensor cores", ""},
		{"v100", "matmul m=64 n=64 k=64 dtype=bf16", "no bf16 tensor cores", devices.FP16},
		{"t4", "attention b=1 h=8 s=128 d=64 dtype=bf16", "no bf16 tensor cores", devices.FP16},
	} {
		o, err := ops.Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = mustNew(t, device(t, tc.dev)).Analyze(o)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || ue.Reason() != tc.reason || ue.Suggest != tc.suggest {
			t.Errorf("%s %s: %v; want %q, suggesting %q", tc.dev, tc.spec, err, tc.reason, tc.suggest)
		}
	}
}

// TestQuantGEMM: a quantized GEMM runs the activation's quantization
// (three kernels for a per-tensor scale: zero the maximum, reduce it,
// scale; one for group scales), then the GEMM on the scheme's tensor
// cores, and costs more than the bare fp8 GEMM; fp4 schemes are refused where no fp4 tensor cores
// exist, naming the scheme.
func TestQuantGEMM(t *testing.T) {
	h := device(t, "h100")
	q := analyze(t, h, "matmul m=4096 n=4096 k=4096 quant=fp8")
	bare := analyze(t, h, "matmul m=4096 n=4096 k=4096 dtype=fp8")
	if q.Kernels != 4 || q.PeakKey != "fp8_tensor" || q.Expected <= bare.Expected {
		t.Errorf("quant=fp8: %d kernels on %s, %g s (bare fp8 %g s)", q.Kernels, q.PeakKey, q.Expected, bare.Expected)
	}
	for _, s := range []string{"nvfp4", "mxfp4"} {
		o, _ := ops.Parse("matmul m=64 n=64 k=64 quant=" + s)
		_, err := Analyze(h, o)
		var u *UnsupportedError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "quant="+s) || !strings.Contains(err.Error(), "no fp4 tensor cores") {
			t.Errorf("quant=%s on an H100: %v", s, err)
		}
	}
	if p := analyze(t, device(t, "b200"), "matmul m=4096 n=4096 k=4096 quant=nvfp4"); p.PeakKey != "fp4_tensor" || p.Kernels != 2 {
		t.Errorf("nvfp4 on a B200: %s, %d kernels", p.PeakKey, p.Kernels)
	}
}

// TestPagedAttention: an engine's paged attention layer runs one more
// kernel (the cache append) than the attention kernel and costs the
// family's fixed engine overhead besides; an fp8 KV cache halves the K/V
// bytes.
func TestPagedAttention(t *testing.T) {
	h := device(t, "h100")
	plain := analyze(t, h, "attention b=8 h=32 kv=8 sq=1 sk=4096 d=128")
	paged := analyze(t, h, "attention b=8 h=32 kv=8 sq=1 sk=4096 d=128 paged")
	e, _ := h.Efficiency()
	if paged.Kernels != plain.Kernels+1 || paged.Work() < plain.Work()+e.PagedAttention {
		t.Errorf("paged: %d kernels, work %g s; plain %d, %g s (+%g s)", paged.Kernels, paged.Work(), plain.Kernels, plain.Work(), e.PagedAttention)
	}
	fp8 := analyze(t, h, "attention b=8 h=32 kv=8 sq=1 sk=4096 d=128 kv_dtype=fp8")
	kv := 2.0 * 8 * 8 * 4096 * 128
	if !near(plain.Bytes-fp8.Bytes, kv) {
		t.Errorf("fp8 KV: %g bytes, bf16 %g; want %g fewer", fp8.Bytes, plain.Bytes, kv)
	}
}
