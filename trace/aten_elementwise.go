package trace

import (
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// activation models relu, silu and gelu (erf, or tanh when recorded).
func activation(c call) ([]ops.Op, error) {
	name := c.op.Name
	dt, _ := c.typ(0)
	x, ok := c.tensor(0)
	if !ok {
		return nil, noModel("input shape not recorded")
	}
	kind := map[string]ops.Kind{"relu": ops.ReLU, "silu": ops.SiLU, "gelu": ops.GELU}[strings.TrimSuffix(strings.TrimPrefix(name, "aten::"), "_")]
	return []ops.Op{{Kind: kind, DType: dt, Elems: numel(x), Tanh: c.concrete(1) == "tanh"}}, nil
}

// elementwise models a binary op: an add of equal shapes, or, where one
// side broadcasts (a bias, a scalar), a one-input op over the larger.
func elementwise(c call) ([]ops.Op, error) {
	x, ok1 := c.tensor(0)
	y, ok2 := c.tensor(1)
	if !ok1 && !ok2 {
		return nil, noModel("operand shapes not recorded")
	}
	dt, _ := c.typ(0)
	if !ok1 {
		x, dt = y, first(c.typ(1))
	}
	kind := ops.Add
	if strings.HasPrefix(c.op.Name, "aten::mul") || strings.HasPrefix(c.op.Name, "aten::div") {
		kind = ops.Mul
	}
	if !ok2 || numel(y) != numel(x) {
		n := max(numel(x), numel(y))
		return []ops.Op{{Kind: ops.Unary, DType: dt, Elems: n}}, nil
	}
	return []ops.Op{{Kind: kind, DType: dt, Elems: numel(x)}}, nil
}

func first(d devices.DType, _ bool) devices.DType { return d }

// unary models a one-input elementwise op.
func unary(c call) ([]ops.Op, error) {
	dt, _ := c.typ(0)
	x, ok := c.tensor(0)
	if !ok {
		return nil, noModel("input shape not recorded")
	}
	return []ops.Op{{Kind: ops.Unary, DType: dt, Elems: numel(x)}}, nil
}

// foreach models an optimizer's _foreach_ op when the trace recorded its
// tensor lists' shapes: one elementwise pass over every tensor of the lists.
func foreach(c call) ([]ops.Op, error) {
	var n int64
	lists := 0
	for _, in := range c.op.Inputs {
		if len(in.List) > 0 {
			lists++
			if n == 0 {
				for _, d := range in.List {
					n += numel(d)
				}
			}
		}
	}
	if n == 0 {
		return nil, noModel("the trace records no shapes for tensor lists")
	}
	dt := c.compute
	if dt == "" {
		dt = devices.FP32
	}
	kind := ops.Unary
	if lists >= 2 {
		kind = ops.Add
	}
	return []ops.Op{{Kind: kind, DType: dt, Elems: n}}, nil
}
