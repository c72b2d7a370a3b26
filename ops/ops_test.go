package ops

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
)

// TestCost checks every formula against a hand calculation on a small shape.
func TestCost(t *testing.T) {
	tests := []struct {
		spec                  string
		matrix, vector, trans float64
		bytes                 float64
	}{
		// 2·2·3·4 = 48; (2·4 + 4·3 + 2·3)·2 B = 52.
		{"matmul m=2 n=3 k=4 dtype=bf16", 48, 0, 0, 52},
		// bias: +M·N adds, +N outputs read.
		{"matmul m=2 n=3 k=4 bias dtype=bf16", 48, 6, 0, 58},
		// fp8 in (1 B), bf16 out (2 B): (4 + 4)·1 + 4·2.
		{"matmul m=2 n=2 k=2 dtype=fp8", 16, 0, 0, 16},
		// int8 in, int32 out: 8·1 + 4·4.
		{"matmul m=2 n=2 k=2 dtype=int8", 16, 0, 0, 24},
		// batched: 3 independent products.
		{"matmul m=2 n=3 k=4 batch=3 dtype=fp16", 144, 0, 0, 156},
		// linear = matmul with M = tokens.
		{"linear tokens=2 in=4 out=3 dtype=bf16", 48, 0, 0, 52},
		// layernorm 2×4 fp32: 7·8 + 3·2 FLOPs, 2 rsqrt; x and y 8·4 B each, γ β 4·4 B each.
		{"layernorm rows=2 cols=4 dtype=fp32", 0, 62, 2, 96},
		// rmsnorm: 4·8 + 3·2; γ only.
		{"rmsnorm rows=2 cols=4 dtype=fp32", 0, 38, 2, 80},
		// softmax: 4 per element plus one exp each.
		{"softmax rows=2 cols=4 dtype=fp32", 0, 32, 8, 64},
		{"gelu n=10 dtype=fp32", 0, 40, 10, 80},
		{"gelu n=10 tanh dtype=fp32", 0, 80, 10, 80},
		{"gelu_tanh n=10 dtype=fp32", 0, 80, 10, 80},
		{"silu n=10 dtype=bf16", 0, 30, 10, 40},
		{"relu n=10 dtype=fp32", 0, 10, 0, 80},
		{"add n=10 dtype=fp32", 0, 10, 0, 120},
		{"mul n=10 dtype=bf16", 0, 10, 0, 60},
		{"copy n=10 dtype=fp32", 0, 0, 0, 80},
		// attention 1×2 heads, 4×4 scores, d 8: 4·32·8 matrix FLOPs; Q K V O 4·(2·4·8)·2 B.
		{"attention b=1 h=2 s=4 d=8 dtype=bf16", 1024, 128, 32, 512},
		{"attention b=1 h=2 s=4 d=8 causal dtype=bf16", 512, 64, 16, 512},
		// naive adds S and P written and read: 4·32·2 B.
		{"attention b=1 h=2 s=4 d=8 naive dtype=bf16", 1024, 128, 32, 768},
		// GQA: K and V have one head: Q,O 2·(4·4·8)·2 = 512, K,V 2·(1·4·8)·2 = 128.
		{"attention b=1 h=4 kv=1 s=4 d=8 dtype=bf16", 2048, 256, 64, 640},
		// decode, one query against 8 keys, causal: all 8 keys are visible,
		// (1·8 − 1/2)/8 of the matrix by the continuous convention.
		{"attention b=1 h=1 sq=1 sk=8 d=2 causal dtype=bf16", 4 * 7.5 * 2, 4 * 7.5, 7.5, (2*1*2 + 2*8*2) * 2},
		// paged decode step: Q, O 2·(2·4)·2 = 32; K and V 2·(8·4)·2 = 128;
		// this step's K and V read and written 2·4·(2+2) = 32. Over a
		// K-only cache V's reads are K's: K once, 64.
		{"attention b=1 h=2 kv=1 sq=1 sk=8 d=4 paged dtype=bf16", 256, 64, 16, 192},
		{"attention b=1 h=2 kv=1 sq=1 sk=8 d=4 paged konly dtype=bf16", 256, 64, 16, 128},
		// conv 1×2×4×4, 3 filters 3×3, pad 1: P=Q=4; 2·3·2·9·16; (32 + 54 + 48)·2 B.
		{"conv2d n=1 c=2 h=4 w=4 k=3 r=3 s=3 pad=1 dtype=bf16", 1728, 0, 0, 268},
		{"conv2d n=1 c=2 h=4 w=4 k=3 r=3 s=3 pad=same dtype=bf16", 1728, 0, 0, 268},
		// groups 2: each filter sees one channel.
		{"conv2d n=1 c=2 h=4 w=4 k=2 r=3 s=3 pad=1 groups=2 dtype=bf16", 576, 0, 0, (32 + 18 + 32) * 2},
		// stride 2, no padding, 5×5 input: P = Q = (5−3)/2+1 = 2.
		{"conv2d n=1 c=1 h=5 w=5 k=1 r=3 s=3 stride=2 dtype=fp32", 2 * 9 * 4, 0, 0, (25 + 9 + 4) * 4},
	}
	for _, tt := range tests {
		o, err := Parse(tt.spec)
		if err != nil {
			t.Errorf("%s: %v", tt.spec, err)
			continue
		}
		c := o.Cost()
		if c.MatrixFLOPs != tt.matrix || c.VectorFLOPs != tt.vector || c.Transcendentals != tt.trans || c.Bytes != tt.bytes {
			t.Errorf("%s: got matrix %g vector %g trans %g bytes %g; want %g %g %g %g",
				tt.spec, c.MatrixFLOPs, c.VectorFLOPs, c.Transcendentals, c.Bytes, tt.matrix, tt.vector, tt.trans, tt.bytes)
		}
		if got := c.AI(); got != c.FLOPs()/c.Bytes {
			t.Errorf("%s: AI %g", tt.spec, got)
		}
	}
}

func TestPath(t *testing.T) {
	tests := []struct {
		spec string
		want devices.Path
	}{
		{"matmul m=8 n=8 k=8 dtype=bf16", devices.Tensor},
		{"matmul m=8 n=8 k=8 dtype=tf32", devices.Tensor},
		{"matmul m=8 n=8 k=8 dtype=fp8", devices.Tensor},
		{"matmul m=8 n=8 k=8 dtype=int8", devices.Tensor},
		{"matmul m=8 n=8 k=8 dtype=fp64", devices.Tensor},
		{"matmul m=8 n=8 k=8 dtype=fp32", devices.CUDACores},
		{"attention b=1 h=1 s=8 d=8 dtype=fp16", devices.Tensor},
		{"conv2d n=1 c=8 h=8 w=8 k=8 r=1 s=1 dtype=bf16", devices.Tensor},
		{"layernorm rows=8 cols=8 dtype=bf16", devices.CUDACores},
		{"gelu n=8 dtype=bf16", devices.CUDACores},
	}
	for _, tt := range tests {
		o, err := Parse(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Path(); got != tt.want {
			t.Errorf("%s: path %s, want %s", tt.spec, got, tt.want)
		}
	}
}

// TestRoofBenchConventions reproduces roof_bench.csv's flops and bytes
// columns (measured on an H100; see its README) exactly: bytes for every
// row, and flops counted the roof_bench way (matrix FLOPs only, 0 for the
// other ops).
func TestRoofBenchConventions(t *testing.T) {
	recs, _ := testfile.CSV(t, "testdata/roof_bench.csv")
	if len(recs) < 199 {
		t.Fatalf("only %d rows", len(recs))
	}
	for _, r := range recs {
		o, err := ParseBench(r[0], r[1], r[2], r[8])
		if err != nil {
			t.Errorf("%v: %v", r, err)
			continue
		}
		bytes, _ := strconv.ParseFloat(r[4], 64)
		flops, _ := strconv.ParseFloat(r[5], 64)
		c := o.Cost()
		if c.Bytes != bytes {
			t.Errorf("%s %s %s %s: bytes %.0f, roof_bench %.0f", r[0], r[1], r[2], r[8], c.Bytes, bytes)
		}
		if c.MatrixFLOPs != flops {
			t.Errorf("%s %s %s %s: matrix FLOPs %.0f, roof_bench %.0f", r[0], r[1], r[2], r[8], c.MatrixFLOPs, flops)
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	for _, spec := range []string{
		"matmul m=4096 n=4096 k=4096 dtype=bf16",
		"matmul m=64 n=4096 k=4096 batch=8 bias dtype=fp8_e4m3 out_dtype=fp32",
		"linear tokens=1 in=4096 out=14336 dtype=bf16",
		"attention b=8 h=32 kv=8 sq=1 sk=4096 d=128 causal dtype=bf16",
		"attention b=8 h=16 s=4096 d=128 naive dtype=fp16",
		"attention b=1 h=32 kv=8 sq=1 sk=32768 d=128 impl=rows dtype=bf16",
		"attention b=8 h=32 sq=1 sk=4096 d=128 impl=heads dtype=bf16",
		"attention b=8 h=32 kv=8 sq=1 sk=4096 d=128 paged konly dtype=bf16",
		"copy n=4096 repeat=4 dtype=bf16",
		"conv2d n=64 c=64 h=56 w=56 k=64 r=3 s=3 pad=1 dtype=bf16",
		"gelu n=1024 tanh dtype=fp32",
		"rmsnorm rows=4096 cols=4096 dtype=bf16",
	} {
		o, err := Parse(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := o.String(); got != spec {
			t.Errorf("String() = %q, want %q", got, spec)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, spec := range []string{
		"",
		"matmull m=1 n=1 k=1",
		"matmul m=1 n=1",
		"matmul m=0 n=1 k=1",
		"matmul m=-4 n=1 k=1",
		"matmul m=1 n=1 k=1 dtype=fp12",
		"matmul m=1 n=1 k=1 causal",
		"attention b=1 h=3 kv=2 s=8 d=8",
		"conv2d n=1 c=3 h=4 w=4 k=4 r=5 s=5",
		"conv2d n=1 c=3 h=8 w=8 k=4 r=3 s=3 groups=2",
		"conv2d n=1 c=3 h=8 w=8 k=4 r=2 s=2 pad=same",
		"softmax shape=12",
		"matmul m=1048576 n=1048576 k=1048576",
		// Conflicting settings: the last one no longer wins.
		"matmul m=1 n=1 k=1 m=2",
		"matmul m=1 n=1 k=1 batch=2 b=3",
		"linear tokens=1 in=1 out=1 m=2",
		"matmul shape=1x2x3 k=4",
		"matmul m=1 n=1 k=1 dtype=bf16 dtype=fp16",
		"matmul m=1 n=1 k=1 bias=true bias=false",
		"attention b=1 h=1 s=8 d=8 causal full",
		"attention b=1 h=1 s=8 d=8 flash naive",
		"attention b=1 h=1 s=8 d=8 impl=tiles",
		"attention b=1 h=1 s=8 d=8 impl=rows impl=split",
		"attention b=1 h=1 s=8 d=8 naive impl=rows",
		"attention b=1 h=1 sq=1 sk=8 d=8 konly",
		"attention b=1 h=1 s=8 d=8 paged konly",
		"matmul m=1 n=1 k=1 impl=rows",
		"copy n=10 repeat=4",
		"relu n=8 repeat=2",
		"gelu_tanh n=8 erf",
		"gelu n=8 tanh erf",
		"conv2d n=1 c=3 h=8 w=8 k=4 r=3 s=3 pad=same pad=1",
		"matmul m=1 n=1 k=1 bias=maybe",
		"matmul m=NaN n=1 k=1",
		"matmul m=1e3 n=1 k=1",
		"copy n=9223372036854775808",
	} {
		_, err := Parse(spec)
		if err == nil {
			t.Errorf("Parse(%q): no error", spec)
		} else if strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "Parse") {
			t.Errorf("Parse(%q): %v leaks Go internals", spec, err)
		}
	}
}

// TestParseRepeats: the same setting given twice the same way is accepted.
func TestParseRepeats(t *testing.T) {
	for _, spec := range []string{"matmul m=1 n=1 k=1 m=1", "attention b=1 h=1 s=8 d=8 causal causal", "gelu_tanh n=8 tanh",
		"attention b=1 h=1 s=8 d=8 impl=split impl=SPLIT"} {
		if _, err := Parse(spec); err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"matmul m=4096 n=4096 k=4096 dtype=bf16", "attention b=8 h=16 s=4096 d=128 causal",
		"conv2d shape=1x3x8x8x4x3x3", "gelu_tanh n=7", "linear tokens=1 in=2 out=3 bias"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		o, err := Parse(spec)
		if err != nil {
			return
		}
		back, err := Parse(o.String())
		if err != nil || back != o {
			t.Fatalf("%q → %q → %+v, %v", spec, o.String(), back, err)
		}
	})
}

func TestShape(t *testing.T) {
	for spec, want := range map[string]string{
		"matmul m=1 n=2 k=3":                 "1x2x3",
		"attention b=1 h=2 s=3 d=4":          "1x2x3x4",
		"attention b=1 h=2 sq=1 sk=9 d=4":    "1x2x1x9x4",
		"conv2d n=1 c=2 h=3 w=4 k=5 r=1 s=1": "1x2x3x4x5x1x1",
		"softmax rows=7 cols=8":              "7x8",
		"gelu n=9":                           "9",
	} {
		o, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Shape(); got != want {
			t.Errorf("%s: %s, want %s", spec, got, want)
		}
		if back, err := ParseBench(string(o.Kind), "bf16", o.Shape(), ""); err == nil && back.Cost() != o.Cost() && o.Kind != Conv2D && o.SeqQ == o.SeqK {
			t.Errorf("%s: shape does not round-trip", spec)
		}
	}
}

// TestImpl: impl=split is the default schedule (stored as ""); impl=rows and
// impl=triton are kept; schedules cost the same ideal FLOPs and bytes.
func TestImpl(t *testing.T) {
	def, err := Parse("attention b=1 h=32 kv=8 sq=1 sk=4096 d=128")
	if err != nil {
		t.Fatal(err)
	}
	split, _ := Parse("attention b=1 h=32 kv=8 sq=1 sk=4096 d=128 impl=split")
	rows, _ := Parse("attention b=1 h=32 kv=8 sq=1 sk=4096 d=128 impl=ROWS")
	if def != split || rows.Impl != ImplRows {
		t.Errorf("default %+v, split %+v, rows %q", def, split, rows.Impl)
	}
	triton := mustParse(t, "attention b=1 h=32 kv=8 sq=1 sk=4096 d=128 paged impl=Triton")
	if triton.Impl != ImplTriton || triton.String() != "attention b=1 h=32 kv=8 sq=1 sk=4096 d=128 paged impl=triton dtype=bf16" {
		t.Errorf("impl=Triton: %q, %q", triton.Impl, triton.String())
	}
	if def.Cost() != rows.Cost() {
		t.Errorf("schedules change the ideal cost: %+v vs %+v", def.Cost(), rows.Cost())
	}
	// A broadcast copy reads each input element once: 1024 of 4096 here.
	if c := mustParse(t, "copy n=4096 repeat=4 dtype=bf16").Cost(); c.Bytes != 2*1024+2*4096 {
		t.Errorf("copy repeat=4: %g bytes, want %d", c.Bytes, 2*1024+2*4096)
	}
}

func mustParse(t *testing.T, spec string) Op {
	t.Helper()
	o, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestMoEMLASpecs: the moe and mla specs round-trip through String, take
// their defaults (DeepSeek-V3's latent geometry; absorbed for one query)
// and refuse shapes that cannot split.
func TestMoEMLASpecs(t *testing.T) {
	for _, spec := range []string{
		"moe tokens=16 hidden=7168 inter=2048 topk=8 experts=256 tp=2 ep=4 dist=power_law:1.2 quant=fp8_block",
		"moe tokens=1 hidden=2880 inter=2880 topk=4 experts=128 dist=uniform quant=w4a16_mxfp4",
		"moe tokens=64 hidden=4096 inter=14336 topk=2 experts=8 ep=2 impl=triton",
		"moe tokens=64 hidden=2048 inter=5120 topk=22 experts=512 ungated impl=cutlass",
		"mla b=8 h=16 sq=1 sk=4096 absorbed kv_dtype=fp8_e4m3 dtype=bf16",
		"mla b=1 h=128 sq=2048 sk=2048 nope=192 v=256 causal expanded dtype=bf16",
	} {
		o, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(o.String())
		if err != nil || back.String() != o.String() {
			t.Errorf("%s: String %q parses to %q, %v", spec, o.String(), back.String(), err)
		}
	}
	o, _ := Parse("mla b=1 h=16 sq=1 sk=100")
	if !o.Absorbs() || o.KVLoRA != 512 || o.Rope != 64 || o.Nope != 128 || o.VDim != 128 || o.QLoRA != 1536 {
		t.Errorf("mla defaults: %+v", o)
	}
	// Absorbed decode reads the 576-wide latent once: 100 rows of 576 bf16.
	if c := o.Cost(); c.Bytes != 100*576*2+16*(576+512)*2 || c.MatrixFLOPs != 2*16*100*(576+512) {
		t.Errorf("absorbed mla cost %+v", c)
	}
	for _, bad := range []string{"moe tokens=1 hidden=8 inter=8 topk=9 experts=8", "moe tokens=1 hidden=8 inter=8 topk=1 experts=70000",
		"moe tokens=1 hidden=8 inter=6 topk=1 experts=8 tp=4", "moe tokens=1 hidden=8 inter=8 topk=1 experts=8 impl=deepgemm",
		"matmul m=8 n=8 k=8 impl=triton"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
