package model

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
)

func lookup(t testing.TB, name string) devices.Device {
	d, err := devices.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func builtin(t testing.TB, name string) Config {
	c, err := LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The KV cache the reference decoder allocates (cache_bytes: layers × 2 ×
// batch × kv_heads × (ctx + 1) × head_dim × 2 bytes) is the model's KV total.
func TestKVMatchesMeasuredCache(t *testing.T) {
	recs, _ := testfile.CSV(t, "testdata/ref_bench_h100.csv")
	d := lookup(t, "h100")
	n := 0
	for _, r := range recs {
		if r[5] != "decode" {
			continue
		}
		b, _ := strconv.ParseInt(r[6], 10, 64)
		ctx, _ := strconv.ParseInt(r[8], 10, 64)
		want, _ := strconv.ParseFloat(r[14], 64)
		m, err := builtin(t, r[1]).Memory(Shape{Phase: Decode, Batch: b, Ctx: ctx}, d)
		if err != nil {
			t.Fatal(err)
		}
		if m.KV != want {
			t.Errorf("%s b=%d ctx=%d: KV %.0f bytes, the reference allocated %.0f", r[1], b, ctx, m.KV, want)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no decode rows")
	}
}

func TestMemory(t *testing.T) {
	h100 := lookup(t, "h100")
	for _, tc := range []struct {
		model      string
		s          Shape
		perToken   float64 // KV bytes per token, derived by hand
		kv         float64
		weights    float64
		fits       bool
		smallestTP int64
	}{
		// 32 layers × 2 (K, V) × 8 heads × 128 × 2 bytes.
		{"llama-3.1-8b", Shape{Phase: Decode, Batch: 1, Ctx: 8191}, 131072, 131072 * 8192, 16060522496, true, 1},
		// MLA: 61 layers × (512 latent + 64 rotary key) × 2 bytes. In the
		// fp8 its quantization_config ships, 8 H100s hold 78.7 GiB of
		// weights each, more than the 77.6 GiB usable once the CUDA context
		// and NCCL's communicator are out: 16 (in bf16, 32).
		{"deepseek-v3", Shape{Phase: Decode, Batch: 1, Ctx: 1023, Weights: "bf16"}, 61 * 576 * 2, 61 * 576 * 2 * 1024, 0, false, 32},
		{"deepseek-v3", Shape{Phase: Decode, Batch: 1, Ctx: 1023}, 61 * 576 * 2, 61 * 576 * 2 * 1024, 0, false, 16},
		// Mistral v0.1 keeps its 4096-token window: 32 × 2 × 8 × 128 × 2 × 4096.
		{"mistral-7b-v0.1", Shape{Phase: Decode, Batch: 1, Ctx: 32767}, 131072, 131072 * 4096, 7241732096 * 2, true, 1},
		// Gemma 2: 21 of 42 layers slide over 4096 tokens; 2 × 8 × 256 × 2 = 8192 per layer.
		{"gemma-2-9b", Shape{Phase: Decode, Batch: 1, Ctx: 8191}, 42 * 8192, 21*8192*4096 + 21*8192*8192, 9241705984 * 2, true, 1},
		// Llama-3.1-70B in bf16 on one H100: 141 GB of weights.
		{"llama-3.1-70b", Shape{Phase: Decode, Batch: 32, Ctx: 8191}, 80 * 2 * 8 * 128 * 2, 80 * 2 * 8 * 128 * 2 * 8192 * 32, 70553706496 * 2, false, 4},
	} {
		c := builtin(t, tc.model)
		m, err := c.Memory(tc.s, h100)
		if err != nil {
			t.Fatal(err)
		}
		if m.KVPerToken != tc.perToken || m.KV != tc.kv {
			t.Errorf("%s: KV %.0f per token, %.0f in all; want %.0f, %.0f", tc.model, m.KVPerToken, m.KV, tc.perToken, tc.kv)
		}
		if tc.weights > 0 && m.Weights != tc.weights {
			t.Errorf("%s: weights %.0f bytes, want %.0f", tc.model, m.Weights, tc.weights)
		}
		if m.Fits != tc.fits || c.SmallestTP(tc.s, h100) != tc.smallestTP {
			t.Errorf("%s: fits %v, smallest tp %d; want %v, %d", tc.model, m.Fits, c.SmallestTP(tc.s, h100), tc.fits, tc.smallestTP)
		}
	}
}

// 79.2 GiB of an 80 GiB H100 is allocatable (85,017,493,504 bytes as CUDA
// reports).
func TestAllocatable(t *testing.T) {
	if got := Allocatable(lookup(t, "h100")); math.Abs(got-85017493504) > 1 {
		t.Errorf("allocatable %.0f bytes on an H100, want 85017493504", got)
	}
}

// TestUsableNeverNegative: on every GPU of the catalog and on GPUs smaller
// than the CUDA context and NCCL's communicator, usable memory is at least
// zero, and a model on a GPU with none usable does not fit. (A 1 GiB GPU
// over two ranks had -0.6 GiB usable.)
func TestUsableNeverNegative(t *testing.T) {
	c := builtin(t, "llama-3.2-1b")
	cat, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	devs := cat.Devices()
	for _, gib := range []int64{0, 1, 2} {
		d := lookup(t, "h100")
		d.Name, d.Memory.Bytes = fmt.Sprintf("%d GiB GPU", gib), gib<<30
		devs = append(devs, d)
	}
	for _, d := range devs {
		for _, tp := range []int64{1, 2} {
			u := Usable(d, tp)
			if !(u >= 0) || u > Allocatable(d) {
				t.Errorf("%s over %d GPUs: usable %.0f bytes, want 0 to %.0f", d.Name, tp, u, Allocatable(d))
			}
			m, err := c.Memory(Shape{Phase: Decode, Batch: 1, Ctx: 1, TP: tp}, d)
			if err != nil {
				t.Fatal(err)
			}
			if m.Usable != u || u == 0 && m.Fits {
				t.Errorf("%s tp %d: memory says %.0f usable, fits %v; Usable says %.0f", d.Name, tp, m.Usable, m.Fits, u)
			}
		}
	}
}

// Weight types: fp8 halves the linear layers, int4 stores 0.5 byte plus a
// bf16 scale per 128 weights; embeddings and norms stay bf16. TP shards the
// linear layers and the vocabulary.
func TestWeightTypesAndTP(t *testing.T) {
	c := builtin(t, "llama-3.1-8b")
	h := lookup(t, "h100")
	p := c.Params()
	linear := float64(p.Attention + p.MLP)
	other := float64(p.Embedding+p.LMHead+p.Norms) * 2
	for _, tc := range []struct {
		w    string
		tp   int64
		want float64
	}{
		{"bf16", 1, linear*2 + other},
		{"fp8", 1, linear + other},
		{"int4", 1, linear*(0.5+2.0/128) + other},
		{"bf16", 4, linear*2/4 + float64(p.Embedding+p.LMHead)*2/4 + float64(p.Norms)*2},
	} {
		w, err := ParseWeightType(tc.w)
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.Memory(Shape{Phase: Decode, Ctx: 1, Weights: w, TP: tc.tp}, h)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(m.Weights-tc.want) > 1 {
			t.Errorf("%s tp=%d: weights %.0f, want %.0f", tc.w, tc.tp, m.Weights, tc.want)
		}
	}
	if _, err := c.Memory(Shape{Phase: Decode, TP: 3}, h); err == nil {
		t.Error("tp=3 for 32 heads: no error")
	}
	if _, err := ParseWeightType("int3"); err == nil {
		t.Error("int3: no error")
	}
}

// What dominates decode: Llama-3.1-8B at batch 1 streams its weights; at
// batch 64 with 4096 tokens of context it reads the KV cache.
func TestDominant(t *testing.T) {
	c := builtin(t, "llama-3.1-8b")
	m := h100(t)
	for _, tc := range []struct {
		s    Shape
		want Category
	}{
		{Shape{Phase: Decode, Batch: 1, Ctx: 512}, Weights},
		{Shape{Phase: Decode, Batch: 64, Ctx: 4096}, KVCache},
	} {
		r, err := c.Analyze(tc.s, m)
		if err != nil {
			t.Fatal(err)
		}
		if r.Dominant != tc.want {
			t.Errorf("%+v: dominated by %s, want %s (%v)", tc.s, r.Dominant, tc.want, r.Time)
		}
	}
}

// Tensor parallel: Megatron sharding and two all-reduces per layer of
// tokens × hidden bf16 values, priced from the device's measured curve.
func TestTensorParallel(t *testing.T) {
	c := builtin(t, "llama-3.1-70b")
	m := h100(t)
	s := Shape{Phase: Decode, Batch: 32, Ctx: 8191, TP: 4}
	r, err := c.Analyze(s, m)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var comm float64
	for i, o := range r.Ops {
		switch o.Name {
		case "attention_allreduce", "mlp_allreduce":
			n += o.Count
			if o.Op.Elems != 32*8192 || o.Op.Ranks != 4 {
				t.Errorf("%s: %s", o.Name, o.Op)
			}
			comm += float64(o.Count) * r.Points[i].Expected
		case "q_proj":
			if o.Op.N != 64/4*128 {
				t.Errorf("q_proj per GPU: %s", o.Op)
			}
		case "k_proj":
			if o.Op.N != 8/4*128 {
				t.Errorf("k_proj per GPU: %s", o.Op)
			}
		case "mlp_gate":
			if o.Op.N != 28672/4 {
				t.Errorf("gate per GPU: %s", o.Op)
			}
		case "lm_head":
			if o.Op.N != 128256/4 {
				t.Errorf("lm_head per GPU: %s", o.Op)
			}
		}
	}
	if n != 160 {
		t.Errorf("%d all-reduces, want 2 per layer = 160", n)
	}
	// 512 KiB per all-reduce: the measured back-to-back curve's latency
	// (9.62 µs) plus 2·(3/4)·512 KiB at 263.7 GB/s.
	want := 160 * (9.62e-6 + 2*0.75*32*8192*2/263.7e9)
	if math.Abs(comm-want)/want > 1e-3 || math.Abs(r.Time[Comm]-want)/want > 1e-3 {
		t.Errorf("all-reduce time %.3g s (category %.3g), want %.3g", comm, r.Time[Comm], want)
	}
	if !r.Memory.Fits {
		t.Errorf("70B on 4 H100s at batch 32, 8k context: %.1f GiB per GPU does not fit", r.Memory.Total/(1<<30))
	}
}

// Weight-only int4 reads a quarter of bf16's weight bytes in decode; fp8
// weights run fp8 GEMMs reading half. The LM head stays bf16.
func TestQuantizedDecode(t *testing.T) {
	c := builtin(t, "llama-3.1-8b")
	m := h100(t)
	bytesOf := func(w WeightType, name string) float64 {
		r, err := c.Analyze(Shape{Phase: Decode, Batch: 1, Ctx: 512, Weights: w}, m)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range r.Ops {
			if o.Name == name {
				return r.Points[i].Bytes
			}
		}
		t.Fatalf("no op %s", name)
		return 0
	}
	// mlp_gate reads 4096 × 14336 weights plus a 4096-wide input and writes
	// 14336 outputs, all bf16 except the weight.
	io := float64(4096+14336) * 2
	for _, tc := range []struct {
		w    WeightType
		size float64
	}{{"bf16", 2}, {"fp8_e4m3", 1}, {Int4, 0.5}} {
		want := 4096*14336*tc.size + io
		if tc.w == "fp8_e4m3" {
			want = 4096*14336 + 4096 + 14336*2 // fp8 input, bf16 output
		}
		if got := bytesOf(tc.w, "mlp_gate"); got != want {
			t.Errorf("%s: mlp_gate moves %.0f bytes, want %.0f", tc.w, got, want)
		}
		if got := bytesOf(tc.w, "lm_head"); got != 4096*128256*2+4096*2+128256*2 {
			t.Errorf("%s: lm_head moves %.0f bytes", tc.w, got)
		}
	}
}
