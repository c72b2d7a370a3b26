package roofline

import (
	"github.com/gpucalc/gpucalc/ops"
)

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
	compute, memory := m.gemm(b, mm, n, k, g.Bytes, rate)
	if op.Bias {
		compute += float64(b*mm*n) / m.rate("fp32", m.vectorPeak())
	}
	e := m.kernel(compute, memory)
	if op.Quant.Scheme().Kernels == 0 {
		return e // weight-only: the activation goes in as it is
	}
	qc := op.Quant.Quantize(b*mm, k, op.DType)
	q := m.kernel(m.vector(qc, "fp32", m.vectorPeak()), qc.Bytes/m.stream)
	e.work += q.work + m.eff.QuantFixed[string(op.Quant)]
	e.kernels += op.Quant.Scheme().Kernels
	return e
}
