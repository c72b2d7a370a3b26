package trace

// renumberKernelOps points kernelOp at the rows' places after sorting.
func (a *Analysis) renumberKernelOps() {
	at := make([]int, len(a.Ops))
	for i := range a.Ops {
		at[a.Ops[i].order] = i
	}
	for k, r := range a.kernelOp {
		if r >= 0 {
			a.kernelOp[k] = at[r]
		}
	}
}

// KernelOp is the index in Ops of the op row that kernel k (an index into
// the analysed trace's Kernels) belongs to, or -1 when no op claims it.
func (a *Analysis) KernelOp(k int) int {
	if k < 0 || k >= len(a.kernelOp) {
		return -1
	}
	return a.kernelOp[k]
}
