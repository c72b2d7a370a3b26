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
