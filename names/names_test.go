package names

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"h100", "h100", 0}, {"h100", "h200", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"mixtral", "mistral", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestClosest: a label scores its best key; containment halves the
// distance, so a prefix of a long name ranks before a short unrelated one.
func TestClosest(t *testing.T) {
	keys := map[string][]string{
		"H100 SXM":  {"h100sxm", "h100"},
		"H200 SXM":  {"h200sxm", "h200"},
		"A10":       {"a10"},
		"RTX 3090":  {"rtx3090", "3090"},
		"RTX 4090":  {"rtx4090", "4090"},
		"B200":      {"b200"},
		"GB200 NVL": {"gb200", "gb200nvl72"},
	}
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"h100", []string{"H100 SXM"}},
		{"rtx3080", []string{"RTX 3090", "RTX 4090"}},
		{"gb20", []string{"GB200 NVL"}},
	} {
		if got := Closest(tc.typed, keys, len(tc.want)); !slices.Equal(got, tc.want) {
			t.Errorf("Closest(%q) = %v, want %v", tc.typed, got, tc.want)
		}
	}
}
