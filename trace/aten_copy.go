package trace

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// copyOp models copies and casts: the elements moved, read in the source
// type and written in the destination's.
func copyOp(c call) ([]ops.Op, error) {
	name := c.op.Name
	src := 0
	switch name {
	case "aten::copy_":
		src = 1
	case "aten::index_copy_":
		src = 3
	}
	var n int64
	var dt devices.DType
	if name == "aten::cat" {
		if len(c.op.Inputs) == 0 || len(c.op.Inputs[0].List) == 0 {
			return nil, noModel("the tensor list's shapes were not recorded")
		}
		for _, d := range c.op.Inputs[0].List {
			n += numel(d)
		}
		if dt = c.compute; dt == "" {
			return nil, noModel("the trace records no data type for tensor lists")
		}
	} else {
		x, ok := c.tensor(src)
		if !ok {
			return nil, noModel("input shape not recorded")
		}
		n = numel(x)
		var known bool
		if dt, known = c.typ(src); !known {
			return nil, noModel("no size for %s data", c.op.Types[src])
		}
	}
	o := ops.Op{Kind: ops.Copy, DType: dt, Out: dt, Elems: n}
	switch name {
	case "aten::copy_":
		o.Out, _ = c.typ(0)
	case "aten::to", "aten::_to_copy":
		// The target type is the first integer Scalar argument.
		for i := 1; i < len(c.op.Concrete) && i < len(c.op.Types); i++ {
			if t, ok := scalarTypes[c.op.Concrete[i]]; ok && c.op.Types[i] == "Scalar" {
				o.Out = t
				break
			}
		}
	}
	if o.DType == "" || o.Out == "" {
		return nil, noModel("no size for the copied data")
	}
	return []ops.Op{o}, nil
}

// embedding models a table lookup: a row of the 2-D table per index.
func embedding(c call) ([]ops.Op, error) {
	dt, _ := c.typ(0)
	w, ok1 := c.tensor(0)
	idx, ok2 := c.tensor(1)
	if !ok1 || !ok2 || len(w) != 2 {
		return nil, noModel("embedding without a 2-D table and indices")
	}
	return []ops.Op{{Kind: ops.Embedding, DType: dt, Rows: numel(idx), Cols: w[1]}}, nil
}
