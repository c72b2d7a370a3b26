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
	// The catalog's H100 carries tools/measure's latencies: DRAM 678 and L2
	// 274 cycles (devices/data/measured/h100-sxm.yaml).
	d, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Latency()
	if err != nil {
		t.Fatal(err)
	}
	if l.DRAMLatency != 678 || l.L2Latency != 274 || !strings.HasPrefix(l.Sources["dram_latency"], "measured: ") {
		t.Errorf("measured latencies not used: DRAM %g (%s), L2 %g", l.DRAMLatency, l.Sources["dram_latency"], l.L2Latency)
	}
	// Without them, the catalog's pointer-chase figures.
	l, err = d.Datasheet().Latency()
	if err != nil {
		t.Fatal(err)
	}
	if l.DRAMLatency != 700 || l.L2Latency != 291 || strings.HasPrefix(l.Sources["dram_latency"], "measured") {
		t.Errorf("datasheet latencies: DRAM %g (%s), L2 %g", l.DRAMLatency, l.Sources["dram_latency"], l.L2Latency)
	}
	// A figure the device does not measure keeps the catalog's.
	d.Measured = &Measured{How: "ours", LatencyCycles: map[string]float64{"dram": 650}}
	if l, err = d.Latency(); err != nil || l.DRAMLatency != 650 || l.L2Latency != 291 || l.Sources["dram_latency"] != "measured: ours" {
		t.Errorf("partial measurement: %+v, %v", l, err)
	}
}
