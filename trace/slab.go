package trace

import (
	"unsafe"

	"github.com/gpucalc/gpucalc/rows"
)

// slab makes the records a large trace keeps (those of each part read
// ahead, and the ops' arguments) in larger arrays, each twice the last
// from a page up to maxSlab bytes: the kept records are most of such a
// trace's memory, and first touching it page by page cost a fifth of the
// CPU (on the team's virtual machine, 288 MB written fresh took 1.3 to
// 1.7 s in 70,000 page faults, and 0.7 s in huge pages). Arrays this
// large can be backed by huge pages, and one allocation serves many.
type slab[T any] struct {
	free []T // what is left of the last array made
	made int // records in the last array made
}

// maxSlab bounds an array (and so what its unused end holds of the heap);
// minSlab is the first one's size.
const (
	maxSlab = 16 << 20
	minSlab = 4 << 10
)

// take returns n new records, zero.
func (s *slab[T]) take(n int) []T {
	if len(s.free) < n {
		size := int(unsafe.Sizeof(*new(T)))
		s.made = max(n, min(2*s.made, maxSlab/size), minSlab/size)
		s.free = make([]T, s.made)
		if s.made*size >= hugePage {
			hugePages(s.free)
		}
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}

// copy returns b's records in an array of their own.
func (s *slab[T]) copy(b *rows.Blocks[T]) []T {
	if b.Len() == 0 {
		return nil
	}
	out := s.take(b.Len())
	i := 0
	for x := range b.Each {
		out[i] = x
		i++
	}
	return out
}
