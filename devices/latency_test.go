package devices

import (
	"strings"
	"testing"
)

// The catalog's latencies are the pointer-chase figures of
// reference/simulation.md §3.2.
func TestLatencyFor(t *testing.T) {
	for _, c := range []struct {
		cc            string
		dram, l2, fma float64
		interval      float64
	}{
		{"7.0", 430, 212, 4, 2},
		{"8.0", 550, 205, 4, 2},
		{"9.0", 700, 291, 4, 1},
	} {
		cc, err := ParseCC(c.cc)
		if err != nil {
			t.Fatal(err)
		}
		l, err := LatencyFor(cc)
		if err != nil {
			t.Fatal(err)
		}
		if l.DRAMLatency != c.dram || l.L2Latency != c.l2 || l.FMALatency != c.fma || l.FMAInterval != c.interval || l.Schedulers != 4 {
			t.Errorf("cc %s: %+v", c.cc, l)
		}
		for _, f := range []string{"schedulers", "fma_latency", "fma_interval", "smem_latency", "l1_latency", "l2_latency", "dram_latency", "dram_efficiency", "branch_bubble"} {
			if l.Sources[f] == "" {
				t.Errorf("cc %s: %s has no source", c.cc, f)
			}
		}
	}
	if _, err := LatencyFor(CC{7, 5}); err == nil || !strings.Contains(err.Error(), "7.0, 8.0, 9.0") {
		t.Errorf("cc 7.5: error %v, want one listing the known ones", err)
	}
}

func TestDeviceLatencyMeasured(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	c, err = c.With("m.yaml", []byte(`name: h100
sources:
  run: "pointer chase on our H100"
measured:
  how: "pointer chase on our H100"
  when: "2026-11-21"
  latency_cycles:
    dram: {value: 650, source: run}
`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Latency()
	if err != nil {
		t.Fatal(err)
	}
	if l.DRAMLatency != 650 || !strings.HasPrefix(l.Sources["dram_latency"], "measured") {
		t.Errorf("measured DRAM latency not used: %g (%s)", l.DRAMLatency, l.Sources["dram_latency"])
	}
	if l.L2Latency != 291 || strings.HasPrefix(l.Sources["l2_latency"], "measured") {
		t.Errorf("L2 latency changed: %g (%s)", l.L2Latency, l.Sources["l2_latency"])
	}
	base, _ := LatencyFor(d.CC)
	if base.DRAMLatency != 700 {
		t.Errorf("catalog figure modified: %g", base.DRAMLatency)
	}
}
