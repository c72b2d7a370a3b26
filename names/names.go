// Package names matches what people type against the names gpucalc knows
// (devices, built-in models): by edit distance, for "did you mean" lists.
package names

import (
	"sort"
	"strings"
)

// Distance is the Levenshtein edit distance between a and b (bytes).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Score is how far typed is from a known key: the edit distance to the key,
// or to its start plus one (a misspelt start of a long name, "mixtrel" for
// "mixtral-8x7b-v0.1", is near it), halved when one contains the other
// ("h100" in "h100sxm"), so that a partial name ranks first.
func Score(typed, key string) int {
	d := Distance(typed, key)
	if len(key) > len(typed) {
		d = min(d, Distance(typed, key[:len(typed)])+1)
	}
	if strings.Contains(key, typed) || strings.Contains(typed, key) {
		d /= 2
	}
	return d
}

// Closest returns up to n labels, nearest first (ties by label), where
// keys[label] are the keys a label goes by (a name and its aliases) and a
// label scores its best key.
func Closest(typed string, keys map[string][]string, n int) []string {
	type cand struct {
		label string
		d     int
	}
	var cs []cand
	for label, ks := range keys {
		best := -1
		for _, k := range ks {
			if d := Score(typed, k); best < 0 || d < best {
				best = d
			}
		}
		if best >= 0 {
			cs = append(cs, cand{label, best})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].label < cs[j].label
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].label)
	}
	return out
}
