package devices

import (
	"io/fs"
	"strings"
	"testing"
)

// TestLookupEveryName looks every device up by its name and each alias, and
// by the names nvidia-smi and cudaGetDeviceProperties print (as seen in
// public logs and shared/groundtruth/h100/nvsmi.txt).
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
		"l40":          "L40S",
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
		{"field twice", "name: h100\nsources: {s: x}\ntdp: {value: 700W, source: s}\ntdp: {value: 600W, source: s}\n", `user.yaml:4: device file: "tdp" given twice`},
		{"no name", "vendor: NVIDIA\n", `user.yaml:1: missing name`},
		{"tensor clock above boost", "name: h100\nsources: {s: x}\ntensor_clock: {value: 2100MHz, source: s}\n", `user.yaml:3: device "H100 SXM": tensor_clock 2.1 GHz is above boost_clock 1.98 GHz`},
		{"boost lowered under tensor", "name: h100\nsources: {s: x}\nboost_clock: {value: 1500MHz, source: s}\n", `user.yaml:3: device "H100 SXM": tensor_clock`},
		{"sparse not twice dense", "name: h100\nsources: {s: x}\nsparse:\n  bf16_tensor: {value: 989.4TFLOPS, source: s}\n", `user.yaml:4: device "H100 SXM": sparse.bf16_tensor is 1.00× dense.bf16_tensor`},
		{"dense set to the sparse rate", "name: h100\nsources: {s: x}\ndense:\n  fp8_tensor: {value: 3957.8TFLOPS, source: s}\n", `user.yaml:4: device "H100 SXM": sparse.fp8_tensor is 1.00× dense.fp8_tensor`},
		{"cc contradicts architecture", strings.Replace(newDevice, "architecture: Hopper", "architecture: Ampere", 1), `user.yaml:4: device "Lab GPU": architecture "Ampere" contradicts compute capability 9.0, which is Hopper`},
		{"unknown cc", strings.Replace(newDevice, `compute_capability: "9.0"`, `compute_capability: "9.5"`, 1), `user.yaml:5: device "Lab GPU": compute capability 9.5 is not in the catalog`},
		{"new device incomplete", "name: Lab GPU\nvendor: NVIDIA\n", `user.yaml:1: device "Lab GPU": missing architecture, sms, boost_clock, memory.bandwidth, memory.size, dense, compute_capability`},
		{"alias taken", strings.Replace(newDevice, "aliases: [lab]", "aliases: [h100]", 1), `user.yaml:3: name "h100" of "Lab GPU" is already used by "H100 SXM"`},
		{"not YAML", "name: [\n", "user.yaml: yaml:"},
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
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := base.With("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, d := range c.Devices() {
			if _, err := c.Lookup(d.Name); err != nil {
				t.Errorf("accepted device %q does not look up: %v", d.Name, err)
			}
		}
	})
}
