package trace

import (
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/ops"
)

// norm models layer and RMS norm over the normalised shape.
func norm(c call) ([]ops.Op, error) {
	name := c.op.Name
	dt, _ := c.typ(0)
	x, ok := c.tensor(0)
	norm, ok2 := c.ints(1)
	if !ok || !ok2 || len(norm) == 0 {
		return nil, noModel("normalised shape not recorded")
	}
	kind := ops.LayerNorm
	if strings.Contains(name, "rms") {
		kind = ops.RMSNorm
	}
	cols := numel(norm)
	return []ops.Op{{Kind: kind, DType: dt, Rows: numel(x) / cols, Cols: cols}}, nil
}

// normBackward models the backward of layer norm and softmax.
func normBackward(c call) ([]ops.Op, error) {
	dt, _ := c.typ(0)
	// Read the gradient and the saved input or output, write the
	// input's gradient: three tensors, as an add moves.
	x, ok := c.tensor(0)
	if !ok {
		return nil, noModel("input shape not recorded")
	}
	return []ops.Op{{Kind: ops.Add, DType: dt, Elems: numel(x)}}, nil
}

// batchNorm models batch norm, forward and backward, per channel.
func batchNorm(c call) ([]ops.Op, error) {
	name := c.op.Name
	dt, _ := c.typ(0)
	x, ok := c.tensor(0)
	if !ok || len(x) < 2 {
		return nil, noModel("input shape not recorded")
	}
	n := numel(x)
	if strings.HasSuffix(name, "_backward") {
		// Reads the gradient and the input, writes the input's
		// gradient: three tensors, as an add moves.
		return []ops.Op{{Kind: ops.Add, DType: dt, Elems: n}}, nil
	}
	return []ops.Op{{Kind: ops.BatchNorm, DType: dt, Rows: x[1], Cols: n / x[1]}}, nil
}

// softmax models softmax and log-softmax along the recorded dimension.
func softmax(c call) ([]ops.Op, error) {
	dt, _ := c.typ(0)
	x, ok := c.tensor(0)
	d, err := strconv.Atoi(c.concrete(1))
	if !ok || err != nil {
		return nil, noModel("softmax dimension not recorded")
	}
	if d < 0 {
		d += len(x)
	}
	if d < 0 || d >= len(x) {
		return nil, noModel("softmax dimension %d outside the input's %d", d, len(x))
	}
	return []ops.Op{{Kind: ops.Softmax, DType: dt, Rows: numel(x) / x[d], Cols: x[d]}}, nil
}
