// Package units parses and formats the quantities gpucalc works with.
//
// Two conventions apply, the same ones CUDA and NVIDIA datasheets use:
//   - sizes of memory (shared memory, register files, caches, device memory)
//     are binary: 48K = 48KB = 48KiB = 49152 bytes;
//   - rates (bandwidth, FLOP/s, clocks) are decimal: 3.35TB/s = 3.35e12 B/s,
//     989T = 989e12 FLOP/s.
//
// Parse functions are strict: a missing, wrong or ambiguous unit is an error
// that says what was expected.
package units

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// split separates a quantity such as "3.35 TB/s" into its number and its unit.
func split(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return 0, "", fmt.Errorf("negative")
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= '0' && c <= '9') || c == '.' || c == '+' {
			i++
			continue
		}
		// An exponent: 1e12, 2.5E-3. Only when a digit or sign follows,
		// so that "1E" is not mistaken for one.
		if (c == 'e' || c == 'E') && i > 0 && i+1 < len(s) &&
			(unicode.IsDigit(rune(s[i+1])) || ((s[i+1] == '-' || s[i+1] == '+') && i+2 < len(s) && unicode.IsDigit(rune(s[i+2])))) {
			i += 2
			continue
		}
		break
	}
	if i == 0 {
		return 0, "", fmt.Errorf("no number")
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q is not a number", s[:i])
	}
	if v < 0 {
		return 0, "", fmt.Errorf("negative")
	}
	return v, strings.TrimSpace(s[i:]), nil
}

var binaryPrefix = map[string]float64{
	"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
	"k": 1 << 10, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
}

var decimalPrefix = map[string]float64{
	"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
}

// ParseSize parses a memory size in bytes. Prefixes are binary whatever
// their spelling: 48K, 48KB and 48KiB are all 49152 bytes. A plain number is
// bytes.
func ParseSize(s string) (int64, error) {
	const want = "a size such as 48K, 48KiB, 1.5M or 232448 (binary: K = 1024 bytes)"
	v, unit, err := split(s)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v; expected %s", s, err, want)
	}
	p := strings.TrimSuffix(unit, "B")
	if strings.HasSuffix(p, "i") && !strings.HasSuffix(unit, "B") {
		return 0, fmt.Errorf("size %q: unit %q; expected %s", s, unit, want)
	}
	if p == "b" || strings.HasSuffix(unit, "b") {
		// A lowercase b means bits; say what was probably meant.
		fixed := strings.ToUpper(unit[:1]) + strings.TrimSuffix(unit[1:], "b") + "B"
		if unit == "b" {
			fixed = "B"
		}
		if _, err := ParseSize(strings.TrimSuffix(strings.TrimSpace(s), unit) + fixed); err == nil {
			num := strings.TrimSuffix(strings.TrimSpace(s), unit)
			return 0, fmt.Errorf("size %q: a lowercase b means bits; for bytes write %s or %s", s, num+fixed, num+strings.TrimSuffix(strings.TrimSuffix(fixed, "B"), "i"))
		}
		return 0, fmt.Errorf("size %q: a lowercase b in %q means bits; expected %s", s, unit, want)
	}
	m, ok := binaryPrefix[p]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q; expected %s", s, unit, want)
	}
	b := v * m
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	if b != math.Trunc(b) {
		return 0, fmt.Errorf("size %q is %g bytes, not a whole number of bytes; expected %s", s, b, want)
	}
	return int64(b), nil
}

// parseRate parses a decimal rate such as "3.35TB/s" or "989T" whose unit,
// when present, must be one of units (compared case-sensitively after the
// prefix).
func parseRate(s, what, example string, units ...string) (float64, error) {
	want := fmt.Sprintf("%s such as %s (decimal: T = 1e12)", what, example)
	v, unit, err := split(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %v; expected %s", what, s, err, want)
	}
	prefix := unit
	for _, u := range units {
		if strings.HasSuffix(unit, u) {
			prefix = strings.TrimSuffix(unit, u)
			break
		}
	}
	if strings.HasSuffix(prefix, "i") {
		// GiB/s and the like are binary, and unambiguous.
		if m, ok := binaryPrefix[prefix]; ok && prefix != "" {
			return v * m, nil
		}
	}
	m, ok := decimalPrefix[prefix]
	if !ok {
		return 0, fmt.Errorf("%s %q: unknown unit %q; expected %s", what, s, unit, want)
	}
	return v * m, nil
}

// ParseBandwidth parses a rate in bytes per second: 3.35TB/s, 3350GB/s, 3.35T.
// Prefixes are decimal; GiB/s is accepted as binary.
func ParseBandwidth(s string) (float64, error) {
	return parseRate(s, "bandwidth", "3.35TB/s or 3350GB/s", "B/s", "Bps")
}

// ParseFLOPS parses a rate of operations per second: 989TFLOPS, 989TFLOP/s,
// 1979TOPS, 989T. Prefixes are decimal.
func ParseFLOPS(s string) (float64, error) {
	return parseRate(s, "throughput", "989TFLOPS or 989T", "FLOP/s", "FLOPS", "OP/s", "OPS")
}

// ParseFrequency parses a clock rate: 1980MHz, 1.98GHz.
func ParseFrequency(s string) (float64, error) {
	v, err := parseRate(s, "frequency", "1980MHz or 1.98GHz", "Hz")
	if err == nil && !strings.HasSuffix(strings.TrimSpace(s), "Hz") {
		return 0, fmt.Errorf("frequency %q: missing unit; expected a frequency such as 1980MHz or 1.98GHz", s)
	}
	return v, err
}

// ParsePower parses a power in watts: 700W, 1kW.
func ParsePower(s string) (float64, error) {
	v, err := parseRate(s, "power", "700W", "W")
	if err == nil && !strings.HasSuffix(strings.TrimSpace(s), "W") {
		return 0, fmt.Errorf("power %q: missing unit; expected a power such as 700W", s)
	}
	return v, err
}

var timeUnit = map[string]float64{
	"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1,
}

// ParseDuration parses a time in seconds: 12.5us, 1.2ms, 3s. The unit is
// required.
func ParseDuration(s string) (float64, error) {
	const want = "a time such as 12.5us, 1.2ms or 3s"
	v, unit, err := split(s)
	if err != nil {
		return 0, fmt.Errorf("time %q: %v; expected %s", s, err, want)
	}
	if unit == "" {
		return 0, fmt.Errorf("time %q: missing unit; expected %s", s, want)
	}
	m, ok := timeUnit[unit]
	if !ok {
		return 0, fmt.Errorf("time %q: unknown unit %q; expected %s", s, unit, want)
	}
	return v * m, nil
}

// FormatSize formats bytes with the largest binary unit that keeps it
// readable: 49152 → "48 KiB", 233472 → "228 KiB", 1000 → "1000 B".
func FormatSize(b int64) string {
	units := []struct {
		n    string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	for _, u := range units {
		if b >= u.size {
			if b%u.size == 0 {
				return fmt.Sprintf("%d %s", b/u.size, u.n)
			}
			if b%(u.size/1024) == 0 || b >= 10*u.size {
				return trim(float64(b)/float64(u.size), 2) + " " + u.n
			}
		}
	}
	return fmt.Sprintf("%d B", b)
}

var prefixes = []struct {
	p string
	m float64
}{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}}

// decimal formats v with a decimal prefix and the given unit: 3.35e12 → "3.35 TB/s".
// FLOP/s and OP/s stop at T, the unit datasheets use (1979 TFLOP/s, not
// 1.979 PFLOP/s).
func decimal(v float64, unit string) string {
	ps := prefixes
	if unit == "FLOP/s" || unit == "OP/s" {
		ps = ps[1:]
	}
	prefix := ""
	for _, p := range ps {
		if math.Abs(v) >= p.m {
			v, prefix = v/p.m, p.p
			break
		}
	}
	return withUnit(v, prefix, unit)
}

// withUnit is v as appendSig writes it, a space, prefix and unit, made in
// one string (a table of a million rows formats millions of them).
func withUnit(v float64, prefix, unit string) string {
	var buf [48]byte
	b := append(appendSig(buf[:0], v), ' ')
	return string(append(append(b, prefix...), unit...))
}

// appendSig appends v with about four significant digits, without
// trailing zeros.
func appendSig(b []byte, v float64) []byte {
	prec := 3
	switch a := math.Abs(v); {
	case a >= 1000:
		prec = 0
	case a >= 100:
		prec = 1
	case a >= 10:
		prec = 2
	}
	return appendTrim(b, v, prec)
}

func trim(v float64, prec int) string {
	var buf [32]byte
	return string(appendTrim(buf[:0], v, prec))
}

// appendTrim appends v with prec decimals, without trailing zeros.
func appendTrim(b []byte, v float64, prec int) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', prec, 64)
	if bytes.IndexByte(b[start:], '.') >= 0 {
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
		if b[len(b)-1] == '.' {
			b = b[:len(b)-1]
		}
	}
	return b
}

// FormatBandwidth formats bytes per second: "3.35 TB/s".
func FormatBandwidth(v float64) string { return decimal(v, "B/s") }

// FormatFLOPS formats floating-point operations per second: "989.4 TFLOP/s".
func FormatFLOPS(v float64) string { return decimal(v, "FLOP/s") }

// FormatOPS formats integer operations per second: "1979 TOP/s".
func FormatOPS(v float64) string { return decimal(v, "OP/s") }

// FormatDecimal formats a count or amount with a decimal prefix:
// FormatDecimal(178.6e6, "B") = "178.6 MB", FormatDecimal(1.37e11, "FLOP") =
// "137.4 GFLOP".
func FormatDecimal(v float64, unit string) string { return decimal(v, unit) }

// FormatFrequency formats a clock: "1.98 GHz".
func FormatFrequency(v float64) string { return decimal(v, "Hz") }

// FormatDuration formats seconds with a unit chosen to keep 1–999: "12.5 µs".
func FormatDuration(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0 s"
	case a < 1e-6:
		return withUnit(s*1e9, "", "ns")
	case a < 1e-3:
		return withUnit(s*1e6, "", "µs")
	case a < 1:
		return withUnit(s*1e3, "", "ms")
	default:
		return withUnit(s, "", "s")
	}
}
