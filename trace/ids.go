package trace

// ids finds a record by an id it carries (an External id, a correlation).
// A trace numbers both from near zero up, so the ids of millions of
// records mostly fit a slice indexed by the id less the least: faster to
// fill and to read than a map of millions of entries. Ids spread wider than
// denseSpread times the records fall back to a map.
type ids struct {
	base  int64
	dense []int32 // the record's index + 1; 0 for none
	m     map[int64]int
}

// denseSpread is how many slots per record the dense index may take.
const denseSpread = 4

// newIDs indexes records 0..n-1 by id(i), leaving out those skip(i) says;
// where ids repeat, the first record keeps it, or the last with last.
func newIDs(n int, id func(int) int64, skip func(int) bool, last bool) ids {
	var x ids
	lo, hi, kept := int64(0), int64(0), 0
	for i := range n {
		if skip(i) {
			continue
		}
		v := id(i)
		if kept == 0 || v < lo {
			lo = v
		}
		if kept == 0 || v > hi {
			hi = v
		}
		kept++
	}
	if kept == 0 {
		return x
	}
	if spread := uint64(hi) - uint64(lo); spread < uint64(denseSpread*kept+1024) {
		x.base, x.dense = lo, make([]int32, spread+1)
		for i := range n {
			if skip(i) {
				continue
			}
			if slot := &x.dense[id(i)-lo]; *slot == 0 || last {
				*slot = int32(i + 1)
			}
		}
		return x
	}
	x.m = make(map[int64]int, kept)
	for i := range n {
		if skip(i) {
			continue
		}
		v := id(i)
		if _, dup := x.m[v]; !dup || last {
			x.m[v] = i
		}
	}
	return x
}

// get returns the index of the record with id v.
func (x *ids) get(v int64) (int, bool) {
	if x.m != nil {
		i, ok := x.m[v]
		return i, ok
	}
	if d := uint64(v) - uint64(x.base); d < uint64(len(x.dense)) && x.dense[d] != 0 {
		return int(x.dense[d]) - 1, true
	}
	return 0, false
}
