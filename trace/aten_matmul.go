package trace

import (
	"github.com/gpucalc/gpucalc/ops"
)

// gemm models mm (A, B), addmm and baddbmm (bias, A, B), bmm, matmul (with
// broadcast batch dimensions) and linear (x, W[N,K], bias).
func gemm(c call) ([]ops.Op, error) {
	name := c.op.Name
	a, b, bias := 0, 1, -1
	switch name {
	case "aten::addmm", "aten::baddbmm":
		a, b, bias = 1, 2, 0
	case "aten::linear":
		bias = 2
	}
	x, ok1 := c.tensor(a)
	y, ok2 := c.tensor(b)
	if !ok1 || !ok2 {
		return nil, noModel("operand shapes not recorded")
	}
	o := ops.Op{Kind: ops.Matmul, DType: c.compute, Batch: 1}
	if o.DType == "" {
		o.DType, _ = c.typ(a)
	}
	if bias >= 0 {
		_, o.Bias = c.tensor(bias)
	}
	switch {
	case name == "aten::linear":
		if len(y) != 2 {
			return nil, noModel("linear weight of %d dimensions", len(y))
		}
		o.Kind, o.M, o.K, o.N = ops.Linear, numel(x[:len(x)-1]), x[len(x)-1], y[0]
	case len(x) == 1 && len(y) == 1:
		o.M, o.K, o.N = 1, x[0], 1
	case len(y) == 1:
		o.M, o.K, o.N = numel(x[:len(x)-1]), x[len(x)-1], 1
	case len(y) == 2:
		// A batch of A rows against one B: one product, rows stacked.
		o.K, o.N = y[0], y[1]
		o.M = numel(x) / o.K
	default:
		if len(x) == 1 {
			x = []int64{1, x[0]}
		}
		o.M, o.K, o.N = x[len(x)-2], x[len(x)-1], y[len(y)-1]
		o.Batch = max(numel(x[:len(x)-2]), numel(y[:len(y)-2]))
	}
	if o.M <= 0 || o.N <= 0 || o.K <= 0 {
		return nil, noModel("empty product")
	}
	return []ops.Op{o}, nil
}

// attentionArgs are an attention op's argument positions.
type attentionArgs struct {
	causal int
	bshd   bool
}

// attention argument positions: where is_causal sits, and whether q, k, v
// are (B, S, H, D) rather than (B, H, S, D).
var attention = map[string]attentionArgs{
	"aten::scaled_dot_product_attention":            {5, false},
	"aten::_scaled_dot_product_flash_attention":     {4, false},
	"aten::_scaled_dot_product_efficient_attention": {6, false},
	"aten::_scaled_dot_product_cudnn_attention":     {6, false},
	"aten::_flash_attention_forward":                {6, true},
}

// attentionOp models scaled dot-product attention from the query and key
// shapes, with the argument positions of a.
func attentionOp(c call, a attentionArgs) ([]ops.Op, error) {
	dt, _ := c.typ(0)
	q, ok1 := c.tensor(0)
	k, ok2 := c.tensor(1)
	if !ok1 || !ok2 || len(q) != 4 || len(k) != 4 {
		return nil, noModel("query and key shapes not recorded")
	}
	o := ops.Op{Kind: ops.Attention, DType: dt, B: q[0], Heads: q[1], KVHeads: k[1], SeqQ: q[2], SeqK: k[2], HeadDim: q[3],
		Causal: c.concrete(a.causal) == "True"}
	if a.bshd {
		o.Heads, o.KVHeads, o.SeqQ, o.SeqK = q[2], k[2], q[1], k[1]
	}
	if o.KVHeads <= 0 || o.Heads%o.KVHeads != 0 {
		return nil, noModel("%d query heads over %d key/value heads", o.Heads, o.KVHeads)
	}
	return []ops.Op{o}, nil
}
