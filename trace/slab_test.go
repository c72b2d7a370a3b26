package trace

import (
	"slices"
	"testing"

	"github.com/gpucalc/gpucalc/rows"
)

// TestSlab: each part's records come back in order, in arrays that do not
// overlap (an array written later must not change one handed out), from
// a few records to past a block and past maxSlab.
func TestSlab(t *testing.T) {
	var s slab[Launch]
	var got [][]Launch
	var want [][]Launch
	next := int64(0)
	for _, n := range []int{0, 1, 3, 4096, 5000, maxSlab/56 + 1, 2} {
		var b rows.Blocks[Launch]
		var w []Launch
		for range n {
			l := Launch{Name: "cudaLaunchKernel", ExternalID: next}
			b.Add(l)
			w = append(w, l)
			next++
		}
		got, want = append(got, s.copy(&b)), append(want, w)
	}
	for i := range got {
		if !slices.Equal(got[i], want[i]) || cap(got[i]) != len(want[i]) {
			t.Errorf("part %d: %d records (cap %d), want %d in order", i, len(got[i]), cap(got[i]), len(want[i]))
		}
	}
	a, b := s.take(2), s.take(2)
	a[1].Name = "x"
	if b[0].Name != "" || &a[1] == &b[0] {
		t.Errorf("arrays taken in turn overlap")
	}
}
