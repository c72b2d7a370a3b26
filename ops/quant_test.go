package ops

import (
	"strings"
	"testing"
)

// TestQuantBytes checks the stored sizes against hand counts: a 4096 ×
// 4096 weight is 16 MiB of fp8 (+ one fp32 scale, or 32 × 32 block scales),
// 8 MiB of fp4 with 1 MiB of e4m3 scales (nvfp4, per 16) or 512 KiB of e8m0
// scales (mxfp4, per 32).
func TestQuantBytes(t *testing.T) {
	const k, n = 4096, 4096
	for _, c := range []struct {
		q        Quant
		w, a     float64 // weight, 128 × 4096 activation
		quantize float64 // the 128 × 4096 bf16 activation's quantize kernel
	}{
		{QuantFP8, k*n + 4, 128*k + 4, 2*2*128*k + 128*k + 4},
		{QuantFP8Block, k*n + 32*32*4, 128*k + 128*32*4, 2*128*k + 128*k + 128*32*4},
		{QuantNVFP4, k*n/2 + k*n/16, 128*k/2 + 128*k/16, 2*128*k + 128*k/2 + 128*k/16},
		{QuantMXFP4, k*n/2 + k*n/32, 128*k/2 + 128*k/32, 2*128*k + 128*k/2 + 128*k/32},
	} {
		if got := c.q.WeightBytes(k, n); got != c.w {
			t.Errorf("%s weight: %g bytes, want %g", c.q, got, c.w)
		}
		if got := c.q.ActivationBytes(128, k); got != c.a {
			t.Errorf("%s activation: %g bytes, want %g", c.q, got, c.a)
		}
		if got := c.q.Quantize(128, k, DefaultDType); got.Bytes != c.quantize || got.VectorFLOPs != 2*128*k {
			t.Errorf("%s quantize: %+v, want %g bytes", c.q, got, c.quantize)
		}
	}
}

// TestQuantSpec: quant= parses on matmul and linear, round-trips through
// String, prices the bf16 activation read once, the quantized weight and
// the bf16 output, and refuses what it cannot mean.
func TestQuantSpec(t *testing.T) {
	o, err := Parse("linear tokens=128 in=4096 out=4096 quant=nvfp4")
	if err != nil {
		t.Fatal(err)
	}
	if o.Quant != QuantNVFP4 || o.DType != DefaultDType || o.Path() != "tensor" {
		t.Errorf("%+v", o)
	}
	if back, err := Parse(o.String()); err != nil || back != o {
		t.Errorf("%q: %+v %v", o.String(), back, err)
	}
	c := o.Cost()
	if want := 2.0*128*4096 + QuantNVFP4.WeightBytes(4096, 4096) + 2*128*4096; c.Bytes != want || c.MatrixFLOPs != 2*128*4096*4096 {
		t.Errorf("cost %+v, want %g bytes", c, want)
	}
	if o, _ := Parse("matmul m=8 n=8 k=8 quant=none"); o.Quant != QuantNone {
		t.Errorf("quant=none: %q", o.Quant)
	}
	for spec, want := range map[string]string{
		"matmul m=8 n=8 k=8 quant=int3":                 "expected fp8, fp8_block, nvfp4, mxfp4, w4a8_mxfp4_mxfp8, w4a16_mxfp4, int4_wo or none",
		"matmul m=8 n=8 k=8 quant=fp8 dtype=fp8":        "give dtype=bf16",
		"matmul m=8 n=8 k=8 quant=fp8 weight_dtype=fp4": "drop weight_dtype",
		"attention b=1 h=8 s=128 d=64 quant=fp8":        "unknown key",
		"matmul m=8 n=8 k=8 quant=fp8 quant=nvfp4":      "conflict",
	} {
		if _, err := Parse(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

// TestMoEQuant checks that a moe op takes the matmul's quant vocabulary: the
// experts' GEMMs read the scheme's compute type and store its weight type,
// the activation stays in DType.
func TestMoEQuant(t *testing.T) {
	for _, tc := range []struct {
		q      string
		in, wt float64
	}{
		{"bf16", 2, 2},
		{"fp8_block", 1, 1},
		{"nvfp4", 0.5, 0.5},
		{"w4a8_mxfp4_mxfp8", 1, 0.5},
		{"w4a16_mxfp4", 2, 0.5},
		{"int4_wo", 2, 0.5},
	} {
		o, err := Parse("moe tokens=16 hidden=2048 inter=768 topk=8 experts=128 quant=" + tc.q)
		if err != nil {
			t.Fatal(err)
		}
		in, w := o.ExpertSizes()
		if in != tc.in || w != tc.wt || o.DType != DefaultDType {
			t.Errorf("quant=%s: GEMM input %g, weight %g bytes, dtype %s; want %g, %g, %s", tc.q, in, w, o.DType, tc.in, tc.wt, DefaultDType)
		}
		if back, err := Parse(o.String()); err != nil || back.Quant != o.Quant {
			t.Errorf("quant=%s: %q reads back as %+v (%v)", tc.q, o.String(), back, err)
		}
	}
}
