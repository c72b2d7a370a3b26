package trace

import (
	"math"
	"testing"
)

func TestIDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []int64
		last bool
		want map[int64]int // every id looked up; absent ones want -1
	}{
		{"dense, first kept", []int64{5, 6, 5, 0, 7}, false, map[int64]int{5: 0, 6: 1, 7: 4, 0: -1, 4: -1, 8: -1}},
		{"dense, last kept", []int64{5, 6, 5, 0, 7}, true, map[int64]int{5: 2, 6: 1, 7: 4, 0: -1}},
		{"negative", []int64{-3, -1, 2}, false, map[int64]int{-3: 0, -1: 1, 2: 2, -2: -1, 0: -1}},
		{"spread: a map", []int64{1, math.MaxInt64, math.MinInt64, 1}, true, map[int64]int{1: 3, math.MaxInt64: 1, math.MinInt64: 2, 0: -1}},
		{"none", nil, false, map[int64]int{0: -1, 1: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newIDs(len(tc.ids), func(i int) int64 { return tc.ids[i] }, func(i int) bool { return tc.ids[i] == 0 }, tc.last)
			for id, want := range tc.want {
				got, ok := x.get(id)
				if !ok {
					got = -1
				}
				if got != want {
					t.Errorf("get(%d) = %d, want %d", id, got, want)
				}
			}
		})
	}
}
