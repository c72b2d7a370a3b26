package roofline

import (
	"github.com/gpucalc/gpucalc/ops"
)

// quantTileM is the least tile height of a scheme's data-parallel GEMM
// kernels: DeepGEMM's and CUTLASS's fp8 block-scaled kernels tile M by 64
// or more (Hopper's wgmma and Blackwell's tcgen05 MMAs are 64 rows and
// up); Blackwell's fp4 block-scaled CUTLASS kernels by 128 (their UMMA
// tiles are 128 rows per SM).
var quantTileM = map[ops.Quant]int{ops.QuantFP8Block: 64, ops.QuantNVFP4: 128, ops.QuantMXFP4: 128}

// quantGEMM prices a quantized matmul or linear as engines run it: the
// kernels that quantize the activation (streaming: they read the
// activation and write the quantized elements and scales; three for a
// per-tensor scale), then the GEMM on the scheme's tensor cores, tiled and
// waved as any GEMM at the family's fraction for the scheme (quantized
// GEMMs apply scales as they accumulate), reading both quantized operands
// and their scales.
func (m *Model) quantGEMM(op ops.Op, key string, peak float64) estimate {
	b, mm, n, k, _ := op.GEMM()
	out := op.Out
	if out == "" {
		out = op.DType
	}
	g := op.Quant.GEMM(b, mm, n, k, op.Kind == ops.Linear, out)
	rate := m.rate(key, peak)
	if f := m.eff.Quant[string(op.Quant)]; f > 0 {
		rate = peak * f
	}
	var dp dataParallel
	if f := m.eff.QuantCTA[string(op.Quant)]; f > 0 {
		dp = dataParallel{cta: f * peak / float64(m.dev.SMs), minM: quantTileM[op.Quant]}
	}
	compute, memory, reduce := m.gemm(b, mm, n, k, g.Bytes, rate, dp)
	if op.Bias {
		compute += float64(b*mm*n) / m.rate("fp32", m.vectorPeak())
	}
	e := m.kernel(compute, memory)
	if reduce {
		e = m.splitK(e)
	}
	if op.Quant.Scheme().Kernels == 0 {
		return e // weight-only: the activation goes in as it is
	}
	qc := op.Quant.Quantize(b*mm, k, op.DType)
	q := m.kernel(m.vector(qc, "fp32", m.vectorPeak()), qc.Bytes/m.stream)
	e.work += q.work + m.eff.QuantFixed[string(op.Quant)]
	e.kernels += op.Quant.Scheme().Kernels
	return e
}
