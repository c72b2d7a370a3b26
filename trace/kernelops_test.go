package trace

import (
	"math"
	"testing"
)

// Every kernel's op row holds its time: summed by KernelOp, the kernels
// give each row's measured time, and those of no row the unattributed
// time.
func TestKernelOp(t *testing.T) {
	for _, file := range traces {
		tr := read(t, file)
		a := analyze(t, tr)
		sums := make([]float64, len(a.Ops))
		var none float64
		for i := range tr.Kernels.Len() {
			k := tr.Kernels.At(i)
			if r := a.KernelOp(i); r >= 0 {
				sums[r] += k.Dur * usec
			} else {
				none += k.Dur * usec
			}
		}
		for i, r := range a.Ops {
			if math.Abs(sums[i]-r.Measured) > 1e-12 {
				t.Errorf("%s: %s %s: kernels %g s, row %g s", file, r.Name, r.Shapes, sums[i], r.Measured)
			}
		}
		if math.Abs(none-a.Summary.UnattributedTime) > 1e-12 {
			t.Errorf("%s: kernels of no op %g s, unattributed %g s", file, none, a.Summary.UnattributedTime)
		}
		if a.KernelOp(-1) != -1 || a.KernelOp(tr.Kernels.Len()) != -1 {
			t.Errorf("%s: KernelOp out of range is not -1", file)
		}
	}
}
