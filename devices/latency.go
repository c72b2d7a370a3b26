package devices

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Latency holds the timing figures of one compute capability that the
// simulated kernel run needs: latencies in SM cycles and per-scheduler issue
// rates. Each field's source is in Sources, keyed by the field's name in
// data/arch/latency.yaml ("dram_latency"); Device.Latency replaces figures
// the device has measured.
type Latency struct {
	CC CC `json:"compute_capability"`
	// Schedulers is the number of warp schedulers (sub-partitions) per SM,
	// each issuing at most one warp instruction per cycle.
	Schedulers int `json:"schedulers"`
	// FMALatency is the dependent-issue latency of an FP32 FMA; FMAInterval
	// the cycles between two warp FMAs on one scheduler (32 lanes: 1).
	FMALatency  float64 `json:"fma_latency_cycles"`
	FMAInterval float64 `json:"fma_interval_cycles"`
	SmemLatency float64 `json:"smem_latency_cycles"`
	L1Latency   float64 `json:"l1_latency_cycles"`
	L2Latency   float64 `json:"l2_latency_cycles"`
	DRAMLatency float64 `json:"dram_latency_cycles"`
	// DRAMEfficiency is the achievable fraction of the datasheet DRAM
	// bandwidth, used when the device has no measured read bandwidth.
	DRAMEfficiency float64 `json:"dram_efficiency"`
	// BranchBubble is how many cycles a warp waits after a taken branch
	// before it issues again.
	BranchBubble float64 `json:"branch_bubble_cycles"`
	// Sources maps each field's YAML name to its source.
	Sources map[string]string `json:"sources"`
}

type latencyFile struct {
	Sources map[string]string `yaml:"sources"`
	Archs   []struct {
		CC             string  `yaml:"cc"`
		Schedulers     sourced `yaml:"schedulers"`
		FMALatency     sourced `yaml:"fma_latency"`
		FMAInterval    sourced `yaml:"fma_interval"`
		SmemLatency    sourced `yaml:"smem_latency"`
		L1Latency      sourced `yaml:"l1_latency"`
		L2Latency      sourced `yaml:"l2_latency"`
		DRAMLatency    sourced `yaml:"dram_latency"`
		DRAMEfficiency sourced `yaml:"dram_efficiency"`
		BranchBubble   sourced `yaml:"branch_bubble"`
	} `yaml:"archs"`
}

var latencies = sync.OnceValues(func() (map[CC]Latency, error) {
	const file = "data/arch/latency.yaml"
	data, err := dataFS.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f latencyFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m := map[CC]Latency{}
	for _, a := range f.Archs {
		cc, err := ParseCC(a.CC)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		l := Latency{CC: cc, Sources: map[string]string{}}
		for _, fv := range []struct {
			name string
			in   sourced
			out  *float64
		}{
			{"fma_latency", a.FMALatency, &l.FMALatency},
			{"fma_interval", a.FMAInterval, &l.FMAInterval},
			{"smem_latency", a.SmemLatency, &l.SmemLatency},
			{"l1_latency", a.L1Latency, &l.L1Latency},
			{"l2_latency", a.L2Latency, &l.L2Latency},
			{"dram_latency", a.DRAMLatency, &l.DRAMLatency},
			{"dram_efficiency", a.DRAMEfficiency, &l.DRAMEfficiency},
			{"branch_bubble", a.BranchBubble, &l.BranchBubble},
			{"schedulers", a.Schedulers, nil},
		} {
			v, err := fv.in.resolve(fv.name, f.Sources, parseNumber)
			if err == nil && v.v == 0 && fv.name != "branch_bubble" {
				err = fmt.Errorf("%s: needs a positive value", fv.name)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: cc %s: %w", file, cc, err)
			}
			l.Sources[fv.name] = v.src
			if fv.out != nil {
				*fv.out = v.v
			} else {
				l.Schedulers = int(v.v)
			}
		}
		if l.DRAMEfficiency > 1 {
			return nil, fmt.Errorf("%s: cc %s: dram_efficiency %g is a fraction of the datasheet bandwidth (at most 1)", file, cc, l.DRAMEfficiency)
		}
		m[cc] = l
	}
	return m, nil
})

// LatencyFor returns the timing figures of a compute capability.
func LatencyFor(cc CC) (Latency, error) {
	m, err := latencies()
	if err != nil {
		return Latency{}, err
	}
	if l, ok := m[cc]; ok {
		return l, nil
	}
	var known []string
	for _, a := range Archs() {
		if _, ok := m[a.CC]; ok {
			known = append(known, a.CC.String())
		}
	}
	return Latency{}, fmt.Errorf("no latency figures for compute capability %s (known: %s); add measured.latency_cycles to a device file", cc, strings.Join(known, ", "))
}

// Latency returns the timing figures of the device's compute capability
// with the latencies the device has measured (Measured.LatencyCycles: fma,
// smem, l1, l2, dram) in their place; the sources of replaced figures start
// with "measured".
func (d Device) Latency() (Latency, error) {
	if d.Vendor != "NVIDIA" {
		return Latency{}, fmt.Errorf("device %q is not an NVIDIA GPU (vendor %s): the simulator models NVIDIA SMs only", d.Name, d.Vendor)
	}
	l, err := LatencyFor(d.CC)
	if err != nil {
		return Latency{}, fmt.Errorf("device %q: %w", d.Name, err)
	}
	l.Sources = clone(l.Sources)
	if d.Measured == nil {
		return l, nil
	}
	for _, m := range []struct {
		key, field string
		p          *float64
	}{
		{"fma", "fma_latency", &l.FMALatency},
		{"smem", "smem_latency", &l.SmemLatency},
		{"l1", "l1_latency", &l.L1Latency},
		{"l2", "l2_latency", &l.L2Latency},
		{"dram", "dram_latency", &l.DRAMLatency},
	} {
		if c := d.Measured.LatencyCycles[m.key]; c > 0 {
			*m.p = c
			l.Sources[m.field] = "measured: " + d.Measured.How
		}
	}
	return l, nil
}
