package trace

import (
	"cmp"
	"slices"
	"strings"
)

// tree is the call nesting of the trace's ops: each op's parent on its
// thread, found from the time spans (a child starts and ends inside its
// parent).
type tree struct {
	t      *Trace
	parent []int // -1 for a root
	// top is each op's outermost aten ancestor (itself when it has none
	// and is aten; -1 when no aten op encloses it).
	top []int
	// byThread lists each thread's ops by start time (longest first on
	// ties), for placing a launch inside the op that made it.
	byThread map[string][]int
	byExtID  ids // the first op with each External id (0 left out)
}

// slack absorbs the rounding of the trace's microsecond times (three
// decimals) when testing that a child ends inside its parent.
const slack = 0.002

func newTree(t *Trace) *tree {
	tr := &tree{t: t, parent: make([]int, t.Ops.Len()), top: make([]int, t.Ops.Len()),
		byThread: map[string][]int{}}
	tr.byExtID = newIDs(t.Ops.Len(), func(i int) int64 { return t.Ops.At(i).ExternalID }, func(i int) bool { return t.Ops.At(i).ExternalID == 0 }, false)
	// Each thread's ops, found by its name in a map only where the thread
	// changes from the op before (ops come in runs of one thread): counted
	// first, so that each thread's list is made once at its length (grown
	// an op at a time, it was copied again at every doubling).
	index := map[string]int{}
	threads := func(each func(i, j int)) {
		last, at := "", -1
		for i := range t.Ops.Len() {
			if th := t.Ops.At(i).Thread; at < 0 || th != last {
				j, ok := index[th]
				if !ok {
					j = len(index)
					index[th] = j
				}
				last, at = th, j
			}
			each(i, at)
		}
	}
	var counts []int
	threads(func(_, j int) {
		if j == len(counts) {
			counts = append(counts, 0)
		}
		counts[j]++
	})
	lists := make([][]int, len(counts))
	for j, n := range counts {
		lists[j] = make([]int, 0, n)
	}
	threads(func(i, j int) { lists[j] = append(lists[j], i) })
	for th, j := range index {
		tr.byThread[th] = lists[j]
	}
	byStart := func(a, b int) int {
		oa, ob := t.Ops.At(a), t.Ops.At(b)
		if c := cmp.Compare(oa.Start, ob.Start); c != 0 {
			return c
		}
		return cmp.Compare(ob.Dur, oa.Dur)
	}
	for _, idx := range tr.byThread {
		if !slices.IsSortedFunc(idx, byStart) { // a thread's ops are written in order
			slices.SortStableFunc(idx, byStart)
		}
		var stack []int
		for _, i := range idx {
			o := t.Ops.At(i)
			for len(stack) > 0 && t.Ops.At(stack[len(stack)-1]).End()+slack < o.End() {
				stack = stack[:len(stack)-1]
			}
			tr.parent[i] = -1
			if len(stack) > 0 {
				tr.parent[i] = stack[len(stack)-1]
			}
			stack = append(stack, i)
		}
	}
	for i := range t.Ops.Len() {
		tr.top[i] = -1
		for j := i; j >= 0; j = tr.parent[j] {
			if isAten(t.Ops.At(j).Name) {
				tr.top[i] = j
			}
		}
	}
	return tr
}

func isAten(name string) bool { return strings.HasPrefix(name, "aten::") }

// enclosing is the innermost op on thread that spans time ts, or -1.
func (tr *tree) enclosing(thread string, ts float64) int {
	idx := tr.byThread[thread]
	// The last op starting at or before ts, then up its ancestors until
	// one spans ts.
	n, _ := slices.BinarySearchFunc(idx, ts, func(i int, ts float64) int {
		if tr.t.Ops.At(i).Start <= ts {
			return -1
		}
		return 1
	})
	if n == 0 {
		return -1
	}
	for j := idx[n-1]; j >= 0; j = tr.parent[j] {
		if tr.t.Ops.At(j).End()+slack >= ts {
			return j
		}
	}
	return -1
}

// Link is how a kernel or transfer was tied to an op.
type Link int

// Links.
const (
	// Linked: the kernel belongs to a top-level aten op.
	Linked Link = iota
	// NoOp: neither its External id nor its launch leads to an op.
	NoOp
	// NotAten: the op that launched it has no aten op around it (a custom
	// kernel, a library called from Python).
	NotAten
	// Graph: it was replayed from a CUDA graph (cudaGraphLaunch), which
	// hides the op that captured it.
	Graph
)

// joiner ties GPU activity to top-level ops.
type joiner struct {
	tr     *tree
	launch ids // correlation -> launch index (the last launch of each)
}

func newJoiner(t *Trace) *joiner {
	return &joiner{tr: newTree(t), launch: newIDs(t.Launches.Len(), func(i int) int64 { return t.Launches.At(i).Correlation }, func(int) bool { return false }, true)}
}

// op returns the top-level aten op of the activity with this External id
// and correlation, or -1 and why not.
func (j *joiner) op(ext, corr int64) (int, Link) {
	t := j.tr.t
	li, launched := j.launch.get(corr)
	if launched && t.Launches.At(li).Name == "cudaGraphLaunch" {
		return -1, Graph
	}
	op, ok := j.tr.byExtID.get(ext)
	if !ok || ext == 0 {
		if !launched {
			return -1, NoOp
		}
		l := t.Launches.At(li)
		if op = j.tr.enclosing(l.Thread, l.Start); op < 0 {
			return -1, NoOp
		}
	}
	if top := j.tr.top[op]; top >= 0 {
		return top, Linked
	}
	return -1, NotAten
}
