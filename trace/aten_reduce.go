package trace

import (
	"github.com/gpucalc/gpucalc/ops"
)

// reduction models mean, sum and amax over the recorded dimensions (all of
// them when none are), and adaptive average pooling to one value per
// channel.
func reduction(c call) ([]ops.Op, error) {
	name := c.op.Name
	dt, _ := c.typ(0)
	x, ok := c.tensor(0)
	if !ok {
		return nil, noModel("input shape not recorded")
	}
	dims, ok := c.ints(1)
	if name == "aten::adaptive_avg_pool2d" {
		if !ok || numel(dims) != 1 || len(x) != 4 {
			return nil, noModel("pooling to more than one value per channel")
		}
		dims = []int64{-1, -2}
	}
	cols := int64(1)
	for _, d := range dims {
		if d < 0 {
			d += int64(len(x))
		}
		if d >= 0 && d < int64(len(x)) {
			cols *= x[d]
		}
	}
	if !ok || len(dims) == 0 {
		cols = numel(x) // a full reduction
	}
	return []ops.Op{{Kind: ops.Reduce, DType: dt, Rows: numel(x) / cols, Cols: cols}}, nil
}

// maxPool models 2-D max pooling as a reduction of the input to its
// outputs.
func maxPool(c call) ([]ops.Op, error) {
	dt, _ := c.typ(0)
	x, ok := c.tensor(0)
	k, ok1 := c.ints(1)
	s, ok2 := c.ints(2)
	p, ok3 := c.ints(3)
	if !ok || len(x) != 4 || !ok1 || !ok2 || !ok3 || len(k) == 0 || len(p) == 0 {
		return nil, noModel("pooling window not recorded")
	}
	if len(s) == 0 {
		s = k
	}
	ph, pw := (x[2]+2*p[0]-k[0])/s[0]+1, (x[3]+2*p[len(p)-1]-k[len(k)-1])/s[len(s)-1]+1
	outs := x[0] * x[1] * ph * pw
	// Each output reads its window: as ideal traffic, the input once
	// and the output once, a reduction of the input to outs values.
	return []ops.Op{{Kind: ops.Reduce, DType: dt, Rows: outs, Cols: numel(x) / outs}}, nil
}
