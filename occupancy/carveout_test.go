package occupancy

import (
	"strings"
	"testing"
)

func TestParseCarveout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Carveout
		err  string
	}{
		{"", Carveout{}, ""},
		{"default", Carveout{}, ""},
		{" Default ", Carveout{}, ""},
		{"-1", Carveout{}, ""},
		{"0%", CarveoutPercent(0), ""},
		{"50%", CarveoutPercent(50), ""},
		{"100%", CarveoutPercent(100), ""},
		{"100K", CarveoutBytes(102400), ""},
		{"1.5K", CarveoutBytes(1536), ""},
		{"101%", Carveout{}, "0% to 100%"},
		{"50.5%", Carveout{}, "whole number"},
		{"-5%", Carveout{}, "0% to 100%"},
		{"50", Carveout{}, "write 50% for a percentage or 50K for a size"},
		{"4G", Carveout{}, "far larger"},
		{"lots", Carveout{}, "lots"},
	} {
		got, err := ParseCarveout(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCarveout(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseCarveout(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
