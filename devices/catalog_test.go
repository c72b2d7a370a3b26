package devices

import (
	"strings"
	"testing"
)

func TestLookupH100(t *testing.T) {
	for _, name := range []string{"h100", "H100 SXM", "NVIDIA H100 80GB HBM3", "nvidia-h100-sxm"} {
		d, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", name, err)
		}
		if d.Name != "H100 SXM" {
			t.Errorf("Lookup(%q) = %q", name, d.Name)
		}
	}
	if _, err := Lookup("h1000"); err == nil || !strings.Contains(err.Error(), "H100 SXM") {
		t.Errorf("Lookup(h1000) error = %v, want closest matches naming H100 SXM", err)
	}
}

// TestFormatPeak: integer peaks read in operations (datasheets print TOPS),
// the others in FLOP/s.
func TestFormatPeak(t *testing.T) {
	for _, tc := range []struct {
		key  string
		v    float64
		want string
	}{
		{"int8_tensor", 1978.9e12, "1979 TOP/s"},
		{"int8_tensor", 963.7e12, "963.7 TOP/s"},
		{"int32", 33.5e12, "33.5 TOP/s"},
		{"bf16_tensor", 989.4e12, "989.4 TFLOP/s"},
		{"fp32", 66.9e12, "66.9 TFLOP/s"},
	} {
		if got := FormatPeak(tc.key, tc.v); got != tc.want {
			t.Errorf("FormatPeak(%s, %g) = %q, want %q", tc.key, tc.v, got, tc.want)
		}
	}
}
