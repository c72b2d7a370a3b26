package devices

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/units"
)

func TestSourcedResolve(t *testing.T) {
	sources := map[string]string{"wp": "a whitepaper"}
	tests := []struct {
		in    sourced
		parse func(string) (float64, error)
		want  float64
		err   string
	}{
		{sourced{"678", "wp"}, parseNumber, 678, ""},
		{sourced{"2.96us", "wp"}, units.ParseDuration, 2.96e-6, ""},
		{sourced{"0", "wp"}, parseNumber, 0, ""},
		{sourced{"678", "nope"}, parseNumber, 0, `source "nope" is not in the file's sources`},
		{sourced{"-1", "wp"}, parseNumber, 0, "not a non-negative number"},
		{sourced{"fast", "wp"}, parseNumber, 0, "not a non-negative number"},
	}
	for _, tt := range tests {
		got, err := tt.in.resolve("dram_latency", sources, tt.parse)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "dram_latency: ") {
				t.Errorf("%+v: error %v, want one naming the field and saying %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got.v != tt.want || got.src != "a whitepaper" {
			t.Errorf("%+v: got %+v, %v; want %g from a whitepaper", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatPeak(t *testing.T) {
	for _, c := range []struct {
		key  string
		v    float64
		want string
	}{{"int8_tensor", 963.7e12, "963.7 TOP/s"}, {"bf16_tensor", 728.6e12, "728.6 TFLOP/s"}, {"int8", 1e12, "1 TOP/s"}} {
		if got := FormatPeak(c.key, c.v); got != c.want {
			t.Errorf("FormatPeak(%s, %g) = %q, want %q", c.key, c.v, got, c.want)
		}
	}
}
