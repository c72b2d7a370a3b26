package ops

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
)

// Quant is how a GEMM's operands are quantized as serving engines run it
// (TensorRT-LLM, SGLang, vLLM): the weight is stored quantized with its
// scales, and the activation arrives in bf16 (or fp16) and is quantized on
// the fly by a kernel of its own before the tensor-core GEMM, which reads
// both quantized operands and their scales and writes bf16. The empty Quant
// is no quantization: the op computes in its DType.
type Quant string

// The quantization schemes.
const (
	QuantNone Quant = ""
	// QuantFP8 is per-tensor fp8 (e4m3): one scale per tensor; the
	// activation is scaled and cast to fp8 by a kernel before the GEMM
	// (TensorRT-LLM's static per-tensor quantize, torch._scaled_mm).
	QuantFP8 Quant = "fp8"
	// QuantFP8Block is DeepSeek-V3's fine-grained fp8: a scale per 1×128
	// elements of the activation (per token and 128 channels) and per
	// 128×128 block of the weight, in fp32; the GEMM applies the scales as
	// it accumulates (DeepGEMM).
	QuantFP8Block Quant = "fp8_block"
	// QuantNVFP4 is NVIDIA's fp4: e2m1 elements with an e4m3 scale per 16
	// elements along K (and one fp32 scale per tensor), on Blackwell's fp4
	// tensor cores.
	QuantNVFP4 Quant = "nvfp4"
	// QuantMXFP4 is OCP's MX fp4: e2m1 elements with an e8m0 (one byte)
	// scale per 32 elements along K, on Blackwell's fp4 tensor cores.
	QuantMXFP4 Quant = "mxfp4"
	// QuantW4A8MXFP4 is MXFP4 weights against MXFP8 activations (e4m3
	// with an e8m0 scale per 32 elements), on fp8 tensor cores
	// (gpt-oss's experts in FlashInfer's TensorRT-LLM MoE on Blackwell).
	QuantW4A8MXFP4 Quant = "w4a8_mxfp4_mxfp8"
	// QuantW4A16MXFP4 is weight-only MXFP4: the weight stored as e2m1 with
	// an e8m0 scale per 32 elements along K and dequantized in the GEMM,
	// which multiplies the bf16 activation on bf16 tensor cores (gpt-oss's
	// experts on Hopper).
	QuantW4A16MXFP4 Quant = "w4a16_mxfp4"
	// QuantInt4WO is weight-only int4: a bf16 scale per 128 elements along
	// K, dequantized in the GEMM against the bf16 activation (Marlin;
	// Kimi-K2's experts).
	QuantInt4WO Quant = "int4_wo"
)

// Quants lists the schemes, for help text and errors.
var Quants = []Quant{QuantFP8, QuantFP8Block, QuantNVFP4, QuantMXFP4, QuantW4A8MXFP4, QuantW4A16MXFP4, QuantInt4WO}

// Scheme is what a quantization stores and computes with.
type Scheme struct {
	// Compute is the type the tensor cores multiply in (both operands
	// are quantized to it, or the weight dequantized to it): its peak is
	// the GEMM's ceiling.
	Compute devices.DType
	// Weight is the weight's stored element type where it differs from
	// Compute (weight-only and mixed schemes).
	Weight devices.DType
	// ActGroup is the number of activation elements along K that share a
	// scale (0: one scale per tensor); WeightRows × WeightCols elements of
	// the weight (along K, along N) share one (0: per tensor).
	ActGroup, WeightRows, WeightCols int64
	// ScaleBytes is the size of one scale.
	ScaleBytes float64
	// Kernels is the number of kernels that quantize the activation. A
	// per-tensor scale is dynamic: the whole tensor's maximum must be known
	// before any element is scaled, so the maximum is zeroed, reduced over
	// the activation (a first read) and only then applied (a second read):
	// three kernels. A group's scale is computed within the group: one.
	// A weight-only scheme quantizes no activation: none.
	Kernels int
}

var schemes = map[Quant]Scheme{
	QuantFP8:        {Compute: devices.FP8E4M3, ScaleBytes: 4, Kernels: 3},
	QuantFP8Block:   {Compute: devices.FP8E4M3, ActGroup: 128, WeightRows: 128, WeightCols: 128, ScaleBytes: 4, Kernels: 1},
	QuantNVFP4:      {Compute: devices.FP4, ActGroup: 16, WeightRows: 16, WeightCols: 1, ScaleBytes: 1, Kernels: 1},
	QuantMXFP4:      {Compute: devices.FP4, ActGroup: 32, WeightRows: 32, WeightCols: 1, ScaleBytes: 1, Kernels: 1},
	QuantW4A8MXFP4:  {Compute: devices.FP8E4M3, Weight: devices.FP4, ActGroup: 32, WeightRows: 32, WeightCols: 1, ScaleBytes: 1, Kernels: 1},
	QuantW4A16MXFP4: {Compute: devices.BF16, Weight: devices.FP4, WeightRows: 32, WeightCols: 1, ScaleBytes: 1},
	QuantInt4WO:     {Compute: devices.BF16, Weight: devices.FP4, WeightRows: 128, WeightCols: 1, ScaleBytes: 2},
}

// quantFLOPs are the vector FLOPs of quantizing one activation element:
// its absolute value into the group's maximum, and the multiply by the
// scale (the cast is free).
const quantFLOPs = 2

// ParseQuant reads a scheme's name ("none" and "" are no quantization).
func ParseQuant(s string) (Quant, error) {
	q := Quant(strings.ToLower(s))
	if q == "none" || q == "" || q == "bf16" {
		return QuantNone, nil
	}
	if _, ok := schemes[q]; !ok {
		names := make([]string, len(Quants))
		for i, x := range Quants {
			names[i] = string(x)
		}
		return "", fmt.Errorf("quant=%s: expected %s or none (bf16)", rows.Quote(s), strings.Join(names, ", "))
	}
	return q, nil
}

// Scheme is the scheme's storage and compute types; the zero Scheme for
// QuantNone.
func (q Quant) Scheme() Scheme { return schemes[q] }

// scales is the number of scales of a rows × cols tensor (rows along K)
// grouped r × c (0 for a dimension: the whole tensor shares it).
func scales(rows, cols, r, c int64) float64 {
	if r == 0 {
		return 1
	}
	return ceilDiv(rows, r) * ceilDiv(cols, max(c, 1))
}

func ceilDiv(a, b int64) float64 { return float64((a + b - 1) / b) }

// WeightBytes is a k × n weight stored quantized: its elements and scales.
func (q Quant) WeightBytes(k, n int64) float64 {
	s := q.Scheme()
	return float64(k)*float64(n)*s.WeightType().Size() + scales(k, n, s.WeightRows, s.WeightCols)*s.ScaleBytes
}

// WeightType is the weight's stored element type.
func (s Scheme) WeightType() devices.DType {
	if s.Weight != "" {
		return s.Weight
	}
	return s.Compute
}

// ActivationBytes is an m × k activation quantized: its elements and
// scales (a scale per ActGroup elements of each row).
func (q Quant) ActivationBytes(m, k int64) float64 {
	s := q.Scheme()
	if s.Kernels == 0 {
		return float64(m) * float64(k) * s.Compute.Size() // weight-only: the activation as it is
	}
	return float64(m)*float64(k)*s.Compute.Size() + scales(k, m, s.ActGroup, 1)*s.ScaleBytes
}

// Quantize is the cost of the kernels (Scheme().Kernels of them) that
// quantize an m × k activation of type in on the fly: they read the
// activation (twice for a per-tensor scale: its maximum, then its
// elements), compute the scales and write the quantized elements and
// scales.
func (q Quant) Quantize(m, k int64, in devices.DType) Cost {
	n := float64(m) * float64(k)
	reads := 1.0
	if q.Scheme().ActGroup == 0 {
		reads = 2
	}
	return Cost{VectorFLOPs: quantFLOPs * n, Bytes: reads*n*in.Size() + q.ActivationBytes(m, k)}
}

// GEMM is the cost of the quantized GEMM kernel of batch × (m × n × k): it
// reads the quantized activation and weight with their scales (the weight
// once when shared, batch times otherwise) and writes out.
func (q Quant) GEMM(batch, m, n, k int64, sharedWeight bool, out devices.DType) Cost {
	b := float64(batch)
	w := b * q.WeightBytes(k, n)
	if sharedWeight {
		w = q.WeightBytes(k, n)
	}
	return Cost{
		MatrixFLOPs: 2 * b * float64(m) * float64(n) * float64(k),
		Bytes:       b*q.ActivationBytes(m, k) + w + b*float64(m)*float64(n)*out.Size(),
	}
}

// quantCost is a quantized matmul's or linear's cost as one op: the matrix
// FLOPs, the quantization's vector FLOPs, and ideal bytes that read the
// activation in its own type, the quantized weight and its scales, and
// write the output (the quantized activation between the two kernels is
// not ideal traffic).
func (o Op) quantCost() Cost {
	b := max(o.Batch, 1)
	out := o.Out.Size()
	if out == 0 {
		out = o.DType.Size()
	}
	bf, mk, mn := float64(b), float64(o.M)*float64(o.K), float64(o.M)*float64(o.N)
	c := Cost{
		MatrixFLOPs: 2 * bf * mk * float64(o.N),
		VectorFLOPs: quantFLOPs * bf * mk,
		Bytes:       bf*mk*o.DType.Size() + bf*o.Quant.WeightBytes(o.K, o.N) + bf*mn*out,
	}
	if o.Bias {
		c.VectorFLOPs += bf * mn
		c.Bytes += float64(o.N) * out
	}
	return c
}

// validQuant checks that a quantized op is a matmul, linear or moe whose
// activation is a 16- or 32-bit float and that stores no other weight type.
func (o Op) validQuant() error {
	if o.Quant == QuantNone {
		return nil
	}
	if o.Kind != Matmul && o.Kind != Linear && o.Kind != MoE {
		return fmt.Errorf("quant= quantizes a matmul's, linear's or moe's operands; %s takes none", o.Kind)
	}
	switch o.DType {
	case devices.BF16, devices.FP16, devices.FP32:
	default:
		return fmt.Errorf("quant=%s quantizes a bf16, fp16 or fp32 activation on the fly; give dtype=bf16 (the activation's type), not dtype=%s", o.Quant, o.DType)
	}
	if o.Weight != "" {
		return fmt.Errorf("quant=%s stores the weight in %s; drop weight_dtype=%s", o.Quant, o.Quant.Scheme().WeightType(), o.Weight)
	}
	return nil
}
