package ops

// Kinds that appear in profiled programs but not in op specs: what the
// torch.profiler importer needs to price embedding lookups, reductions, batch
// normalisation and one-input elementwise maths. They are not in Kinds
// because a workload has no use for them yet.
const (
	// Embedding gathers Rows rows of Cols elements from a table, by int64
	// indices.
	Embedding Kind = "embedding"
	// Reduce reduces Rows × Cols to Rows values (mean, sum, pooling to one
	// value per row).
	Reduce Kind = "reduce"
	// BatchNorm normalises Rows channels of Cols elements each (N·H·W)
	// with per-channel statistics and affine parameters.
	BatchNorm Kind = "batchnorm"
	// Unary is a one-input elementwise op of Elems elements: one FLOP each,
	// read once and written once (neg, abs, pow by a scalar, fill).
	Unary Kind = "unary"
)

// indexBytes is the size of an embedding index: PyTorch's indices are int64.
const indexBytes = 8

// tracedCost prices the kinds above; the package comment has the
// conventions. BatchNorm counts LayerNorm's 7 FLOPs per element (training
// computes the statistics as layer norm does) and reads four fp32
// per-channel parameters.
func (o Op) tracedCost(in, out float64) Cost {
	rc := float64(o.Rows) * float64(o.Cols)
	var c Cost
	switch o.Kind {
	case Embedding:
		c.Bytes = rc*in + rc*out + float64(o.Rows)*indexBytes
	case Reduce:
		c.VectorFLOPs = rc
		c.Bytes = rc*in + float64(o.Rows)*out
	case BatchNorm:
		c.VectorFLOPs = layerNormFLOPs*rc + rowNormFLOPs*float64(o.Rows)
		c.Transcendentals = float64(o.Rows)
		c.Bytes = rc*in + rc*out + 4*4*float64(o.Rows)
	case Unary:
		c.VectorFLOPs = float64(o.Elems)
		c.Bytes = float64(o.Elems) * (in + out)
	}
	return c
}
