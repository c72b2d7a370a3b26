package devices

import (
	"io/fs"
	"math"
	"strings"
	"testing"
)

// TestLookupEveryName looks every device up by its name and each alias, and
// by the names nvidia-smi and cudaGetDeviceProperties print (as seen in
// public logs and on the H100 behind testdata/h100-device.json).
func TestLookupEveryName(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Devices() {
		for _, n := range append([]string{d.Name, strings.ToUpper(d.Name)}, d.Aliases...) {
			got, err := c.Lookup(n)
			if err != nil || got.Name != d.Name {
				t.Errorf("Lookup(%q) = %q, %v; want %q", n, got.Name, err, d.Name)
			}
		}
	}
	for printed, want := range map[string]string{
		"Tesla V100-SXM2-16GB":    "V100 SXM2 16GB",
		"Tesla V100-SXM2-32GB":    "V100 SXM2 32GB",
		"Tesla T4":                "T4",
		"NVIDIA A100-SXM4-40GB":   "A100 SXM4 40GB",
		"NVIDIA A100-SXM4-80GB":   "A100 SXM4 80GB",
		"NVIDIA A100 80GB PCIe":   "A100 PCIe 80GB",
		"NVIDIA A10":              "A10",
		"NVIDIA L4":               "L4",
		"NVIDIA L40S":             "L40S",
		"NVIDIA GeForce RTX 4090": "RTX 4090",
		"NVIDIA GeForce RTX 5090": "RTX 5090",
		"NVIDIA H100 80GB HBM3":   "H100 SXM",
		"NVIDIA H100 PCIe":        "H100 PCIe",
		"NVIDIA H100 NVL":         "H100 NVL",
		"NVIDIA H200":             "H200 SXM",
		"NVIDIA B200":             "B200",
		"AMD Instinct MI300X":     "MI300X",
	} {
		got, err := c.Lookup(printed)
		if err != nil || got.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", printed, got.Name, err, want)
		}
	}
}

func TestLookupUnknownSuggests(t *testing.T) {
	for name, want := range map[string]string{
		"h100 sxm6":    "H100 SXM",
		"rtx 4080":     "RTX 4090",
		"a100 pcie 40": "A100 PCIe 80GB",
		"l40x":         "L40S",
		"rtx 3080":     "RTX 3090",
		"a6000 ada":    "RTX A6000",
		"gh100":        "GH200",
	} {
		_, err := Lookup(name)
		if err == nil || !strings.Contains(err.Error(), "closest:") || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%q) error = %v; want closest matches naming %q", name, err, want)
		}
	}
}

func TestLimitsByArchOrName(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]CC{"sm_90": {9, 0}, "9.0": {9, 0}, "sm_100a": {10, 0}, "l40s": {8, 9}, "NVIDIA GeForce RTX 5090": {12, 0}} {
		a, err := c.Limits(in)
		if err != nil || a.CC != want {
			t.Errorf("Limits(%q) = %v, %v; want cc %v", in, a.CC, err, want)
		}
	}
}

// TestOccupancyRefusesAMD: MI300X is in the catalog for rooflines only.
func TestOccupancyRefusesAMD(t *testing.T) {
	d, err := Lookup("mi300x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Peak(BF16, Tensor); err != nil {
		t.Errorf("MI300X has no bf16 tensor peak for rooflines: %v", err)
	}
	if _, err := d.Limits(); err == nil || !strings.Contains(err.Error(), "AMD") || !strings.Contains(err.Error(), "occupancy") {
		t.Errorf("MI300X Limits() error = %v; want a refusal naming AMD and occupancy", err)
	}
	c, _ := Builtin()
	if _, err := c.Limits("MI300X"); err == nil {
		t.Error("Catalog.Limits(MI300X) succeeded; want a refusal")
	}
}

const newDevice = `name: Lab GPU
vendor: NVIDIA
aliases: [lab]
architecture: Hopper
compute_capability: "9.0"
sources:
  s: "our lab sheet, https://example.org/lab"
sms: {value: 100, source: s}
boost_clock: {value: 1500MHz, source: s}
memory:
  type: HBM3
  size: {value: 64GiB, source: s}
  bandwidth: {value: 2TB/s, source: s}
dense:
  bf16_tensor: {value: 614.4TFLOPS, per_sm_per_clock: 4096, clock: boost, source: s}
`

// TestUserFiles checks strict parsing of user device files: every error
// names the file and the line of the offending field.
func TestUserFiles(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"unknown top-level field", "name: h100\nvendr: NVIDIA\n", `user.yaml:2: unknown field "vendr" in device file`},
		{"unknown peak field", "name: h100\nsources: {s: x}\ndense:\n  fp32: {value: 1T, source: s, acc: fp16}\n", `user.yaml:4: unknown field "acc" in dense.fp32`},
		{"unknown peak", "name: h100\nsources: {s: x}\ndense:\n  fp12: {value: 1T, source: s}\n", `user.yaml:4: unknown peak "fp12"`},
		{"bandwidth in FLOPS", "name: h100\nsources: {s: x}\nmemory:\n  bandwidth: {value: 3.35TFLOPS, source: s}\n", `user.yaml:4: memory.bandwidth: bandwidth "3.35TFLOPS"`},
		{"clock without unit", "name: h100\nsources: {s: x}\nboost_clock: {value: 1980, source: s}\n", `user.yaml:3: boost_clock: frequency "1980": missing unit`},
		{"fractional SMs", "name: h100\nsources: {s: x}\nsms: {value: 13.5, source: s}\n", `user.yaml:3: sms: "13.5" is not a whole number`},
		{"bare number", "name: h100\ntdp: 700W\n", `user.yaml:2: tdp must be written {value: ..., source: ...}`},
		{"missing source", "name: h100\nsources: {s: x}\ntdp: {value: 700W}\n", `user.yaml:3: tdp: missing source`},
		{"unknown source", "name: h100\nsources: {s: x}\ntdp: {value: 700W, source: t}\n", `user.yaml:3: tdp: source "t" is not in the file's sources`},
		{"field twice", "name: h100\nsources: {s: x}\ntdp: {value: 700W, source: s}\ntdp: {value: 600W, source: s}\n", `user.yaml:4: "tdp" given twice (first at line 3)`},
		{"no name", "vendor: NVIDIA\n", `user.yaml:1: missing name`},
		{"tensor clock above boost", "name: h100\nsources: {s: x}\ntensor_clock: {value: 2100MHz, source: s}\n", `user.yaml:3: device "H100 SXM": tensor_clock 2.1 GHz is above boost_clock 1.98 GHz`},
		{"boost lowered under tensor", "name: h100\nsources: {s: x}\nboost_clock: {value: 1500MHz, source: s}\n", `user.yaml:3: device "H100 SXM": tensor_clock`},
		{"sparse not twice dense", "name: h100\nsources: {s: x}\nsparse:\n  bf16_tensor: {value: 989.4TFLOPS, source: s}\n", `user.yaml:4: device "H100 SXM": sparse.bf16_tensor is 1.00× dense.bf16_tensor`},
		{"dense set to the sparse rate", "name: h100\nsources: {s: x}\ndense:\n  fp8_tensor: {value: 3957.8TFLOPS, source: s}\n", `user.yaml:4: device "H100 SXM": sparse.fp8_tensor is 1.00× dense.fp8_tensor`},
		{"cc contradicts architecture", strings.Replace(newDevice, "architecture: Hopper", "architecture: Ampere", 1), `user.yaml:4: device "Lab GPU": architecture "Ampere" contradicts compute capability 9.0, which is Hopper`},
		{"unknown cc", strings.Replace(newDevice, `compute_capability: "9.0"`, `compute_capability: "9.5"`, 1), `user.yaml:5: device "Lab GPU": compute capability 9.5 is not in the catalog`},
		{"new device incomplete", "name: Lab GPU\nvendor: NVIDIA\n", `user.yaml:1: device "Lab GPU": missing architecture, sms, boost_clock, memory.bandwidth, memory.size, dense, compute_capability`},
		{"alias taken", strings.Replace(newDevice, "aliases: [lab]", "aliases: [h100]", 1), `user.yaml:3: name "h100" of "Lab GPU" is already used by "H100 SXM"`},
		{"not YAML", "name: [\n", "user.yaml:1: not valid YAML: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := Builtin()
			_, err := c.With("user.yaml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestUserFileOverridesAndAdds(t *testing.T) {
	c, _ := Builtin()
	c, err := c.With("fast.yaml", []byte("name: NVIDIA H100 80GB HBM3\nsources: {lab: \"our STREAM run\"}\nmemory:\n  bandwidth: {value: 3.0TB/s, source: lab}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err = c.With("lab.yaml", []byte(newDevice))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := c.Lookup("h100")
	if h.Memory.BytesPerSecond != 3.0e12 || h.Source("memory.bandwidth") != "our STREAM run" {
		t.Errorf("override: bandwidth %g from %q; want 3e12 from our STREAM run", h.Memory.BytesPerSecond, h.Source("memory.bandwidth"))
	}
	if h.SMs != 132 || h.Dense["bf16_tensor"].PerSecond != 989.4e12 || h.Memory.Bytes != 80<<30 {
		t.Errorf("override changed fields it did not give: %d SMs, %g, %d bytes", h.SMs, h.Dense["bf16_tensor"].PerSecond, h.Memory.Bytes)
	}
	if got := h.Origin; len(got) < 2 || got[0] != "builtin:gpus/h100-sxm.yaml" || got[len(got)-1] != "fast.yaml" {
		t.Errorf("origin = %v; want builtin then fast.yaml", got)
	}
	orig, _ := Lookup("h100")
	if orig.Memory.BytesPerSecond != 3.35e12 {
		t.Errorf("override leaked into the built-in catalog: %g", orig.Memory.BytesPerSecond)
	}
	lab, err := c.Lookup("LAB")
	if err != nil || lab.Name != "Lab GPU" || lab.TensorClockHz != 1.5e9 {
		t.Errorf("new device: %+v, %v", lab, err)
	}
	if r, _ := lab.Ridge(BF16, Tensor); r != 307.2 {
		t.Errorf("new device ridge = %g, want 614.4e12/2e12 = 307.2", r)
	}
}

// FuzzDeviceFile: no device file, however malformed, panics the parser; one
// it accepts yields a device that looks up by its name.
func FuzzDeviceFile(f *testing.F) {
	files, _ := fs.Glob(dataFS, "data/gpus/*.yaml")
	for _, p := range files {
		data, _ := dataFS.ReadFile(p)
		f.Add(data)
	}
	f.Add([]byte(newDevice))
	f.Add([]byte("name: h100\nsources: {s: x}\nmeasured:\n  how: x\n  when: y\n  peaks: {fp32: {value: 1T, source: s}}\n"))
	f.Add([]byte("name: h100\nsources: {s: x}\nsparse:\n  bf16_tensor: {value: 0T, source: s}\ndense:\n  bf16_tensor: {value: 0T, source: s}\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("name: &a [*a]\n"))
	base, err := Builtin()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("name: h100\nsources: {s: x}\nsms: {value: 1e12, source: s}\n---\nname: a\n"))
	f.Add([]byte("name: h100\nsources: {s: x}\npeer_link: {type: x, bandwidth: {value: 1TB/s, source: s}, latency: {value: 1us, source: s}}\nmemory: 5\n"))
	f.Add([]byte("name: h100\nsources: {s: x}\nmeasured: {how: a, when: b, allreduce_latency: {value: 50us, source: s}, allreduce_bus_bandwidth: {value: NaNGB/s, source: s}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := base.With("fuzz.yaml", data)
		if err != nil {
			checkMessage(t, err.Error())
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for _, d := range c.Devices() {
			if _, err := c.Lookup(d.Name); err != nil {
				t.Errorf("accepted device %q does not look up: %v", d.Name, err)
			}
			if d.SMs < 1 || d.SMs > 1024 || !(d.Memory.BytesPerSecond > 0) || math.IsInf(d.Memory.BytesPerSecond, 0) {
				t.Errorf("accepted device %q with %d SMs, %g B/s", d.Name, d.SMs, d.Memory.BytesPerSecond)
			}
			if err := d.validateMeasured(); err != nil {
				t.Errorf("accepted device %q: %v", d.Name, err)
			}
		}
	})
}

// TestUserFileErrors: numbers are parsed strictly and range-checked where
// they were written; YAML errors name the line in the schema's words.
func TestUserFileErrors(t *testing.T) {
	const h = "name: h100\nsources: {s: x}\n"
	for _, tc := range []struct {
		name, data, want string
	}{
		{"number with junk", h + "sms: {value: 132abc, source: s}\n", `user.yaml:3: sms: "132abc" is not a number`},
		{"zero SMs", h + "sms: {value: 0, source: s}\n", `user.yaml:3: sms: 0 is out of range; allowed 1 to 1024`},
		{"1e30 SMs", h + "sms: {value: 1e30, source: s}\n", `user.yaml:3: sms: 1e30 is out of range; allowed 1 to 1024`},
		{"1e12 SMs", h + "sms:\n  source: s\n  value: 1e12\n", `user.yaml:5: sms: 1e12 is out of range`},
		{"negative SMs", h + "sms: {value: -4, source: s}\n", `user.yaml:3: sms: -4 is out of range`},
		{"NaN SMs", h + "sms: {value: NaN, source: s}\n", `user.yaml:3: sms: "NaN" is not a number`},
		{"Inf SMs", h + "sms: {value: +Inf, source: s}\n", `user.yaml:3: sms: "+Inf" is not a number`},
		{"zero bandwidth", h + "memory:\n  type: HBM3\n  bandwidth: {value: 0TB/s, source: s}\n", `user.yaml:5: memory.bandwidth: 0TB/s is out of range; allowed 1 GB/s to 100 TB/s`},
		{"NaN bandwidth", h + "memory:\n  bandwidth: {value: NaNTB/s, source: s}\n", `user.yaml:4: memory.bandwidth: bandwidth "NaNTB/s"`},
		{"absurd peak", h + "dense:\n  fp32: {value: 1e30TFLOPS, source: s}\n", `user.yaml:4: dense.fp32: 1e30TFLOPS is out of range; allowed 1 GFLOP/s to 100000 TFLOP/s`},
		{"zero peak", h + "dense:\n  fp32: {value: 0T, source: s}\n", `user.yaml:4: dense.fp32: 0T is out of range`},
		{"per-SM rate out of range", h + "dense:\n  fp32: {value: 60T, per_sm_per_clock: 0, source: s}\n", `user.yaml:4: dense.fp32.per_sm_per_clock: 0 is out of range`},
		{"clock too fast", h + "boost_clock: {value: 50GHz, source: s}\n", `user.yaml:3: boost_clock: 50GHz is out of range; allowed 100 MHz to 5 GHz`},
		{"memory too large", h + "memory:\n  size: {value: 20TiB, source: s}\n", `user.yaml:4: memory.size: 20TiB is out of range; allowed 1 MiB to 16 TiB`},
		{"tdp zero", h + "tdp: {value: 0W, source: s}\n", `user.yaml:3: tdp: 0W is out of range`},
		{"latency cycles", h + "measured:\n  how: x\n  when: y\n  latency_cycles: {l1: {value: 0, source: s}}\n", `user.yaml:6: measured.latency_cycles.l1: 0 is out of range; allowed 1 to 100000`},
		{"unknown latency", h + "measured:\n  how: x\n  when: y\n  latency_cycles: {l3: {value: 9, source: s}}\n", `user.yaml:6: unknown name "l3" in measured.latency_cycles`},
		{"GPC junk", h + "cluster_gpcs: {value: \"18, x\", source: s}\n", `user.yaml:3: cluster_gpcs: "18, x": expected SM counts per GPC`},
		{"GPCs do not add up", h + "cluster_gpcs: {value: \"18, 18\", source: s}\n", `user.yaml:3: device "H100 SXM": cluster_gpcs add up to 36 SMs, but sms is 132`},
		{"peer link field", h + "peer_link:\n  speed: {value: 1TB/s, source: s}\n", `user.yaml:4: unknown field "speed" in host_link or peer_link (known: type, bandwidth, latency)`},
		{"peer link latency unit", h + "peer_link:\n  latency: {value: 3, source: s}\n", `user.yaml:4: peer_link.latency: time "3": missing unit`},
		{"unknown memory field", h + "memory:\n  speed: {value: 1TB/s, source: s}\n", `user.yaml:4: unknown field "speed" in memory (known: type, size, bandwidth)`},
		{"unknown measured field", h + "measured:\n  how: x\n  when: y\n  dram: {value: 1TB/s, source: s}\n", `user.yaml:6: unknown field "dram" in measured (known: how, when, dram_read`},
		{"mapping for a string", "name: {a: b}\n", `user.yaml:1: name must be a non-empty string`},
		{"number for a section", h + "memory: 5\n", `user.yaml:3: a number where a mapping was expected`},
		{"list for a section", h + "measured: [a]\n", `user.yaml:3: a list where a mapping was expected`},
		{"list for sources", "name: h100\nsources: [a]\n", `user.yaml:2: sources must be a mapping`},
		{"mapping for aliases", "name: h100\naliases: {a: b}\n", `user.yaml:2: aliases must be a list of names`},
		{"value is a list", h + "tdp: {value: [1], source: s}\n", `user.yaml:3: tdp.value must be a single value`},
		{"a list, not a mapping", "- a\n- b\n", `user.yaml:1: a device file is a mapping of fields`},
		{"empty", "", `user.yaml: empty device file`},
		{"second document", h + "---\nname: a100\n", `user.yaml:3: a second YAML document (after ---); a device file describes one device`},
		{"second document after an empty one", h + "---\n---\nsms: {value: 132, source: s}\n", `user.yaml:4: a second YAML document`},
		{"measured without how", "name: Lab\nsources: {s: x}\nmeasured:\n  dram_read: {value: 1TB/s, source: s}\n", `user.yaml:3: measured: give ` + "`how`"},
		{"L2 slower than DRAM", h + "l2:\n  bandwidth: {value: 2TB/s, source: s}\n", `user.yaml:4: device "H100 SXM": l2.bandwidth 2 TB/s is below memory.bandwidth 3.35 TB/s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := Builtin()
			_, err := c.With("user.yaml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
			checkMessage(t, err.Error())
		})
	}
}

// checkMessage asserts what every device-file error is: one line, free of Go
// type names and parser internals.
func checkMessage(t *testing.T, msg string) {
	t.Helper()
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	for _, bad := range []string{"devices.", "struct {", "map[", "[]", ": yaml:", "strconv", "unmarshal", "!!"} {
		if strings.Contains(msg, bad) {
			t.Errorf("error shows %q: %s", bad, msg)
		}
	}
}

// TestMeasuredAboveDatasheet: a measured ceiling above the one it was measured
// against is refused at its line (issue 18: 1070 TFLOP/s bf16 on an H100,
// whose dense bf16 peak is 989.4 TFLOP/s); raising the ceiling in the same
// file makes it consistent again.
func TestMeasuredAboveDatasheet(t *testing.T) {
	const m = "name: h100\nsources: {lab: \"our run\"}\nmeasured:\n  how: cuBLAS\n  when: today\n"
	c, _ := Builtin()
	for _, tc := range []struct{ name, data, want string }{
		{"bf16 above dense", m + "  peaks:\n    bf16_tensor: {value: 1070TFLOPS, source: lab}\n", `user.yaml:7: device "H100 SXM": measured.peaks.bf16_tensor 1070 TFLOP/s is above dense.bf16_tensor 989.4 TFLOP/s`},
		{"copy above DRAM", m + "  dram_copy: {value: 3.5TB/s, source: lab}\n", `user.yaml:6: device "H100 SXM": measured.dram_copy 3.5 TB/s is above memory.bandwidth 3.35 TB/s`},
		{"smem above banks", m + "  smem: {value: 40TB/s, source: lab}\n", `user.yaml:6: device "H100 SXM": measured.smem 40 TB/s is above sms × 128 B × boost_clock 33.45 TB/s`},
		{"all-reduce above NVLink", m + "  allreduce_bus_bandwidth: {value: 500GB/s, source: lab}\n", `measured.allreduce_bus_bandwidth 500 GB/s is above the peer link's bandwidth 450 GB/s`},
		{"all-reduce above PCIe", "name: L4\nsources: {lab: x}\nmeasured:\n  how: x\n  when: y\n  allreduce_bus_bandwidth: {value: 40GB/s, source: lab}\n", `the peer link's bandwidth 32 GB/s`},
		{"lowered ceiling under a measurement of this file", m + "  dram_copy: {value: 3.0TB/s, source: lab}\nmemory:\n  bandwidth: {value: 2.9TB/s, source: lab}\n", `user.yaml:6: device "H100 SXM": measured.dram_copy 3 TB/s is above memory.bandwidth 2.9 TB/s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.With("user.yaml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
			checkMessage(t, err.Error())
		})
	}
	// 132 SMs × 4096 FLOP/clock × 1980 MHz = 1070.5 TFLOP/s: the H100 at its
	// boost clock; the sparse rate must follow the dense one.
	raised := m + "  peaks:\n    bf16_tensor: {value: 1070TFLOPS, source: lab}\ndense:\n  bf16_tensor: {value: 1070.5TFLOPS, per_sm_per_clock: 4096, clock: boost, source: lab}\nsparse:\n  bf16_tensor: {value: 2141TFLOPS, source: lab}\n"
	c2, err := c.With("user.yaml", []byte(strings.Replace(raised, "sources: {lab: \"our run\"}", "sources: {lab: \"our run at 1980 MHz\"}", 1)))
	if err != nil {
		t.Fatalf("a measurement with its raised ceiling: %v", err)
	}
	d, _ := c2.Lookup("h100")
	if d.Measured.Peaks["bf16_tensor"] != 1070e12 || d.Dense["bf16_tensor"].PerSecond != 1070.5e12 {
		t.Errorf("measured %g, dense %g; want 1070e12 and 1070.5e12", d.Measured.Peaks["bf16_tensor"], d.Dense["bf16_tensor"].PerSecond)
	}
}

// TestOverrideDropsStaleMeasured: a user's ceiling applies to the measured
// figures too. Overriding memory.bandwidth drops the DRAM figures measured
// against the old one (the README's example: 3.0 TB/s on an H100 whose
// built-in measured copy rate is 3.029 TB/s), keeping the rest.
func TestOverrideDropsStaleMeasured(t *testing.T) {
	c, _ := Builtin()
	before, _ := c.Lookup("h100")
	if before.Measured == nil || before.Measured.DRAMCopy <= 3.0e12 || before.Measured.Peaks["fp64_tensor"] == 0 {
		t.Fatalf("built-in H100 measured figures changed: %+v", before.Measured)
	}
	c, err := c.With("fast.yaml", []byte("name: h100\nsources: {lab: \"our STREAM run\"}\nmemory:\n  bandwidth: {value: 3.0TB/s, source: lab}\ndense:\n  fp64_tensor: {value: 60TFLOPS, source: lab}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := c.Lookup("h100")
	m := d.Measured
	if m.DRAMRead != 0 || m.DRAMWrite != 0 || m.DRAMCopy != 0 || d.Source("measured.dram_copy") != "" {
		t.Errorf("measured DRAM figures survive a new memory.bandwidth: %g %g %g", m.DRAMRead, m.DRAMWrite, m.DRAMCopy)
	}
	if _, ok := m.Peaks["fp64_tensor"]; ok {
		t.Errorf("measured fp64_tensor survives a new dense.fp64_tensor")
	}
	if m.Peaks["fp8_tensor"] != before.Measured.Peaks["fp8_tensor"] || m.L2 != before.Measured.L2 || m.LaunchOverhead != before.Measured.LaunchOverhead {
		t.Errorf("figures the override does not concern changed: %+v", m)
	}
}

// TestLookupReturnsCopies: a caller that changes what Lookup or Devices gave
// it cannot change the catalog.
func TestLookupReturnsCopies(t *testing.T) {
	c, _ := Builtin()
	d, _ := c.Lookup("h100")
	d.Dense["bf16_tensor"] = Peak{PerSecond: 1}
	d.Sources["sms"] = "mutated"
	d.Aliases[0] = "mutated"
	d.ClusterGPCs[0] = 99
	d.Origin[0] = "mutated"
	d.Measured.Peaks["bf16_tensor"] = 1
	d.Measured.LatencyCycles["l1"] = 1
	d.Measured.DRAMCopy = 1
	for _, l := range c.Devices() {
		l.Dense["fp32"] = Peak{PerSecond: 1}
	}
	e, _ := c.Lookup("h100")
	if e.Dense["bf16_tensor"].PerSecond != 989.4e12 || e.Dense["fp32"].PerSecond == 1 || e.Sources["sms"] == "mutated" ||
		e.Aliases[0] == "mutated" || e.ClusterGPCs[0] != 18 || e.Origin[0] == "mutated" ||
		e.Measured.Peaks["bf16_tensor"] == 1 || e.Measured.LatencyCycles["l1"] == 1 || e.Measured.DRAMCopy == 1 {
		t.Errorf("the catalog changed through a looked-up copy: %+v", e)
	}
}

// TestDocumentMarkers: markers around the one document are fine.
func TestDocumentMarkers(t *testing.T) {
	c, _ := Builtin()
	for _, data := range []string{"---\nname: h100\n", "name: h100\n...\n", "name: h100\n---\n", "name: h100\n---\n# nothing\n---\n"} {
		if _, err := c.With("user.yaml", []byte(data)); err != nil {
			t.Errorf("%q: %v", data, err)
		}
	}
}

// TestPeerLinkFile reads a peer link with its latency.
func TestPeerLinkFile(t *testing.T) {
	c, _ := Builtin()
	c, err := c.With("nv.yaml", []byte("name: L40S\nsources: {s: \"lab\"}\npeer_link:\n  type: NVLink bridge\n  bandwidth: {value: 56.25GB/s, source: s}\n  latency: {value: 2us, source: s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := c.Lookup("l40s")
	if p := d.Peer(); p.Type != "NVLink bridge" || p.BytesPerSecond != 56.25e9 || p.LatencySeconds != 2e-6 || d.Source("peer_link.latency") != "lab" {
		t.Errorf("peer link = %+v", p)
	}
}
