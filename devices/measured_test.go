package devices

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// measuredFiles are the device files tools/measure wrote on real GPUs.
var measuredFiles = []struct{ file, name string }{
	{"data/measured/h100-sxm.yaml", "H100 SXM"},
	{"data/measured/h200-sxm.yaml", "H200 SXM"},
}

// loadMeasured applies a measured file on top of the builtin catalog, as
// --device-file does, and returns the device it overrides.
func loadMeasured(t *testing.T, file, name string) Device {
	t.Helper()
	base, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := base.Lookup(name); err != nil {
		t.Skipf("the builtin catalog has no %q yet, so %s (an override of its measured figures) cannot load; it is checked once the entry lands", name, file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := base.With(file, data)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if d.Measured == nil {
		t.Fatalf("%s: no measured section", file)
	}
	return d
}

// TestMeasuredFiles checks each measured file for completeness and against
// the datasheet: an achieved figure above the part's theoretical ceiling is
// a measurement error (bytes or operations counted that never happened).
func TestMeasuredFiles(t *testing.T) {
	for _, mf := range measuredFiles {
		t.Run(mf.name, func(t *testing.T) {
			d := loadMeasured(t, mf.file, mf.name)
			m := d.Measured
			if m.How == "" || m.When == "" {
				t.Errorf("how/when missing")
			}
			for _, r := range []struct {
				what string
				v    float64
			}{
				{"dram_read", m.DRAMRead}, {"dram_write", m.DRAMWrite}, {"dram_copy", m.DRAMCopy},
				{"l2", m.L2}, {"smem", m.Smem}, {"launch_overhead", m.LaunchOverhead},
			} {
				if r.v <= 0 {
					t.Errorf("%s not measured", r.what)
				}
			}
			for _, what := range []struct {
				name string
				v    float64
			}{{"dram_read", m.DRAMRead}, {"dram_write", m.DRAMWrite}, {"dram_copy", m.DRAMCopy}} {
				if what.v > d.Memory.BytesPerSecond {
					t.Errorf("%s %.4g B/s is above the datasheet's %.4g B/s", what.name, what.v, d.Memory.BytesPerSecond)
				}
			}
			// 32 banks of 4 bytes per clock per SM (CUDA Programming
			// Guide, shared memory) at the boost clock.
			if ceiling := float64(d.SMs) * 128 * d.BoostClockHz; m.Smem > ceiling {
				t.Errorf("smem %.4g B/s is above %d SMs x 128 B x %.4g Hz = %.4g B/s", m.Smem, d.SMs, d.BoostClockHz, ceiling)
			}
			for _, k := range []string{"fp32", "fp64", "tf32_tensor", "bf16_tensor", "fp16_tensor", "fp8_tensor", "int8_tensor"} {
				v, ok := m.Peaks[k]
				if !ok || v <= 0 {
					t.Errorf("peak %s not measured", k)
					continue
				}
				if p, ok := d.Dense[k]; ok && v > p.PerSecond {
					t.Errorf("peak %s %.4g/s is above the datasheet's dense %.4g/s", k, v, p.PerSecond)
				}
			}
			lat := m.LatencyCycles
			for _, k := range latencyNames {
				if lat[k] <= 0 {
					t.Errorf("latency %s not measured", k)
				}
			}
			if !(lat["l1"] < lat["l2"] && lat["l2"] < lat["dram"]) {
				t.Errorf("latencies l1 %g, l2 %g, dram %g cycles are not increasing", lat["l1"], lat["l2"], lat["dram"])
			}
		})
	}
}

// h100GroundTruth reads testdata/roof_bench_h100.csv (rows of the ground
// truth's roof_bench.csv): the rate of the 4 GiB fp32 copy in bytes per
// second and of the best large bf16 product (every dimension 2048 or more)
// in FLOP/s.
func h100GroundTruth(t *testing.T) (copyRate, bf16 float64) {
	t.Helper()
	f, err := os.Open("testdata/roof_bench_h100.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(row []string, name string) float64 {
		v, err := strconv.ParseFloat(row[col[name]], 64)
		if err != nil {
			t.Fatalf("roof_bench_h100.csv: %v", err)
		}
		return v
	}
	large := func(shape string) bool {
		for _, s := range strings.Split(shape, "x") {
			if n, err := strconv.Atoi(s); err != nil || n < 2048 {
				return false
			}
		}
		return true
	}
	for _, row := range rows[1:] {
		switch {
		case row[col["op"]] == "copy" && row[col["shape"]] == "1073741824": // 1024^3 floats: 4 GiB
			copyRate = num(row, "gbps") * 1e9
		case row[col["op"]] == "matmul" && row[col["dtype"]] == "bf16" && large(row[col["shape"]]):
			bf16 = max(bf16, num(row, "tflops")*1e12)
		}
	}
	if copyRate == 0 || bf16 == 0 {
		t.Fatal("roof_bench_h100.csv: no 4 GiB copy or large bf16 product")
	}
	return copyRate, bf16
}

// TestMeasuredH100GroundTruth compares the H100 file with the ground truth
// measured on an H100 through PyTorch (issue 10: within 5%).
func TestMeasuredH100GroundTruth(t *testing.T) {
	d := loadMeasured(t, "data/measured/h100-sxm.yaml", "H100 SXM")
	copyRate, bf16 := h100GroundTruth(t)
	for _, c := range []struct {
		what       string
		got, truth float64
	}{
		{"dram_copy (4 GiB buffers)", d.Measured.DRAMCopy, copyRate},
		{"bf16_tensor (best large product)", d.Measured.Peaks["bf16_tensor"], bf16},
	} {
		rel := c.got/c.truth - 1
		t.Logf("%s: measured %.4g, ground truth %.4g, %+.1f%%", c.what, c.got, c.truth, 100*rel)
		if math.Abs(rel) > 0.05 {
			t.Errorf("%s: measured %.4g is %+.1f%% off the ground truth's %.4g (allowed: 5%%)", c.what, c.got, 100*rel, c.truth)
		}
	}
}

// TestOneFigurePerChip: parts with the same compute silicon and clocks (the
// H100 SXM and H200 SXM share the GH100 die) carry the same measured
// compute peaks; only their memory figures differ.
func TestOneFigurePerChip(t *testing.T) {
	var parts []Device
	for _, mf := range measuredFiles {
		parts = append(parts, loadMeasured(t, mf.file, mf.name))
	}
	same := 0
	for i, a := range parts {
		for _, b := range parts[i+1:] {
			if a.Architecture != b.Architecture || a.SMs != b.SMs || a.BoostClockHz != b.BoostClockHz || a.TensorClockHz != b.TensorClockHz {
				continue
			}
			same++
			for k, v := range a.Measured.Peaks {
				if w := b.Measured.Peaks[k]; w != v {
					t.Errorf("%s and %s share their compute silicon and clocks but measure %s at %g and %g", a.Name, b.Name, k, v, w)
				}
			}
			if len(a.Measured.Peaks) != len(b.Measured.Peaks) {
				t.Errorf("%s and %s measure different peaks: %v, %v", a.Name, b.Name, a.Measured.Peaks, b.Measured.Peaks)
			}
		}
	}
	if same == 0 {
		t.Error("no two measured parts share a chip; the H100 SXM and H200 SXM should")
	}
}
