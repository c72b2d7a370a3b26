package reports

import (
	"math"
	"strconv"

	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/units"
)

// The formats of single values in a table or CSV cell, shared by every
// result's table and records.

func gib(b float64) string { return strconv.FormatFloat(b/(1<<30), 'f', 2, 64) + " GiB" }

// usable says how much of a GPU a step may use, and says outright when a
// GPU is too small to hold even the CUDA context (and NCCL's communicator).
func usable(b float64) string {
	if b <= 0 {
		return "nothing usable (the GPU cannot hold the CUDA context and NCCL's communicator)"
	}
	return gib(b) + " usable"
}

// memSize is a memory size in GiB, or in a smaller binary unit below 1 GiB, so
// that a small one does not read 0.00 GiB.
func memSize(b float64) string {
	if b >= 1<<30 {
		return gib(b)
	}
	return units.FormatSize(int64(b))
}

func duration(s float64) string {
	if s <= 0 {
		return "-"
	}
	return units.FormatDuration(s)
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func size(b int) string {
	s := units.FormatSize(int64(b))
	if b >= 1024 && b%1024 != 0 {
		s += " (" + strconv.Itoa(b) + " B)"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func count(n int) string {
	if n == occupancy.Unlimited {
		return "no limit"
	}
	return strconv.Itoa(n)
}

func ratio(x float64) string {
	if x <= 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "×"
}

func speedup(x float64) string {
	switch {
	case x <= 0:
		return "-"
	case x >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64) + "× faster"
	}
	return strconv.FormatFloat(1/x, 'f', 2, 64) + "× slower"
}

// integer writes a count.
func integer(n int) string { return strconv.Itoa(n) }

// optInt writes a count, empty for zero (a figure that is not known).
func optInt(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// optNum writes a rate or size, empty for zero (not known).
func optNum(v float64) string {
	if v == 0 {
		return ""
	}
	return num(v)
}

// boolean writes true or false.
func boolean(b bool) string { return strconv.FormatBool(b) }

// siCount formats a count with a decimal prefix and about four significant
// digits: 137438953472 → "137.4 G".
func siCount(v float64) string {
	for _, p := range []struct {
		s string
		m float64
	}{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if math.Abs(v) >= p.m {
			return strconv.FormatFloat(v/p.m, 'f', digits(v/p.m), 64) + " " + p.s
		}
	}
	return strconv.FormatFloat(v, 'f', digits(v), 64) + " "
}

func digits(v float64) int {
	switch a := math.Abs(v); {
	case a >= 100:
		return 1
	case a >= 10:
		return 2
	case a == math.Trunc(a):
		return 0
	}
	return 3
}

// num formats a plain number for CSV: integers in full, others with up to
// six significant digits.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e18 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func us(s float64) string { return plain(s * 1e6) }

func tflops(v float64) string { return plain(v / 1e12) }

// plain is a number for a CSV cell: six significant digits and no exponent,
// so that a positive value never prints as 0.
func plain(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func signedDuration(x float64) string {
	switch {
	case x > 0:
		return "+" + units.FormatDuration(x)
	case x < 0:
		return "−" + units.FormatDuration(-x)
	}
	return "0"
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }
