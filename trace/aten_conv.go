package trace

import (
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/ops"
)

// conv models a 2-D convolution from (input, weight, bias, ...) with the
// stride, padding, dilation and groups at the positions given.
func conv(c call, stride, pad, dil, groups int) ([]ops.Op, error) {
	x, ok1 := c.tensor(0)
	w, ok2 := c.tensor(1)
	if !ok1 || !ok2 || len(x) != 4 || len(w) != 4 {
		return nil, noModel("only 2-D convolutions are modelled")
	}
	s, _ := c.ints(stride)
	p, _ := c.ints(pad)
	d, _ := c.ints(dil)
	if len(s) == 0 || len(p) == 0 {
		return nil, noModel("stride and padding not recorded")
	}
	for _, v := range d {
		if v != 1 {
			return nil, noModel("dilated convolution")
		}
	}
	if s[0] != s[len(s)-1] || p[0] != p[len(p)-1] {
		return nil, noModel("stride or padding differ between height and width")
	}
	g, err := strconv.ParseInt(c.concrete(groups), 10, 64)
	if err != nil || g < 1 {
		g = 1
	}
	_, bias := c.tensor(2)
	o := ops.Op{Kind: ops.Conv2D, DType: c.compute, N: x[0], C: x[1], H: x[2], W: x[3],
		K: w[0], R: w[2], S: w[3], Stride: s[0], Pad: p[0], Groups: g, Bias: bias}
	if o.DType == "" {
		o.DType, _ = c.typ(0)
	}
	if o.P() <= 0 || o.Q() <= 0 {
		return nil, noModel("the filter does not fit the input")
	}
	return []ops.Op{o}, nil
}

// convBackward models a convolution's backward: each gradient it computes
// (input, weight) is one convolution of the forward's FLOPs and sizes.
func convBackward(c call) ([]ops.Op, error) {
	name := c.op.Name
	if len(c.op.Inputs) < 3 || len(c.op.Types) < 3 || len(c.op.Concrete) < 11 {
		return nil, noModel("arguments not recorded")
	}
	// grad_output, input, weight, bias_sizes, stride, padding,
	// dilation, transposed, output_padding, groups, output_mask.
	fwd, err := conv(call{op: &Op{Name: name, OpArgs: &OpArgs{Inputs: c.op.Inputs[1:], Types: c.op.Types[1:], Concrete: c.op.Concrete[1:]}}, compute: c.compute}, 3, 4, 5, 8)
	if err != nil {
		return nil, err
	}
	// Each gradient (input, weight) is one convolution of the forward's
	// FLOPs and tensor sizes.
	var out []ops.Op
	mask := c.concrete(10)
	for _, m := range strings.Split(strings.Trim(mask, "[]"), ",")[:2] {
		if strings.TrimSpace(m) == "True" {
			out = append(out, fwd[0])
		}
	}
	if len(out) == 0 {
		return nil, noModel("only the bias gradient")
	}
	return out, nil
}
