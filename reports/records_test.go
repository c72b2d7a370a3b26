package reports

import (
	"math"
	"strconv"
	"testing"
)

// TestNum: the number format of CSV keeps every positive value positive,
// to six significant digits, and integers exact.
func TestNum(t *testing.T) {
	for _, v := range []float64{1e-12, 3.3e-7, 0.000123456789, 0.5, 1, 138.8888, 3.35e12, 85899345920, 989.4e12, 1.5e19, 7.14667e13 + 0.5} {
		s := num(v)
		got, err := strconv.ParseFloat(s, 64)
		if err != nil || got <= 0 || math.Abs(got-v)/v > 5e-6 {
			t.Errorf("%g printed as %q", v, s)
		}
		if v == math.Trunc(v) && v < 1e18 && s != strconv.FormatInt(int64(v), 10) {
			t.Errorf("integer %g printed as %q", v, s)
		}
	}
}
