package units

import (
	"math"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"48K", 49152, ""},
		{"48KB", 49152, ""},
		{"48KiB", 49152, ""},
		{"48 KiB", 49152, ""},
		{"48k", 49152, ""},
		{"1.5M", 1572864, ""},
		{"232448", 232448, ""},
		{"0", 0, ""},
		{"227K", 232448, ""},
		{"80GB", 80 << 30, ""},
		{"1.3K", 0, "not a whole number"},
		{"-4K", 0, "negative"},
		{"48Kb", 0, "bits; for bytes write 48KB or 48K"},
		{"48kib", 0, "bits; for bytes write 48KiB or 48K"},
		{"1mb", 0, "bits; for bytes write 1MB or 1M"},
		{"64b", 0, "bits; for bytes write 64B or 64"},
		{"2xb", 0, "bits; expected a size such as"},
		{"NaN", 0, "no number"},
		{"Inf", 0, "no number"},
		{"1e400", 0, "not a number"},
		{"1e300", 0, "too large"},
		{"48X", 0, "unknown unit"},
		{"K", 0, "no number"},
		{"", 0, "no number"},
		{"48Ki", 0, "unit"},
		{"1e3", 1000, ""},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSize(%q) error = %v, want it to mention %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRates(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) (float64, error)
		in    string
		want  float64
		bad   bool
	}{
		{"bw", ParseBandwidth, "3.35TB/s", 3.35e12, false},
		{"bw", ParseBandwidth, "3350GB/s", 3.35e12, false},
		{"bw", ParseBandwidth, "3.35T", 3.35e12, false},
		{"bw", ParseBandwidth, "1GiB/s", 1 << 30, false},
		{"bw", ParseBandwidth, "3.35TFLOPS", 0, true},
		{"flops", ParseFLOPS, "989TFLOPS", 989e12, false},
		{"flops", ParseFLOPS, "989T", 989e12, false},
		{"flops", ParseFLOPS, "989.4 TFLOP/s", 989.4e12, false},
		{"flops", ParseFLOPS, "1979TOPS", 1979e12, false},
		{"flops", ParseFLOPS, "3TB/s", 0, true},
		{"freq", ParseFrequency, "1980MHz", 1.98e9, false},
		{"freq", ParseFrequency, "1.98GHz", 1.98e9, false},
		{"freq", ParseFrequency, "1980", 0, true},
		{"power", ParsePower, "700W", 700, false},
		{"power", ParsePower, "1kW", 1000, false},
		{"time", ParseDuration, "12.5us", 12.5e-6, false},
		{"time", ParseDuration, "12.5µs", 12.5e-6, false},
		{"time", ParseDuration, "1.2ms", 1.2e-3, false},
		{"time", ParseDuration, "3s", 3, false},
		{"time", ParseDuration, "3", 0, true},
		{"time", ParseDuration, "3min", 0, true},
	}
	for _, tt := range tests {
		got, err := tt.parse(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("%s %q: got %g, want an error", tt.name, tt.in, got)
			}
			continue
		}
		if err != nil || math.Abs(got-tt.want) > 1e-9*tt.want {
			t.Errorf("%s %q = %g, %v; want %g", tt.name, tt.in, got, err, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatSize(49152), "48 KiB"},
		{FormatSize(233472), "228 KiB"},
		{FormatSize(1000), "1000 B"},
		{FormatSize(49408), "48.25 KiB"},
		{FormatSize(50 << 20), "50 MiB"},
		{FormatSize(85017493504), "79.18 GiB"},
		{FormatBandwidth(3.35e12), "3.35 TB/s"},
		{FormatFLOPS(989.4e12), "989.4 TFLOP/s"},
		{FormatFLOPS(66.9e12), "66.9 TFLOP/s"},
		{FormatFLOPS(1978.9e12), "1979 TFLOP/s"},
		{FormatOPS(1978.9e12), "1979 TOP/s"},
		{FormatOPS(4.5e15), "4500 TOP/s"},
		{FormatFrequency(1.98e9), "1.98 GHz"},
		{FormatDecimal(178553088, "B"), "178.6 MB"},
		{FormatDecimal(1.099511627776e15, "FLOP"), "1.1 PFLOP"},
		{FormatDuration(12.5e-6), "12.5 µs"},
		{FormatDuration(1.2e-3), "1.2 ms"},
		{FormatDuration(0.5e-9), "0.5 ns"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// Formatting then parsing gives back the value (to the printed precision).
func TestRoundTrip(t *testing.T) {
	for _, b := range []int64{0, 1, 1024, 49152, 232448, 50 << 20} {
		s := strings.ReplaceAll(FormatSize(b), " ", "")
		got, err := ParseSize(s)
		if err != nil || got != b {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", b, s, got, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"48K", "1.5M", "3.35TB/s", "989T", "12.5us", "1e309", "-0", ".", "1e", "1e+", "NaN", "Inf", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseSize(s); err == nil && b < 0 {
			t.Errorf("ParseSize(%q) = %d", s, b)
		}
		for _, p := range []func(string) (float64, error){ParseBandwidth, ParseFLOPS, ParseDuration, ParseFrequency, ParsePower} {
			if v, err := p(s); err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Errorf("parse(%q) = %g", s, v)
			}
		}
	})
}
